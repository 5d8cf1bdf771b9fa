"""Model access: any litellm model string, one retry on a provider error, then the offline policy.

The parent always gets an answer: when the configured model fails twice, the
offline policy answers and the trace says so.
"""

import logging
import os
import time
from dataclasses import dataclass, field

import litellm
from django.conf import settings

from chatbot.agent import offline

logger = logging.getLogger(__name__)
OFFLINE_MODEL = "offline/policy"

litellm.suppress_debug_info = True
offline.register()
if os.environ.get("LANGSMITH_API_KEY"):
    litellm.callbacks = [*litellm.callbacks, "langsmith"]


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


async def _call(model: str, messages: list[dict], tools: list[dict]) -> ModelReply:
    started = time.perf_counter()
    kwargs = {"model": model, "messages": messages, "tools": tools, "timeout": settings.LLM_TIMEOUT_SECONDS}
    if model != OFFLINE_MODEL:
        kwargs.update({k: v for k, v in (("api_base", settings.LLM_API_BASE), ("api_key", settings.LLM_API_KEY)) if v})
        kwargs["tool_choice"] = "auto"
        kwargs["max_retries"] = 0  # the provider SDK must not retry inside our attempt: complete() decides
    response = await litellm.acompletion(**kwargs)
    message = response.choices[0].message
    usage = getattr(response, "usage", None)
    try:
        cost = float(litellm.completion_cost(completion_response=response)) if model != OFFLINE_MODEL else 0.0
    except Exception:  # unknown price for this model: cost unknown, not an error
        cost = 0.0
    return ModelReply(
        content=message.content or "",
        tool_calls=_tool_calls(message),
        model=model,
        latency_ms=int((time.perf_counter() - started) * 1000),
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        cost=cost,
    )


async def complete(messages: list[dict], tools: list[dict], model: str | None = None) -> ModelReply:
    """Ask the configured model; retry once on failure; then fall back to the offline policy."""
    model = model or settings.LLM_MODEL
    errors = []
    attempts = 1 if model == OFFLINE_MODEL else 2
    for attempt in range(attempts):
        try:
            reply = await _call(model, messages, tools)
            reply.errors = errors
            return reply
        except Exception as exc:  # provider errors of every kind: timeouts, 5xx, bad responses
            errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
            logger.warning("model %s failed (attempt %d): %s", model, attempt + 1, errors[-1])
    if model == OFFLINE_MODEL:
        raise RuntimeError(f"The offline policy failed: {errors[-1]}")
    reply = await _call(OFFLINE_MODEL, messages, tools)
    reply.fallback_reason = f"{model} failed twice ({errors[-1]}); the offline policy answered."
    reply.errors = errors
    return reply
