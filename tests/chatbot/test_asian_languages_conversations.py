"""Issue 28 classes in whole conversations, through the real loop, tools and database, with the offline policy, in
Malay, Chinese, Tamil and mixed messages:

- a call back asked for outside the calling hours is not placed at a time the parent did not ask for: the hours are
  said and another time asked for, and the new window is taken, with the name and phone given in one message;
- a new window right after a call back was placed elsewhere than asked (a closed day), or a call asked for at
  another time right after one was arranged, moves that same call back;
- a yes after a corrected move confirms the corrected day, never the one offered before the correction.

Every phrase was written for these tests; none comes from a corpus or the chat sets.
"""

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.test import override_settings

from bookings import services as booking_services
from bookings.models import CallbackRequest
from tests.chatbot.test_conversations import Parent

pytestmark = [pytest.mark.django_db(transaction=True)]
THURSDAY = dt.datetime(2026, 12, 3, 9, 0, tzinfo=ZoneInfo("Asia/Singapore"))
FRIDAY, MONDAY = dt.date(2026, 12, 4), dt.date(2026, 12, 7)


@pytest.fixture(autouse=True)
def _offline_and_fast():
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0), \
            time_machine.travel(THURSDAY, tick=True):
        yield


@pytest.mark.parametrize(("ask", "details", "name", "instead"), [
    ("boleh call sy esok pukul 8 malam? pasal yuran", "Mohd Faizal bin Ahmad, 9333 4455", "Mohd Faizal bin Ahmad",
     "kalau mcm tu esok waktu lunch la, 12 hingga 2"),  # ms
    ("明天晚上8点可以打电话给我吗？想问学费", "陈志明，9111 3344", "陈志明", "那就明天午饭时间吧"),  # zh
    ("நாளை இரவு 8 மணிக்கு என்னை அழைக்க முடியுமா?", "Priya Raman 9444 5566", "Priya Raman",
     "சரி, நாளை மதிய உணவு நேரம்"),  # ta
    ("can call me tmr 8pm? abt fees", "Nurul Ain binti Hassan 9555 1212", "Nurul Ain binti Hassan",
     "ok tmr lunch time then, 12-2"),  # mixed
    ("pls ask someone call me tmr night 9pm", "Tan Ah Kow, 8111 2323", "Tan Ah Kow", "then tmr 12 to 2 can?"),  # en-sg
])
def test_a_time_outside_the_calling_hours_is_asked_again_and_the_new_window_taken(school, ask, details, name,
                                                                                instead):
    parent = Parent(school)
    parent.say(ask)
    reply = parent.say(details)
    assert not CallbackRequest.objects.filter(contact=parent.contact).exists(), "no call at a time not asked for"
    assert "09:00" in reply and "18:00" in reply, reply  # the calling hours, said
    reply = parent.say(instead)
    callback = CallbackRequest.objects.get(contact=parent.contact)
    assert (callback.due_date, callback.window_start, callback.window_end) == (FRIDAY, dt.time(12), dt.time(14)), reply
    assert callback.parent_name == name and callback.reference in reply
    assert not parent.bookings().exists()


@pytest.mark.parametrize("instead", [
    "kalau mcm tu isnin waktu lunch la",  # ms
    "那就星期一午饭时间吧",  # zh
    "சரி, திங்கள் மதிய உணவு நேரம்",  # ta
    "ok then monday lunch time can?",  # mixed
])
def test_a_new_window_after_the_call_was_moved_off_a_closed_day_moves_that_call_back(school, instead):
    parent = Parent(school)
    parent.say("can someone call me on Saturday morning? Jon Tan 9123 4567")
    callback = CallbackRequest.objects.get(contact=parent.contact)  # the school is closed on Saturdays
    assert (callback.due_date, callback.window_start) == (MONDAY, dt.time(9))
    reply = parent.say(instead)
    moved = CallbackRequest.objects.get(contact=parent.contact)  # the same one, moved: no second call back
    assert moved.reference == callback.reference
    assert (moved.due_date, moved.window_start, moved.window_end) == (MONDAY, dt.time(12), dt.time(14)), reply
    assert not parent.bookings().exists()


@pytest.mark.parametrize("instead", [
    "eh tolong call sy esok waktu lunch je",  # ms
    "还是明天午饭时间打给我吧",  # zh
    "call me tmr lunch time instead",  # en-sg
])
def test_asking_for_the_call_at_another_time_right_after_moves_it(school, instead):
    parent = Parent(school)
    parent.say("can someone call me tomorrow morning? Jon Tan 9123 4567")
    callback = CallbackRequest.objects.get(contact=parent.contact)
    reply = parent.say(instead)
    moved = CallbackRequest.objects.get(contact=parent.contact)  # the same one, moved: no second call back
    assert moved.reference == callback.reference
    assert (moved.due_date, moved.window_start, moved.window_end) == (FRIDAY, dt.time(12), dt.time(14)), reply


@pytest.mark.parametrize(("move", "first", "correction", "yes"), [
    ("你好，我想把下周三的参观改一下时间", "改到下周四上午11点", "不好意思，还是下周五吧，时间一样",
     "ok 可以 move 吧"),  # zh
    ("nak tukar tarikh lawatan hari rabu minggu depan", "khamis minggu depan pukul 11 boleh?",
     "eh silap, jumaat minggu depan, masa sama", "ok je"),  # ms
    ("அடுத்த புதன் tour-ஐ மாற்ற வேண்டும்", "வியாழன் காலை 11 மணி", "இல்லை, வெள்ளிக்கிழமை அதே நேரம்",
     "சரி சரி"),  # ta
    ("hi nak move my tour next wed", "thurs 11am can?", "sorry fri instead, same time", "ok boleh la"),  # mixed
])
def test_a_yes_after_a_corrected_move_confirms_the_corrected_day(school, move, first, correction, yes):
    parent = Parent(school)
    tour = booking_services.book_tour(school=school, contact=parent.contact, parent_name="Farah Tan",
                                      parent_phone="+6593334455", child_name="Hana", child_age=4,
                                      local_date=dt.date(2026, 12, 9), local_time=dt.time(11))
    for text in (move, first, correction):
        parent.say(text)
    reply = parent.say(yes)
    moved = parent.bookings().get(reference=tour.reference)
    assert (moved.local_start.date(), moved.local_start.time()) == (dt.date(2026, 12, 11), dt.time(11)), reply
    assert parent.bookings().filter(status="scheduled").count() == 1


@pytest.mark.parametrize("move", [
    "nak tukar tour hari khamis depan ke jumaat, same time ok?",  # mixed
    "下周四的参观改到周五，时间一样",  # zh
    "அடுத்த வியாழன் tour-ஐ வெள்ளிக்கு மாற்றணும், அதே நேரம்",  # ta
    "can change tour next thurs to fri? same time",  # en-sg
])
def test_a_move_to_a_weekday_said_with_the_tours_day_is_that_weeks_day(school, move):
    parent = Parent(school)
    tour = booking_services.book_tour(school=school, contact=parent.contact, parent_name="Aida Rahman",
                                      parent_phone="+6594443333", child_name="Adam", child_age=5,
                                      local_date=dt.date(2026, 12, 10), local_time=dt.time(11))
    parent.say(move)
    reply = parent.say("ok")
    moved = parent.bookings().get(reference=tour.reference)
    assert (moved.local_start.date(), moved.local_start.time()) == (dt.date(2026, 12, 11), dt.time(11)), reply
