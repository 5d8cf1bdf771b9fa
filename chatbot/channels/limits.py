"""Abuse limits of the web chat: moving windows from the `limits` library, kept in Redis.

A new visitor token costs nothing, so a limit per contact alone lets one client
send as much as it likes by opening new tokens. Every message is therefore
counted three ways, and refused when any count is over its limit:

- per visitor (the signed token's id: one browser),
- per client address (the socket's peer; behind a proxy run daphne with
  `--proxy-headers` so this is the visitor's address, not the proxy's),
- per school (everything every visitor sends it: a ceiling on model spend).

Socket handshakes are counted per client address, before anything else runs.

Moving windows (the `limits` MovingWindowRateLimiter) count the last 60 seconds
at every moment, so no burst passes at a minute boundary the way a fixed
per-minute counter lets twice the limit through. With REDIS_URL the windows live
in Redis and hold across every web process; the embedded default keeps them in
the process. With Redis unreachable a message goes through (never lost) and the
failure is logged.
"""

import asyncio
import logging
import weakref
from dataclasses import dataclass

from django.conf import settings
from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from redis.exceptions import RedisError

from config.redis import get_async_redis

logger = logging.getLogger(__name__)

KEY_PREFIX = "concierge-limits"
_limiters: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[object, MovingWindowRateLimiter]]" = (
    weakref.WeakKeyDictionary())


def _storage(pool) -> Storage:
    if pool is None:
        return MemoryStorage()
    # The process's blocking pool (config.redis): a burst of sockets waits for a connection instead of failing
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


async def _allow(checks: list[Check]) -> str | None:
    """None if every check has room, else the scope of the first that is full.

    Each check is one atomic take-if-room in Redis (a Lua script), in order, so hundreds of concurrent sockets
    cannot all pass a check before any is counted. An attempt refused by a later check still counts against the
    earlier ones (the visitor's own window first): attempts are what is limited.
    """
    try:
        window = limiter()
        for check in checks:
            if not await window.hit(check.item, check.scope, *check.identifiers):
                return check.scope
    except (RedisError, OSError) as exc:
        logger.warning("web chat limits not checked, Redis unreachable: %s", exc)
    return None


async def allow_message(*, school_id: int, visitor: str, address: str) -> str | None:
    """Room for one more web chat message? None if so, else which limit is full."""
    return await _allow([
        Check("visitor", RateLimitItemPerMinute(settings.CHAT_RATE_LIMIT_PER_MINUTE), (str(school_id), visitor)),
        Check("address", RateLimitItemPerMinute(settings.CHAT_RATE_LIMIT_PER_ADDRESS_PER_MINUTE), (address,)),
        Check("school", RateLimitItemPerMinute(settings.CHAT_RATE_LIMIT_PER_SCHOOL_PER_MINUTE), (str(school_id),)),
    ])


async def allow_handshake(address: str) -> bool:
    """Room for one more socket from this client address?"""
    return await _allow([Check("handshake", RateLimitItemPerMinute(settings.CHAT_HANDSHAKES_PER_ADDRESS_PER_MINUTE),
                               (address,))]) is None


def client_address(scope: dict) -> str:
    """The socket's peer address (daphne puts the X-Forwarded-For address there with --proxy-headers)."""
    client = scope.get("client") or ()
    return str(client[0]) if client else "unknown"
