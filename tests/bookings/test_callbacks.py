"""Call backs (bookings.callbacks): due on a day the school is open, within its calling hours, changed or
cancelled by the parent who asked for them only.

Every test passes an explicit `now`. The factory school is closed on Saturdays and Sundays and calls between
09:00 and 18:00 (the defaults), in Asia/Singapore.
"""

import datetime as dt

import pytest
from django.urls import reverse

from bookings import callbacks
from bookings.callbacks import CallTime, cancel_callback, place_call, request_callback, reschedule_callback
from bookings.models import CallbackRequest
from bookings.selectors import contact_callback, open_callbacks
from bookings.services import BookingError, describe_date, local_now
from crm.models import Activity
from tests.bookings.helpers import at, refused
from tests.factories import ContactFactory, SchoolClosureFactory, SchoolFactory, UserFactory

MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, SATURDAY, SUNDAY = range(7)
FIVE_PM, SIX_PM = dt.time(17), dt.time(18)



def stored(callback: CallbackRequest) -> CallbackRequest:
    return CallbackRequest.objects.get(pk=callback.pk)


# --- requesting (the rules of before, kept) -----------------------------------------------------


def callback(school, contact, *, now, **overrides) -> CallbackRequest:
    details = {"parent_name": "Mei Lin Tan", "parent_phone": "9123 4567"}
    details.update(overrides)
    return request_callback(school=school, contact=contact, now=now, **details)


@pytest.mark.parametrize(
    ("weekday", "hour", "due_weekday", "weeks_later"),
    [
        (TUESDAY, 10, TUESDAY, 0),  # morning: the office calls today
        (TUESDAY, 15, WEDNESDAY, 0),  # from 15:00: tomorrow
        (FRIDAY, 16, MONDAY, 1),  # Friday afternoon: Monday
        (SATURDAY, 9, MONDAY, 1),  # weekend: Monday
        (SUNDAY, 20, MONDAY, 1),
    ],
)
def test_callback_due_date_defaults_to_the_next_working_day(school, contact, next_weekday, weekday, hour,
                                                            due_weekday, weeks_later):
    day = next_weekday(school, weekday)
    now = at(school, day, dt.time(hour))
    cb = callback(school, contact, now=now)
    assert cb.due_date.weekday() == due_weekday
    assert dt.timedelta(0) <= cb.due_date - day < dt.timedelta(days=4)
    assert cb.status == CallbackRequest.Status.OPEN
    assert cb.best_time == CallbackRequest.BestTime.ANYTIME
    assert cb.reference.startswith("C-")


def test_callback_due_date_skips_closures(school, contact, next_weekday):
    friday = next_weekday(school, FRIDAY)
    monday = friday + dt.timedelta(days=3)
    SchoolClosureFactory(school=school, date=monday, reason="Holiday")
    cb = callback(school, contact, now=at(school, friday, dt.time(16)))
    assert cb.due_date == monday + dt.timedelta(days=1)


def test_callback_with_details(school, contact, tuesday, now):
    cb = callback(school, contact, now=now, parent_name=" Mei ", parent_phone="+65 9123 4567", best_time="specific",
                  specific_time=dt.time(15, 30), due_date=tuesday, topic="  Fees and bus routes ")
    cb.refresh_from_db()
    assert (cb.parent_name, cb.parent_phone, cb.best_time, cb.specific_time, cb.due_date, cb.topic) == (
        "Mei", "+6591234567", "specific", dt.time(15, 30), tuesday, "Fees and bus routes",
    )


@pytest.mark.parametrize("best_time", ["tomorrow", "3pm", "", "MORNING"])
def test_callback_invalid_best_time(school, contact, now, best_time):
    err = refused("invalid_best_time", "best_time_to_call", callback, school=school, contact=contact, now=now,
                  best_time=best_time)
    assert "morning" in err.message
    assert not CallbackRequest.objects.exists()


@pytest.mark.parametrize("phone", ["123", "", "not a phone"])
def test_callback_invalid_phone(school, contact, now, phone):
    refused("invalid_phone", "parent_phone", callback, school=school, contact=contact, now=now, parent_phone=phone)
    assert not CallbackRequest.objects.exists()


def test_callback_needs_a_name(school, contact, now):
    refused("missing_fields", "parent_name", callback, school=school, contact=contact, now=now, parent_name=" ")


