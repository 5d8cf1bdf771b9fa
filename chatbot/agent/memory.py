"""The active memory of a contact's session, in Redis (seed 000's key layout).

- `react_context:{school}_{contact}`        the active task state, JSON, 1 h TTL
- `react_context:{school}_{contact}:lock`   the session lock: one turn per contact at a time
- `react_context:{school}_{contact}:queue`  messages that arrived while a turn was running
- `new_messages:{school}_{contact}`         flag: the queue has something
- `react_context:leases`                    every running turn's lease: member `{school}_{contact}`, scored
                                            with when its lock lapses unless renewed (epoch milliseconds)

The lock is its own key because the active context outlives a turn. It is a lease: the running turn renews it
(`renew_lease`) every third of SESSION_LOCK_TTL_SECONDS; a turn whose process died lets it lapse, and the
leases set tells any agent worker which contacts' turns lapsed (`lapsed_leases`) without reading the database.
The queue and its flag tell the turn releasing the lock that a message is waiting (a running turn
reads the database for it); the database (messages without `processed_at`) is the
truth, so a lost Redis never loses a message. That is why everything here but the
lock survives Redis being unreachable (a restart, a failover): the active task
starts empty, and writes are dropped with a warning. Only taking the session lock
raises; `chatbot.services` decides what then.
"""

import contextlib
import json
import logging
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils import timezone
from redis.exceptions import RedisError

from chatbot.agent.dialogue import DialogueState
from plumbing.redis import get_async_redis, get_redis

logger = logging.getLogger(__name__)

ACTIVE_FIELDS = (
    "parent_name", "parent_phone", "parent_email", "child_name", "child_age",
    "preferred_date", "preferred_time", "special_requirements", "preferred_name", "children",
)


def context_key(school_id: int, contact_id: int) -> str:
    return f"react_context:{school_id}_{contact_id}"


def lock_key(school_id: int, contact_id: int) -> str:
    return f"{context_key(school_id, contact_id)}:lock"


def queue_key(school_id: int, contact_id: int) -> str:
    return f"{context_key(school_id, contact_id)}:queue"


def flag_key(school_id: int, contact_id: int) -> str:
    return f"new_messages:{school_id}_{contact_id}"


LEASES_KEY = "react_context:leases"


def lease_member(school_id: int, contact_id: int) -> str:
    return f"{school_id}_{contact_id}"


def _lease_ends() -> int:
    """When a lease taken or renewed now lapses, in epoch milliseconds (the leases set's score)."""
    return int(time.time() * 1000) + int(settings.SESSION_LOCK_TTL_SECONDS * 1000)


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
    dialogue: DialogueState = field(default_factory=DialogueState)  # what the last reply asked, offered and did
    upcoming_tour_asked: str = ""  # book_tour asked whether to move this upcoming tour or book another as well
    another_tour: bool = False  # the parent chose to book another tour besides the upcoming one(s)
    _saved: str = field(default="", repr=False, compare=False)  # the JSON this object last wrote

    def as_prompt_dict(self) -> dict:
        return {"task_type": self.task_type, "collected": self.collected, "slots_shown": self.slots_shown,
                "last_booking_id": self.last_booking_id, "awaiting_yes_to": self.read_back.get("actions") or [],
                "full_slot": self.full_slot, "upcoming_tour_asked": self.upcoming_tour_asked,
                "another_tour": self.another_tour,
                "dialogue": self.dialogue.as_prompt_dict()}

    def _to_json(self) -> str:
        return json.dumps({"task_type": self.task_type, "collected": self.collected, "slots_shown": self.slots_shown,
                           "last_booking_id": self.last_booking_id, "session_started_at": self.session_started_at,
                           "read_back": self.read_back, "full_slot": self.full_slot,
                           "upcoming_tour_asked": self.upcoming_tour_asked, "another_tour": self.another_tour,
                           "dialogue": self.dialogue.as_dict()})

    @classmethod
    def from_json(cls, school_id: int, contact_id: int, raw: str | None) -> "ActiveContext":
        """The task from its stored JSON (None: an empty task, starting now)."""
        data = json.loads(raw) if raw else {}
        return cls(school_id, contact_id, data.get("task_type", ""), data.get("collected", {}),
                   data.get("slots_shown", []), data.get("last_booking_id", ""),
                   data.get("session_started_at") or timezone.now().isoformat(), data.get("read_back") or {},
                   data.get("full_slot") or {}, dialogue=DialogueState.from_dict(data.get("dialogue")),
                   upcoming_tour_asked=data.get("upcoming_tour_asked") or "",
                   another_tour=bool(data.get("another_tour")))

    @classmethod
    def load(cls, school_id: int, contact_id: int) -> "ActiveContext":
        """The stored task, or an empty one (also when Redis is unreachable: the turn goes on without it)."""
        raw = None
        with _without_redis("reading the active context"):
            raw = get_redis().get(context_key(school_id, contact_id))
        return cls.from_json(school_id, contact_id, raw)

    def unsaved_json(self) -> str:
        """The task's JSON if it differs from what this object last wrote, else "" (nothing to send)."""
        data = self._to_json()
        return "" if data == self._saved else data

    def saved(self, data: str) -> None:
        """Note `data` (from `unsaved_json`) as written."""
        if data:
            self._saved = data

    def save(self) -> None:
        """Write the task (and renew its TTL); a second save of what this object just wrote sends nothing."""
        data = self.unsaved_json()
        if not data:
            return
        with _without_redis("saving the active context"):
            get_redis().set(context_key(self.school_id, self.contact_id), data, ex=settings.ACTIVE_CONTEXT_TTL_SECONDS)
            self.saved(data)

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


