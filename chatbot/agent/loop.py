"""The ReAct loop: one turn from the parent's stored message(s) to the stored, structured reply.

A turn starts from a `TurnInput` (the messages it answers, and what the caller read with them) and a
`TurnStore` (where it reads its history and writes its steps and answer: `chatbot.hotpath`), both handed in
by the caller (`chatbot.services`). Per cycle: prompt -> model -> one of three typed steps (`FinalAnswer`,
`RunTools`, `GaveUp`), at most `LLM_MAX_CYCLES` cycles; messages that arrive while the model answers come
back as a fourth (`TookInLate`). The turn's database work is grouped into one database hop (`plumbing.hops`)
per phase, because every hop hands the work to a database thread and back:

1. `prepare_turn` (in the caller's first hop, which also stored the message and took
   the session lock): what the caller did not read (the active task, the earlier
   messages) and the prompt (the reply's row is written with its first steps);
2. per tool cycle: the tools, each in a hop of its own (concurrently); the cycle's
   reasoning steps in one statement after the tools' writes (the first cycle's with
   the reply's row): a single tool call's in its own hop, right after it; then
   streamed together. A round with a tool that writes also reads CONTACT again in
   that hop, so every model call's facts are as they are then (`Turn.refresh_system`,
   with CYCLES_LEFT: the calls left in the turn). Every call is offered every tool
   (`tools.all_schemas()`, one order: the prefix a provider caches);
3. `_finish`: unless a message of the contact is waiting (one that arrived while the
   model answered: it is taken into the turn and the model asked again), the answer
   step, the reply and the conversation's totals in one statement
   (`TurnStore.finish_turn`; a transaction when the turn settles an outcome),
   then the caller's `after_finish` (e.g. the active task saved with the session
   lock's release), in the same hop. The steps stored here are returned for the
   caller to deliver with the reply.

Every tool call id gets a result, even when the turn is interrupted, so history
never dangles. A turn that gives up says so in the reply's payload (`gave_up`).
"""

import asyncio
import contextlib
import datetime as dt
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

from django.conf import settings
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy

from chatbot import outcomes
from chatbot.agent import blocks, dialogue, memory, model, prompt, tools
from chatbot.hotpath import FactHints
from chatbot.language import reply_language
from chatbot.models import Conversation, Message, ReasoningStep
from chatbot.text import without_nul
from plumbing.hops import database_hop

StepCallback = Callable[[dict], Awaitable[None]]
StepsCallback = Callable[[list[dict]], Awaitable[None]]  # a batch of steps, streamed as one frame
# The caller's last step inside the turn's last database hop, given the active task to save (e.g. with the lock).
AfterFinish = Callable[[memory.ActiveContext], Any]

GIVE_UP_TEXT = gettext_lazy(
    "I'm sorry, I couldn't finish that just now. Could you tell me once more what you'd like? "
    "If you prefer, I can ask the admissions team to call you back."
)
INTERRUPTED = {"status": "error", "message": "Interrupted before this tool could finish."}
PRIOR_MESSAGES = 6  # the parent's earlier messages the tools may read (ToolContext.history)


# --- what a turn starts from, and where it stores ----------------------------------------------
class TurnStore(Protocol):
    """Where a turn reads its history and writes its steps and answer: `chatbot.hotpath`, handed in by the caller
    (see its functions for what each does)."""

    def earlier_messages(self, conversation: Conversation, before_ids: set[int]) -> list[Message]: ...

    def store_steps(self, reply: Message, steps: Sequence[ReasoningStep], unanswered_of: int | None = None) -> bool: ...

    def finish_turn(self, reply: Message, steps: Sequence[ReasoningStep], conversation_id: int, at: dt.datetime,
                    outcome: str | None = None, unless_unanswered: int | None = None,
                    claims: dict[int, dt.datetime] | None = None) -> bool: ...

    def has_unanswered(self, contact_id: int) -> bool: ...


@dataclass
class TurnInput:
    """What a turn answers and what was read with it (by the caller's hop that took the messages).

    `active`: the active task, if read with the session lock (else the loop reads it); `earlier`: the
    conversation's earlier messages, if read with the claim (else the loop reads them, unless
    `new_conversation`: the batch's first message started the conversation, so nothing in it was answered
    yet); `hints`: which of the contact's look-ups found something, read with the claim."""

    conversation: Conversation
    messages: list[Message]
    active: memory.ActiveContext | None = None
    earlier: list[Message] | None = None
    hints: FactHints = field(default_factory=FactHints)
    new_conversation: bool = False


