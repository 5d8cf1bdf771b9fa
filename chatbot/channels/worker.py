"""Agent turns for webhook channels: the `agent` background worker, and how a turn gets there.

A webhook stores the parent's message and calls `dispatch(message_id)`, then
answers the platform at once. Where the turn runs depends on `AGENT_WORKER`:

- True (production, REDIS_URL set): the event goes over the channel layer to
  `python manage.py runworker agent`, where `AgentWorker` runs it. The consumer
  starts each turn as an asyncio task, so one process runs hundreds of
  model-bound turns at once (bounded by AGENT_WORKER_CONCURRENCY).
- False (the embedded default, InMemoryChannelLayer): there is no other process,
  so the web process runs the turn itself on one long-lived background event
  loop (`InProcessRunner`). Whatever served the request (daphne, runserver, the
  test client) can return immediately; the turn outlives the request.

Either way the turn is the same call, `run_turn_event`, and the database is the
truth. A worker killed mid-turn leaves its turns' leases (the session locks, renewed
every few seconds while a turn runs) to lapse: every agent worker looks for lapsed
leases every TURN_RECOVERY_INTERVAL_SECONDS and takes those turns over
(`take_over_lapsed_turns`), so they are answered within seconds. If the event is
lost (Redis down, channel message expired), the sweeper
(`chatbot.tasks.redispatch_stale_inbound`) dispatches the message again.
"""

import asyncio
import atexit
import contextlib
import contextvars
import datetime as dt
import itertools
import logging
import random
import threading
import time
from concurrent.futures import Future

from asgiref.sync import async_to_sync
from channels.consumer import AsyncConsumer
from channels.exceptions import ChannelFull
from channels.layers import DEFAULT_CHANNEL_LAYER, channel_layers, get_channel_layer
from channels.worker import Worker
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from redis.exceptions import RedisError

from chatbot import handoff
from chatbot.agent import memory
from chatbot.channels import registry
from chatbot.models import Conversation, Message
from chatbot.services import answer_message, answered_since_taken, give_back_lapsed, give_back_unanswered, running_here
from crm.external.tasks import record_failure
from crm.models import FailedTask
from plumbing.hops import database_hop
from plumbing.redis import get_redis

logger = logging.getLogger(__name__)

AGENT_CHANNEL = "agent"
EVENT_TYPE = "agent.turn"


def turn_event(message_id: int, **extra) -> dict:
    return {"type": EVENT_TYPE, "message_id": message_id, **extra}


_in_flight = 0


def in_flight() -> int:
    """Turns running in this process right now (for shutdown and tests)."""
    return _in_flight


def backoff(attempt: int, base: float = 0.5, cap: float = 30.0) -> float:
    """Seconds to wait before reconnection attempt `attempt` (0, 1, ...): exponential, capped, with jitter."""
    return random.uniform(0.5, 1.0) * min(cap, base * 2 ** attempt)


# A database that cannot be reached (down, restarting, the pool timing out) is not the turn's fault.
DATABASE_DOWN = (OperationalError, InterfaceError)


async def _answer_when_the_database_answers(event: dict, message_id: int) -> bool:
    """Run the turn, waiting out a database outage with backoff; False if the database stayed away too long."""
    started = time.monotonic()
    for attempt in itertools.count():
        try:
            if event.get("session_start"):
                await database_hop(_session_start)(event.get("channel", ""), message_id, event["session_start"])
            await answer_message(message_id)
            return True
        except DATABASE_DOWN as exc:
            if time.monotonic() - started > settings.AGENT_DATABASE_WAIT_SECONDS:
                logger.error("database unreachable for %ss; message %s is left for the sweeper: %s",
                             settings.AGENT_DATABASE_WAIT_SECONDS, message_id, exc)
                return False
            delay = backoff(attempt)
            logger.warning("database unreachable, message %s tried again in %.1fs: %s", message_id, delay, exc)
            await asyncio.sleep(delay)
    return False  # pragma: no cover (the loop only ends by returning)


