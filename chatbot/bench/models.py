"""Bench-only models, plugged into litellm's custom-provider hook like any hosted model.

- `benchzero/scripted`: answers at once: one `check_availability` call, then a short text answer.
- `benchslow/1s`: waits the given seconds (`1s`, `0.5s`), then echoes the parent messages of the turn
  ("Answered: a | b"). With `BENCH_SPANS_KEY` set, each call's span (wall clock, pid, the messages it
  answered) is appended to that Redis list, so overlapping turns of one contact can be found across processes.
- `benchrec/offline`: the offline policy, recording how many prompt tokens each call was sent.

The loop cannot tell any of them from a hosted model: they answer through `litellm.acompletion`.
"""

import asyncio
import json
import os
import re
import time
import uuid

import litellm
from litellm import CustomLLM
from litellm.types.utils import ChatCompletionMessageToolCall, Choices, Function, Message, ModelResponse, Usage

ZERO_MODEL = "benchzero/scripted"
SLOW_PROVIDER = "benchslow"
RECORDING_MODEL = "benchrec/offline"
SPANS_KEY_VARIABLE = "BENCH_SPANS_KEY"
SPANS_TTL_SECONDS = 3600


def response(content: str | None = None, tool_calls: list[tuple[str, dict]] | None = None) -> ModelResponse:
    calls = [
        ChatCompletionMessageToolCall(id=f"call_{uuid.uuid4().hex[:12]}", type="function",
                                      function=Function(name=name, arguments=json.dumps(args)))
        for name, args in tool_calls or []
    ]
    message = Message(content=content, role="assistant", tool_calls=calls or None)
    return ModelResponse(
        model="bench", created=int(time.time()),
        choices=[Choices(index=0, finish_reason="tool_calls" if calls else "stop", message=message)],
        usage=Usage(prompt_tokens=0, completion_tokens=0, total_tokens=0),
    )


def turn_user_messages(messages: list[dict]) -> list[str]:
    """The parent messages of the current turn: the user messages after the last assistant text."""
    last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=0)
    return [m.get("content") or "" for m in messages[last_assistant + 1:] if m.get("role") == "user"]


class ZeroLatencyModel(CustomLLM):
    """One check_availability call, then a text answer; no waiting, so a turn costs only the machinery."""

    def _answer(self, messages: list[dict]) -> ModelResponse:
        if messages and messages[-1].get("role") == "tool":
            return response("Here are the open tour slots. Which one suits you?")
        return response(tool_calls=[("check_availability", {})])

    def completion(self, *args, **kwargs) -> ModelResponse:
        return self._answer(kwargs["messages"])

    async def acompletion(self, *args, **kwargs) -> ModelResponse:
        return self._answer(kwargs["messages"])


def _seconds(model: str) -> float:
    found = re.search(r"([0-9]*\.?[0-9]+)\s*s?$", model or "")
    return float(found.group(1)) if found else 1.0


class SlowEchoModel(CustomLLM):
    """Takes `<n>s` (from the model name) per call; echoes the turn's parent messages; records its span."""

    async def acompletion(self, *args, **kwargs) -> ModelResponse:
        started = time.time()
        await asyncio.sleep(_seconds(kwargs.get("model") or (args[0] if args else "")))
        texts = turn_user_messages(kwargs["messages"])
        ended = time.time()
        key = os.environ.get(SPANS_KEY_VARIABLE)
        if key:
            from config.redis import get_async_redis

            span = json.dumps({"pid": os.getpid(), "start": started, "end": ended, "texts": texts})
            client = get_async_redis()
            await client.rpush(key, span)
            await client.expire(key, SPANS_TTL_SECONDS)
        return response("Answered: " + " | ".join(texts))


class RecordingOfflineModel(CustomLLM):
    """The offline policy, noting the prompt tokens (`chatbot.agent.prompt.count_tokens`) of every call."""

    def __init__(self) -> None:
        super().__init__()
        self.turn = 0
        self.calls: list[tuple[int, int, int]] = []  # (turn, prompt tokens of the messages sent, of the system one)

    def _answer(self, messages: list[dict], optional_params: dict | None) -> ModelResponse:
        from chatbot.agent.offline.provider import respond
        from chatbot.agent.prompt import count_tokens

        system = [m for m in messages[:1] if m.get("role") == "system"]
        self.calls.append((self.turn, count_tokens(messages), count_tokens(system) if system else 0))
        return respond(messages, optional_params or {})

    def completion(self, model: str, messages: list, *args, optional_params: dict | None = None, **kwargs):
        return self._answer(messages, optional_params)

    async def acompletion(self, model: str, messages: list, *args, optional_params: dict | None = None, **kwargs):
        return self._answer(messages, optional_params)


def register(provider: str, handler: CustomLLM) -> CustomLLM:
    """Put `handler` under `provider` in litellm's custom providers (replacing an earlier one)."""
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != provider]
    litellm.custom_provider_map.append({"provider": provider, "custom_handler": handler})
    litellm.utils.custom_llm_setup()
    return handler


def register_zero() -> ZeroLatencyModel:
    return register(ZERO_MODEL.split("/")[0], ZeroLatencyModel())


def register_slow() -> SlowEchoModel:
    return register(SLOW_PROVIDER, SlowEchoModel())


def register_recording() -> RecordingOfflineModel:
    return register(RECORDING_MODEL.split("/")[0], RecordingOfflineModel())