# --- the typed steps of a cycle ---------------------------------------------------------------
@dataclass
class FinalAnswer:
    """The model answered in text: the turn ends with it (`declared`: what a model of ours says it asked)."""

    text: str
    declared: dialogue.Declared | None = None


@dataclass
class RunTools:
    """The model asked for tools: run them, feed the results back, next cycle."""

    calls: list[dict]


@dataclass
class GaveUp:
    """No answer within the cycle cap, or an empty one: the parent gets GIVE_UP_TEXT, marked `gave_up`."""

    reason: str


@dataclass
class TookInLate:
    """Messages of the parent arrived while the model answered: nothing was stored, they are taken into the turn
    and the model asked again, to answer everything together."""

    messages: list[Message]


def next_step(answer: model.ModelReply) -> FinalAnswer | RunTools | GaveUp:
    """What the model's reply asks the loop to do."""
    if answer.tool_calls:
        return RunTools(list(answer.tool_calls))
    text = without_nul(answer.content).strip()
    return FinalAnswer(text, answer.declared) if text else GaveUp("the model answered with no text")


# --- the turn's state -------------------------------------------------------------------------
@dataclass
class Turn:
    """One turn in progress: what phase 1 read, and what the cycles add."""

    conversation: Conversation
    turn_messages: list[Message]
    reply: Message
    ctx: tools.ToolContext
    messages: list[dict]
    store: TurnStore
    started: float = field(default_factory=time.perf_counter)
    observations: list[tuple[str, dict]] = field(default_factory=list)
    models_used: list[str] = field(default_factory=list)
    usage: dict = field(default_factory=lambda: {"prompt": 0, "completion": 0, "cost": 0.0})
    position: int = 0
    contact_facts: dict = field(default_factory=dict)  # CONTACT as last read: at the start, after each tool that writes
    unread: bool = False  # a message arrived during the turn and check_unread_messages has not run since
    dialogue_before: dialogue.DialogueState = field(init=False)  # the state the last sent reply left

    def __post_init__(self) -> None:
        self.dialogue_before = self.ctx.active.dialogue

    def refresh_system(self, cycles_left: int) -> None:
        """The system message for the next model call, with the facts as they are now: ACTIVE_TASK as the tools
        left it, CONTACT as read after the last tool that writes (`reread_contact`), the clock, UNREAD and
        CYCLES_LEFT. Reads nothing from the database."""
        conversation = self.conversation
        self.messages[0] = {"role": "system", "content": prompt.system_prompt(
            conversation.school, conversation.contact, self.ctx.active, conversation.summary.replace("\n", " | "),
            int(self.unread), cycles_left, self.contact_facts)}

    def reread_contact(self) -> None:
        """CONTACT from the database again (synchronous: in a database hop), after a tool that may have changed it."""
        self.contact_facts = prompt.contact_facts(self.conversation.contact)

    def step(self, cycle: int, kind: str, content: str = "", **fields) -> ReasoningStep:
        """A reasoning step in order (unsaved: the phase that owns it stores it)."""
        step = ReasoningStep(message=self.reply, cycle=cycle, position=self.position, kind=kind,
                             content=without_nul(content), created_at=timezone.now(), **without_nul(fields))
        self.position += 1
        return step

    def count(self, answer: model.ModelReply) -> None:
        self.usage["prompt"] += answer.prompt_tokens
        self.usage["completion"] += answer.completion_tokens
        self.usage["cost"] += answer.cost
        self.models_used.append(answer.model)


def step_payload(step: ReasoningStep) -> dict:
    return {"cycle": step.cycle, "position": step.position, "kind": step.kind, "content": step.content,
            "tool_name": step.tool_name, "tool_arguments": step.tool_arguments, "tool_result": step.tool_result,
            "latency_ms": step.latency_ms, "model": step.model, "timestamp": step.created_at.isoformat()}