async def run_turn_event(event: dict) -> None:
    """Run the turn for one dispatched message; a failing turn is recorded, never raised.

    A database outage is waited out (with backoff, up to AGENT_DATABASE_WAIT_SECONDS) and the turn run when it
    is back; it is not counted as a failure of the turn (which would hand the parent to staff).
    """
    global _in_flight
    message_id = int(event["message_id"])
    _in_flight += 1
    try:
        try:
            if not await _answer_when_the_database_answers(event, message_id):
                return
        except Exception:
            logger.exception("agent turn for message %s failed", message_id)
            await database_hop(handoff.record_turn_failure)(message_id)
            await database_hop(handoff.hand_off_after_failures)(message_id)
            return
        await database_hop(handoff.hand_off_after_failures)(message_id)
    finally:
        _in_flight -= 1


def _session_start(channel: str, message_id: int, data: dict) -> None:
    """The channel's start of a conversation (e.g. Chatwoot's custom attributes read into the context)."""
    start = registry.spec_for(channel).session_start
    if start is not None:
        start(message_id, data)


def _take_over(lock, school_id: int, contact_id: int) -> int | None:
    """A contact whose turn's lease lapsed: under its session lock (None if a live turn holds it), the messages the
    dead turn took are given back (`services.give_back_lapsed`); the message to dispatch, if any is left and it
    was not dispatched MAX_REDISPATCHES times already (the sweeper then hands it to staff)."""
    taken, context = memory.take_session_now(lock, school_id, contact_id)
    if not taken:
        return None
    try:
        first = give_back_lapsed(contact_id)
    finally:
        memory.save_and_release(memory.ActiveContext.from_json(school_id, contact_id, context), lock)
    if first is None or _count_redispatch(get_redis(), first) > MAX_REDISPATCHES:
        return None
    return first


async def take_over_lapsed_turns() -> list[int]:
    """Take over the turns whose lease lapsed (their process died mid-turn), each contact on a database hop of its
    own at once: the message to dispatch for each. A turn still running in this process is left to finish.
    Raises RedisError, and the database's errors."""
    lapsed = [pair for pair in await memory.lapsed_leases() if pair not in running_here]
    taken = await asyncio.gather(*(database_hop(_take_over)(memory.session_lock(school_id, contact_id), school_id,
                                                            contact_id)
                                   for school_id, contact_id in lapsed))
    return [first for first in taken if first is not None]


class ResilientWorker(Worker):
    """`runworker`'s server, reconnecting to the channel layer with backoff instead of exiting.

    channels' Worker lets a channel-layer error end its listener, and with it the
    process: a Redis restart stopped `runworker agent` and webhook messages waited
    until someone restarted it. Here the listener logs the error, waits (exponential
    backoff with jitter, capped at 30 s) and listens again; the turns already running
    go on. Messages dispatched while Redis was away are stored in the database and
    dispatched again by the sweeper, so each is answered once.
    """

    async def handle(self) -> None:
        if AGENT_CHANNEL in self.channels:
            self._recovery = asyncio.ensure_future(self.recover(AGENT_CHANNEL))
        await super().handle()

    async def recover(self, channel: str) -> None:
        """Every TURN_RECOVERY_INTERVAL_SECONDS, take over the turns whose lease lapsed (another worker died mid-turn,
        or this one's predecessor) and run them here, as if dispatched: answered within seconds of the lapse."""
        while True:
            await asyncio.sleep(settings.TURN_RECOVERY_INTERVAL_SECONDS)
            try:
                taken_over = await take_over_lapsed_turns()
            except (RedisError, OSError, *DATABASE_DOWN) as exc:
                logger.warning("could not look for lapsed turns (%s: %s)", type(exc).__name__, exc)
                continue
            for message_id in taken_over:
                logger.warning("taking over the lapsed turn of message %s", message_id)
                instance_queue = self.get_or_create_application_instance(channel, {"type": "channel",
                                                                                   "channel": channel})
                await instance_queue.put(turn_event(message_id))

    async def listener(self, channel: str) -> None:
        failures = 0
        while True:
            try:
                message = await self.channel_layer.receive(channel)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError, TimeoutError) as exc:
                delay = backoff(failures)
                failures += 1
                logger.warning("channel layer unreachable (%s: %s); listening again on %r in %.1fs",
                               type(exc).__name__, exc, channel, delay)
                await asyncio.sleep(delay)
                continue
            if failures:
                logger.warning("channel layer back after %d failed attempt(s); listening on %r", failures, channel)
                failures = 0
            if not message.get("type", None):
                logger.error("a message with no type on channel %r was dropped", channel)
                continue
            instance_queue = self.get_or_create_application_instance(channel, {"type": "channel", "channel": channel})
            await instance_queue.put(message)


