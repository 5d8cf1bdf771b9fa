"""Conversations: storing what arrives, running turns one at a time per contact, ending sessions; FAQ translations.

One entry point for every channel: `receive()`. The message is stored first
(idempotent on the channel's message id), then `run_pending_turns()` takes the
contact's session lock. If another turn holds it, the message is queued and the
running turn picks it up; nothing is dropped and nothing is answered twice,
because the database's `processed_at` is the truth about what was answered.
"""

import asyncio
import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy
from redis.exceptions import RedisError

from bookings.models import School
from chatbot import hotpath, language, outcomes
from chatbot.agent import drafts, loop, memory, model
from chatbot.channels.registry import observer_for, staffed
from chatbot.models import Conversation, FaqEntry, Message, ReasoningStep
from chatbot.text import without_nul
from crm.models import Contact
from plumbing.hops import database_hop
from plumbing.transactions import savepoint_if_nested

logger = logging.getLogger(__name__)

TURN_ATTEMPTS = 2  # a turn that fails is tried once more at once: a dropped connection is replaced by then
RETRY_PAUSE_SECONDS = 0.5
SORRY_TEXT = gettext_lazy("I'm sorry, something went wrong on my side and I couldn't answer that just now. "
                          "Please send your message again in a moment.")


@dataclass
class Received:
    """A parent's message as stored (`duplicate`: a redelivery, stored before), in its conversation;
    `started_conversation`: the message started it (its turn has no earlier messages to read)."""

    message: Message | None
    duplicate: bool
    conversation: Conversation
    started_conversation: bool = False


def _idle_since() -> dt.datetime:
    """A conversation whose last message is older than this has ended (the idle timeout)."""
    return timezone.now() - dt.timedelta(seconds=settings.ACTIVE_CONTEXT_TTL_SECONDS)


def current_conversation(school: School, contact: Contact, channel: str, external_id: str = "",
                         new_contact: bool = False) -> Conversation:
    """The contact's open conversation on this channel (read with its school and contact), or a new one after
    the idle timeout; always a new one for a contact created just now (`new_contact`: nothing to read)."""
    return _current_or_new(school, contact, channel, external_id, new_contact)[0]


def _current_or_new(school: School, contact: Contact, channel: str, external_id: str,
                    new_contact: bool) -> tuple[Conversation, bool]:
    """`current_conversation`, and whether it was started just now."""
    idle_since = _idle_since()
    conversation = None if new_contact else hotpath.open_conversation(school.pk, contact.pk, channel, external_id)
    if conversation and (conversation.last_message_at is None or conversation.last_message_at >= idle_since
                         or conversation.status == Conversation.Status.HANDED_OFF):
        return conversation, False
    if conversation:
        end_conversation(conversation)
    return Conversation.objects.create(school=school, contact=contact, channel=channel, external_id=external_id), True


def store_inbound(conversation: Conversation, text: str, channel_message_id: str = "") -> tuple[Message, bool]:
    """Store a parent's message; (message, created). A redelivered channel message id is not stored twice."""
    text = without_nul(text)
    spoken = language.remember(conversation.contact, text)
    try:
        with savepoint_if_nested():
            message = hotpath.store_message(Message(
                conversation=conversation, role=Message.Role.USER, text=text, channel=conversation.channel,
                channel_message_id=channel_message_id, language=spoken))
    except IntegrityError:  # a redelivery (unique channel message id): the stored one
        return Message.objects.get(channel=conversation.channel, channel_message_id=channel_message_id), False
    return message, True


def store_outbound(conversation: Conversation, text: str, **fields) -> Message:
    """A message of the concierge's own (a reminder, a seat offer, a follow-up) stored in the conversation, which
    it makes the latest activity; delivering it is the caller's."""
    with transaction.atomic():
        message = Message.objects.create(conversation=conversation, role=fields.pop("role", Message.Role.ASSISTANT),
                                         channel=conversation.channel, text=text, **fields)
        Conversation.objects.filter(pk=conversation.pk).update(last_message_at=message.created_at)
    return message


