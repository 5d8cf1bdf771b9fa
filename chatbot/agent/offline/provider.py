"""The offline policy as a litellm custom provider: `litellm.acompletion(model="offline/policy", ...)`.

It answers like a hosted chat model (an assistant message with OpenAI-style
`tool_calls`, or plain `content`, plus estimated token usage), so the agent loop
cannot tell it from one.
"""

import hashlib
import json
import logging
import time

from litellm import CustomLLM
from litellm.types.utils import ChatCompletionMessageToolCall, Choices, Function, Message, ModelResponse, Usage

from chatbot.agent.offline import replies
from chatbot.agent.offline.policy import Decision, decide

logger = logging.getLogger(__name__)
MODEL_NAME = "offline/policy"
CHARS_PER_TOKEN = 4
THOUGHTS = {
    "check_unread_messages": "Checking for messages that arrived meanwhile.",
    "get_faq_answer": "Looking the question up in the FAQ.",
    "update_context": "Recording the parent's correction.",
    "check_availability": "Checking which tour slots are open.",
    "book_tour": "Passing the booking details to book_tour.",
    "manage_tour_booking": "Changing the existing booking.",
    "request_callback": "Arranging a call back.",
}


def tool_names(optional_params: dict) -> set[str]:
    """The names of the tools offered in this call (none offered: answer in text only)."""
    names = set()
    for tool in optional_params.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            names.add(str(function["name"]))
    return names


def _tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


def _call_id(messages: list, index: int, name: str, arguments: str) -> str:
    """Deterministic and unique within a turn: the same conversation gives the same ids."""
    seed = f"{len(messages)}:{index}:{name}:{arguments}"
    return "call_" + hashlib.sha1(seed.encode(), usedforsecurity=False).hexdigest()[:24]


def build_response(decision: Decision, messages: list, optional_params: dict) -> ModelResponse:
    """A ModelResponse carrying the decision, with usage estimated from characters."""
    if decision.calls:
        calls = []
        for index, call in enumerate(decision.calls):
            arguments = json.dumps(call.args, ensure_ascii=False)
            calls.append(ChatCompletionMessageToolCall(
                id=_call_id(messages, index, call.name, arguments),
                type="function",
                function=Function(name=call.name, arguments=arguments),
            ))
        content = " ".join(dict.fromkeys(THOUGHTS.get(c.name, "") for c in decision.calls)).strip()
        message = Message(content=content or None, role="assistant", tool_calls=calls)
        finish_reason, produced = "tool_calls", content + "".join(c.function.arguments for c in calls)
    else:
        message = Message(content=decision.text, role="assistant")
        finish_reason, produced = "stop", decision.text
    prompt = json.dumps(messages, default=str, ensure_ascii=False) + json.dumps(
        optional_params.get("tools") or [], default=str
    )
    usage = Usage(prompt_tokens=_tokens(prompt), completion_tokens=_tokens(produced))
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens
    return ModelResponse(
        model=MODEL_NAME,
        created=int(time.time()),
        choices=[Choices(index=0, finish_reason=finish_reason, message=message)],
        usage=usage,
    )


def respond(messages: list, optional_params: dict) -> ModelResponse:
    """Decide and wrap. A policy bug must not leave the parent without an answer, so it answers plainly."""
    try:
        decision = decide(messages, tool_names(optional_params))
    except Exception:  # the last-resort model: log the bug, still answer
        logger.exception("offline policy failed")
        decision = Decision(text=replies.not_understood())
    return build_response(decision, messages, optional_params)


class OfflinePolicy(CustomLLM):
    """litellm's handler for the "offline" provider."""

    def completion(
        self, model: str, messages: list, *args, optional_params: dict | None = None, **kwargs
    ) -> ModelResponse:
        return respond(messages, optional_params or {})

    async def acompletion(
        self, model: str, messages: list, *args, optional_params: dict | None = None, **kwargs
    ) -> ModelResponse:
        return respond(messages, optional_params or {})
