"""Database hops: synchronous database work called from async code, on a small pool of threads.

channels' `database_sync_to_async` runs every call on the process's one thread-sensitive thread, so the
database work of every turn in a web process queues behind that one thread, which is held while it waits for
PostgreSQL. Our hops need no such thread: each is self-contained (it opens and ends its own transactions and
hands its pooled connection back when it returns, as `database_sync_to_async` makes it), so `database_hop`
runs them on DB_HOP_THREADS threads and the waits of different turns overlap.

Keep DB_HOP_THREADS below DB_POOL_MAX_SIZE: each thread holds one connection while it runs.
"""

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from channels.db import DatabaseSyncToAsync
from django.conf import settings

_executor: ThreadPoolExecutor | None = None


def _threads() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=settings.DB_HOP_THREADS, thread_name_prefix="db-hop")
    return _executor


def _forget_threads() -> None:
    """A forked child (a test's live server, a prefork worker) has none of its parent's threads: it starts a pool of
    its own. The inherited one counts threads that do not exist there and would never run a hop."""
    global _executor
    _executor = None


os.register_at_fork(after_in_child=_forget_threads)


def database_hop(func: Callable[..., Any]) -> Callable[..., Any]:
    """`func` as a coroutine function that runs it on a database thread (old connections closed around it)."""
    return DatabaseSyncToAsync(func, thread_sensitive=False, executor=_threads())
