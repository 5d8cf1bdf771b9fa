"""Bench-only models, plugged into the model interface (`chatbot.agent.model.register_local`) like the offline policy.

- `benchzero/scripted`: answers at once: one `check_availability` call, then a short text answer.
- `benchslow/1s`: waits the given seconds (`1s`, `0.5s`), then echoes the parent messages of the turn
  ("Answered: a | b"). With `BENCH_SPANS_KEY` set, each call's span (wall clock, pid, the messages it
  answered) is appended to that Redis list, so overlapping turns of one contact can be found across processes.
- `benchrec/offline`: the offline policy, recording how many prompt tokens each call was sent.

The loop calls them through `chatbot.agent.model.complete()` exactly as it calls the offline policy (the default
model): in this process, without litellm. A hosted model adds litellm's client and the network on top.
"""

import asyncio
import json
import os
import re
import time
import uuid

from chatbot.agent.model import ModelReply, register_local

ZERO_MODEL = "benchzero/scripted"
SLOW_PROVIDER = "benchslow"
RECORDING_MODEL = "benchrec/offline"
SPANS_KEY_VARIABLE = "BENCH_SPANS_KEY"
SPANS_TTL_SECONDS = 3600
ZERO_REPLY = "Here are the open tour slots. Which one suits you?"


def reply(content: str = "", tool_calls: list[tuple[str, dict]] | None = None) -> ModelReply:
    calls = [{"id": f"call_{uuid.uuid4().hex[:12]}", "name": name, "arguments": json.dumps(args)}
             for name, args in tool_calls or []]
    return ModelReply(content=content, tool_calls=calls, model="bench", latency_ms=0)


def turn_user_messages(messages: list[dict]) -> list[str]:
    """The parent messages of the current turn: the user messages after the last assistant text."""
    last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=0)
    return [m.get("content") or "" for m in messages[last_assistant + 1:] if m.get("role") == "user"]


async def zero_latency(model: str, messages: list[dict], tools: list[dict]) -> ModelReply:
    """One check_availability call, then a text answer; no waiting, so a turn costs only the machinery."""
    if messages and messages[-1].get("role") == "tool":
        return reply(ZERO_REPLY)
    return reply(tool_calls=[("check_availability", {})])


def _seconds(model: str) -> float:
    found = re.search(r"([0-9]*\.?[0-9]+)\s*s?$", model or "")
    return float(found.group(1)) if found else 1.0


async def slow_echo(model: str, messages: list[dict], tools: list[dict]) -> ModelReply:
    """Takes `<n>s` (from the model name) per call; echoes the turn's parent messages; records its span."""
    started = time.time()
    await asyncio.sleep(_seconds(model))
    texts = turn_user_messages(messages)
    ended = time.time()
    key = os.environ.get(SPANS_KEY_VARIABLE)
    if key:
        from plumbing.redis import get_async_redis

        span = json.dumps({"pid": os.getpid(), "start": started, "end": ended, "texts": texts})
        client = get_async_redis()
        await client.rpush(key, span)
        await client.expire(key, SPANS_TTL_SECONDS)
    return reply("Answered: " + " | ".join(texts))


class RecordingOfflineModel:
    """The offline policy, noting the prompt tokens (`chatbot.agent.prompt.count_tokens`) of every call,
    and the tokens a hosted model would bill for it: the whole request (messages and tool schemas) and the
    answer, in the same tokenizer."""

    def __init__(self) -> None:
        self.turn = 0
        self.calls: list[tuple[int, int, int]] = []  # (turn, prompt tokens of the messages sent, of the system one)
        self.billed: list[tuple[int, int]] = []  # (prompt tokens with the tool schemas, completion tokens)

    async def __call__(self, model: str, messages: list[dict], tools: list[dict]) -> ModelReply:
        from chatbot.agent.offline.provider import complete
        from chatbot.agent.prompt import count_text_tokens, count_tokens

        system = [m for m in messages[:1] if m.get("role") == "system"]
        self.calls.append((self.turn, count_tokens(messages), count_tokens(system) if system else 0))
        answer = await complete(model, messages, tools)
        produced = answer.content + "".join(c["name"] + c["arguments"] for c in answer.tool_calls)
        self.billed.append((count_tokens(messages, tools), count_text_tokens(produced)))
        return answer


def register_zero() -> None:
    register_local(ZERO_MODEL.split("/")[0], zero_latency)


def register_slow() -> None:
    register_local(SLOW_PROVIDER, slow_echo)


def register_recording() -> RecordingOfflineModel:
    recorder = RecordingOfflineModel()
    register_local(RECORDING_MODEL.split("/")[0], recorder)
    return recorder
