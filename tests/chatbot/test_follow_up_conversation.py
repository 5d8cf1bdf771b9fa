"""A no-show's follow-up asks whether to book another tour; the parent's yes in the chat starts that booking."""

import datetime as dt

import pytest
import time_machine

from bookings.services import book_tour, record_tour_outcome
from tests.chatbot.test_conversations import Parent, _offline_and_fast  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_yes_to_the_rebook_offer_after_a_no_show_starts_a_new_booking(school, next_weekday):
    day = next_weekday(school, 1)
    parent = Parent(school)
    parent.say("hello")  # the parent has chatted: the follow-up has a conversation to go to
    tour = book_tour(school=school, contact=parent.contact, parent_name="Jon Tan", parent_phone="+6591234567",
                     child_name="Mia", child_age=5, local_date=day, local_time=dt.time(9))
    with time_machine.travel(dt.datetime.combine(day, dt.time(11), school.tz)):
        record_tour_outcome(booking=tour, status="no_show")
        missed = parent.contact.conversations.latest("started_at").messages.filter(role="assistant").latest("id")
        assert "We missed you" in missed.text

        reply = parent.say("yes please, sorry about that")
    assert "arrange a campus tour" in reply, reply  # the booking flow has started
    assert parent.bookings().count() == 1  # nothing booked without a day, a time and a yes
