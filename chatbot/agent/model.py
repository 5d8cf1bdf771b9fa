"""Model access: one interface for every model, one retry on a provider error, then the offline policy.

`complete()` is the loop's only way to a model. Models that run in this process
(the offline policy, `offline/...`, and whatever `register_local()` adds) are
called directly; every other model string is a hosted model, reached through
litellm, which is imported on the first hosted call (it takes seconds to import,
so a process that never calls a hosted model never pays for it).

The parent always gets an answer: when the configured model fails twice, the
offline policy answers and the trace says so.

Given a `Draft` (the web chat), a hosted model is asked to stream: its answer's
text goes to the draft as it is written (`stream_options.include_usage`: the
tokens and cost come from the stream's last chunk). A call that turns out to ask
for tools stops writing to the draft and drops what it wrote; a stream that
breaks drops it too, and the retry (or the offline policy) answers instead.
"""

import contextlib
import importlib
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from django.conf import settings

from chatbot.agent.dialogue import Declared

logger = logging.getLogger(__name__)
OFFLINE_MODEL = "offline/policy"


@dataclass
class ModelReply:
    """One model call's outcome, in the loop's terms."""

    content: str
    tool_calls: list[dict]
    model: str
    latency_ms: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    fallback_reason: str = ""
    errors: list[str] = field(default_factory=list)
    declared: Declared | None = None  # a model of ours says what its text asked and offered (chatbot.agent.dialogue)


# A model in this process: (model string, messages, tool schemas) -> its reply.
LocalModel = Callable[[str, list[dict], list[dict]], Awaitable[ModelReply]]
# Provider (the part of the model string before "/") -> the model, or the dotted path it is imported from on use.
_local: dict[str, LocalModel | str] = {"offline": "chatbot.agent.offline.provider:complete"}


def register_local(provider: str, model: LocalModel) -> None:
    """Answer `<provider>/...` model strings in this process with `model` (replacing an earlier one)."""
    _local[provider] = model


def local_model(model: str) -> LocalModel | None:
    """The in-process model for this model string, or None for a hosted one."""
    provider = model.split("/", 1)[0] if "/" in model else ""
    found = _local.get(provider)
    if isinstance(found, str):
        module, name = found.split(":")
        found = _local[provider] = getattr(importlib.import_module(module), name)
    return found


class Draft(Protocol):
    """Where a streamed answer's text goes as the model writes it (`chatbot.agent.drafts.Draft`)."""

    def write(self, text: str) -> None: ...

    def drop(self, reason: str) -> None: ...


def streams(model: str | None = None) -> bool:
    """Whether this model (the configured one by default) can stream its answers: a hosted one."""
    return local_model(model or settings.LLM_MODEL) is None


_litellm = None


def litellm_module():
    """litellm, imported and set up on first use."""
    global _litellm
    if _litellm is None:
        import litellm

        litellm.suppress_debug_info = True
        if os.environ.get("LANGSMITH_API_KEY"):
            litellm.callbacks = [*litellm.callbacks, "langsmith"]
        _litellm = litellm
    return _litellm


def warm_up_hosted(tools: list[dict]) -> None:
    """A hosted model's first call, minus the network, at a serving process's start: litellm and the OpenAI SDK
    import most of what a call needs on the first one (its MCP handling when tools are sent, the SDK's resources,
    the stream's builder: about 2 s, which the first parent of every process waited for). A mock answer
    (litellm's `mock_response`, untraced) goes through the same code; nothing leaves the process."""
    model = settings.LLM_MODEL
    if not streams(model):
        return
    try:
        _mock_call(litellm_module(), model, tools)
    except Exception as exc:  # e.g. a model string litellm does not know: its turns fall back, the server starts
        logger.warning("warming up %s failed (%s: %s); its first call loads what it needs", model,
                       type(exc).__name__, exc)


def _mock_call(litellm, model: str, tools: list[dict]) -> None:
    messages = [{"role": "user", "content": "warming up"}]
    stream = litellm.completion(model=model, messages=messages, tools=tools, stream=True, api_key="warm-up",
                                stream_options={"include_usage": True}, mock_response="warming up",
                                **{"no-log": True})  # not a call to trace (LangSmith)
    response = litellm.stream_chunk_builder(list(stream), messages=messages)
    with contextlib.suppress(Exception):  # a model without a known price: as in a real call
        litellm.completion_cost(completion_response=response)
    import openai  # litellm's own SDK, loaded with it just now (a process without a hosted model never loads it)

    openai.AsyncOpenAI(api_key="warm-up").chat.completions  # noqa: B018 (the SDK imports its resources on use)