def store_received(school: School, contact: Contact, channel: str, text: str, channel_message_id: str = "",
                   external_id: str = "", new_contact: bool = False) -> Received:
    """`receive()`'s database part: the message stored in the contact's current conversation. `new_contact`:
    the contact was created just now, so it has no conversation to look up."""
    if not new_contact and connection.vendor == "postgresql":
        received = _store_in_open_conversation(school, contact, channel, text, channel_message_id, external_id)
        if received is not None:
            return received
    conversation, started = _current_or_new(school, contact, channel, external_id, new_contact)
    message, created = store_inbound(conversation, text, channel_message_id)
    return Received(message, not created, conversation, started_conversation=started and created)


def _store_in_open_conversation(school: School, contact: Contact, channel: str, text: str, channel_message_id: str,
                                external_id: str) -> Received | None:
    """The common case in one statement (PostgreSQL): the message stored in the contact's open conversation,
    read in the same statement (`hotpath.store_in_open_conversation`). None when there is no current one (the
    idle timeout ends it and starts a new one) or the message was a redelivery: `current_conversation` and
    `store_inbound` then do it step by step."""
    text = without_nul(text)
    message = Message(role=Message.Role.USER, text=text, channel=channel, channel_message_id=channel_message_id,
                      language=language.remember(contact, text))
    try:
        with savepoint_if_nested():
            conversation = hotpath.store_in_open_conversation(message, school.pk, contact.pk, external_id,
                                                              _idle_since())
    except IntegrityError:  # a redelivery (unique channel message id)
        return None
    return Received(message, False, conversation) if message.pk is not None else None


async def receive(
    *, school: School, contact: Contact, channel: str, text: str, channel_message_id: str = "",
    external_id: str = "", run: bool = True, on_stored: Callable[[Received], Awaitable] | None = None,
    new_contact: bool = False,
) -> Received:
    """Store an inbound message and (unless `run` is False) answer everything pending for the contact.
    `on_stored` is awaited once the message is stored, before the turn (e.g. to acknowledge it); `new_contact`:
    the contact was created just now (see `store_received`)."""
    lock = memory.session_lock(school.pk, contact.pk) if run else None  # the lock's client is this loop's
    received, start = await database_hop(_store_and_take)(school, contact, channel, text, channel_message_id,
                                                          external_id, lock, new_contact)
    if on_stored:
        await on_stored(received)
    if run and not received.duplicate:
        await answer_or_queue(received, start)
    return received


@dataclass
class Start:
    """The session lock, taken (or not: the message was queued for the turn holding it) in the hop that stored
    the message; with no burst window, that hop also opened the turn (`opened`), or failed to (`not_opened`:
    the turn's messages are given back by `run_pending_turns`, which holds the lock this hop took)."""

    taken: bool
    lock: object = None
    context: str | None = None
    opened_now: bool = False
    opened: "Opened | None" = None
    not_opened: "TurnNotOpened | None" = None


def _store_and_take(school: School, contact: Contact, channel: str, text: str, channel_message_id: str,
                    external_id: str, lock, new_contact: bool = False) -> tuple[Received, Start | None]:
    """`receive()`'s database hop: the message stored; with a `lock` (the contact's `memory.session_lock`), then
    the lock taken (or the message queued for the turn holding it), and with no burst window to wait for, the
    turn opened (`_open_turn`): one hop from the parent's message to the prompt."""
    received = store_received(school, contact, channel, text, channel_message_id, external_id, new_contact)
    if lock is None or received.duplicate:
        return received, None
    conversation, message = received.conversation, received.message
    school_id, contact_id = conversation.school_id, conversation.contact_id
    taken, context = _acquire_now(lock, school_id, contact_id, memory.queue_entry(message.pk, message.text))
    start = Start(taken, lock, context)
    if taken and burst_window(channel) == 0:
        start.opened_now = True
        try:
            start.opened = _open_turn(school_id, contact_id, received, context)
        except TurnNotOpened as failed:  # the lock this hop took is released by `run_pending_turns`
            start.not_opened = failed
    return received, start


