"""The active memory of a contact's session, in Redis (seed 000's key layout).

- `react_context:{school}_{contact}`        the active task state, JSON, 1 h TTL
- `react_context:{school}_{contact}:lock`   the session lock: one turn per contact at a time
- `react_context:{school}_{contact}:queue`  messages that arrived while a turn was running
- `new_messages:{school}_{contact}`         flag: the queue has something

The lock is its own key because the active context outlives a turn. The queue is
the fast signal; the database (messages without `processed_at`) is the truth, so
a lost Redis never loses a message. That is why everything here but the lock
survives Redis being unreachable (a restart, a failover): the signals read as
"nothing new", the active task starts empty, and writes are dropped with a
warning. Only `session_lock` raises; `chatbot.services` decides what then.
"""

import contextlib
import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils import timezone
from redis.exceptions import RedisError

from config.redis import get_async_redis, get_redis

logger = logging.getLogger(__name__)

ACTIVE_FIELDS = (
    "parent_name", "parent_phone", "parent_email", "child_name", "child_age",
    "preferred_date", "preferred_time", "special_requirements", "preferred_name",
)


def context_key(school_id: int, contact_id: int) -> str:
    return f"react_context:{school_id}_{contact_id}"


def lock_key(school_id: int, contact_id: int) -> str:
    return f"{context_key(school_id, contact_id)}:lock"


def queue_key(school_id: int, contact_id: int) -> str:
    return f"{context_key(school_id, contact_id)}:queue"


def flag_key(school_id: int, contact_id: int) -> str:
    return f"new_messages:{school_id}_{contact_id}"


@dataclass
class ActiveContext:
    """What the agent is in the middle of doing for one contact."""

    school_id: int
    contact_id: int
    task_type: str = ""
    collected: dict[str, Any] = field(default_factory=dict)
    slots_shown: list[dict] = field(default_factory=list)
    last_booking_id: str = ""
    session_started_at: str = ""
    read_back: dict[str, Any] = field(default_factory=dict)  # {"actions", "after"}: see chatbot.agent.confirmation
    full_slot: dict[str, str] = field(default_factory=dict)  # {"date", "time"} of the full tour last asked for
    _saved: str = field(default="", repr=False, compare=False)  # the JSON this object last wrote

    def as_prompt_dict(self) -> dict:
        return {"task_type": self.task_type, "collected": self.collected, "slots_shown": self.slots_shown,
                "last_booking_id": self.last_booking_id, "awaiting_yes_to": self.read_back.get("actions") or [],
                "full_slot": self.full_slot}

    def _to_json(self) -> str:
        return json.dumps({"task_type": self.task_type, "collected": self.collected, "slots_shown": self.slots_shown,
                           "last_booking_id": self.last_booking_id, "session_started_at": self.session_started_at,
                           "read_back": self.read_back, "full_slot": self.full_slot})

    @classmethod
    def from_json(cls, school_id: int, contact_id: int, raw: str | None) -> "ActiveContext":
        """The task from its stored JSON (None: an empty task, starting now)."""
        data = json.loads(raw) if raw else {}
        return cls(school_id, contact_id, data.get("task_type", ""), data.get("collected", {}),
                   data.get("slots_shown", []), data.get("last_booking_id", ""),
                   data.get("session_started_at") or timezone.now().isoformat(), data.get("read_back") or {},
                   data.get("full_slot") or {})

    @classmethod
    def load(cls, school_id: int, contact_id: int) -> "ActiveContext":
        """The stored task, or an empty one (also when Redis is unreachable: the turn goes on without it)."""
        raw = None
        with _without_redis("reading the active context"):
            raw = get_redis().get(context_key(school_id, contact_id))
        return cls.from_json(school_id, contact_id, raw)

    def save(self, client=None) -> None:
        """Write the task (and renew its TTL); a second save of what this object just wrote sends nothing.
        `client`: a pipeline to queue the write on (its caller executes it), instead of sending it now."""
        data = self._to_json()
        if data == self._saved:
            return
        with _without_redis("saving the active context"):
            (client or get_redis()).set(context_key(self.school_id, self.contact_id), data,
                                        ex=settings.ACTIVE_CONTEXT_TTL_SECONDS)
            self._saved = data

    def delete(self) -> None:
        with _without_redis("deleting the active context"):
            get_redis().delete(context_key(self.school_id, self.contact_id))


