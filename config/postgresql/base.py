"""Django's PostgreSQL backend, with a pool check that costs no round trip on a busy server.

Django's CONN_HEALTH_CHECKS with a pool pings every connection as it is taken:
one extra round trip per `database_sync_to_async` hop. Here a connection is
pinged only when it was last taken more than DB_POOL_CHECK_IDLE_SECONDS ago
(long enough for a database restart or an idle timeout to have closed it). A
connection that died within that window fails its first statement; the turn
gives its messages back and runs again on another connection
(`chatbot.services`, tests/faults/test_postgres_drop.py).
"""

import time
import weakref

from django.conf import settings
from django.db.backends.postgresql import base
from psycopg import Connection
from psycopg_pool import ConnectionPool

_taken_at: "weakref.WeakKeyDictionary[Connection, float]" = weakref.WeakKeyDictionary()


def check_if_idle(connection: Connection) -> None:
    """The pool's `check` hook: ping a connection not taken for a while; raise if it is dead."""
    now = time.monotonic()
    if now - _taken_at.get(connection, float("-inf")) > settings.DB_POOL_CHECK_IDLE_SECONDS:
        ConnectionPool.check_connection(connection)
    _taken_at[connection] = now


class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self) -> ConnectionPool | None:
        pool = super().pool
        if pool is not None:
            # Django passes its own `check` (or None) when it builds the pool and has no setting for another.
            pool._check = check_if_idle
        return pool