def burst_window(channel: str) -> float:
    """How long a turn waits for more fragments of a burst before it reads them: CHAT_BURST_WINDOW_SECONDS, or
    where the answer is streamed (a channel that shows drafts, a hosted model) CHAT_STREAMED_BURST_WINDOW_SECONDS
    if shorter. A fragment that lands after the window is taken into the turn all the same (`chatbot.agent.loop`:
    the answer is written again for everything, its draft dropped as "more_messages")."""
    if observer_for(channel).shows_drafts and model.streams():
        return min(settings.CHAT_BURST_WINDOW_SECONDS, settings.CHAT_STREAMED_BURST_WINDOW_SECONDS)
    return settings.CHAT_BURST_WINDOW_SECONDS


async def answer_or_queue(received: Received, start: Start | None = None) -> None:
    """Answer everything pending for the contact, or, if a turn is running, queue the message for it. `start`:
    the lock was already asked for where the message was stored (`_store_and_take`)."""
    conversation, message = received.conversation, received.message
    if start is not None and start.taken:
        answered = await run_pending_turns(conversation.school_id, conversation.contact_id, received, start=start)
    elif start is None:
        answered = await run_pending_turns(conversation.school_id, conversation.contact_id, received,
                                           queue=memory.queue_entry(message.pk, message.text))
    else:
        answered = False
    if not answered:
        await _tell("the queued notice", observer_for(conversation.channel).queued(conversation, message))


def _claim(contact_id: int) -> tuple[hotpath.Claim, dt.datetime]:
    """Take the contact's unanswered messages of one conversation (the one with the oldest): (the claim, when);
    a claim of no messages when none is left.

    The session lock keeps turns of a contact apart while Redis is up; the claim
    (`hotpath.claim_batch_with_history`, one conditional UPDATE) keeps each message answered
    once even when the lock was lost (Redis restarted mid-turn) or could not be
    taken (Redis unreachable): a row another turn took first no longer matches
    `processed_at IS NULL`. Only when such a race left this claim empty is a
    second statement needed, to tell whether anything is still unanswered.
    """
    while True:
        now = timezone.now()
        claim = hotpath.claim_batch_with_history(contact_id, now)
        if claim.messages or not hotpath.has_unanswered(contact_id):
            return claim, now


@dataclass
class Taken:
    """A batch of messages a turn took: marked processed at `taken_at`, given back if the turn fails."""

    conversation: Conversation
    batch: list[Message]
    taken_at: dt.datetime


@dataclass
class Opened(Taken):
    """A batch this turn took, and the prepared turn."""

    turn: loop.Turn


class TurnNotOpened(Exception):  # noqa: N818 (what happened to `taken`, with its cause chained)
    """Opening a turn raised: its cause is chained. `taken`: the messages it took first, given back by
    `_turn_failed`; None if the claim itself failed (nothing to give back: the cause goes to the caller)."""

    def __init__(self, contact_id: int, taken: Taken | None) -> None:
        super().__init__(f"could not open the turn of contact {contact_id}")
        self.taken = taken


def _open_turn(school_id: int, contact_id: int, received: Received | None = None,
               context: str | None = None) -> Opened | None:
    """A turn's first database hop: the claim, and everything the turn reads first. `received` is the message the
    caller stored just now, with its conversation (read with its school and contact): the batch's, so it is not
    read again; `context` the active context's JSON, read with the session lock. Nothing to claim: the queue of
    messages for this turn is emptied (what it held was answered by an earlier turn)."""
    try:
        claim, taken_at = _claim(contact_id)
        if not claim.messages:
            memory.drain_queue(school_id, contact_id)
            return None
        batch = claim.messages
        known = received is not None and received.conversation.pk == batch[0].conversation_id
        conversation = received.conversation if known else (
            Conversation.objects.select_related("school", "contact").get(pk=batch[0].conversation_id))
    except Exception as exc:
        raise TurnNotOpened(contact_id, None) from exc
    started = known and received.started_conversation and received.message.pk in {m.pk for m in batch}
    try:
        active = memory.ActiveContext.from_json(conversation.school_id, contact_id, context)
        given = loop.TurnInput(conversation, batch, active, claim.earlier, claim.hints, new_conversation=started)
        return Opened(conversation, batch, taken_at, loop.prepare_turn(given, hotpath))
    except Exception as exc:
        raise TurnNotOpened(contact_id, Taken(conversation, batch, taken_at)) from exc


