"""The ReAct loop: one turn from the parent's stored message(s) to the stored, structured reply.

Per cycle: prompt -> model -> tools (concurrently) -> results back to the model,
at most `LLM_MAX_CYCLES` cycles. Every step (think / act / observe / answer) is
stored as it happens and handed to `on_step` for streaming. Every tool call id
gets a result, even when the turn is interrupted, so history never dangles.
"""

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from decimal import Decimal

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from chatbot import outcomes
from chatbot.agent import blocks, memory, model, prompt, tools
from chatbot.models import Conversation, Message, ReasoningStep
from chatbot.text import without_nul

StepCallback = Callable[[dict], Awaitable[None]]

GIVE_UP_TEXT = (
    "I'm sorry, I couldn't finish that just now. Could you tell me once more what you'd like? "
    "If you prefer, I can ask the admissions team to call you back."
)
INTERRUPTED = {"status": "error", "message": "Interrupted before this tool could finish."}


class StepRecorder:
    """Stores reasoning steps in order and streams them."""

    def __init__(self, reply: Message, on_step: StepCallback | None) -> None:
        self.reply = reply
        self.on_step = on_step
        self.position = 0

    async def record(self, cycle: int, kind: str, content: str = "", **fields) -> ReasoningStep:
        step = ReasoningStep(message=self.reply, cycle=cycle, position=self.position, kind=kind,
                             content=without_nul(content), created_at=timezone.now(), **without_nul(fields))
        self.position += 1
        await database_sync_to_async(step.save)()
        if self.on_step:
            await self.on_step(step_payload(step))
        return step


def step_payload(step: ReasoningStep) -> dict:
    return {"cycle": step.cycle, "position": step.position, "kind": step.kind, "content": step.content,
            "tool_name": step.tool_name, "tool_arguments": step.tool_arguments, "tool_result": step.tool_result,
            "latency_ms": step.latency_ms, "model": step.model, "timestamp": step.created_at.isoformat()}


