"""Fixtures the booking tests share."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from tests.bookings.helpers import migrate_to

TUESDAY = 1


@pytest.fixture
def now():
    return timezone.now()


@pytest.fixture
def tuesday(school, next_weekday):
    return next_weekday(school, TUESDAY)


@pytest.fixture
def back_to_latest():
    """Migrating back also unapplies every later migration (other apps' too): leave the database fully migrated."""
    yield
    migrate_to(MigrationExecutor(connection).loader.graph.leaf_nodes())
