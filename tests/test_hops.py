"""Database hops (plumbing/hops.py) run on a pool of threads: one waiting turn does not hold up another."""

import asyncio
import os
import threading

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from plumbing import hops


@override_settings(DB_HOP_THREADS=4)  # the default on PostgreSQL (on SQLite, one writer at a time: 1)
def test_two_hops_run_at_the_same_time(monkeypatch):
    """Each hop waits until the other has started: on a single database thread (Channels' thread-sensitive
    default) the first would wait alone and the barrier would break."""
    monkeypatch.setattr(hops, "_executor", None)
    both = threading.Barrier(2, timeout=5)

    def meet() -> str:
        both.wait()
        return threading.current_thread().name

    async def run_two() -> list[str]:
        return await asyncio.gather(hops.database_hop(meet)(), hops.database_hop(meet)())

    names = async_to_sync(run_two)()

    assert len(set(names)) == 2 and all(name.startswith("db-hop") for name in names)


@override_settings(DB_HOP_THREADS=1)
def test_the_pool_has_db_hop_threads_threads(monkeypatch):
    monkeypatch.setattr(hops, "_executor", None)
    seen = set()

    async def run_three() -> None:
        await asyncio.gather(*(hops.database_hop(lambda: seen.add(threading.current_thread().name))()
                               for _ in range(3)))

    async_to_sync(run_three)()

    assert len(seen) == 1


@override_settings(DB_HOP_THREADS=1)
def test_a_forked_child_runs_its_hops_on_threads_of_its_own(monkeypatch):
    """The parent's one hop thread does not exist in a forked child: the child's hops must not wait for it."""
    monkeypatch.setattr(hops, "_executor", None)
    async_to_sync(hops.database_hop(lambda: None))()  # the parent's pool now has its one thread
    child = os.fork()
    if child == 0:  # pragma: no cover (the child reports through its exit status)
        try:
            result = asyncio.run(asyncio.wait_for(hops.database_hop(lambda: "ran")(), timeout=5))
        except BaseException:
            os._exit(1)
        os._exit(0 if result == "ran" else 1)
    _, status = os.waitpid(child, 0)

    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.django_db(transaction=True)
@override_settings(DB_HOP_THREADS=1)
def test_a_hop_thread_keeps_its_connection_for_its_next_hop(monkeypatch):
    """A pool check-out and check-in per hop cost more than a short statement: the thread's connection is kept
    (for DB_POOL_CHECK_IDLE_SECONDS), and given back once it has been idle that long."""
    from django.db import connection

    monkeypatch.setattr(hops, "_executor", None)

    def query() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

    def still_open() -> bool:
        return connection.connection is not None

    async def hops_in_a_row() -> list[bool]:
        await hops.database_hop(query)()
        return [await hops.database_hop(still_open)()]

    assert async_to_sync(hops_in_a_row)() == [True]
    with override_settings(DB_POOL_CHECK_IDLE_SECONDS=0):
        assert async_to_sync(hops_in_a_row)() == [False]
