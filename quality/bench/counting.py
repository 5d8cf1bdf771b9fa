"""Counting what a turn costs in round trips: database, commits, Redis, thread hops (every thread, while active).

Database (PostgreSQL): counted where psycopg really talks to the server, so nothing the ORM does around it
is missed: every send-and-wait-for-results (`psycopg.generators.execute`, the one the cursors use too) is one
round trip, sync or asyncio connection alike. Each is classified by what was sent:

- `statements`: the SQL of the code (ORM or raw);
- `transaction_control`: BEGIN, COMMIT, ROLLBACK (psycopg sends them on its own, e.g. BEGIN before the
  first statement of `transaction.atomic()`);
- `savepoints`: SAVEPOINT, RELEASE SAVEPOINT, ROLLBACK TO SAVEPOINT;
- `health_checks`: the pool's check of a connection when it is taken (an empty query);
- `prepares`: the extra round trip of a statement psycopg prepares on the server (after a few uses);
- `pipeline_syncs`: in pipeline mode, each sync (the client waits for the results of everything queued since
  the last one), as one round trip; the statements queued are counted in `pipelined_statements` (an
  `executemany` once), which is not part of `round_trips`. In autocommit, a sync after a write is a commit.

`commits` are the durable commits: each COMMIT, plus each data-changing statement (INSERT / UPDATE / DELETE /
MERGE anywhere in its text) run outside a transaction block, which PostgreSQL commits on its own. On SQLite
(no server) the kinds come from Django's cursor executes and its commit / rollback calls, by the same rules.

Connections: each one psycopg (or, on SQLite, Django) really opens; one the pool hands out again is not new.
Redis: each command a client sends on its own, and each pipeline execute (one round trip), for the sync and
asyncio clients and their fakeredis stand-ins alike. Thread hops: each callable handed to a thread pool
(`database_sync_to_async`, `asyncio.to_thread`, `run_in_executor`, a library's background executor),
including asgiref's hand-back to the thread that waits in `async_to_sync`.
"""

import re
import threading
from dataclasses import asdict, dataclass
from typing import Any

WRITE = re.compile(r"\b(INSERT\s+INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|MERGE\s+INTO)\b", re.IGNORECASE)
SAVEPOINT = re.compile(r"^\s*(SAVEPOINT|RELEASE\s+SAVEPOINT|ROLLBACK\s+TO\s+SAVEPOINT)\b", re.IGNORECASE)
_INHERITED = object()
TRANSACTION = re.compile(r"^\s*(BEGIN|START\s+TRANSACTION|COMMIT|END|ROLLBACK|ABORT)\b", re.IGNORECASE)


@dataclass
class Counts:
    """What was counted; `round_trips` is the database total (the sum of the kinds)."""

    round_trips: int = 0
    statements: int = 0
    transaction_control: int = 0
    savepoints: int = 0
    health_checks: int = 0
    prepares: int = 0
    pipeline_syncs: int = 0
    pipelined_statements: int = 0  # not round trips of their own: sent together, before a pipeline sync
    commits: int = 0
    connections: int = 0
    redis: int = 0
    thread_hops: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def _text(query: Any) -> str:
    if isinstance(query, bytes):
        return query.decode(errors="replace")
    if isinstance(query, str):
        return query
    as_string = getattr(query, "as_string", None)  # psycopg.sql.Composable
    if as_string is not None:
        try:
            return as_string(None)
        except Exception:  # noqa: BLE001 (a composable that needs a connection: classify it as a statement)
            return "?"
    return str(query)


def kind_of(sql: str) -> str:
    """`health_checks`, `savepoints`, `transaction_control` or `statements`, from the text sent."""
    if not sql.strip():
        return "health_checks"
    if SAVEPOINT.match(sql):
        return "savepoints"
    if TRANSACTION.match(sql):
        return "transaction_control"
    return "statements"


