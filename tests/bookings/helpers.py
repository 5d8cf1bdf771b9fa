"""Helpers the booking tests share: a local moment, a refused call, the schema at a migration."""

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from bookings.services import BookingError


def at(school, day: dt.date, time: dt.time) -> dt.datetime:
    return dt.datetime.combine(day, time, school.tz)


def refused(code: str, field: str, fn, /, **kwargs) -> BookingError:
    """Call fn, expect a BookingError with this code and field and a proper sentence for a parent."""
    with pytest.raises(BookingError) as exc_info:
        fn(**kwargs)
    err = exc_info.value
    assert err.code == code, err.message
    assert err.field == field
    assert str(err) == err.message
    assert err.message[0].isupper() or err.message[0] == "“", err.message  # a sentence, or quotes the parent
    return err


def migrate_to(targets):
    """Migrate the test database to `targets`; the apps (historical models) as they were there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps
