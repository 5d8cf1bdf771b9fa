"""Database hops: synchronous database work called from async code, on a small pool of threads.

channels' `database_sync_to_async` runs every call on the process's one thread-sensitive thread, so the
database work of every turn in a web process queues behind that one thread, which is held while it waits for
PostgreSQL. Our hops need no such thread: each is self-contained (it opens and ends its own transactions and
hands its pooled connection back when it returns, as `database_sync_to_async` makes it), so `database_hop`
runs them on DB_HOP_THREADS threads and the waits of different turns overlap.

A hop thread keeps its connection between hops (up to DB_POOL_CHECK_IDLE_SECONDS after its last hop) instead
of handing it back to the pool after each: a pool check-out and check-in cost more than a short statement. A
connection that saw an error, was left in a transaction, or sat idle longer than that is closed (given back to
the pool, which pings it when next taken) at the start or end of a hop, as `close_old_connections` does with
CONN_MAX_AGE. Keep DB_HOP_THREADS below DB_POOL_MAX_SIZE: each thread holds one connection.
"""

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import SyncToAsync
from django.conf import settings
from django.db import close_old_connections, connections

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


def _keep_connections() -> None:
    """Let the thread's open connections live on for DB_POOL_CHECK_IDLE_SECONDS (`close_at`, which Django sets
    from CONN_MAX_AGE: 0 with the pool, so they would be closed now)."""
    keep_until = time.monotonic() + settings.DB_POOL_CHECK_IDLE_SECONDS
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None:
            connection.close_at = keep_until


class _Hop(SyncToAsync):
    """channels' `DatabaseSyncToAsync`, except that the thread's connection is kept for its next hop."""

    def thread_handler(self, loop, *args, **kwargs):
        close_old_connections()  # one kept too long, broken, or left in a transaction
        try:
            return super().thread_handler(loop, *args, **kwargs)
        finally:
            _keep_connections()
            close_old_connections()


def database_hop(func: Callable[..., Any]) -> Callable[..., Any]:
    """`func` as a coroutine function that runs it on a database thread (with the thread's kept connection)."""
    return _Hop(func, thread_sensitive=False, executor=_threads())