def test_callback_due_date_in_the_past_or_too_far(school, contact, now):
    today = local_now(school, now).date()
    err = refused("past_date", "best_time_to_call", callback, school=school, contact=contact, now=now,
                  due_date=today - dt.timedelta(days=1))
    assert describe_date(today - dt.timedelta(days=1)) in err.message
    err = refused("beyond_window", "best_time_to_call", callback, school=school, contact=contact, now=now,
                  due_date=today + dt.timedelta(days=31))
    assert "30 days" in err.message
    assert callback(school, contact, now=now, due_date=today + dt.timedelta(days=30)).due_date


def test_assign_and_complete_a_callback(school, contact, now):
    cb = callback(school, contact, now=now)
    alice, bob = UserFactory(), UserFactory()
    callbacks.assign_callback(callback=cb, user=alice)
    cb.refresh_from_db()
    assert cb.assigned_to == alice and cb.status == CallbackRequest.Status.OPEN
    callbacks.complete_callback(callback=cb, user=bob)
    cb.refresh_from_db()
    assert cb.status == CallbackRequest.Status.DONE
    assert cb.handled_at is not None
    assert cb.assigned_to == alice  # whoever it was assigned to keeps it
    assert list(open_callbacks(contact)) == []


def test_completing_an_unassigned_callback_credits_the_user(school, contact, now):
    cb = callback(school, contact, now=now)
    bob = UserFactory()
    callbacks.complete_callback(callback=cb, user=bob)
    cb.refresh_from_db()
    assert cb.assigned_to == bob


def test_a_done_callback_cannot_be_completed_again(school, contact, now):
    cb = callback(school, contact, now=now)
    callbacks.complete_callback(callback=cb, user=UserFactory())
    with pytest.raises(BookingError) as caught:
        callbacks.complete_callback(callback=cb, user=UserFactory())
    assert caught.value.code == "not_open"
    assert caught.value.message == f"Callback {cb.reference} is already done."


# --- the day and the window -----------------------------------------------------------------------


def test_tomorrow_after_5pm_said_on_a_friday_is_due_monday_from_5pm(school, contact, next_weekday):
    """The bug of the issue: "tomorrow after 5pm" on a Friday was a call on a closed day, stored as "evening"."""
    friday = next_weekday(school, FRIDAY)
    saturday, monday = friday + dt.timedelta(days=1), friday + dt.timedelta(days=3)
    cb = callback(school, contact, now=at(school, friday, dt.time(11)), best_time="window", due_date=saturday,
                  window_start=FIVE_PM)
    cb = stored(cb)
    assert (cb.due_date, cb.window_start, cb.window_end, cb.best_time) == (monday, FIVE_PM, SIX_PM, "window")
    assert cb.asked_for["date"] == saturday.isoformat() and cb.asked_for["window_start"] == "17:00"
    assert [r["code"] for r in cb.asked_for["reasons"]] == ["closed_weekday", "now_due"]
    assert cb.asked_for["message"] == (f"The school is closed on Saturdays. The call is now due on "
                                       f"{describe_date(monday)} between 17:00 and 18:00.")


def test_a_closed_saturday_morning_is_never_accepted(school, contact, next_weekday):
    friday = next_weekday(school, FRIDAY)
    cb = stored(callback(school, contact, now=at(school, friday, dt.time(9)), best_time="morning",
                         due_date=friday + dt.timedelta(days=1)))
    assert cb.due_date == friday + dt.timedelta(days=3) and cb.due_date.weekday() == MONDAY
    assert (cb.window_start, cb.window_end) == (dt.time(9), dt.time(12))  # the morning, within calling hours
    assert "closed on Saturdays" in cb.asked_for["message"]


def test_a_closure_moves_the_call_to_the_next_open_day_and_says_why(school, contact, next_weekday):
    tuesday = next_weekday(school, TUESDAY)
    SchoolClosureFactory(school=school, date=tuesday, reason="Teachers' day")
    SchoolClosureFactory(school=school, date=tuesday + dt.timedelta(days=1), reason="")
    cb = stored(callback(school, contact, now=at(school, tuesday - dt.timedelta(days=1), dt.time(10)),
                         best_time="afternoon", due_date=tuesday))
    assert cb.due_date == tuesday + dt.timedelta(days=2)  # Thursday: Tuesday and Wednesday are closures
    assert (cb.window_start, cb.window_end) == (dt.time(12), dt.time(17))
    assert cb.asked_for["message"].startswith(f"The school is closed on {describe_date(tuesday)} (Teachers' day).")