def prepare_turn(given: TurnInput, store: TurnStore) -> Turn:
    """Phase 1, synchronous (run inside the caller's hop): read what the caller did not (the active task, the
    earlier messages) and build the prompt. A conversation the batch started has no earlier messages to read:
    every claim takes all of a conversation's unanswered messages, so nothing in it was answered while its first
    message was not. (Another tab of the visitor could write into it in the same instant; its message is in
    this batch too, unless that tab's turn ran from start to finish between this message being stored and this
    turn's lock: longer than a model call.)"""
    conversation, turn_messages = given.conversation, given.messages
    school, contact = conversation.school, conversation.contact
    with translation.override(reply_language(school, contact)):
        active = given.active or memory.ActiveContext.load(school.pk, contact.pk)
        turn_ids = {m.pk for m in turn_messages}
        earlier = given.earlier
        if earlier is None:
            earlier = [] if given.new_conversation else store.earlier_messages(conversation, turn_ids)
        ctx = tools.ToolContext(school=school, contact=contact, conversation=conversation, active=active,
                                history=_prior_texts(conversation, earlier, turn_ids), turn_message_ids=turn_ids,
                                claims={m.pk: m.processed_at for m in turn_messages if m.processed_at is not None})
        known = prompt.contact_facts(contact, given.hints)
        messages = prompt.build_messages(conversation, active, turn_messages, earlier,
                                         cycles_left=settings.LLM_MAX_CYCLES, known=known)
    reply = Message(conversation=conversation, role=Message.Role.ASSISTANT, channel=conversation.channel,
                    reply_to=turn_messages[-1] if turn_messages else None)  # stored with its first steps
    return Turn(conversation, turn_messages, reply, ctx, messages, store, contact_facts=known)


def _prior_texts(conversation: Conversation, earlier: list[Message], turn_ids: set[int]) -> list[str]:
    """The parent's last PRIOR_MESSAGES texts before this turn: from the history already read, unless some of
    them were folded into the summary (then read again)."""
    texts = [m.text for m in earlier if m.role == Message.Role.USER]
    if len(texts) >= PRIOR_MESSAGES or not conversation.summary_until:
        return texts[-PRIOR_MESSAGES:]
    prior = (conversation.messages.filter(role=Message.Role.USER, processed_at__isnull=False, handled_by_staff=False)
             .exclude(pk__in=turn_ids).order_by("-created_at").values_list("text", flat=True)[:PRIOR_MESSAGES])
    return list(reversed(prior))


async def run_turn(conversation: Conversation, turn_messages: list[Message], store: TurnStore,
                   on_step: StepCallback | None = None) -> Message:
    """Answer the parent's message(s) of this turn, in their language; returns the stored assistant message."""
    async def on_steps(steps: list[dict]) -> None:
        for step in steps:
            await on_step(step)

    turn = await database_hop(prepare_turn)(TurnInput(conversation, turn_messages), store)
    finished = await run_prepared(turn, on_steps if on_step else None)
    if on_step:
        await on_steps(finished.steps)
    return finished.reply


@dataclass
class Finished:
    """A stored turn: the reply, its last steps (stored with it, not streamed yet), what `after_finish` returned."""

    reply: Message
    steps: list[dict]
    after: Any = None


async def run_prepared(turn: Turn, on_steps: StepsCallback | None = None,
                       after_finish: AfterFinish | None = None, draft: model.Draft | None = None) -> Finished:
    """Phases 2 and 3 of a prepared turn, in the parent's language; each tool cycle's steps go to `on_steps`
    once stored. `draft`: a hosted model's answer is streamed there as it is written (`chatbot.agent.drafts`);
    the reply stored is the whole answer, whatever the draft showed."""
    with translation.override(reply_language(turn.conversation.school, turn.conversation.contact)):
        return await _run_prepared(turn, on_steps, after_finish, draft)


