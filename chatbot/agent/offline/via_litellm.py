"""The offline policy as a litellm custom provider: `litellm.acompletion(model="offline/policy", ...)`.

For code that calls litellm itself (tests of the policy, a script); the agent loop
calls the policy directly (`chatbot.agent.offline.provider`). Importing this module
imports litellm, so only `chatbot.agent.offline.register()` does, on demand.
"""

import time
from dataclasses import asdict

from litellm import CustomLLM
from litellm.types.utils import ChatCompletionMessageToolCall, Choices, Function, Message, ModelResponse, Usage

from chatbot.agent.offline.provider import MODEL_NAME, Answer, answer


def model_response(result: Answer) -> ModelResponse:
    """The answer in litellm's (OpenAI's) response shape."""
    calls = [ChatCompletionMessageToolCall(id=call["id"], type="function",
                                           function=Function(name=call["name"], arguments=call["arguments"]))
             for call in result.tool_calls]
    message = Message(content=result.content or None, role="assistant", tool_calls=calls or None)
    if result.declared is not None:  # what the text asked and offered (chatbot.agent.dialogue), for a caller's loop
        message.provider_specific_fields = {"declared": asdict(result.declared)}
    usage = Usage(prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens)
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens
    return ModelResponse(model=MODEL_NAME, created=int(time.time()),
                         choices=[Choices(index=0, finish_reason=result.finish_reason, message=message)],
                         usage=usage)


def respond(messages: list, optional_params: dict | None) -> ModelResponse:
    return model_response(answer(messages, (optional_params or {}).get("tools") or []))


class OfflinePolicy(CustomLLM):
    """litellm's handler for the "offline" provider."""

    def completion(
        self, model: str, messages: list, *args, optional_params: dict | None = None, **kwargs
    ) -> ModelResponse:
        return respond(messages, optional_params)

    async def acompletion(
        self, model: str, messages: list, *args, optional_params: dict | None = None, **kwargs
    ) -> ModelResponse:
        return respond(messages, optional_params)