def _after_failure(conversation: Conversation, batch: list[Message], taken_at: dt.datetime) -> Message | None:
    """A turn raised: its reply if it was stored after all; otherwise its messages become pending again.

    A message marked processed without an answer would be lost, so everything the
    turn took (its batch and any message it took in on the way) is given back for
    the next turn, or the sweeper, to answer; except those staff took over meanwhile.
    """
    reply = (Message.objects.filter(conversation=conversation, role=Message.Role.ASSISTANT,
                                    reply_to__in=[m.pk for m in batch], created_at__gte=taken_at)
             .exclude(text="").order_by("-created_at").first())
    if reply is None:
        Message.objects.filter(conversation=conversation, role=Message.Role.USER, processed_at__gte=taken_at,
                               handled_by_staff=False).update(processed_at=None)
    return reply


class _ReleaseAndLook:
    """The end of a turn's last database hop: save the active task and release the session lock, and learn
    whether a message was queued for this turn meanwhile, in one Redis round trip (`memory.save_and_release`:
    a message whose own turn finds the lock taken is queued in the same step, so none is missed). With Redis
    unreachable, the database is asked instead. The same round trip reads what the channel asks to look up for
    the reply (`TurnObserver.reply_lookup`; after the reply was stored), returned for `turn_reply`."""

    def __init__(self, lock, contact_id: int) -> None:
        self.lock, self.contact_id = lock, contact_id
        self.done = False
        self.pending = True  # until looked: go round once more
        self.lookup = None  # set by the turn, when it knows its channel

    def __call__(self, active: memory.ActiveContext) -> list[str] | None:
        flagged, found = memory.save_and_release(active, self.lock, self.lookup)
        self.done = True
        self.pending = hotpath.has_unanswered(self.contact_id) if flagged is None else flagged
        return found


async def run_pending_turns(school_id: int, contact_id: int, received: Received | None = None,
                            queue: str = "", start: Start | None = None) -> bool:
    """Answer the contact's pending messages under the session lock; False if another turn holds it (then
    `queue`, a `memory.queue_entry`, is queued for that turn). `start`: the lock already taken (and perhaps the
    turn opened) by the hop that stored the message.

    A turn's database work is one hop per phase (see `chatbot.agent.loop`): `_open_turn`
    takes the messages and reads the context (in the hop that stored the message, when
    `start` says so), each tool cycle stores its steps, and the last stores the reply and
    releases the lock, learning whether a message was queued meanwhile: then it takes the
    lock again for it, so a message that arrived just as the lock was being released is
    never stranded. A turn that fails (database connection dropped,
    Redis gone) gives its messages back and is tried again, up to TURN_ATTEMPTS times
    per call; then the parent is told (see `_apologise`) and the error is raised for
    the caller to record. `received`, the message the caller has just stored, spares the first batch reading its
    conversation again (later batches read theirs: a turn may have changed the contact).
    """
    failures = 0
    burst = (burst_window(received.conversation.channel) if received is not None
             else settings.CHAT_BURST_WINDOW_SECONDS)
    first = True
    while True:
        if start is not None:
            lock, taken, context = start.lock, start.taken, start.context
        else:
            lock = memory.session_lock(school_id, contact_id)
            taken, context = await _acquire(lock, school_id, contact_id, queue if first else "")
        if not taken:
            return not first  # after a first round: the turn holding the lock answers what is left
        first = False
        release = _ReleaseAndLook(lock, contact_id)
        lease = asyncio.ensure_future(_keep_lease(lock, school_id, contact_id))
        running_here.add((school_id, contact_id))
        try:
            if start is not None and start.opened_now:
                opened, not_opened = start.opened, start.not_opened
            else:
                await asyncio.sleep(burst)  # let a burst of fragments land (before the first batch only)
                opened, not_opened = await _open_in_hop(school_id, contact_id, received, context)
            burst, received, start = 0, None, None
            if not_opened is not None and not_opened.taken is None:  # nothing taken: the caller hears of it
                raise not_opened.__cause__
            if not_opened is not None:
                failures = await _turn_failed(not_opened.taken, failures, not_opened.__cause__)
            elif opened is not None:
                failures = await _answer_or_give_back(opened, release, failures)
        finally:
            lease.cancel()
            running_here.discard((school_id, contact_id))
            if not release.done:
                await _release(lock)
        if not (release.pending if release.done else await database_hop(hotpath.has_unanswered)(contact_id)):
            return True


