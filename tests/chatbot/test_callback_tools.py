"""request_callback and manage_callback through the entry point the loop uses: every result says exactly what
the database holds, and a contact reaches only its own call backs."""

import datetime as dt

import pytest

from bookings import callbacks
from bookings.models import CallbackRequest
from bookings.services import local_now
from chatbot.agent.prompt import _context_facts
from tests.chatbot.tool_calls import call
from tests.factories import ContactFactory

pytestmark = [pytest.mark.django_db(transaction=True)]
FRIDAY, MONDAY = 4, 0


def coming(school, weekday: int) -> dt.date:
    day = local_now(school).date() + dt.timedelta(days=1)
    while day.weekday() != weekday:
        day += dt.timedelta(days=1)
    return day


def at(school, day: dt.date, hour: int) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour), school.tz)


def as_stored(callback: CallbackRequest) -> dict:
    """What the database holds of a call back, as the tools say it."""
    callback.refresh_from_db()
    return {"due_date": callback.due_date.isoformat(), "weekday": f"{callback.due_date:%A}",
            "window_start": f"{callback.window_start:%H:%M}", "window_end": f"{callback.window_end:%H:%M}"}


def test_request_callback_says_what_was_stored_and_why_it_moved(ctx, school):
    friday = coming(school, FRIDAY)
    ctx.now = at(school, friday, 11)
    result = call(ctx, "request_callback", parent_name="Ana Lim", parent_phone="91234567",
                  best_time_to_call="tomorrow after 5pm", topic="fees")
    callback = CallbackRequest.objects.get(reference=result["callback_id"])
    assert result["status"] == "success"
    assert {k: result["details"][k] for k in as_stored(callback)} == as_stored(callback)
    assert result["details"]["due_date"] == (friday + dt.timedelta(days=3)).isoformat()  # Monday
    assert (result["details"]["window"], result["details"]["best_time_to_call"]) == ("17:00-18:00", "window")
    assert result["moved_from"]["date"] == (friday + dt.timedelta(days=1)).isoformat()
    assert result["moved_from"]["window_start"] == "17:00"
    assert result["message"].startswith("The school is closed on Saturdays. The call is now due on Monday")


def test_request_callback_that_fits_has_no_move_to_explain(ctx, school):
    monday = coming(school, MONDAY)
    ctx.now = at(school, monday, 9)
    result = call(ctx, "request_callback", parent_name="Ana Lim", parent_phone="91234567",
                  best_time_to_call="between 2 and 4pm")
    assert result["details"]["due_date"] == monday.isoformat() and result["details"]["window"] == "14:00-16:00"
    assert "moved_from" not in result and "message" not in result


def _requested(ctx, school, day: dt.date, best: str = "morning") -> CallbackRequest:
    return callbacks.request_callback(school=school, contact=ctx.contact, parent_name="Ana Lim",
                                      parent_phone="+6591234567", best_time=best, due_date=day,
                                      now=at(school, day - dt.timedelta(days=1), 10))


def test_manage_callback_reschedules_in_place_and_says_from_what_to_what(ctx, school):
    monday = coming(school, MONDAY)
    callback = _requested(ctx, school, monday)
    ctx.now = at(school, monday - dt.timedelta(days=1), 12)
    result = call(ctx, "manage_callback", callback_id=callback.reference.lower(), action="change",
                  new_time="Tuesday evening")
    assert (result["status"], result["action"], result["callback_id"]) == ("success", "rescheduled",
                                                                         callback.reference)
    assert {k: result["details"][k] for k in as_stored(callback)} == as_stored(callback)
    assert (callback.due_date, f"{callback.window_start:%H:%M}") == (monday + dt.timedelta(days=1), "17:00")
    assert result["previous"]["due_date"] == monday.isoformat() and result["previous"]["window"] == "09:00-12:00"
    assert CallbackRequest.objects.filter(contact=ctx.contact).count() == 1


def test_manage_callback_without_a_day_keeps_the_calls_day(ctx, school):
    monday = coming(school, MONDAY)
    callback = _requested(ctx, school, monday)
    ctx.now = at(school, monday - dt.timedelta(days=1), 12)
    result = call(ctx, "manage_callback", callback_id=callback.reference, action="reschedule", new_time="after 4pm")
    assert result["status"] == "success" and as_stored(callback)["due_date"] == monday.isoformat()
    assert result["details"]["window"] == "16:00-18:00"


def test_manage_callback_cancels_and_the_database_shows_it(ctx, school):
    monday = coming(school, MONDAY)
    callback = _requested(ctx, school, monday)
    result = call(ctx, "manage_callback", callback_id=callback.reference, action="cancel")
    callback.refresh_from_db()
    assert (result["status"], result["action"]) == ("success", "cancelled")
    assert callback.status == CallbackRequest.Status.CANCELLED
    again = call(ctx, "manage_callback", callback_id=callback.reference, action="cancel")
    assert again["status"] == "error" and "no longer be changed" in again["message"]
    assert again["your_callbacks"] == []


def test_someone_elses_callback_is_not_found_and_not_touched(ctx, school):
    monday = coming(school, MONDAY)
    mine = _requested(ctx, school, monday)
    other = ContactFactory(school=school)
    theirs = callbacks.request_callback(school=school, contact=other, parent_name="Bo", parent_phone="+6598765432",
                                        best_time="morning", due_date=monday,
                                        now=at(school, monday - dt.timedelta(days=1), 10))
    for action in ("cancel", "reschedule"):
        result = call(ctx, "manage_callback", callback_id=theirs.reference, action=action, new_time="Tuesday")
        assert result["status"] == "error" and result["message"] == f"No call back {theirs.reference} found for you."
        assert [c["callback_id"] for c in result["your_callbacks"]] == [mine.reference]  # the contact's own only
    theirs.refresh_from_db()
    assert theirs.status == "open" and theirs.due_date == monday and f"{theirs.window_start:%H:%M}" == "09:00"


def test_manage_callback_asks_for_what_is_missing_and_changes_nothing(ctx, school):
    monday = coming(school, MONDAY)
    callback = _requested(ctx, school, monday)
    before = as_stored(callback)
    result = call(ctx, "manage_callback", callback_id="", action="reschedule")
    assert result["status"] == "missing_fields" and result["missing"] == ["callback_id"]
    assert [c["callback_id"] for c in result["your_callbacks"]] == [callback.reference]
    result = call(ctx, "manage_callback", callback_id=callback.reference, action="reschedule")
    assert result["status"] == "missing_fields" and result["missing"] == ["new_time"]
    result = call(ctx, "manage_callback", callback_id=callback.reference, action="postpone forever")
    assert result["status"] == "error"
    ctx.now = at(school, monday - dt.timedelta(days=1), 12)
    result = call(ctx, "manage_callback", callback_id=callback.reference, action="reschedule",
                  new_time="the morning")
    assert result["status"] == "error" and result["code"] == "same_time"
    assert as_stored(callback) == before and callback.status == "open"


def test_the_prompt_shows_the_open_callback_with_its_reference_and_window(ctx, school):
    monday = coming(school, MONDAY)
    callback = _requested(ctx, school, monday, best="evening")
    ctx.contact.refresh_from_db()
    assert _context_facts(ctx.contact.context, set())["callback_requested"] == (
        f"Mon {monday.isoformat()} 17:00-18:00 {callback.reference} evening")
    callbacks.cancel_callback(callback=callback)
    ctx.contact.refresh_from_db()
    assert "callback_requested" not in _context_facts(ctx.contact.context, set())