@pytest.mark.parametrize(("best_time", "window", "expected"), [
    ("morning", {}, (dt.time(9), dt.time(12))),
    ("afternoon", {}, (dt.time(12), dt.time(17))),
    ("evening", {}, (dt.time(17), dt.time(18))),
    ("anytime", {}, (dt.time(9), dt.time(18))),
    ("specific", {"specific_time": dt.time(15)}, (dt.time(15), dt.time(15, 30))),
    ("window", {"window_start": dt.time(14), "window_end": dt.time(16)}, (dt.time(14), dt.time(16))),
    ("window", {"window_end": dt.time(11)}, (dt.time(9), dt.time(11))),  # "before 11am"
])
def test_every_best_time_is_a_window_inside_the_calling_hours(school, contact, tuesday, best_time, window,
                                                               expected):
    cb = stored(callback(school, contact, now=at(school, tuesday - dt.timedelta(days=1), dt.time(10)),
                         best_time=best_time, due_date=tuesday, **window))
    assert (cb.due_date, cb.window_start, cb.window_end) == (tuesday, *expected)
    assert cb.asked_for == {}  # nothing moved: nothing to explain


def test_a_window_outside_the_calling_hours_moves_to_their_nearest_hour(school, contact, tuesday):
    monday = tuesday - dt.timedelta(days=1)
    late = stored(callback(school, contact, now=at(school, monday, dt.time(10)), best_time="window",
                           due_date=tuesday, window_start=dt.time(19)))  # "after 7pm"
    assert (late.due_date, late.window_start, late.window_end) == (tuesday, dt.time(17), SIX_PM)
    assert late.asked_for["message"].startswith("We make calls between 09:00 and 18:00.")
    early = stored(callback(school, contact, now=at(school, monday, dt.time(10)), best_time="specific",
                            specific_time=dt.time(7), due_date=tuesday))  # "at 7am"
    assert (early.window_start, early.window_end) == (dt.time(9), dt.time(10))
    assert [r["code"] for r in early.asked_for["reasons"]] == ["outside_calling_hours", "now_due"]


def test_the_schools_own_calling_hours_are_used(contact):
    school = SchoolFactory(calling_hours_start=dt.time(8), calling_hours_end=dt.time(16, 30))
    contact = ContactFactory(school=school)
    monday = local_now(school).date() + dt.timedelta(days=7 - local_now(school).date().weekday())
    cb = stored(callback(school, contact, now=at(school, monday - dt.timedelta(days=3), dt.time(10)),
                         best_time="evening", due_date=monday))
    assert (cb.window_start, cb.window_end) == (dt.time(15, 30), dt.time(16, 30))  # the evening is after hours
    cb = stored(callback(school, contact, now=at(school, monday - dt.timedelta(days=3), dt.time(10)),
                         due_date=monday))
    assert (cb.window_start, cb.window_end) == (dt.time(8), dt.time(16, 30))


def test_today_after_the_window_has_passed_is_the_next_open_day(school, contact, next_weekday):
    friday = next_weekday(school, FRIDAY)
    cb = stored(callback(school, contact, now=at(school, friday, dt.time(13)), best_time="morning",
                         due_date=friday))
    assert cb.due_date == friday + dt.timedelta(days=3)
    assert [r["code"] for r in cb.asked_for["reasons"]] == ["passed", "closed_weekday", "now_due"]
    assert cb.asked_for["message"].startswith("That time has already passed today. The school is closed on Saturdays.")


def test_no_day_said_is_today_while_there_is_time_in_the_window(school, contact, tuesday):
    assert place_call(school, CallTime("window", None, FIVE_PM), now=at(school, tuesday, dt.time(10))).day == tuesday
    later = place_call(school, CallTime("morning"), now=at(school, tuesday, dt.time(10)))
    assert later.day == tuesday + dt.timedelta(days=1) and not later.reasons  # nothing asked, nothing moved


# --- changing and cancelling ----------------------------------------------------------------------


def test_reschedule_changes_the_day_and_window_in_place(school, contact, tuesday):
    monday = tuesday - dt.timedelta(days=1)
    cb = callback(school, contact, now=at(school, monday, dt.time(10)), best_time="morning", due_date=tuesday)
    moved = reschedule_callback(callback=cb, call_time=CallTime("evening", tuesday + dt.timedelta(days=1)),
                                topic="Bus routes", now=at(school, monday, dt.time(11)))
    cb = stored(cb)
    assert cb.reference == moved.reference and CallbackRequest.objects.filter(contact=contact).count() == 1
    assert (cb.due_date, cb.window_start, cb.window_end, cb.best_time, cb.topic) == (
        tuesday + dt.timedelta(days=1), FIVE_PM, SIX_PM, "evening", "Bus routes")
    activity = Activity.objects.get(callback=cb)
    assert activity.due_date == cb.due_date and "17:00-18:00" in activity.subject
    contact.refresh_from_db()
    assert contact.context["callback_id"] == cb.reference and contact.context["callback_window"] == "17:00-18:00"