async def _open_in_hop(school_id: int, contact_id: int, received: Received | None,
                       context: str | None) -> tuple[Opened | None, TurnNotOpened | None]:
    try:
        return await database_hop(_open_turn)(school_id, contact_id, received, context), None
    except TurnNotOpened as failed:
        return None, failed


async def _answer_or_give_back(opened: Opened, release: _ReleaseAndLook, failures: int) -> int:
    """Answer one batch; on failure give it back (or tell its stored reply); returns the failures so far."""
    try:
        await _answer(opened.conversation, opened.turn, release)
    except hotpath.LostClaim as lost:  # taken over while this turn stalled: the turn that took over answers
        given_back = await database_hop(hotpath.give_back_claims)(lost.claims)
        logger.error("turn for contact %s lost its claim (its lease lapsed and another worker took the turn over): "
                     "its reply was neither stored nor sent; %d message(s) it took in late given back",
                     opened.conversation.contact_id, given_back)
    except Exception as exc:
        return await _turn_failed(opened, failures, exc)
    return failures


async def _turn_failed(taken: Taken, failures: int, error: Exception) -> int:
    """A turn raised `error`: give its batch back (or tell its reply, if stored after all); the parent is told
    and `error` raised once it failed TURN_ATTEMPTS times; returns the failures so far."""
    conversation = taken.conversation
    failures += 1
    logger.error("turn for contact %s failed (attempt %d of %d)", conversation.contact_id, failures, TURN_ATTEMPTS,
                 exc_info=error)
    reply = await database_hop(_after_failure)(conversation, taken.batch, taken.taken_at)
    if reply is not None:  # it failed after the reply was stored: answered
        await _tell("the reply", observer_for(conversation.channel).reply(conversation, reply))
    elif failures >= TURN_ATTEMPTS:
        await _apologise(conversation)
        raise error
    else:
        await asyncio.sleep(RETRY_PAUSE_SECONDS)
    return failures


async def _acquire(lock, school_id: int, contact_id: int, queue: str) -> tuple[bool, str | None]:
    """Take the session lock and read the active context, or queue `queue` (one Redis round trip); (taken, the
    context's JSON).
    With Redis unreachable the turn runs without either (see `_claim`). The lock stays in Redis rather than
    PostgreSQL: a session advisory lock would pin a pooled connection for the whole turn, model call included,
    and a transaction's lock ends at its commit."""
    try:
        return await memory.take_session(lock, school_id, contact_id, queue)
    except RedisError as exc:
        return _without_lock(exc)


def _acquire_now(lock, school_id: int, contact_id: int, queue: str) -> tuple[bool, str | None]:
    """`_acquire` from a database hop."""
    try:
        return memory.take_session_now(lock, school_id, contact_id, queue)
    except RedisError as exc:
        return _without_lock(exc)


def _without_lock(exc: RedisError) -> tuple[bool, None]:
    logger.warning("Redis unreachable (%s): answering without the session lock", exc)
    return True, None


# (school, contact) of the turns running in this process: a lease of theirs that lapsed (the process stalled) is not
# this process's to take over (`chatbot.channels.worker.take_over_lapsed_turns`); its turn is still running.
running_here: set[tuple[int, int]] = set()


async def _keep_lease(lock, school_id: int, contact_id: int) -> None:
    """Renew the session lock's lease every third of SESSION_LOCK_TTL_SECONDS while the turn runs (cancelled when
    it ends): a live turn keeps its contact however long its model calls take, and a dead one's lapses within
    the lease, for another worker to take over (`chatbot.channels.worker.take_over_lapsed_turns`)."""
    while True:
        await asyncio.sleep(settings.SESSION_LOCK_TTL_SECONDS / 3)
        try:
            renewed = await memory.renew_lease(lock, school_id, contact_id)
        except RedisError as exc:  # nothing can take the turn over while Redis is away either
            logger.warning("could not renew the session lock %s (%s); trying again", lock.name, exc)
            continue
        if renewed is None:  # released, or never taken (Redis was unreachable)
            return
        if not renewed:
            logger.error("session lock %s lapsed before its turn ended (the process stalled past its lease); "
                         "another worker may take the turn over, and then this one stores nothing", lock.name)
            return