class _Steps:
    """A turn's reasoning steps between its phases, and the progress it shows.

    `pending` are stored by the next phase (a tool that writes stores its round's at once, with its writes;
    the answer stores what is left with the reply). A tool round's steps are progress: if the turn has not
    answered CHAT_PROGRESS_AFTER_SECONDS after the round, they are stored (if not yet) and streamed; a turn that
    answers sooner sends them with its reply. Either way a step is durable before it is shown."""

    def __init__(self, turn: Turn, on_steps: StepsCallback | None) -> None:
        self.turn, self.on_steps = turn, on_steps
        self.pending: list[ReasoningStep] = []  # not stored yet
        self.unsent: list[ReasoningStep] = []  # stored, not streamed yet
        self.timer: asyncio.Task | None = None
        self.busy = False  # the timer is storing or streaming

    def round_done(self) -> None:
        if self.timer is None:
            self.timer = asyncio.ensure_future(self._progress_later())

    async def _progress_later(self) -> None:
        await asyncio.sleep(settings.CHAT_PROGRESS_AFTER_SECONDS)
        self.busy = True
        steps = list(self.pending)  # the loop may add the next round's meanwhile: those stay pending
        if steps:
            await database_hop(self.turn.store.store_steps)(self.turn.reply, steps)
            del self.pending[:len(steps)]
            self.stored(steps)
        sent, self.unsent = self.unsent, []
        if sent and self.on_steps:
            await self.on_steps([step_payload(step) for step in sent])

    def stored(self, steps: list[ReasoningStep]) -> None:
        self.unsent += steps

    async def settle(self) -> None:
        """Before the loop stores steps itself: a timer still asleep is cancelled (its steps are the loop's to
        store), one at work is waited for."""
        timer, self.timer = self.timer, None
        if timer is not None:
            if self.busy:
                await timer
            else:
                timer.cancel()
        self.busy = False

    def last(self, stored_now: list[ReasoningStep]) -> list[dict]:
        """The steps the reply carries: stored and not streamed yet."""
        steps, self.unsent = self.unsent + stored_now, []
        return [step_payload(step) for step in steps]


async def _run_prepared(turn: Turn, on_steps: StepsCallback | None, after_finish: AfterFinish | None,
                        draft: model.Draft | None) -> Finished:
    steps = _Steps(turn, on_steps)
    calls: list[dict] = []
    unread = False  # a message arrived during the last tool cycle (looked up while its steps were stored)
    try:
        for cycle in range(1, settings.LLM_MAX_CYCLES + 1):
            # The first cycle's prompt was read just now; a message arriving from here on is found before the
            # answer is stored (below) or, where a round's steps are stored, by the next cycle. Every later call
            # gets the facts as they are then (what this turn's tools did) and the cycles left.
            turn.unread = turn.unread or unread
            if cycle > 1:
                turn.refresh_system(settings.LLM_MAX_CYCLES - cycle + 1)
            answer = await model.complete(turn.messages, tools.all_schemas(),
                                          answer_only=cycle == settings.LLM_MAX_CYCLES, draft=draft)
            turn.count(answer)
            if answer.fallback_reason:
                steps.pending.append(turn.step(cycle, ReasoningStep.Kind.THINK, answer.fallback_reason,
                                               model=answer.model))
            step = next_step(answer)
            if isinstance(step, RunTools):
                calls = step.calls
                steps.pending += _asked(turn, cycle, answer)
                unread = await _run_tools(turn, cycle, calls, steps)
                calls = []
                continue
            # Messages that arrived while the model answered are taken in instead, and everything answered
            # together. On the last cycle they are left pending (the next turn answers them): taking them here
            # would mark them processed without an answer.
            concluded = await _conclude(turn, steps, step, cycle, after_finish,
                                        take_late=cycle < settings.LLM_MAX_CYCLES)
            if isinstance(concluded, Finished):
                return concluded
            unread = turn.unread = False  # taken in just now
            if draft is not None:  # the answer shown is written again, for every message
                draft.drop("more_messages")
            turn.messages.extend({"role": "user", "content": m.text} for m in concluded.messages)
            steps.pending.append(turn.step(cycle, ReasoningStep.Kind.THINK, f"{len(concluded.messages)} more "
                                           "message(s) arrived; answering everything together.", model=answer.model))
    finally:
        with contextlib.suppress(Exception):  # the turn's own error goes on
            await steps.settle()
        for call in calls:  # interrupted between asking for tools and storing their results
            steps.pending.append(turn.step(0, ReasoningStep.Kind.OBSERVE, INTERRUPTED["message"],
                                           tool_name=call["name"], tool_call_id=call["id"], tool_result=INTERRUPTED))
        if calls:
            await database_hop(turn.store.store_steps)(turn.reply, steps.pending)
    return await _conclude(turn, steps, GaveUp(f"no answer within {settings.LLM_MAX_CYCLES} cycles"),
                           settings.LLM_MAX_CYCLES, after_finish, take_late=False)


