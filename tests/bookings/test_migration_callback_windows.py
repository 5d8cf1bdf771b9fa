"""bookings 0006: every existing call back gets the window its best time meant, inside the school's (default)
calling hours; a best time with no window that fits is the whole calling day."""

import datetime as dt

import pytest

from tests.bookings.helpers import migrate_to

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("bookings", "0005_waitlist_open_days_follow_up")]
AFTER = [("bookings", "0006_callback_windows")]


def test_existing_call_backs_get_the_window_of_their_best_time(back_to_latest):
    old = migrate_to(BEFORE)
    School, Contact = old.get_model("bookings", "School"), old.get_model("crm", "Contact")
    Callback = old.get_model("bookings", "CallbackRequest")
    school = School.objects.create(slug="m", name="M", tour_start_times=["09:00"])
    contact = Contact.objects.create(school=school, name="Jon", phone="+6591234567")
    asked = {"morning": None, "afternoon": None, "evening": None, "anytime": None, "specific": dt.time(15, 30),
             "late": dt.time(20)}
    for index, (best, at) in enumerate(asked.items()):
        Callback.objects.create(reference=f"C-AAAAA{index}", school=school, contact=contact, parent_name="Jon",
                                parent_phone="+6591234567", best_time="specific" if best == "late" else best,
                                specific_time=at, due_date=dt.date(2026, 11, 30), topic=best)

    new = migrate_to(AFTER)
    windows = {c.topic: (c.window_start, c.window_end, c.status, c.asked_for)
               for c in new.get_model("bookings", "CallbackRequest").objects.all()}
    assert windows == {
        "morning": (dt.time(9), dt.time(12), "open", {}),
        "afternoon": (dt.time(12), dt.time(17), "open", {}),
        "evening": (dt.time(17), dt.time(18), "open", {}),
        "anytime": (dt.time(9), dt.time(18), "open", {}),
        "specific": (dt.time(15, 30), dt.time(16), "open", {}),
        "late": (dt.time(9), dt.time(18), "open", {}),  # 20:00 is after the calling hours: the whole day
    }
    school = new.get_model("bookings", "School").objects.get(slug="m")
    assert (school.calling_hours_start, school.calling_hours_end) == (dt.time(9), dt.time(18))