async def run_turn(conversation: Conversation, turn_messages: list[Message],
                   on_step: StepCallback | None = None) -> Message:
    """Answer the parent's message(s) of this turn; returns the stored assistant message."""
    started = time.perf_counter()
    school, contact = conversation.school, conversation.contact
    active = await sync_to_async(memory.ActiveContext.load)(school.pk, contact.pk)
    prior = await database_sync_to_async(lambda: list(
        conversation.messages.filter(role=Message.Role.USER, processed_at__isnull=False, handled_by_staff=False)
        .exclude(pk__in=[m.pk for m in turn_messages]).order_by("-created_at").values_list("text", flat=True)[:6]
    ))()
    ctx = tools.ToolContext(school=school, contact=contact, conversation=conversation, active=active,
                            history=list(reversed(prior)), turn_message_ids={m.pk for m in turn_messages})
    reply = await database_sync_to_async(Message.objects.create)(
        conversation=conversation, role=Message.Role.ASSISTANT, channel=conversation.channel,
        reply_to=turn_messages[-1] if turn_messages else None,
    )
    recorder = StepRecorder(reply, on_step)
    messages = await database_sync_to_async(prompt.build_messages)(conversation, active, turn_messages)
    observations: list[tuple[str, dict]] = []
    usage = {"prompt": 0, "completion": 0, "cost": 0.0}
    models_used: list[str] = []
    final_text = ""
    pending_calls: list[dict] = []
    try:
        for cycle in range(1, settings.LLM_MAX_CYCLES + 1):
            unread = 1 if await memory.has_new_messages(school.pk, contact.pk) else 0
            if unread:
                messages[0] = {"role": "system", "content": await database_sync_to_async(prompt.system_prompt)(
                    school, contact, active, conversation.summary.replace("\n", " | "), unread)}
            answer = await model.complete(messages, tools.TOOL_SCHEMAS)
            usage["prompt"] += answer.prompt_tokens
            usage["completion"] += answer.completion_tokens
            usage["cost"] += answer.cost
            models_used.append(answer.model)
            if answer.fallback_reason:
                await recorder.record(cycle, ReasoningStep.Kind.THINK, answer.fallback_reason, model=answer.model)
            if not answer.tool_calls:
                # On the last cycle late messages are left pending: taking them here would mark them
                # processed without an answer; the next turn (run_pending_turns) answers them.
                late = await database_sync_to_async(tools.take_unread)(ctx) if cycle < settings.LLM_MAX_CYCLES else []
                if late:
                    messages.extend({"role": "user", "content": m.text} for m in late)
                    await recorder.record(cycle, ReasoningStep.Kind.THINK,
                                          f"{len(late)} more message(s) arrived; answering everything together.",
                                          model=answer.model)
                    continue
                final_text = without_nul(answer.content).strip()
                break
            await recorder.record(
                cycle, ReasoningStep.Kind.THINK,
                answer.content.strip() or "Calling " + ", ".join(c["name"] for c in answer.tool_calls) + ".",
                model=answer.model, latency_ms=answer.latency_ms, prompt_tokens=answer.prompt_tokens,
                completion_tokens=answer.completion_tokens,
            )
            messages.append({"role": "assistant", "content": answer.content or None, "tool_calls": [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in answer.tool_calls
            ]})
            pending_calls = list(answer.tool_calls)
            for call in answer.tool_calls:
                await recorder.record(cycle, ReasoningStep.Kind.ACT, tool_name=call["name"],
                                      tool_call_id=call["id"], tool_arguments=_jsonable_arguments(call["arguments"]))
            results = await asyncio.gather(*[_timed_execute(call, ctx) for call in answer.tool_calls])
            for call, (result, latency_ms) in zip(answer.tool_calls, results, strict=True):
                observations.append((call["name"], result))
                messages.append({"role": "tool", "tool_call_id": call["id"], "name": call["name"],
                                 "content": json.dumps(result, ensure_ascii=False, default=str)})
                await recorder.record(cycle, ReasoningStep.Kind.OBSERVE, _observation_text(result),
                                      tool_name=call["name"], tool_call_id=call["id"], tool_result=result,
                                      latency_ms=latency_ms)
            pending_calls = []
        else:
            final_text = GIVE_UP_TEXT
    finally:
        for call in pending_calls:  # interrupted between asking for tools and storing their results
            await recorder.record(0, ReasoningStep.Kind.OBSERVE, INTERRUPTED["message"], tool_name=call["name"],
                                  tool_call_id=call["id"], tool_result=INTERRUPTED)
    final_text = final_text or GIVE_UP_TEXT
    latency_ms = int((time.perf_counter() - started) * 1000)
    await recorder.record(cycle, ReasoningStep.Kind.ANSWER, final_text, model=models_used[-1] if models_used else "",
                          latency_ms=latency_ms)
    reply.text = final_text
    reply.payload = {"blocks": blocks.blocks_for(observations)}
    reply.model = " -> ".join(dict.fromkeys(models_used))
    reply.latency_ms = latency_ms
    reply.prompt_tokens = usage["prompt"]
    reply.completion_tokens = usage["completion"]
    reply.cost = Decimal(str(round(usage["cost"], 6)))
    await database_sync_to_async(_finish)(reply, conversation, observations, active)
    return reply


def _finish(reply: Message, conversation: Conversation, observations: list, active: memory.ActiveContext) -> None:
    # The reply is stamped when it is complete, so it sorts after every message it answers,
    # including those that arrived during the turn (history and transcripts order by created_at).
    # The reply and the conversation's totals are one write: a dropped connection leaves neither.
    reply.created_at = timezone.now()
    with transaction.atomic():
        reply.save(update_fields=["text", "payload", "model", "latency_ms", "prompt_tokens", "completion_tokens",
                                  "cost", "created_at"])
        Conversation.objects.filter(pk=conversation.pk).update(
            total_tokens=F("total_tokens") + reply.prompt_tokens + reply.completion_tokens,
            total_cost=F("total_cost") + reply.cost,
            outcome=outcomes.settle_turn(conversation.pk, observations),
            last_message_at=timezone.now(),
        )
    active.save()


async def _timed_execute(call: dict, ctx: tools.ToolContext) -> tuple[dict, int]:
    started = time.perf_counter()
    _, result = await tools.execute(call["name"], call["arguments"], ctx)
    return result, int((time.perf_counter() - started) * 1000)


def _jsonable_arguments(raw) -> dict | str:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw or "{}")
        return parsed if isinstance(parsed, dict) else {"_raw": raw}
    except (json.JSONDecodeError, TypeError):
        return {"_raw": str(raw)}


def _observation_text(result: dict) -> str:
    status = result.get("status") or ("unread" if result.get("has_unread") else "ok")
    message = result.get("message") or result.get("answer") or ""
    return f"{status}: {message}"[:500] if message else str(status)