# Take the session lock (KEYS[1]), record its lease (ARGV[6] scored ARGV[5] in KEYS[5]) and read the active context
# (KEYS[2]); or, when another turn holds the lock, queue the message given (ARGV[3], if any) for that turn: RPUSH to
# the queue (KEYS[3]) and raise the flag (KEYS[4]).
# One script, so the turn releasing the lock at that moment cannot miss the message: _RELEASE reads the flag in
# the same step as it releases. (EVAL, not a registered script: no SCRIPT EXISTS round trip first.)
_TAKE_OR_QUEUE = """
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('zadd', KEYS[5], ARGV[5], ARGV[6])
  return {1, redis.call('get', KEYS[2])}
end
if ARGV[3] ~= '' then
  redis.call('rpush', KEYS[3], ARGV[3])
  redis.call('expire', KEYS[3], ARGV[4])
  redis.call('set', KEYS[4], '1', 'EX', ARGV[4])
end
return {0}
"""


def queue_entry(message_id: int, text: str) -> str:
    """A message that arrived while a turn runs, as the queue keeps it."""
    return json.dumps({"message_id": message_id, "message": text, "timestamp": timezone.now().isoformat()})


def _take_arguments(lock, school_id: int, contact_id: int, entry: str) -> tuple[str, list]:
    """A new lock token, and the EVAL arguments of _TAKE_OR_QUEUE."""
    token = uuid.uuid4().hex
    keys = [lock.name, context_key(school_id, contact_id), queue_key(school_id, contact_id),
            flag_key(school_id, contact_id), LEASES_KEY]
    return token, [_TAKE_OR_QUEUE, len(keys), *keys, token, int(settings.SESSION_LOCK_TTL_SECONDS * 1000), entry,
                   settings.ACTIVE_CONTEXT_TTL_SECONDS, _lease_ends(), lease_member(school_id, contact_id)]


def _taken(lock, token: str, reply: list) -> tuple[bool, str | None]:
    if not reply[0]:
        return False, None
    lock.local.token = token.encode()
    return True, reply[1] if len(reply) > 1 else None


async def take_session(lock, school_id: int, contact_id: int, entry: str = "") -> tuple[bool, str | None]:
    """Take a `session_lock` and read the active context in one round trip: (taken, the context's JSON, or None
    when there is none). Not taken: `entry` (a `queue_entry`, if given) is queued for the turn holding the lock,
    and the flag that turn watches raised, in the same step. The context read is only used when the lock was
    taken: then no other turn of the contact can change it. Raises RedisError like `lock.acquire()`."""
    token, arguments = _take_arguments(lock, school_id, contact_id, entry)
    return _taken(lock, token, await get_async_redis().eval(*arguments))


