"""The tools' answers to what parents ask, through the same entry point the loop uses."""

import datetime as dt

import pytest
from asgiref.sync import async_to_sync

from bookings.services import local_now
from chatbot.agent import memory, tools
from chatbot.services import current_conversation

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def ctx(school, contact):
    return tools.ToolContext(school=school, contact=contact, conversation=current_conversation(school, contact, "web"),
                             active=memory.ActiveContext(school.pk, contact.pk))


def call(ctx, name, **arguments):
    return async_to_sync(tools.execute)(name, arguments, ctx)[1]


def test_a_day_beyond_the_window_says_why_it_has_no_tours(ctx, school):
    far = local_now(school).date() + dt.timedelta(days=school.max_advance_days + 10)
    far += dt.timedelta(days=(7 - far.weekday()) % 7)  # a Monday: open, only too far ahead
    result = call(ctx, "check_availability", date_range_start=far.isoformat(), date_range_end=far.isoformat())
    assert result["status"] == "no_match"
    assert "30 days ahead" in result["message"]
    assert result["alternatives"]


def test_a_closed_day_is_refused_before_the_other_details_are_asked_for(ctx, next_weekday, school):
    sunday = next_weekday(school, 6)
    result = call(ctx, "book_tour", child_name="Mia", preferred_date=sunday.isoformat())
    assert result["status"] == "error" and result["field"] == "preferred_date"
    assert "Sundays" in result["message"]
    assert "preferred_date" not in ctx.active.collected and ctx.active.collected["child_name"] == "Mia"


def test_a_good_day_still_asks_for_what_is_missing(ctx, next_weekday, school):
    tuesday = next_weekday(school, 1)
    result = call(ctx, "book_tour", child_name="Mia", preferred_date=tuesday.isoformat())
    assert result["status"] == "missing_fields"
    assert set(result["missing"]) == {"parent_name", "parent_phone", "child_age", "preferred_time"}
