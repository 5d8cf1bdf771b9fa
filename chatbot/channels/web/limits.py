"""Abuse limits of the web chat: moving windows from the `limits` library, kept in Redis.

A new visitor token costs nothing, so a limit per contact alone lets one client
send as much as it likes by opening new tokens. Every message is therefore
counted three ways, and refused when any count is over its limit:

- per visitor (the signed token's id: one browser), a token bucket: a burst of
  CHAT_VISITOR_BURST messages, refilled one every CHAT_VISITOR_REFILL_SECONDS.
  A parent clicks a slot, a quick reply and "yes" within seconds, then types at
  about one message every five seconds: a burst allowance lets all of that
  through, where a fixed count per minute refused the confirming "yes"; a
  script sending as fast as it can still gets only the burst, then one message
  per refill,
- per client address (the socket's peer; behind a proxy run daphne with
  `--proxy-headers` so this is the visitor's address, not the proxy's),
- per school (everything every visitor sends it: a ceiling on model spend).

Socket handshakes are counted per client address, before anything else runs.

Moving windows (the `limits` MovingWindowRateLimiter) count the last 60 seconds
at every moment, so no burst passes at a minute boundary the way a fixed
per-minute counter lets twice the limit through. With REDIS_URL the windows live
in Redis and hold across every web process; the embedded default keeps them in
the process (the bucket, a Lua script, runs on the embedded fakeredis). With Redis
unreachable a message goes through (never lost) and the failure is logged. A
refusal says when the limit that refused has room again (`Refused.retry_after`):
the widget sends the message again by itself then.
"""

import asyncio
import logging
import math
import time
import weakref
from dataclasses import dataclass

from django.conf import settings
from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from redis.exceptions import RedisError

from plumbing.redis import get_async_redis

logger = logging.getLogger(__name__)

KEY_PREFIX = "concierge-limits"
_limiters: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[object, MovingWindowRateLimiter]]" = (
    weakref.WeakKeyDictionary())


def _storage(pool) -> Storage:
    if pool is None:
        return MemoryStorage()
    # The process's blocking pool (plumbing.redis): a burst of sockets waits for a connection instead of failing
    # with "Too many connections" (which would let the burst through unchecked).
    return RedisStorage(f"async+{settings.REDIS_URL}", implementation="redispy", key_prefix=KEY_PREFIX,
                        connection_pool=pool)


def limiter() -> MovingWindowRateLimiter:
    """The limiter of the running event loop, on the loop's Redis pool (a pool belongs to one loop)."""
    loop = asyncio.get_running_loop()
    pool = get_async_redis().connection_pool if settings.REDIS_URL else None
    found = _limiters.get(loop)
    if found is None or found[0] is not pool:  # first use, or the Redis clients were reset (tests, drills)
        found = _limiters[loop] = (pool, MovingWindowRateLimiter(_storage(pool)))
    return found[1]


@dataclass(frozen=True)
class Check:
    scope: str  # "visitor", "address", "school" or "handshake": which limit, for the logs and the tests
    item: RateLimitItem
    identifiers: tuple[str, ...]


@dataclass(frozen=True)
class Refused:
    scope: str  # which limit refused
    retry_after: int  # whole seconds until it has room again


# A token bucket (KEYS[1], a hash of its tokens and when they were counted): refilled by the seconds since
# (ARGV[1], now) at one token per ARGV[3] seconds up to ARGV[2]; one token taken if there is one. Returns
# {1, "0"} when taken, else {0, seconds until a token} (a string: Lua numbers reach Redis as integers).
_BUCKET_SCRIPT = """
local now, burst, per = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('hmget', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) / per)
local taken, wait = 0, 0
if tokens >= 1 then tokens = tokens - 1; taken = 1 else wait = (1 - tokens) * per end
redis.call('hset', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('expire', KEYS[1], math.ceil(burst * per) + 1)
return {taken, tostring(wait)}
"""


async def _take_token(school_id: int, visitor: str) -> Refused | None:
    """The visitor's bucket: None if a token was taken, else when the next one comes."""
    taken, wait = await get_async_redis().eval(
        _BUCKET_SCRIPT, 1, f"{KEY_PREFIX}:bucket:{school_id}:{visitor}", repr(time.time()),
        settings.CHAT_VISITOR_BURST, settings.CHAT_VISITOR_REFILL_SECONDS)
    return None if taken else Refused("visitor", max(1, math.ceil(float(wait))))


async def _allow(checks: list[Check], bucket: tuple[int, str] | None = None) -> Refused | None:
    """None if the visitor's `bucket` (school, visitor) and every check have room, else the first that is full.

    Each is one atomic take-if-room in Redis (a Lua script), in order, so hundreds of concurrent sockets
    cannot all pass a check before any is counted. An attempt refused by a later check still counts against the
    earlier ones (the visitor's own bucket first): attempts are what is limited.
    """
    try:
        refused = await _take_token(*bucket) if bucket else None
        if refused:
            return refused
        window = limiter()
        for check in checks:
            if not await window.hit(check.item, check.scope, *check.identifiers):
                stats = await window.get_window_stats(check.item, check.scope, *check.identifiers)
                return Refused(check.scope, max(1, math.ceil(stats.reset_time - time.time())))
    except (RedisError, OSError) as exc:
        logger.warning("web chat limits not checked, Redis unreachable: %s", exc)
    return None


async def allow_message(*, school_id: int, visitor: str, address: str) -> Refused | None:
    """Room for one more web chat message? None if so, else which limit is full and when it has room."""
    return await _allow([
        Check("address", RateLimitItemPerMinute(settings.CHAT_RATE_LIMIT_PER_ADDRESS_PER_MINUTE), (address,)),
        Check("school", RateLimitItemPerMinute(settings.CHAT_RATE_LIMIT_PER_SCHOOL_PER_MINUTE), (str(school_id),)),
    ], bucket=(school_id, visitor))


async def allow_handshake(address: str) -> bool:
    """Room for one more socket from this client address?"""
    return await _allow([Check("handshake", RateLimitItemPerMinute(settings.CHAT_HANDSHAKES_PER_ADDRESS_PER_MINUTE),
                               (address,))]) is None


def client_address(scope: dict) -> str:
    """The socket's peer address (daphne puts the X-Forwarded-For address there with --proxy-headers)."""
    client = scope.get("client") or ()
    return str(client[0]) if client else "unknown"
