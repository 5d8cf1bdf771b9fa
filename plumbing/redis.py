"""Redis clients for active conversation state, locks and queues.

With `REDIS_URL` set these are real Redis clients. Without it (the embedded
default) they are fakeredis clients sharing one in-process server: the same
client API, so the calling code is identical in both modes.
"""

import asyncio
import functools
import weakref

import fakeredis
import redis
import redis.asyncio as aioredis
import redis.utils
from django.conf import settings

# redis-py 8 reads its own version from the package metadata (about 0.25 ms) for every client object it builds,
# and channels-redis and limits build one per command: read it once per process.
redis.utils.get_lib_version = functools.cache(redis.utils.get_lib_version)

_fake_server = fakeredis.FakeServer()
_sync_client: redis.Redis | None = None
_async_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aioredis.Redis]" = weakref.WeakKeyDictionary()


def is_embedded() -> bool:
    return not settings.REDIS_URL


def get_redis() -> redis.Redis:
    """The process's synchronous client."""
    global _sync_client
    if _sync_client is None:
        if is_embedded():
            _sync_client = fakeredis.FakeRedis(server=_fake_server, decode_responses=True)
        else:
            _sync_client = redis.Redis.from_url(settings.REDIS_URL, decode_responses=True, health_check_interval=30)
    return _sync_client


def get_async_redis() -> aioredis.Redis:
    """The asyncio client for the running event loop (a pool is bound to one loop)."""
    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        if is_embedded():
            client = fakeredis.FakeAsyncRedis(server=_fake_server, decode_responses=True)
        else:
            # A blocking pool waits for a free connection instead of raising MaxConnectionsError: a burst of
            # hundreds of sockets queues for a few connections (a command holds one for well under a
            # millisecond; nothing here blocks on Redis) rather than opening one each.
            pool = aioredis.BlockingConnectionPool.from_url(
                settings.REDIS_URL, decode_responses=True, health_check_interval=30,
                max_connections=settings.REDIS_MAX_CONNECTIONS, timeout=20,
            )
            client = aioredis.Redis(connection_pool=pool)
        _async_clients[loop] = client
    return client


def reset_clients() -> None:
    """Forget cached clients (tests that switch settings or restart Redis)."""
    global _sync_client
    _sync_client = None
    _async_clients.clear()