async def _conclude(turn: Turn, steps: _Steps, outcome: FinalAnswer | GaveUp, cycle: int,
                    after_finish: AfterFinish | None, take_late: bool) -> "Finished | TookInLate":
    """Phase 3: store the answer (see `_finish`), with the steps not stored yet. With `take_late`, a message that
    arrived meanwhile stops it: then nothing was stored, and the messages taken into the turn are returned."""
    await steps.settle()
    text = outcome.text if isinstance(outcome, FinalAnswer) else str(GIVE_UP_TEXT)
    latency_ms = int((time.perf_counter() - turn.started) * 1000)
    last = [*steps.pending, turn.step(cycle, ReasoningStep.Kind.ANSWER, text,
                                      model=turn.models_used[-1] if turn.models_used else "", latency_ms=latency_ms)]
    declared = outcome.declared if isinstance(outcome, FinalAnswer) else dialogue.Declared()
    _fill_reply(turn, text, latency_ms, gave_up=isinstance(outcome, GaveUp), declared=declared)
    finished = await database_hop(_finish)(turn, last, after_finish, take_late)
    if isinstance(finished, TookInLate):
        turn.position -= 1  # the answer's step was not stored
        return finished
    steps.pending.clear()
    return Finished(turn.reply, steps.last(last), finished)