def answered_since_taken() -> Exists:
    """For a parent's message (the outer query's): its conversation has an answer stored since a turn took it."""
    return Exists(ReasoningStep.objects.filter(message__conversation=OuterRef("conversation"),
                                               kind=ReasoningStep.Kind.ANSWER,
                                               created_at__gte=OuterRef("processed_at")))


def give_back_lapsed(contact_id: int) -> int | None:
    """Under the contact's session lock, taken over from a turn whose lease lapsed (its process died or stalled):
    the messages that turn took without storing an answer after are unanswered again. Returns the contact's oldest
    unanswered message (to dispatch its turn), or None when nothing is left to answer."""
    theirs = Message.objects.filter(role=Message.Role.USER, conversation__contact_id=contact_id,
                                    conversation__status=Conversation.Status.ACTIVE, handled_by_staff=False)
    given_back = give_back_unanswered(theirs)
    if given_back:
        logger.warning("a turn of contact %s lapsed mid-turn: %d message(s) given back", contact_id, given_back)
    return theirs.filter(processed_at__isnull=True).order_by("created_at", "id").values_list("pk", flat=True).first()


def give_back_unanswered(messages: QuerySet) -> int:
    """Of these parent's messages, those a turn took without storing an answer after are unanswered again; returns
    how many. Their rows are locked first (in id order), then given back in a statement of its own: a stalled turn
    storing its answer at this moment locks its claimed rows in that statement (`hotpath.finish_turn`), so either
    it finishes first and this statement sees its answer, or its claim no longer holds and it stores nothing."""
    taken = messages.filter(processed_at__isnull=False)
    with transaction.atomic():
        list(taken.select_for_update(of=("self",)).order_by("pk").values_list("pk", flat=True))
        return taken.filter(~answered_since_taken()).update(processed_at=None)


async def _release(lock) -> None:
    try:
        await lock.release()
    except Exception:  # expired or lost with a Redis restart: nothing left to release
        logger.warning("session lock %s was already gone", lock.name)


async def _tell(what: str, call: Awaitable) -> None:
    """Show something to the parent live; a channel that cannot (channel layer down or full) must not fail the turn.

    The database keeps every step and reply: the web chat shows them on reconnect.
    """
    try:
        await call
    except Exception as exc:
        logger.warning("could not send %s to the parent's channel (%s: %s)", what, type(exc).__name__, exc)


class _Frames:
    """A turn's frames to the parent's channel, in order: typing (sent alongside the model's first call), the
    reasoning steps the loop streams as progress (`chatbot.agent.loop`), the answer's draft as a hosted model
    writes it (a channel that shows drafts: `chatbot.agent.drafts`), the reply. Each waits for the one before;
    the turn does not wait for them until its reply."""

    def __init__(self, conversation: Conversation) -> None:
        self.observer, self.conversation = observer_for(conversation.channel), conversation
        self.sending: asyncio.Future = asyncio.ensure_future(  # the last frame under way
            _tell("typing", self.observer.typing(conversation, True)))

    def _send(self, what: str, frame) -> asyncio.Future:
        previous = self.sending

        async def in_order() -> None:
            await previous
            await _tell(what, frame())

        self.sending = asyncio.ensure_future(in_order())
        return self.sending

    async def steps(self, steps: list[dict]) -> None:
        await self._send("reasoning steps", lambda: self.observer.steps(self.conversation, steps))

    def draft(self, frame: Callable[[], dict | None]) -> None:
        """A draft's frame, made when its turn comes (`drafts.FrameSender`); the model's stream does not wait."""
        self._send("the draft", lambda: self._draft(frame()))

    async def _draft(self, payload: dict | None) -> None:
        if payload is not None:
            await self.observer.draft(self.conversation, payload)

    def new_draft(self) -> drafts.Draft | None:
        """The turn's draft, if its channel shows one and the model streams (a hosted model)."""
        return drafts.Draft(self.draft) if self.observer.shows_drafts and model.streams() else None

    async def reply(self, message: Message, steps: list[dict], looked_up: object = None, draft: str = "") -> None:
        await self._send("the reply", lambda: self.observer.turn_reply(self.conversation, message, steps,
                                                                       looked_up, draft=draft))

    async def failed(self) -> None:
        await self._send("typing", lambda: self.observer.typing(self.conversation, False))