def test_reschedule_to_a_closed_day_moves_it_and_keeps_why(school, contact, next_weekday):
    friday = next_weekday(school, FRIDAY)
    cb = callback(school, contact, now=at(school, friday, dt.time(9)), best_time="afternoon", due_date=friday)
    reschedule_callback(callback=cb, call_time=CallTime("evening", friday + dt.timedelta(days=2)),
                        now=at(school, friday, dt.time(9)))
    cb = stored(cb)
    assert cb.due_date == friday + dt.timedelta(days=3) and "closed on Sundays" in cb.asked_for["message"]


def test_reschedule_to_the_same_time_changes_nothing(school, contact, tuesday):
    now = at(school, tuesday - dt.timedelta(days=1), dt.time(10))
    cb = callback(school, contact, now=now, best_time="morning", due_date=tuesday)
    before = stored(cb).updated_at
    err = refused("same_time", "new_time", reschedule_callback, callback=cb,
                  call_time=CallTime("morning", tuesday), now=now)
    assert "already due" in err.message and stored(cb).updated_at == before


def test_cancel_closes_the_call_back_and_its_activity(school, contact, tuesday):
    now = at(school, tuesday - dt.timedelta(days=1), dt.time(10))
    kept = callback(school, contact, now=now, best_time="morning", due_date=tuesday)
    dropped = callback(school, contact, now=now, best_time="evening", due_date=tuesday)
    cancel_callback(callback=dropped)
    assert stored(dropped).status == CallbackRequest.Status.CANCELLED and stored(dropped).cancelled_at
    activity = Activity.objects.get(callback=dropped)
    assert activity.done and activity.subject.startswith("Cancelled: ")
    assert list(open_callbacks(contact)) == [kept]
    contact.refresh_from_db()
    assert contact.context["callback_requested"] is True and contact.context["callback_id"] == kept.reference
    cancel_callback(callback=kept)
    contact.refresh_from_db()
    assert contact.context["callback_requested"] is False and contact.context["callback_id"] == ""


def test_a_closed_call_back_cannot_be_changed_or_cancelled_again(school, contact, tuesday):
    now = at(school, tuesday - dt.timedelta(days=1), dt.time(10))
    cb = callback(school, contact, now=now, due_date=tuesday)
    cancel_callback(callback=cb)
    refused("not_open", "", cancel_callback, callback=cb)
    refused("not_open", "", reschedule_callback, callback=cb, call_time=CallTime("evening", tuesday), now=now)
    assert stored(cb).status == CallbackRequest.Status.CANCELLED and stored(cb).window_start == dt.time(9)


def test_a_contact_finds_only_its_own_call_backs(school, contact, tuesday):
    now = at(school, tuesday - dt.timedelta(days=1), dt.time(10))
    mine = callback(school, contact, now=now, due_date=tuesday)
    stranger = ContactFactory(school=school)
    theirs = callback(school, stranger, now=now, due_date=tuesday)
    assert contact_callback(contact, mine.reference.lower().replace("-", " ")) == mine
    assert contact_callback(contact, theirs.reference) is None
    assert contact_callback(stranger, mine.reference) is None


# --- the staff console ------------------------------------------------------------------------------


def test_the_staff_console_shows_the_window_in_the_schools_zone(db, client, next_weekday):
    auckland = SchoolFactory(time_zone="Pacific/Auckland")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    friday = next_weekday(auckland, FRIDAY)
    cb = callback(auckland, ContactFactory(school=auckland), now=at(auckland, friday, dt.time(9)),
                  best_time="evening", due_date=friday + dt.timedelta(days=1))
    listing = client.get(reverse("admin:bookings_callbackrequest_changelist")).content.decode()
    assert 'title="Pacific/Auckland">17:00&ndash;18:00 NZ' in listing  # NZDT or NZST: the school's zone
    page = client.get(reverse("admin:bookings_callbackrequest_change", args=[cb.pk])).content.decode()
    assert "The school is closed on Saturdays." in page and "17:00&ndash;18:00" in page
