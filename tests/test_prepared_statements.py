"""The hand-written statements are prepared on PostgreSQL (plumbing/postgresql, plumbing/rows.hot_cursor); the ORM's
are not, and the same statements give the same rows either way."""

import os

import pytest
from django.db import connection, connections
from django.utils import timezone

from chatbot import hotpath
from chatbot.models import Message
from plumbing import rows
from tests.factories import ContactFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def _prepared() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


def test_a_hot_statement_run_often_is_prepared_and_planned_once(school):
    contact = ContactFactory(school=school)
    threshold = connection.settings_dict["OPTIONS"]["prepare_threshold"]

    for _ in range(threshold + 1):
        assert hotpath.claim_batch_with_history(contact.pk, timezone.now()).messages == []

    claim = f"WITH claimed AS (UPDATE {rows.Names(Message).table} "  # the statement it starts
    assert [s for s in _prepared() if s.startswith(claim)]
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone() == ("force_generic_plan",)


def test_orm_statements_are_not_prepared(school):
    for _ in range(5):
        list(type(school).objects.filter(pk=school.pk))

    assert not [s for s in _prepared() if "bookings_school" in s]


def _options(prepare_threshold) -> str:
    settings_dict = {**connection.settings_dict,
                     "OPTIONS": {**connection.settings_dict["OPTIONS"], "prepare_threshold": prepare_threshold}}
    return type(connections["default"])(settings_dict, "options-only").get_connection_params().get("options", "")


def test_generic_plans_only_where_statements_are_prepared():
    assert "-c plan_cache_mode=force_generic_plan" in _options(2)
    assert "plan_cache_mode" not in _options(None)  # DB_PREPARE_THRESHOLD=0: behind PgBouncer


def _prepare(number: int) -> None:
    """A statement of its own, run until psycopg has prepared it on the connection."""
    with rows.hot_cursor() as cursor:
        for _ in range(connection.settings_dict["OPTIONS"]["prepare_threshold"] + 1):
            cursor.execute(f"SELECT %s::int + {number}", [1])
            assert cursor.fetchone() == (1 + number,)


@pytest.mark.django_db(transaction=True)
def test_a_forked_child_leaves_the_parents_pooled_connections_alone():
    """Celery's prefork workers and the browser tests' live server are forked. Had the child used the pooled
    connection the parent handed back, both would prepare statements in one PostgreSQL session, under the same
    names: the parent's next one fails with "prepared statement ... already exists"."""
    _prepare(1)
    connection.close()  # back to the pool, with a prepared statement
    child = os.fork()
    if child == 0:  # pragma: no cover (the child reports through its exit status)
        try:
            _prepare(2)
            connection.close()
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(child, 0)

    _prepare(3)

    assert os.waitstatus_to_exitcode(status) == 0