class RoundTrips:
    """Patches the clients while active; `reset()` returns the counts so far and starts again from zero."""

    def __init__(self, vendor: str | None = None) -> None:
        """`vendor`: "postgresql" counts at psycopg's level without Django (the LangGraph peer's process uses
        this); by default Django's default database decides."""
        self.vendor = vendor
        self.counts = Counts()
        self._lock = threading.Lock()
        self._saved: list[tuple[Any, str, Any]] = []
        self._labels: dict[int, list[tuple[str, bool]]] = {}  # id(pgconn) -> what its current generator sends

    # Kept for readability at call sites that look at one figure.
    @property
    def queries(self) -> int:
        return self.counts.statements

    @property
    def redis(self) -> int:
        return self.counts.redis

    def bump(self, name: str, by: int = 1) -> None:
        with self._lock:
            setattr(self.counts, name, getattr(self.counts, name) + by)

    def reset(self) -> Counts:
        with self._lock:
            counts, self.counts = self.counts, Counts()
        return counts

    def _set(self, owner: Any, name: str, value: Any) -> None:
        """Replace `owner.name` (restored on exit; an inherited attribute is deleted again)."""
        self._saved.append((owner, name, vars(owner).get(name, _INHERITED)))
        setattr(owner, name, value)

    def _patch_call(self, owner: type, name: str, counter: str, is_async: bool) -> None:
        original = getattr(owner, name)
        bump = self.bump

        if is_async:
            async def wrapper(*args, **kwargs):
                bump(counter)
                return await original(*args, **kwargs)
        else:
            def wrapper(*args, **kwargs):
                bump(counter)
                return original(*args, **kwargs)
        self._set(owner, name, wrapper)


    def __enter__(self) -> "RoundTrips":
        if self.vendor is None:
            from django.db import connection

            self.vendor = connection.vendor
        self._patch_redis()
        self._patch_threads()
        if self.vendor == "postgresql":
            self._patch_psycopg()
        else:
            self._patch_django()
        return self

    def __exit__(self, *exc) -> None:
        if self.vendor != "postgresql":
            from django.db.backends.signals import connection_created

            connection_created.disconnect(dispatch_uid=f"bench-roundtrips-{id(self)}")
        for owner, name, original in reversed(self._saved):
            if original is _INHERITED:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        self._saved.clear()

    # --- Redis and threads -----------------------------------------------------------------------------------
    def _patch_redis(self) -> None:
        try:
            import redis
        except ImportError:  # the peer's environment has no Redis client
            return
        import redis
        import redis.asyncio
        import redis.asyncio.client
        import redis.client

        self._patch_call(redis.Redis, "execute_command", "redis", False)
        self._patch_call(redis.client.Pipeline, "execute", "redis", False)
        self._patch_call(redis.asyncio.Redis, "execute_command", "redis", True)
        self._patch_call(redis.asyncio.client.Pipeline, "execute", "redis", True)

    def _patch_threads(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self._patch_call(ThreadPoolExecutor, "submit", "thread_hops", False)
        try:
            from asgiref.current_thread_executor import CurrentThreadExecutor
        except ImportError:  # the peer's environment has no asgiref
            return
        self._patch_call(CurrentThreadExecutor, "submit", "thread_hops", False)

    # --- PostgreSQL: at psycopg's round trips ------------------------------------------------------------------
    def _patch_psycopg(self) -> None:
        import psycopg
        from psycopg import _connection_base, _cursor_base, _pipeline_base, generators, pq

        labels = self._labels
        idle = pq.TransactionStatus.IDLE
        execute = generators.execute

        def counted_execute(pgconn):
            stack = labels.get(id(pgconn))
            label = stack[-1] if stack else ["statements", 0]
            # A statement psycopg prepares on the server (after a few uses) is sent twice: PREPARE, then EXECUTE.
            kind = "prepares" if label[1] else label[0]
            label[1] += 1
            self.bump("round_trips")
            self.bump(kind)
            return execute(pgconn)

        def labelled(pgconn, kind: str, commits: bool, gen):
            """Run `gen` with its kind on the connection's stack for `counted_execute`; count its commit."""
            if commits:
                self.bump("commits")
            stack = labels.setdefault(id(pgconn), [])
            stack.append([kind, 0])
            try:
                return (yield from gen)
            finally:
                stack.pop()
                if not stack:
                    labels.pop(id(pgconn), None)

        exec_command = _connection_base.BaseConnection.__dict__["_exec_command"]

        def counted_exec_command(conn, command, *args, **kwargs):
            sql = _text(command)
            kind = kind_of(sql)
            is_commit = kind == "transaction_control" and sql.strip().upper().startswith(("COMMIT", "END"))
            return (yield from labelled(conn.pgconn, kind, is_commit, exec_command(conn, command, *args, **kwargs)))

        dirty: set[int] = set()  # pipelines (by id(pgconn)) with a write since their last sync, in autocommit

        def statement_gen(original):
            def counted(cursor, query, *args, **kwargs):
                sql = _text(query)
                conn = cursor._conn
                write = bool(conn.autocommit and WRITE.search(sql))
                if conn._pipeline:  # queued; its round trip is the pipeline's next sync
                    self.bump("pipelined_statements")
                    if write:
                        dirty.add(id(conn.pgconn))
                    return (yield from original(cursor, query, *args, **kwargs))
                commits = write and conn.pgconn.transaction_status == idle
                sent = original(cursor, query, *args, **kwargs)
                return (yield from labelled(conn.pgconn, kind_of(sql), commits, sent))

            return counted

        enqueue_sync = _pipeline_base.BasePipeline.__dict__["_enqueue_sync"]

        def counted_enqueue_sync(pipeline, *args, **kwargs):
            self.bump("round_trips")
            self.bump("pipeline_syncs")
            if id(pipeline.pgconn) in dirty:
                dirty.discard(id(pipeline.pgconn))
                self.bump("commits")
            return enqueue_sync(pipeline, *args, **kwargs)

        self._set(generators, "execute", counted_execute)
        self._set(_cursor_base, "execute", counted_execute)
        self._set(_connection_base.BaseConnection, "_exec_command", counted_exec_command)
        for name in ("_execute_gen", "_executemany_gen_pipeline"):
            self._set(_cursor_base.BaseCursor, name, statement_gen(vars(_cursor_base.BaseCursor)[name]))
        self._set(_pipeline_base.BasePipeline, "_enqueue_sync", counted_enqueue_sync)

        bump = self.bump
        sync_connect = psycopg.Connection.__dict__["connect"]

        def connect(cls, *args, **kwargs):
            bump("connections")
            return sync_connect.__func__(cls, *args, **kwargs)

        async_connect = psycopg.AsyncConnection.__dict__["connect"]

        async def aconnect(cls, *args, **kwargs):
            bump("connections")
            return await async_connect.__func__(cls, *args, **kwargs)

        self._set(psycopg.Connection, "connect", classmethod(connect))
        self._set(psycopg.AsyncConnection, "connect", classmethod(aconnect))

    # --- SQLite (and any other backend): at Django's cursor and transaction calls ---------------------------------
    def _patch_django(self) -> None:
        from django.db import connections
        from django.db.backends import utils
        from django.db.backends.signals import connection_created

        bump = self.bump
        for name in ("execute", "executemany"):
            original = getattr(utils.CursorWrapper, name)

            def wrapper(cursor, sql, *args, _original=original, **kwargs):
                text = _text(sql)
                kind = kind_of(text)
                bump("round_trips")
                bump(kind)
                if kind == "statements" and cursor.db.get_autocommit() and WRITE.search(text):
                    bump("commits")
                return _original(cursor, sql, *args, **kwargs)

            self._set(utils.CursorWrapper, name, wrapper)
        owner = type(connections["default"])
        for name, commits in (("_commit", True), ("_rollback", False)):  # BEGIN goes through the cursor
            original = getattr(owner, name)

            def control(db, *args, _original=original, _commits=commits, **kwargs):
                bump("round_trips")
                bump("transaction_control")
                if _commits:
                    bump("commits")
                return _original(db, *args, **kwargs)

            self._set(owner, name, control)
        connection_created.connect(self._on_connect, dispatch_uid=f"bench-roundtrips-{id(self)}")

    def _on_connect(self, sender, connection, **kwargs) -> None:
        self.bump("connections")