def take_session_now(lock, school_id: int, contact_id: int, entry: str = "") -> tuple[bool, str | None]:
    """`take_session` from synchronous code (a database hop)."""
    token, arguments = _take_arguments(lock, school_id, contact_id, entry)
    return _taken(lock, token, get_redis().eval(*arguments))


# Save the active context (ARGV[2] to KEYS[2], unless empty), release the lock (KEYS[1]) and drop its lease
# (ARGV[5] from KEYS[4]) if it still holds our token (ARGV[1]), and say whether a message was queued for this turn
# meanwhile (the flag, KEYS[3]); with a KEYS[5], also read the members of that sorted set scored from ARGV[4] on
# (a channel layer's group).
_RELEASE = """
if ARGV[2] ~= '' then redis.call('set', KEYS[2], ARGV[2], 'EX', ARGV[3]) end
local released = 0
if ARGV[1] ~= '' and redis.call('get', KEYS[1]) == ARGV[1] then
  released = redis.call('del', KEYS[1])
  redis.call('zrem', KEYS[4], ARGV[5])
end
local members = {}
if KEYS[5] then members = redis.call('zrangebyscore', KEYS[5], ARGV[4], '+inf') end
return {released, redis.call('exists', KEYS[3]), members}
"""


def save_and_release(active: ActiveContext, lock, group: tuple[bytes | str, int] | None = None
                     ) -> tuple[bool | None, list[str] | None]:
    """The turn's end, from synchronous code: its active task saved and its `session_lock` released (with the
    token check) in one Redis round trip, which also tells whether a message was queued for this turn meanwhile
    (True / False; None when Redis is unreachable) and, given a `group` (a sorted set's key and the lowest score
    to read, see `chatbot.channels.web.consumer.group_in_our_redis`), reads its members: (flagged, members or None).
    A lock already gone (expired, or lost with a Redis restart) is only logged; with Redis unreachable the task
    is not saved and the lock expires on its own."""
    token, lock.local.token = lock.local.token, None
    data = active.unsaved_json()
    keys = [lock.name, context_key(active.school_id, active.contact_id),
            flag_key(active.school_id, active.contact_id), LEASES_KEY, *([group[0]] if group else [])]
    try:
        released, flagged, members = get_redis().eval(_RELEASE, len(keys), *keys, token or "", data,
                                                      settings.ACTIVE_CONTEXT_TTL_SECONDS, group[1] if group else 0,
                                                      lease_member(active.school_id, active.contact_id))
    except RedisError as exc:
        logger.warning("Redis unreachable while saving the active context and releasing %s (%s); the lock "
                       "expires on its own", lock.name, exc)
        return None, None
    active.saved(data)
    if token is not None and not released:  # None: never taken (Redis was unreachable)
        logger.warning("session lock %s was already gone", lock.name)
    return bool(flagged), members if group else None


# Renew a lease: the lock (KEYS[1]) still ours (ARGV[1]) lives ARGV[2] ms more, and its entry (ARGV[4]) in the
# leases set (KEYS[2]) is scored with the new end (ARGV[3]); 0 if the lock is no longer ours.
_RENEW = """
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('pexpire', KEYS[1], ARGV[2])
redis.call('zadd', KEYS[2], ARGV[3], ARGV[4])
return 1
"""


async def renew_lease(lock, school_id: int, contact_id: int) -> bool | None:
    """Extend a taken `session_lock` by its full lease, and its entry in the leases set, in one round trip: True;
    False when the lock is no longer ours (it lapsed, maybe taken over); None when it is not held (released, or
    never taken because Redis was unreachable). Raises RedisError."""
    token = lock.local.token
    if token is None:
        return None
    return bool(await get_async_redis().eval(_RENEW, 2, lock.name, LEASES_KEY, token,
                                             int(settings.SESSION_LOCK_TTL_SECONDS * 1000), _lease_ends(),
                                             lease_member(school_id, contact_id)))


async def lapsed_leases(limit: int = 100) -> list[tuple[int, int]]:
    """(school, contact) of the turns whose lease lapsed without a release: their process died mid-turn.
    Raises RedisError."""
    members = await get_async_redis().zrangebyscore(LEASES_KEY, "-inf", int(time.time() * 1000), start=0, num=limit)
    return [(int(school), int(contact)) for school, contact in (member.split("_") for member in members)]


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