@contextlib.contextmanager
def _without_redis(doing: str) -> Iterator[None]:
    """Go on when Redis is unreachable: the block's Redis call is skipped (with a warning), not raised."""
    try:
        yield
    except RedisError as exc:
        logger.warning("Redis unreachable while %s (%s: %s); going on without it", doing, type(exc).__name__, exc)


def session_lock(school_id: int, contact_id: int):
    """A non-blocking Redis lock (token-checked release and extend, via redis-py's Lock).

    Its token is not thread-local, so the turn's last database hop can release it (`save_and_release`).
    """
    return get_async_redis().lock(
        lock_key(school_id, contact_id), timeout=settings.SESSION_LOCK_TTL_SECONDS, blocking=False,
        thread_local=False,
    )


async def take_session(lock, school_id: int, contact_id: int) -> tuple[bool, str | None]:
    """Take a `session_lock` and read the active context in one round trip (a pipeline): (taken, the context's
    JSON, or None when there is none). The context read is only used when the lock was taken: then no other turn
    of the contact can change it. Raises RedisError like `lock.acquire()`."""
    token = uuid.uuid4().hex
    async with get_async_redis().pipeline(transaction=False) as pipe:
        pipe.set(lock.name, token, nx=True, px=int(settings.SESSION_LOCK_TTL_SECONDS * 1000))
        pipe.get(context_key(school_id, contact_id))
        taken, raw = await pipe.execute()
    if not taken:
        return False, None
    lock.local.token = token.encode()
    return True, raw


# redis-py's Lock.release script (delete the key only if it still holds our token), sent with EVAL so that it
# can share a pipeline: a registered script in a pipeline costs a SCRIPT EXISTS round trip first.
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


def save_and_release(active: ActiveContext, lock) -> None:
    """The turn's end, from synchronous code: its active task saved and its `session_lock` released (with the
    token check) in one Redis round trip. A lock already gone (expired, or lost with a Redis restart) or Redis
    unreachable is only logged: the task is then not saved, and the lock expires on its own."""
    token, lock.local.token = lock.local.token, None
    try:
        with get_redis().pipeline(transaction=False) as pipe:
            active.save(pipe)
            if token is not None:  # None: never taken (Redis was unreachable)
                pipe.eval(_RELEASE, 1, lock.name, token)
            released = pipe.execute()[-1] if len(pipe) else 1
    except RedisError as exc:
        active._saved = ""
        logger.warning("Redis unreachable while saving the active context and releasing %s (%s); the lock "
                       "expires on its own", lock.name, exc)
        return
    if not released:
        logger.warning("session lock %s was already gone", lock.name)


async def enqueue(school_id: int, contact_id: int, message_id: int, text: str) -> None:
    """Note a message that arrived while a turn runs, and raise the flag the turn watches."""
    entry = json.dumps({"message_id": message_id, "message": text, "timestamp": timezone.now().isoformat()})
    # Unreachable Redis: the message is stored, and the running turn reads the database before answering.
    with _without_redis(f"queueing message {message_id}"):
        async with get_async_redis().pipeline(transaction=True) as pipe:
            pipe.rpush(queue_key(school_id, contact_id), entry)
            pipe.expire(queue_key(school_id, contact_id), settings.ACTIVE_CONTEXT_TTL_SECONDS)
            pipe.set(flag_key(school_id, contact_id), "1", ex=settings.ACTIVE_CONTEXT_TTL_SECONDS)
            await pipe.execute()


async def has_new_messages(school_id: int, contact_id: int) -> bool:
    with _without_redis("checking for new messages"):
        return bool(await get_async_redis().exists(flag_key(school_id, contact_id)))
    return False


def drain_queue(school_id: int, contact_id: int) -> list[dict]:
    """Take (and clear) the queued entries and the flag, atomically ([] when Redis is unreachable)."""
    raw = []
    with _without_redis("draining the message queue"), get_redis().pipeline(transaction=True) as pipe:
        pipe.lrange(queue_key(school_id, contact_id), 0, -1)
        pipe.delete(queue_key(school_id, contact_id))
        pipe.delete(flag_key(school_id, contact_id))
        raw, _, _ = pipe.execute()
    return [json.loads(item) for item in raw]


def end_session(school_id: int, contact_id: int) -> None:
    """Forget the active state (the persistent context already holds what matters)."""
    with _without_redis("ending the session"):  # if skipped, it expires on its own (ACTIVE_CONTEXT_TTL_SECONDS)
        get_redis().delete(context_key(school_id, contact_id), queue_key(school_id, contact_id),
                           flag_key(school_id, contact_id))
