"""What parents say once a tour is booked, or while its read-back waits: goodbyes and "is that still on?" about
that tour (no new booking started), a thumbs-up as the yes, a call back asked for "after work, after 5pm", and
the note that an answer exists only in English said once a conversation. Real offline policy, real database."""

import datetime as dt

import pytest
import time_machine

from bookings.models import TourBooking
from tests.chatbot.test_callback_conversation import Parent, coming
from tests.factories import FaqEntryFactory

pytestmark = [pytest.mark.django_db(transaction=True)]
MONDAY = 0


@pytest.fixture
def monday_morning(school):
    monday = coming(school, MONDAY)
    with time_machine.travel(dt.datetime.combine(monday, dt.time(10), school.tz), tick=True):
        yield monday


def booked(school, monday) -> tuple[Parent, dt.date]:
    wednesday = monday + dt.timedelta(days=2)
    parent = Parent(school)
    parent.say(f"hi id like a tour on wed {wednesday.day} at 9")
    assert "Shall I book it?" in parent.say("Amy Tan, 91234567, son Ben is 5")
    parent.say("yes pls")
    return parent, wednesday


def tours_of(parent: Parent) -> list[tuple[dt.date, str]]:
    return [(t.local_start.date(), f"{t.local_start:%H:%M}") for t in TourBooking.objects.filter(
        contact=parent.contact, status=TourBooking.Status.SCHEDULED)]


@pytest.mark.parametrize("goodbye", ["ok see you wed", "see u wed then!", "thanks, see you on Wednesday"])
def test_a_goodbye_naming_the_tours_day_starts_no_new_booking(school, monday_morning, goodbye):
    parent, wednesday = booked(school, monday_morning)
    assert tours_of(parent) == [(wednesday, "09:00")]
    before = parent.tools_called()
    reply = parent.say(goodbye)
    assert "check_availability" not in parent.tools_called()[len(before):], reply
    assert "09:00" in reply and "Which one would you like" not in reply, reply
    assert tours_of(parent) == [(wednesday, "09:00")]


@pytest.mark.parametrize("question", ["我们的预约还有效吧？", "tempahan saya masih on ke?", "booking confirm aa?",
                                      "is my booking confirmed?"])
def test_whether_the_tour_is_still_on_in_four_languages(school, monday_morning, question):
    parent, _ = booked(school, monday_morning)
    reference = TourBooking.objects.get(contact=parent.contact).reference
    before = parent.tools_called()
    reply = parent.say(question)
    assert reference in reply and "book_tour" not in parent.tools_called()[len(before):], reply


def test_asking_whether_the_tour_is_still_on_reads_it_back_and_again_says_nothing_changed(school, monday_morning):
    parent, wednesday = booked(school, monday_morning)
    reference = TourBooking.objects.get(contact=parent.contact).reference
    first = parent.say("is that still on??")
    assert reference in first and "09:00" in first, first
    second = parent.say("are we still booked")
    assert second != first and second.startswith("Yes, nothing has changed.") and reference in second, second
    third = parent.say(f"still on for 9am wed {wednesday.day}?")
    assert reference in third and "Which one" not in third, third


@pytest.mark.parametrize("yes", ["👍", "tq 👍", "ok 👌"])
def test_a_thumbs_up_to_the_read_back_books(school, monday_morning, yes):
    wednesday = monday_morning + dt.timedelta(days=2)
    parent = Parent(school)
    parent.say(f"tour wed {wednesday.day} 4pm, girl Yazhini 4")
    assert "Shall I book it?" in parent.say("M. Anbarasan 94561230")
    parent.say(yes)
    assert tours_of(parent) == [(wednesday, "16:00")]


def test_a_call_back_after_work_with_a_clock_time_is_from_that_time(school, monday_morning):
    parent = Parent(school)
    parent.say("Siti Aminah here, 91234567. can call me tmr after work? after 5pm. want to ask about fees")
    callback = parent.callbacks().get()
    assert (callback.due_date, callback.window_start) == (monday_morning + dt.timedelta(days=1), dt.time(17))


