"""Shared fixtures. Tests run on PostgreSQL + Redis when DATABASE_URL / REDIS_URL are set (CI), else embedded."""

import dataclasses
import datetime as dt

import pytest
from django.conf import settings
from django.db import connection

from chatbot.agent import claims, loop
from chatbot.channels import registry
from plumbing.redis import get_redis, reset_clients
from tests.factories import ContactFactory, SchoolFactory


def pytest_collection_modifyitems(config, items):
    on_postgres = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    for item in items:
        if "postgres" in item.keywords and not on_postgres:
            item.add_marker(pytest.mark.skip(reason="needs PostgreSQL (set DATABASE_URL)"))
        if "redis" in item.keywords and not settings.REDIS_URL:
            item.add_marker(pytest.mark.skip(reason="needs Redis (set REDIS_URL)"))


@pytest.fixture(autouse=True)
def _clean_redis():
    """Each test starts with an empty Redis database (the real one in CI, the stand-in otherwise)."""
    reset_clients()
    get_redis().flushdb()
    yield
    get_redis().flushdb()
    reset_clients()


class UnbackedClaims:
    """The replies of a test's turns that claim a change their turn did not make (`chatbot.agent.claims`)."""

    def __init__(self) -> None:
        self.by_reply: dict[int, tuple[str, list[claims.Claim]]] = {}

    def take(self) -> list[claims.Claim]:
        """The claims found so far (a test that provokes one on purpose takes it, so the invariant passes)."""
        found = [claim for _text, listed in self.by_reply.values() for claim in listed]
        self.by_reply.clear()
        return found


@pytest.fixture(autouse=True)
def truthful_replies(monkeypatch):
    """The invariant of every conversation in the tests: a stored reply claims only changes its turn made (booked,
    moved, cancelled, call back arranged, detail changed...), checked where the loop stores the turn's answer."""
    found = UnbackedClaims()
    finish = loop._finish

    def checked_finish(turn, steps, after_finish, take_late):
        finished = finish(turn, steps, after_finish, take_late)
        if not isinstance(finished, loop.TookInLate):
            unbacked = claims.unbacked(turn.reply.text, turn.observations)
            if unbacked:
                found.by_reply[id(turn.reply)] = (turn.reply.text, unbacked)
        return finished

    monkeypatch.setattr(loop, "_finish", checked_finish)
    yield found
    problems = [f"{text[:200]!r}: " + "; ".join(map(str, listed)) for text, listed in found.by_reply.values()]
    assert not problems, "a reply claimed a change its turn did not make:\n" + "\n".join(problems)


@pytest.fixture
def use_observer(monkeypatch):
    """`use_observer(channel, observer)`: the channel's registry entry with this observer, for the test."""

    def use(channel: str, observer) -> None:
        monkeypatch.setitem(registry.CHANNELS, channel, dataclasses.replace(registry.spec_for(channel),
                                                                           observer=observer))

    return use


@pytest.fixture
def school(db):
    return SchoolFactory()


@pytest.fixture
def contact(school):
    return ContactFactory(school=school)


@pytest.fixture
def next_weekday():
    """next_weekday(school, 1) -> the local date of the next Tuesday at least 3 days away."""

    def pick(school, weekday: int, min_days_ahead: int = 3) -> dt.date:
        from bookings.services import local_now

        day = local_now(school).date() + dt.timedelta(days=min_days_ahead)
        while day.weekday() != weekday:
            day += dt.timedelta(days=1)
        return day

    return pick


def is_postgres() -> bool:
    return connection.vendor == "postgresql"
