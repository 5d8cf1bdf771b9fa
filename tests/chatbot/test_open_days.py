"""Open days: a school publishes a group event with its own time, length and capacity, and parents book it in
the same conversation (the same details, read-back and yes as a tour)."""

import datetime as dt

import pytest

from bookings.models import OpenDay, TourSlot
from tests.chatbot.test_conversations import Parent, _offline_and_fast, spoken  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def open_day(school, next_weekday):
    saturday = next_weekday(school, 5)  # the school gives no tours on Saturdays: the open day is its own event
    return OpenDay.objects.create(school=school, title="Spring Open Morning", capacity=40, duration_minutes=150,
                                  starts_at=dt.datetime.combine(saturday, dt.time(10, 30), school.tz))


def test_ask_about_open_days_then_book_a_place(school, open_day):
    parent = Parent(school)
    day = open_day.starts_at.astimezone(school.tz).date()
    reply = parent.say("Hi there, do you have any open days coming up?")
    assert "Spring Open Morning" in reply and spoken(day) in reply and "10:30" in reply, reply
    assert not parent.bookings().exists()

    reply = parent.say("Yes please! I'm Jon Tan, 91234567, for my daughter Mia who is 5")
    assert "just to check" in reply.lower() and "Spring Open Morning" in reply and "Mia" in reply, reply
    assert not parent.bookings().exists()

    reply = parent.say("yes")
    booking = parent.bookings().get()
    assert booking.slot_id == open_day.pk and booking.child_name == "Mia"
    assert booking.reference in reply and "Spring Open Morning" in reply, reply
    open_day.refresh_from_db()
    assert open_day.seats_taken == 1
    assert not TourSlot.objects.filter(school=school, kind=TourSlot.Kind.TOUR).exists()  # no tour seat taken


def test_book_the_open_day_in_one_message(school, open_day):
    parent = Parent(school)
    reply = parent.say("Can you book us for the open day? Ana Lim, 81234567, my son Leo is 4")
    assert "Spring Open Morning" in reply and "just to check" in reply.lower(), reply  # the only one: read back
    parent.say("yes please")
    assert parent.bookings().get().slot_id == open_day.pk


def test_no_open_day_planned_offers_a_tour(school):
    reply = Parent(school).say("is there an open house?")
    assert "no open days" in reply and "campus tour" in reply, reply
