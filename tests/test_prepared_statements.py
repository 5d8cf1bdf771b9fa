"""The hot path's statements are prepared on PostgreSQL (config/postgresql, config/rows.hot_cursor); the ORM's
are not, and the same statements give the same rows either way."""

import pytest
from django.db import connection, connections

from chatbot import hotpath
from chatbot.models import Message
from config import rows
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
        assert hotpath.has_unanswered(contact.pk) is False

    has_unanswered = f"SELECT 1 FROM {rows.table(Message)} "  # noqa: S608 (not run: the statement it starts)
    assert [s for s in _prepared() if s.startswith(has_unanswered)]
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
