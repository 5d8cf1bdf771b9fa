"""A scripted model for loop tests, plugged in through litellm's custom-provider hook.

The loop calls `litellm.acompletion("scripted/test", ...)` exactly as it would a
hosted model; each call takes the next scripted step (an answer, tool calls, or
an exception to raise; "delay": seconds it takes) and records the messages it was sent.
Where the loop streams (the web chat), it is streamed (`Streamed`): a hosted model's stream, made of the answer.
"""

import asyncio
import json
import uuid
from collections.abc import AsyncIterator

import litellm
from litellm import CustomLLM
from litellm.types.utils import ChatCompletionMessageToolCall, Function, GenericStreamingChunk, ModelResponse, Usage

from quality.bench.standin import pieces


class Streamed:
    """A CustomLLM's `acompletion` streamed as a hosted model streams it: the text word by word, then the tool
    calls, then the end with the usage."""

    async def astreaming(self, *args, **kwargs) -> AsyncIterator[GenericStreamingChunk]:
        response = await self.acompletion(*args, **kwargs)
        choice = response.choices[0]
        for piece in pieces(choice.message.content) if choice.message.content else []:
            yield GenericStreamingChunk(text=piece, tool_use=None, is_finished=False, finish_reason="", usage=None,
                                        index=0)
        for index, call in enumerate(choice.message.tool_calls or []):
            yield GenericStreamingChunk(text="", is_finished=False, finish_reason="", usage=None, index=0, tool_use={
                "id": call.id, "type": "function", "index": index,
                "function": {"name": call.function.name, "arguments": call.function.arguments}})
        usage = getattr(response, "usage", None) or Usage(prompt_tokens=0, completion_tokens=0, total_tokens=0)
        yield GenericStreamingChunk(text="", tool_use=None, is_finished=True, finish_reason=choice.finish_reason,
                                    index=0, usage={"prompt_tokens": usage.prompt_tokens,
                                                    "completion_tokens": usage.completion_tokens,
                                                    "total_tokens": usage.total_tokens})


class ScriptedModel(Streamed, CustomLLM):
    def __init__(self) -> None:
        super().__init__()
        self.script: list = []
        self.calls: list[list[dict]] = []
        self.tools: list[list[str]] = []  # per call, the names of the tools offered, in order

    def _next(self, messages: list[dict]) -> ModelResponse:
        self.calls.append([dict(m) for m in messages])
        step = self.script.pop(0) if self.script else {"content": "Done."}
        if isinstance(step, Exception):
            raise step
        tool_calls = [
            ChatCompletionMessageToolCall(
                id=f"call_{uuid.uuid4().hex[:8]}", type="function",
                function=Function(name=name, arguments=args if isinstance(args, str) else json.dumps(args)),
            )
            for name, args in step.get("tool_calls", [])
        ]
        response = ModelResponse()
        response.choices[0].message.content = step.get("content")
        response.choices[0].message.tool_calls = tool_calls or None
        response.choices[0].finish_reason = "tool_calls" if tool_calls else "stop"
        response.usage = Usage(prompt_tokens=100, completion_tokens=10, total_tokens=110)
        return response

    def _offered(self, kwargs: dict) -> None:
        offered = (kwargs.get("optional_params") or {}).get("tools") or []
        self.tools.append([t["function"]["name"] for t in offered])

    def completion(self, *args, **kwargs) -> ModelResponse:
        self._offered(kwargs)
        return self._next(kwargs["messages"])

    async def acompletion(self, *args, **kwargs) -> ModelResponse:
        if self.script and isinstance(self.script[0], dict) and self.script[0].get("delay"):
            await asyncio.sleep(self.script[0]["delay"])  # a model that takes its time over this step
        self._offered(kwargs)
        return self._next(kwargs["messages"])


def register(provider: str, handler: CustomLLM) -> CustomLLM:
    """Put `handler` under `provider` in litellm's custom providers (replacing an earlier one): to the loop,
    `<provider>/...` is then a hosted model, reached through litellm like any other."""
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != provider]
    litellm.custom_provider_map.append({"provider": provider, "custom_handler": handler})
    litellm.utils.custom_llm_setup()
    return handler


def install() -> ScriptedModel:
    return register("scripted", ScriptedModel())