async def _answer(conversation: Conversation, turn: loop.Turn, release: _ReleaseAndLook) -> Message:
    frames = _Frames(conversation)
    release.lookup = frames.observer.reply_lookup(conversation)
    draft = frames.new_draft()
    try:
        finished = await loop.run_prepared(turn, on_steps=frames.steps, after_finish=release, draft=draft)
    except BaseException:
        await frames.failed()
        raise
    await frames.reply(finished.reply, finished.steps, finished.after,
                       draft.outcome(finished.reply.text) if draft else "")
    return finished.reply


async def _apologise(conversation: Conversation) -> None:
    """Tell a parent whose messages could not be answered just now, where staff do not take over.

    Webhook channels stay silent here: the sweeper answers the given-back messages
    later, and hands the conversation to staff (telling the parent) if it cannot.
    On the web chat the sweeper answers them later too, but the parent is waiting
    at the screen and is told at once.
    """
    if staffed(conversation.channel):
        return
    spoken = language.reply_language(conversation.school, conversation.contact)
    with translation.override(spoken):
        text = str(SORRY_TEXT)
    try:
        notice = await database_hop(Message.objects.create)(
            conversation=conversation, role=Message.Role.ASSISTANT, channel=conversation.channel, text=text,
            language=spoken, payload={"blocks": [], "turn_failed": True})
    except Exception:  # the database is gone too: nothing can be stored, so nothing is promised
        logger.exception("could not store the apology for conversation %s", conversation.pk)
        return
    await _tell("the apology", observer_for(conversation.channel).reply(conversation, notice))


def end_conversation(conversation: Conversation) -> None:
    """Session end: mark it ended, keep its outcome, drop the active state."""
    Conversation.objects.filter(pk=conversation.pk).update(
        status=Conversation.Status.ENDED, ended_at=timezone.now(),
        outcome=outcomes.at_end(conversation.outcome),
    )
    memory.end_session(conversation.school_id, conversation.contact_id)
    observer_for(conversation.channel).session_ended(conversation)


def end_idle_conversations(now: dt.datetime | None = None) -> int:
    """End every active conversation idle for longer than the active-context TTL; returns how many."""
    cutoff = (now or timezone.now()) - dt.timedelta(seconds=settings.ACTIVE_CONTEXT_TTL_SECONDS)
    idle = Conversation.objects.filter(status=Conversation.Status.ACTIVE, last_message_at__lt=cutoff)
    count = 0
    for conversation in idle.iterator():
        end_conversation(conversation)
        count += 1
    return count


async def answer_message(message_id: int) -> None:
    """Answer (or queue) one stored parent message, by id: the entry point of the `agent` worker and the sweeper.

    A message already taken by a turn, or in a conversation the bot does not run
    (handed off, ended), is left alone.
    """
    message = await database_hop(
        Message.objects.select_related("conversation__school", "conversation__contact")
        .filter(pk=message_id, role=Message.Role.USER).first
    )()
    if message is None or message.processed_at is not None:
        return
    if message.conversation.status != Conversation.Status.ACTIVE:
        return
    await answer_or_queue(Received(message, False, message.conversation))


def save_faq_translations(entry: FaqEntry, translations: dict[str, dict]) -> int:
    """Store the versions of an entry in other languages ({"zh-hans": {"question": ..., "answer": ...}}) it does not
    have yet (one staff may since have edited is left as it is); returns how many were new."""
    created = 0
    for code, text in translations.items():
        _, new = FaqEntry.objects.get_or_create(
            translation_of=entry, language=code,
            defaults={"school": entry.school, "question": text["question"], "answer": text["answer"],
                      "is_active": entry.is_active},
        )
        created += new
    return created