def _tool_calls(message) -> list[dict]:
    calls = []
    for index, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = call.function if hasattr(call, "function") else call["function"]
        calls.append({
            "id": (call.id if hasattr(call, "id") else call.get("id")) or f"call_{index}",
            "name": function.name if hasattr(function, "name") else function["name"],
            "arguments": function.arguments if hasattr(function, "arguments") else function["arguments"],
        })
    return calls


def wire_messages(messages: list[dict]) -> list[dict]:
    """The messages as every OpenAI-compatible server accepts them.

    An assistant message that only calls tools has no text; OpenAI takes `content: null` there, but
    llama.cpp's server (and other self-hosted ones) refuse a null content, so it is sent as "".
    """
    return [{**m, "content": ""} if m.get("role") == "assistant" and m.get("content") is None else m
            for m in messages]


async def _call_hosted(model: str, messages: list[dict], tools: list[dict], answer_only: bool = False,
                       draft: Draft | None = None) -> ModelReply:
    litellm = litellm_module()
    # the last call of a turn answers in text; the tools stay in the request (the cached prefix), only not callable
    kwargs = {"model": model, "messages": wire_messages(messages), "tools": tools,
              "timeout": settings.LLM_TIMEOUT_SECONDS, "tool_choice": "none" if answer_only else "auto",
              "max_retries": 0}  # the provider SDK must not retry inside our attempt: complete() decides
    kwargs.update({k: v for k, v in (("api_base", settings.LLM_API_BASE), ("api_key", settings.LLM_API_KEY)) if v})
    if draft is None:
        response = await litellm.acompletion(**kwargs)
    else:
        response = await _streamed(litellm, kwargs, draft)
    message = response.choices[0].message
    usage = getattr(response, "usage", None)
    try:
        cost = float(litellm.completion_cost(completion_response=response))
    except Exception:  # unknown price for this model: cost unknown, not an error
        cost = 0.0
    return ModelReply(
        content=message.content or "",
        tool_calls=_tool_calls(message),
        model=model,
        latency_ms=0,
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        cost=cost,
    )


async def _streamed(litellm, kwargs: dict, draft: Draft):
    """The completion, streamed: its text written to the draft until the model turns to tools (then what was
    written is dropped: a tool round is not an answer), the whole response rebuilt from the chunks (with the
    usage of the last one)."""
    chunks, calling = [], False
    stream = await litellm.acompletion(**kwargs, stream=True, stream_options={"include_usage": True})
    async for chunk in stream:
        chunks.append(chunk)
        delta = chunk.choices[0].delta if chunk.choices else None
        if delta is None or calling:
            continue
        if getattr(delta, "tool_calls", None):
            calling = True
            draft.drop("tool_calls")
        elif delta.content:
            draft.write(delta.content)
    response = litellm.stream_chunk_builder(chunks, messages=kwargs["messages"])
    message = response.choices[0].message if response is not None and response.choices else None
    if message is None or not (message.content or message.tool_calls):
        # litellm ends every stream with a finish reason of its own: a body that was no event stream at all
        # (a malformed one) reads as an empty answer
        raise ValueError("the stream carried no answer")
    return response


async def _call(model: str, messages: list[dict], tools: list[dict], answer_only: bool = False,
                draft: Draft | None = None) -> ModelReply:
    started = time.perf_counter()
    local = local_model(model)  # an in-process model reads CYCLES_LEFT from the facts instead; it answers at once
    reply = await (local(model, messages, tools) if local
                   else _call_hosted(model, messages, tools, answer_only, draft))
    reply.model = model
    reply.latency_ms = int((time.perf_counter() - started) * 1000)
    return reply


async def complete(messages: list[dict], tools: list[dict], model: str | None = None, *,
                   answer_only: bool = False, draft: Draft | None = None) -> ModelReply:
    """Ask the configured model; retry once on failure; then fall back to the offline policy. `answer_only`: the
    turn's last call (CYCLES_LEFT: 1), which must answer in text: a hosted model gets `tool_choice: "none"`.
    `draft`: a hosted model streams its answer's text there; a failed attempt drops what it wrote."""
    model = model or settings.LLM_MODEL
    errors = []
    attempts = 1 if model == OFFLINE_MODEL else 2
    for attempt in range(attempts):
        try:
            reply = await _call(model, messages, tools, answer_only, draft)
            reply.errors = errors
            return reply
        except Exception as exc:  # provider errors of every kind: timeouts, 5xx, bad responses, a broken stream
            if draft is not None:
                draft.drop("interrupted")
            errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
            logger.warning("model %s failed (attempt %d): %s", model, attempt + 1, errors[-1])
    if model == OFFLINE_MODEL:
        raise RuntimeError(f"The offline policy failed: {errors[-1]}")
    reply = await _call(OFFLINE_MODEL, messages, tools)
    reply.fallback_reason = f"{model} failed twice ({errors[-1]}); the offline policy answered."
    reply.errors = errors
    return reply
