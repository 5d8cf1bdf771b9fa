"""Call backs in whole conversations, through the real loop, tools and services, with the offline policy model:
asked for on a Friday for a closed Saturday, moved, cancelled. What the parent was told is checked against
what the database holds."""

import datetime as dt

import pytest
import time_machine
from asgiref.sync import async_to_sync
from django.test import override_settings

from bookings.models import CallbackRequest
from bookings.services import local_now
from chatbot.models import Message, ReasoningStep
from chatbot.services import receive
from tests.factories import ContactFactory

pytestmark = [pytest.mark.django_db(transaction=True)]
FRIDAY, TUESDAY = 4, 1


@pytest.fixture(autouse=True)
def _offline_and_fast():
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0):
        yield


def coming(school, weekday: int) -> dt.date:
    day = local_now(school).date() + dt.timedelta(days=1)
    while day.weekday() != weekday:
        day += dt.timedelta(days=1)
    return day


class Parent:
    def __init__(self, school) -> None:
        self.school = school
        self.contact = ContactFactory(school=school, phone="", email="", name="")

    def say(self, text: str) -> str:
        async_to_sync(receive)(school=self.school, contact=self.contact, channel="web", text=text)
        return Message.objects.filter(conversation__contact=self.contact, role="assistant").latest("id").text

    def callbacks(self):
        return CallbackRequest.objects.filter(contact=self.contact)

    def tools_called(self) -> list[str]:
        return list(ReasoningStep.objects.filter(message__conversation__contact=self.contact, kind="act")
                    .order_by("id").values_list("tool_name", flat=True))


def spoken(day: dt.date) -> str:
    return f"{day:%A} {day.day} {day:%B}"


def test_call_me_tomorrow_after_5_on_a_friday_is_due_monday_from_5pm(school):
    friday = coming(school, FRIDAY)
    monday = friday + dt.timedelta(days=3)
    with time_machine.travel(dt.datetime.combine(friday, dt.time(11), school.tz), tick=True):
        parent = Parent(school)
        reply = parent.say("Can someone call me tomorrow after 5? I'm Ana Lim, 91234567")
    callback = parent.callbacks().get()
    assert (callback.due_date, callback.window_start, callback.window_end) == (monday, dt.time(17), dt.time(18))
    assert callback.best_time == "window" and callback.status == "open"
    assert callback.asked_for["date"] == (friday + dt.timedelta(days=1)).isoformat()
    assert "closed on Saturday" in reply, reply  # told why it is not Saturday...
    assert spoken(monday) in reply and "between 17:00 and 18:00" in reply, reply  # ...and exactly when it is
    assert callback.reference in reply and "Sunday" not in reply


def test_change_then_cancel_a_callback_by_reference_never_makes_a_second_one(school):
    tuesday = coming(school, TUESDAY)
    wednesday = tuesday + dt.timedelta(days=1)
    with time_machine.travel(dt.datetime.combine(tuesday, dt.time(10), school.tz), tick=True):
        parent = Parent(school)
        parent.say("Please call me back tomorrow morning about the fees. I'm Ana Lim, 91234567")
        callback = parent.callbacks().get()
        assert (callback.due_date, callback.window_start, callback.window_end) == (wednesday, dt.time(9),
                                                                                   dt.time(12))

        reply = parent.say(f"please change my callback {callback.reference} to tomorrow evening")
        callback.refresh_from_db()
        assert parent.callbacks().count() == 1, "changed in place, not requested again"
        assert (callback.due_date, callback.window_start, callback.window_end) == (wednesday, dt.time(17),
                                                                                   dt.time(18))
        assert callback.status == "open" and "fee" in callback.topic.lower()
        assert f"{spoken(wednesday)} between 17:00 and 18:00" in reply and callback.reference in reply, reply
        assert parent.tools_called().count("request_callback") == 1

        reply = parent.say("actually, please cancel my callback")
        callback.refresh_from_db()
        assert callback.status == "cancelled" and callback.cancelled_at is not None
        assert "cancelled" in reply and spoken(wednesday) in reply, reply
        assert parent.tools_called()[-1] == "manage_callback"
        parent.contact.refresh_from_db()
        assert parent.contact.context["callback_requested"] is False


def test_cancelling_without_a_callback_says_there_is_none(school):
    parent = Parent(school)
    reply = parent.say("cancel my callback please")
    assert "couldn't find an open call back" in reply, reply
    assert not parent.callbacks().exists()


def test_a_change_without_a_time_asks_for_it_then_moves_the_same_callback(school):
    tuesday = coming(school, TUESDAY)
    wednesday = tuesday + dt.timedelta(days=1)
    with time_machine.travel(dt.datetime.combine(tuesday, dt.time(10), school.tz), tick=True):
        parent = Parent(school)
        parent.say("Could you call me back tomorrow afternoon? Ana Lim, 91234567")
        callback = parent.callbacks().get()
        asked = parent.say("I need to change my call back")
        callback.refresh_from_db()
        assert "good time to call you" in asked and callback.window_start == dt.time(12), asked
        reply = parent.say("tomorrow at 3pm")
    callback.refresh_from_db()
    assert parent.callbacks().count() == 1
    assert (callback.due_date, callback.window_start, callback.window_end) == (wednesday, dt.time(15),
                                                                               dt.time(15, 30))
    assert callback.best_time == "specific" and callback.reference in reply
    assert f"{spoken(wednesday)} between 15:00 and 15:30" in reply, reply


def test_someone_elses_callback_reference_changes_nothing(school):
    tuesday = coming(school, TUESDAY)
    with time_machine.travel(dt.datetime.combine(tuesday, dt.time(10), school.tz), tick=True):
        other = Parent(school)
        other.say("Please call me back tomorrow morning. I'm Bo Tan, 98765432")
        theirs = other.callbacks().get()
        parent = Parent(school)
        reply = parent.say(f"please change my callback {theirs.reference} to tomorrow evening")
    theirs.refresh_from_db()
    assert (theirs.status, theirs.window_start) == ("open", dt.time(9))
    assert f"No call back {theirs.reference} found for you." in reply, reply
    assert not parent.callbacks().exists()
