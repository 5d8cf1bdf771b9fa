"""The tools' answers to what parents ask, through the same entry point the loop uses."""

import datetime as dt

import pytest
from asgiref.sync import async_to_sync

from bookings import services as bookings
from bookings.services import local_now
from chatbot.agent import memory, tools
from chatbot.services import current_conversation
from tests.factories import ContactFactory

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


def _earlier_booking(school, contact, day):
    """A tour booked in an earlier chat: nothing of it is in this session's active context."""
    return bookings.book_tour(school=school, contact=contact, parent_name="Jon Tan", parent_phone="+6591234567",
                              child_name="Mia", child_age=5, local_date=day, local_time=dt.time(9))


def test_a_correction_by_reference_fixes_a_tour_booked_in_an_earlier_chat(ctx, next_weekday, school, contact):
    booking = _earlier_booking(school, contact, next_weekday(school, 1))
    result = call(ctx, "update_context", field_to_update="child_name", new_value="Miah",
                  booking_id=booking.reference.lower())
    booking.refresh_from_db()
    assert booking.child_name == "Miah"
    assert result["booking_updated"] == booking.reference and result["old_value"] == "Mia"
    assert "child_name" not in ctx.active.collected  # not a detail of a booking being collected


def test_a_correction_by_reference_cannot_touch_someone_elses_tour(ctx, next_weekday, school):
    theirs = _earlier_booking(school, ContactFactory(school=school), next_weekday(school, 1))
    result = call(ctx, "update_context", field_to_update="child_name", new_value="Miah",
                  booking_id=theirs.reference)
    theirs.refresh_from_db()
    assert result["status"] == "error" and theirs.reference in result["message"]
    assert theirs.child_name == "Mia"


def test_moving_a_tour_uses_up_the_slots_offered(ctx, next_weekday, school, contact):
    booking = _earlier_booking(school, contact, next_weekday(school, 1))
    friday = next_weekday(school, 4)
    assert call(ctx, "check_availability", date_range_start=friday.isoformat())["status"] == "success"
    assert ctx.active.slots_shown
    result = call(ctx, "manage_tour_booking", booking_id=booking.reference, action="reschedule",
                  new_date=friday.isoformat(), new_time="11:00")
    assert result["status"] == "success" and ctx.active.slots_shown == []