class AgentWorker(AsyncConsumer):
    """`runworker agent`: one instance receives every `agent.turn` event and runs each as a task."""

    async def agent_turn(self, event: dict) -> None:
        if not hasattr(self, "_running"):
            self._running: set[asyncio.Task] = set()
            self._slots = asyncio.Semaphore(settings.AGENT_WORKER_CONCURRENCY)
        await self._slots.acquire()  # back-pressure: past the limit, stop taking events off the channel
        task = asyncio.create_task(run_turn_event(event))
        self._running.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        self._running.discard(task)
        self._slots.release()


class InProcessRunner:
    """One background event loop in this process that runs webhook turns (the embedded default)."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._futures: set[Future] = set()

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=self._run, args=(loop,), name="agent-turns", daemon=True)
                thread.start()
                self._loop = loop
                atexit.register(self.shutdown)
            return self._loop

    @staticmethod
    def _run(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        loop.run_forever()
        loop.close()

    def shutdown(self, timeout: float = 5.0) -> None:
        """Cancel what still runs (an interrupted turn is answered again by the sweeper) and stop the loop."""
        loop = self._loop
        if loop is None or loop.is_closed() or not loop.is_running():
            return

        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(Exception):  # best effort at exit
            asyncio.run_coroutine_threadsafe(cancel_all(), loop).result(timeout)
        loop.call_soon_threadsafe(loop.stop)

    def submit(self, event: dict) -> Future:
        # A fresh context: the turn must not inherit the request's (asgiref executors that end with it).
        loop = self._ensure_loop()
        future = contextvars.Context().run(asyncio.run_coroutine_threadsafe, run_turn_event(event), loop)
        with self._lock:
            self._futures.add(future)
        future.add_done_callback(self._forget)
        return future

    def _forget(self, future: Future) -> None:
        with self._lock:
            self._futures.discard(future)

    def pending(self) -> int:
        with self._lock:
            return len(self._futures)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until every submitted turn (and any turn they led to) has finished; for tests and shutdown."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                futures = list(self._futures)
            if not futures:
                return True
            for future in futures:
                try:
                    future.result(timeout=max(0.0, deadline - time.monotonic()))
                except Exception:  # noqa: S112 (the turn logged it; we only wait)
                    continue
        return not self.pending()


runner = InProcessRunner()


async def dispatch(message_id: int, **extra) -> None:
    """Hand the turn for a stored message to whoever runs turns (see the module docstring)."""
    event = turn_event(message_id, **extra)
    if not settings.AGENT_WORKER:
        runner.submit(event)
        return
    try:
        await get_channel_layer().send(AGENT_CHANNEL, event)
    except ChannelFull:
        logger.error("the agent channel is full (is `runworker agent` running?); message %s waits for the sweeper",
                     message_id)
    except (RedisError, OSError) as exc:  # the message is stored; a 500 would only make the platform redeliver it
        logger.error("the channel layer is unreachable (%s); message %s waits for the sweeper", exc, message_id)


def dispatch_sync(message_id: int, **extra) -> None:
    """`dispatch` from synchronous code (Celery tasks, management commands)."""
    event = turn_event(message_id, **extra)
    if not settings.AGENT_WORKER:
        runner.submit(event)
        return
    async_to_sync(_send_with_own_layer)(event)


async def _send_with_own_layer(event: dict) -> None:
    # From a Celery worker each async_to_sync call has a fresh event loop: use a layer (and pools) of our own
    # and close them, instead of the process-wide layer whose pools belong to another loop.
    layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
    try:
        await layer.send(AGENT_CHANNEL, event)
    except ChannelFull:
        logger.error("the agent channel is full; message %s waits for the next sweep", event["message_id"])
    finally:
        close = getattr(layer, "close_pools", None)
        if close is not None:
            await close()


MAX_REDISPATCHES = 3


def _count_redispatch(redis, message_id: int) -> int:
    """Count one more dispatch of a message nobody answered (by the sweeper or a take-over); how many so far."""
    counter = f"sweeper:redispatch:{message_id}"
    attempts = redis.incr(counter)
    redis.expire(counter, 86400)
    return attempts


def sweep_stale_inbound(now=None) -> int:
    """Dispatch again the messages nobody answered on the swept channels (`ChannelSpec.swept`: webhook channels,
    and the web chat, whose turn also dies with its process); returns how many contacts were dispatched.

    Two kinds: messages never taken by a turn (the dispatch event was lost), and
    messages a turn took but never answered (its worker died mid-turn: taken,
    no answer step after it, and the contact's session lock has expired). A
    message dispatched MAX_REDISPATCHES times without success goes to staff.
    """
    now = now or timezone.now()
    cutoff = now - dt.timedelta(seconds=settings.INBOUND_REDISPATCH_AFTER_SECONDS)
    # Messages from before a handoff (or from while staff had the conversation) were the staff's to answer.
    staff_era = Message.objects.filter(conversation=OuterRef("conversation"), role=Message.Role.SYSTEM,
                                       created_at__gte=OuterRef("created_at")).filter(
        Q(payload__has_key="handoff") | Q(payload__has_key="resumed"))
    stale = (Message.objects.filter(role=Message.Role.USER, channel__in=registry.names(lambda spec: spec.swept),
                                    conversation__status=Conversation.Status.ACTIVE, created_at__lt=cutoff,
                                    created_at__gte=now - dt.timedelta(days=1))
             .filter(Q(processed_at__isnull=True) | Q(processed_at__lt=cutoff) & ~answered_since_taken())
             .exclude(Exists(staff_era))
             .select_related("conversation").order_by("created_at", "id")[:500])
    by_contact: dict[int, list] = {}
    for message in stale:
        by_contact.setdefault(message.conversation.contact_id, []).append(message)
    redis = get_redis()
    dispatched = 0
    for contact_id, messages in by_contact.items():
        first = messages[0]
        if redis.exists(memory.lock_key(first.conversation.school_id, contact_id)):
            continue  # a turn is running for this contact right now
        if _count_redispatch(redis, first.pk) > MAX_REDISPATCHES:
            if not registry.staffed(first.conversation.channel):
                # No staff inbox behind the web chat: the failed task in the admin is where staff see it.
                Message.objects.filter(pk__in=[m.pk for m in messages]).update(processed_at=now)
                outcome = "left for staff in Failed tasks"
            elif handoff.hand_off(first.conversation, "the concierge could not answer a message", notify_parent=True):
                outcome = "handed to staff"
            else:
                continue
            record_failure("chatbot.tasks.redispatch_stale_inbound", "", [first.pk], {}, FailedTask.Reason.EXHAUSTED,
                           RuntimeError(f"message {first.pk} was dispatched {MAX_REDISPATCHES} times and never "
                                        f"answered; {outcome}"))
            continue
        give_back_unanswered(Message.objects.filter(pk__in=[m.pk for m in messages]))
        logger.warning("re-dispatching %d unanswered message(s) of contact %s", len(messages), contact_id)
        dispatch_sync(first.pk)
        dispatched += 1
    return dispatched