def _asked(turn: Turn, cycle: int, answer: model.ModelReply) -> list[ReasoningStep]:
    """The THINK and ACT steps of a tool cycle, and the assistant's tool-call message in the prompt."""
    turn.messages.append({"role": "assistant", "content": answer.content or None, "tool_calls": [
        {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
        for c in answer.tool_calls
    ]})
    think = turn.step(cycle, ReasoningStep.Kind.THINK,
                      answer.content.strip() or "Calling " + ", ".join(c["name"] for c in answer.tool_calls) + ".",
                      model=answer.model, latency_ms=answer.latency_ms, prompt_tokens=answer.prompt_tokens,
                      completion_tokens=answer.completion_tokens)
    return [think, *[turn.step(cycle, ReasoningStep.Kind.ACT, tool_name=c["name"], tool_call_id=c["id"],
                               tool_arguments=_jsonable_arguments(c["arguments"])) for c in answer.tool_calls]]


def _observed(turn: Turn, cycle: int, calls: list[dict], results: list[tuple[dict, int]]) -> list[ReasoningStep]:
    """The OBSERVE steps of a tool cycle, and the tool results in the prompt."""
    steps = []
    for call, (result, latency_ms) in zip(calls, results, strict=True):
        turn.observations.append((call["name"], result))
        if call["name"] == "check_unread_messages":
            turn.unread = False  # taken in: the next prompt has no UNREAD (another message may set it again)
        turn.messages.append({"role": "tool", "tool_call_id": call["id"], "name": call["name"],
                              "content": json.dumps(result, ensure_ascii=False, default=str)})
        steps.append(turn.step(cycle, ReasoningStep.Kind.OBSERVE, _observation_text(result), tool_name=call["name"],
                               tool_call_id=call["id"], tool_result=result, latency_ms=latency_ms))
    return steps


async def _run_tools(turn: Turn, cycle: int, calls: list[dict], steps: _Steps) -> bool:
    """Phase 2: run the round's tools (each in a database hop, concurrently). A round of one tool that only reads
    leaves its steps for the next phase; otherwise they are stored in one statement after the tools' writes (a
    single tool's in its own hop, right after it; the first round's also inserts the reply's row), which also
    reads whether a message of the contact arrived meanwhile (for the next cycle's prompt): returned. Either
    way the round's steps are progress (`_Steps`)."""
    await steps.settle()
    pending, contact_id = steps.pending, turn.conversation.contact_id
    unread = False
    if len(calls) == 1 and calls[0]["name"] in tools.READ_ONLY_TOOLS:
        started = time.perf_counter()
        _, result = await tools.execute(calls[0]["name"], calls[0]["arguments"], turn.ctx)
        pending += _observed(turn, cycle, calls, [(result, int((time.perf_counter() - started) * 1000))])
    elif len(calls) == 1:
        stored: list[ReasoningStep] = []
        found = []

        def store(result: dict, latency_ms: int) -> None:  # in the tool's hop, right after it
            done = pending + _observed(turn, cycle, calls, [(result, latency_ms)])
            found.append(turn.store.store_steps(turn.reply, done, unanswered_of=contact_id))
            stored.extend(done)
            turn.reread_contact()  # the tool may have booked, moved, joined a waitlist...: the next prompt says so

        started = time.perf_counter()
        _, result = await tools.execute(calls[0]["name"], calls[0]["arguments"], turn.ctx, then=store)
        if stored:
            pending.clear()
            steps.stored(stored)
            unread = found[0]
        else:  # the tool did not run: its error result is stored with the next phase
            pending += _observed(turn, cycle, calls, [(result, int((time.perf_counter() - started) * 1000))])
    else:
        results = await asyncio.gather(*[_timed_execute(call, turn.ctx) for call in calls])
        pending += _observed(turn, cycle, calls, results)
        writes = any(call["name"] not in tools.READ_ONLY_TOOLS for call in calls)
        unread = await database_hop(_store_round)(turn, pending, contact_id, writes)
        steps.stored(list(pending))
        pending.clear()
    steps.round_done()
    return unread


def _store_round(turn: Turn, steps: list[ReasoningStep], contact_id: int, writes: bool) -> bool:
    """A round of several tools: its steps stored, CONTACT read again if one of them writes; whether a message of
    the contact is waiting (`TurnStore.store_steps`)."""
    unread = turn.store.store_steps(turn.reply, steps, contact_id)
    if writes:
        turn.reread_contact()
    return unread


def _fill_reply(turn: Turn, text: str, latency_ms: int, *, gave_up: bool, declared: dialogue.Declared | None) -> None:
    """The reply's row, and the dialogue state it leaves (its buttons are the options in that state)."""
    active = turn.ctx.active  # from the state before this turn: a reply not stored (late messages) left none
    answered = len(turn.ctx.turn_message_ids)  # with those taken in during the turn
    active.dialogue = dialogue.after_reply(turn.dialogue_before, declared, turn.observations, answered,
                                           blocks.slot_label, still_awaited=bool(active.read_back.get("actions")))
    reply = turn.reply
    reply.text = text
    reply.language = translation.get_language()
    reply.payload = {"blocks": blocks.blocks_for(turn.observations, active.dialogue.options),
                     **({"gave_up": True} if gave_up else {})}
    reply.model = " -> ".join(dict.fromkeys(turn.models_used))
    reply.latency_ms = latency_ms
    reply.prompt_tokens = turn.usage["prompt"]
    reply.completion_tokens = turn.usage["completion"]
    reply.cost = Decimal(str(round(turn.usage["cost"], 6)))


def _finish(turn: Turn, steps: list[ReasoningStep], after_finish: AfterFinish | None, take_late: bool) -> Any:
    """The last steps, the reply and the conversation's totals in one statement (a transaction when the turn settles
    an outcome), then the active task: returns what `after_finish` returned. With `take_late`, unless a message
    of the contact is waiting to be answered: then it is taken into the turn instead (TookInLate).

    The reply is stamped when it is complete, so it sorts after every message it answers, including those
    that arrived during the turn (history and transcripts order by created_at). A dropped connection leaves
    none of it.
    """
    reply, contact_id = turn.reply, turn.conversation.contact_id
    reply.created_at = timezone.now()
    settles = outcomes.settles(turn.observations)
    # Most turns settle no outcome: then the writes are one statement (PostgreSQL), with no transaction around.
    with transaction.atomic() if settles else contextlib.nullcontext():
        if settles and take_late and turn.store.has_unanswered(contact_id):
            stored = False
        else:
            outcome = outcomes.settle_turn(turn.conversation.pk, turn.observations)
            stored = turn.store.finish_turn(reply, steps, turn.conversation.pk, timezone.now(), outcome,
                                         unless_unanswered=contact_id if take_late and not settles else None,
                                         claims=turn.ctx.claims)
    if not stored:
        late = tools.take_unread(turn.ctx)
        if late:
            return TookInLate(late)
        return _finish(turn, steps, after_finish, take_late=False)  # nothing to take after all (another channel's)
    if after_finish:  # it saves the active task (with its own Redis work, in one round trip)
        return after_finish(turn.ctx.active)
    turn.ctx.active.save()
    return None


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
