"""Django's PostgreSQL backend, with a pool check that costs no round trip on a busy server, and prepared
statements for the hot path.

Django's CONN_HEALTH_CHECKS with a pool pings every connection as it is taken:
one extra round trip per `database_sync_to_async` hop. Here a connection is
pinged only when it was last taken more than DB_POOL_CHECK_IDLE_SECONDS ago
(long enough for a database restart or an idle timeout to have closed it). A
connection that died within that window fails its first statement; the turn
gives its messages back and runs again on another connection
(`chatbot.services`, tests/faults/test_postgres_drop.py).

Planning is most of what PostgreSQL spends on a turn's small statements (0.1 to 0.5 ms each, against tens of
microseconds to run them). `prepared_cursor()` (used through `plumbing.rows.hot_cursor`) binds parameters on the
server, so psycopg prepares a statement a connection has run DB_PREPARE_THRESHOLD times, and the connection
runs prepared statements with their generic plan (`plan_cache_mode`), planned once. Django's own cursors bind
on the client and are never prepared, so the setting touches only the hot path's statements, whose plans do
not depend on their parameters (look-ups by key through an index).
"""

import os
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


# Connections a forked child inherited from its parent: kept referenced and never used or closed there (closing
# would end the parent's sessions), so that their finalizers never run in the child.
_left_to_parent: list = []


def _forget_inherited_connections() -> None:
    """In a forked child (Celery's prefork workers, a test's live server): leave the parent's pooled and open
    connections to it. Used from two processes, one PostgreSQL session would mix their statements, and the
    prepared statements one process makes would collide with the other's ("prepared statement ... already
    exists"). The child opens a pool of its own on first use."""
    from django.db import connections

    _left_to_parent.append(dict(base.DatabaseWrapper._connection_pools))
    base.DatabaseWrapper._connection_pools.clear()
    for wrapper in connections.all(initialized_only=True):
        if wrapper.connection is not None:
            _left_to_parent.append(wrapper.connection)
            wrapper.connection = None


os.register_at_fork(after_in_child=_forget_inherited_connections)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict:
        params = super().get_connection_params()
        if params.get("prepare_threshold") is not None:
            params["options"] = f"{params.get('options', '')} -c plan_cache_mode=force_generic_plan".strip()
        return params

    def prepared_cursor(self):
        """A Django cursor that binds its parameters on the server (see the module's docstring)."""
        self.ensure_connection()
        with self.wrap_database_errors:
            return self._prepare_cursor(base.ServerBindingCursor(self.connection))

    @property
    def pool(self) -> ConnectionPool | None:
        pool = super().pool
        if pool is not None:
            # Django passes its own `check` (or None) when it builds the pool and has no setting for another.
            pool._check = check_if_idle
        return pool