def test_an_answer_only_in_english_is_said_so_once_a_conversation(school, monday_morning):
    FaqEntryFactory(school=school, question="Is there a school bus service?", answer="Yes, buses run daily.",
                    tags=["bus", "transport"])
    FaqEntryFactory(school=school, question="Is lunch provided at school?", answer="A hot lunch is served.",
                    tags=["lunch", "canteen", "food"])
    parent = Parent(school)
    first = parent.say("ada bas sekolah tak?")
    second = parent.say("makan tengah hari macam mana? ada canteen?")
    note = "(Jawapan ini hanya ada dalam bahasa Inggeris.)"
    assert note in first and "buses run daily" in first, first
    assert note not in second and "hot lunch" in second, second


def test_a_tanglish_booking_greeting_choice_by_position_ok_and_thanks(school, monday_morning):
    tuesday = monday_morning + dt.timedelta(days=8)
    parent = Parent(school)
    assert "வணக்கம்" in parent.say("vanakkam")
    listed = parent.say("enakku school tour venum, adutha vaaram sevvai kizhamai kaalaila")
    assert "09:00" in listed and "11:00" in listed and "14:00" not in listed, listed
    parent.say("rendavathu")
    parent.say("en peyar Priya Kumar, ponnu Anya 5 vayasu, 91234567")
    parent.say("seri")
    assert tours_of(parent) == [(tuesday, "11:00")]
    assert "Priya" in parent.say("nandri")


@pytest.mark.parametrize("change", ["actually make it tues same time", "sorry, tuesday instead, same time"])
def test_another_day_right_after_a_call_back_moves_it_and_keeps_its_window(school, monday_morning, change):
    parent = Parent(school)
    parent.say("can u get someone to call me wed between 2-4? re fees. Daniel Koh 81234567")
    callback = parent.callbacks().get()
    assert (callback.window_start, callback.window_end) == (dt.time(14), dt.time(16))
    reply = parent.say(change)
    callback.refresh_from_db()
    assert parent.callbacks().count() == 1 and "check_availability" not in parent.tools_called(), reply
    assert (callback.due_date, callback.window_start, callback.window_end) == (
        monday_morning + dt.timedelta(days=1), dt.time(14), dt.time(16)), reply


def test_cancel_that_and_book_another_day_at_the_read_back_changes_the_booking_still_to_be_made(
        school, monday_morning):
    wednesday = monday_morning + dt.timedelta(days=2)
    thursday = wednesday + dt.timedelta(days=1)
    parent = Parent(school)
    parent.say(f"book tour wed {wednesday.day} 11am for my daughter Jia En age 5, Tan Wei Ling 91112222")
    read_back = parent.say("hmm actually cancel that, and book thurs instead same time")
    assert "Shall I book it?" in read_back and "Jia En (5)" in read_back and "11:00" in read_back, read_back
    parent.say("yes")
    assert tours_of(parent) == [(thursday, "11:00")]


def test_a_move_asked_with_no_tour_on_this_contact_says_where_it_may_be_and_does_not_loop(school, monday_morning):
    parent = Parent(school)
    first = parent.say("hi i booked a tour for my daughter last week but need to change")
    assert "can't find an upcoming tour" in first and "another phone number" in first, first
    second = parent.say("its for Chloe")
    assert second != first and not first.endswith(second), second
    third = parent.say("no i booked with my husbands number")
    assert third not in (first, second) and not TourBooking.objects.filter(contact=parent.contact).exists(), third


@pytest.mark.parametrize("text", ["we will be there by 9:15", "running 10 mins late sorry", "stuck in traffic, omw"])
def test_on_the_way_or_late_for_the_tour_is_about_that_tour_not_a_new_time(school, monday_morning, text):
    parent, wednesday = booked(school, monday_morning)
    reference = TourBooking.objects.get(contact=parent.contact).reference
    before = parent.tools_called()
    reply = parent.say(text)
    assert reply.startswith("Thanks for letting us know.") and reference in reply, reply
    assert not set(parent.tools_called()[len(before):]) & {"check_availability", "manage_tour_booking"}, reply
    assert tours_of(parent) == [(wednesday, "09:00")]
    assert parent.say(text) == "Thanks for letting us know."  # said again: not the tour a second time


def test_late_for_a_tour_not_booked_from_this_chat_says_where_it_may_be_and_books_nothing(school, monday_morning):
    parent = Parent(school)
    first = parent.say("hi running late for my tour")
    assert "Thanks for letting us know." in first and "another phone number" in first, first
    assert parent.say("stuck in traffic, be there 10 mins late") == "Thanks for letting us know."
    assert not TourBooking.objects.filter(contact=parent.contact).exists()
