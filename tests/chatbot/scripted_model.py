"""A scripted model for loop tests, plugged in through litellm's custom-provider hook.

The loop calls `litellm.acompletion("scripted/test", ...)` exactly as it would a
hosted model; each call takes the next scripted step (an answer, tool calls, or
an exception to raise; "delay": seconds it takes) and records the messages it was sent.
"""

import asyncio
import json
import uuid

import litellm
from litellm import CustomLLM
from litellm.types.utils import ChatCompletionMessageToolCall, Function, ModelResponse, Usage


class ScriptedModel(CustomLLM):
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
