"""Shared fixtures. Tests run on PostgreSQL + Redis when DATABASE_URL / REDIS_URL are set (CI), else embedded."""

import datetime as dt

import pytest
from django.conf import settings
from django.db import connection

from config.redis import get_redis, reset_clients
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
