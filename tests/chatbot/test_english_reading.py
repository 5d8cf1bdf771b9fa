"""English (and Singapore English) as busy parents write it, one failure class per group (issue 28): a visit asked
for as a question or an idiom is a booking; a date said as a bound ("before Christmas") is the days it leaves; a
call back window with its am/pm at the end; names with initials, hyphens, apostrophes and particles, before a
clause about the child; a question in the middle of a booking; "this coming Monday"; a closed day asked for.

Every sentence here was written for these tests; none comes from a corpus or from the examples the classes were
found with.
"""

import datetime as dt

import pytest
from django.test import override_settings

from bookings.models import CallbackRequest
from chatbot.agent.datetimes import read_call_time
from chatbot.agent.offline.understanding import Hints, read_message, understand
from chatbot.agent.offline.when import find_when
from chatbot.faq import split_question
from tests.chatbot.test_conversations import Parent, spoken
from tests.chatbot.test_offline_policy import Concierge, FakeSchool

THURSDAY = dt.date(2026, 11, 19)
NOW = dt.time(10, 0)
TOURS = ("09:00", "11:00", "14:00", "16:00")


def days(text: str, today: dt.date = THURSDAY) -> tuple[str, str] | str | None:
    """The day, or the first and last day of the range, `text` asks for."""
    when = find_when(text, today, NOW, TOURS)
    if when.date:
        return when.date.isoformat()
    return (when.start.isoformat(), when.end.isoformat()) if when.start else None


def read(text: str, *asked: str):
    return read_message(text, Hints(today=THURSDAY, now=NOW, tour_times=TOURS, asked=frozenset(asked)))


# --- a visit asked for as a question or an idiom is a booking, never a question for the FAQ ------------------------

VISITS = [
    "any chance we could swing by and see the school next week?",
    "would it be possible to have a look round the campus sometime?",
    "keen to pop over for a quick peek one of these days",
    "is it ok if we drop in to see the classrooms one morning?",
    "my husband and I were hoping to come and have a look, is that doable?",
    "we can come see the place on a weekday if that works?",
    "hi, mind if we stop by for a look around?",
    "hey, just wondering if you guys do tours",
]


@pytest.mark.parametrize("text", ["no thanks, just browsing", "just asking", "just looking for now"])
def test_just_browsing_is_still_no_booking(text):
    assert "browsing" in read(text).intents and "book" not in read(text).intents


@pytest.mark.parametrize("text", VISITS)
def test_a_visit_asked_for_as_a_question_is_a_booking(text):
    reading = read(text)
    assert "book" in reading.intents and not reading.questions


@pytest.mark.parametrize("text", VISITS)
def test_the_faq_finds_no_question_in_a_visit_request(text):
    assert split_question(text) == []


@pytest.mark.parametrize("text", VISITS[:3])
async def test_a_visit_request_gets_slots_or_the_next_question_and_no_not_sure(text):
    reply = await Concierge().say(text)
    assert not reply.called("get_faq_answer")
    assert "not sure" not in reply.text and "I'd rather not guess" not in reply.text


@pytest.mark.parametrize("text", ["how long does the tour take?", "can I bring my mum on the tour? is lunch served?"])
def test_a_question_about_the_tour_is_still_a_question(text):
    assert read(text).questions


# --- "before X" is a bound: the days before it, never X ------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("any day before christmas works", ("2026-11-19", "2026-12-24")),
    ("sometime before the 30th please", ("2026-11-19", "2026-11-29")),
    ("ideally before Friday 4 December", ("2026-11-19", "2026-12-03")),
    ("no later than 10 December", ("2026-11-19", "2026-12-10")),
    ("the 10th of December at the latest", ("2026-11-19", "2026-12-10")),
    ("by 2 Dec at the latest pls", ("2026-11-19", "2026-12-02")),
    ("by end of next week", ("2026-11-19", "2026-11-29")),
    ("after the 25th if possible", ("2026-11-26", "2026-12-02")),
    ("from 1 December onwards", ("2026-12-01", "2026-12-07")),
    ("not before the 1st of December", ("2026-12-01", "2026-12-07")),
    ("any time after christmas", ("2026-12-26", "2027-01-01")),
    ("before the school holidays if we can", ("2026-11-19", "2026-11-25")),
])
def test_a_date_said_as_a_bound_is_the_days_it_leaves(text, expected):
    assert days(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("the day after tomorrow", "2026-11-21"),
    ("can we come by Friday?", "2026-11-20"),  # "come by" is a visit, Friday the day
    ("from Tuesday", "2026-11-24"),
    ("on christmas eve", "2026-12-24"),
])
def test_a_date_without_a_bound_stays_that_day(text, expected):
    assert days(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("early next week", ("2026-11-23", "2026-11-25")),
    ("mid December", ("2026-12-11", "2026-12-20")),
    ("towards the end of the month", ("2026-11-21", "2026-11-30")),
    ("later this week", ("2026-11-19", "2026-11-22")),
    ("beginning of next month", ("2026-12-01", "2026-12-10")),
])
def test_a_part_of_a_week_or_month_is_its_days(text, expected):
    assert days(text) == expected


async def test_before_a_day_offers_the_days_before_it_and_books_nothing():
    reply = await Concierge().say("could we come for a tour sometime before the 27th? mornings ideally")
    assert not reply.called("book_tour")
    searched = reply.called("check_availability")[0]
    assert searched["date_range_start"] <= "2026-11-23" and searched["date_range_end"] == "2026-11-26"
    assert "27 November" not in reply.text


# --- a call back window with its am/pm said once, at its end -------------------------------------------------------

@pytest.mark.parametrize(("text", "start", "end"), [
    ("2 to 4pm", "14:00", "16:00"),
    ("tmrw 3 till 5 pm pls", "15:00", "17:00"),
    ("anytime 10 to 2pm", "10:00", "14:00"),
    ("between 11 and 1pm", "11:00", "13:00"),
    ("9 - 11am", "09:00", "11:00"),
    ("from 1.30 to 3pm", "13:30", "15:00"),
])
def test_a_range_with_am_or_pm_at_its_end_is_that_window(text, start, end):
    call = read_call_time(text, THURSDAY)
    assert call.best_time == CallbackRequest.BestTime.WINDOW
    assert (f"{call.start:%H:%M}", f"{call.end:%H:%M}") == (start, end)


async def test_a_call_back_window_is_asked_for_as_said():
    reply = await Concierge().say("can someone call me back tomorrow, 2 to 4pm? I'm Dana Kerr, 9123 4567")
    asked = reply.called("request_callback")[0]["best_time_to_call"]
    call = read_call_time(asked, THURSDAY)
    assert (f"{call.start:%H:%M}", f"{call.end:%H:%M}") == ("14:00", "16:00")


# --- names: initials, hyphens, apostrophes, Mc, particles; a clause about the child after them ---------------------

@pytest.mark.parametrize(("text", "asked", "parent", "child"), [
    ("Claire Ashworth-Baines, and it's for our little one Theo", "parent_name", "Claire Ashworth-Baines", "Theo"),
    ("Nadia Kowalski-Reid, it's for our youngest, Theo", "", "Nadia Kowalski-Reid", "Theo"),
    ("Tobias R. Okafor", "parent_name", "Tobias R. Okafor", None),
    ("I'm Aoife O'Brien-Walsh, my son is Cian", "", "Aoife O'Brien-Walsh", "Cian"),
    ("this is Pieter van der Merwe, booking for my son Ruben", "", "Pieter van der Merwe", "Ruben"),
    ("Name's Siobhan McAllister and my girl is Niamh", "", "Siobhan McAllister", "Niamh"),
    ("Daniela de Souza - it's for my daughter Lucia", "parent_name", "Daniela de Souza", "Lucia"),
    ("Omar al-Farsi here, for my son Zayd", "", "Omar al-Farsi", "Zayd"),
    ("Grace T. Hollis and my boy is Arlo", "parent_name", "Grace T. Hollis", "Arlo"),
])
def test_a_name_stays_whole_and_the_child_clause_after_it_is_the_childs(text, asked, parent, child):
    facts = read(text, *filter(None, [asked])).facts
    assert facts.get("parent_name") == parent
    assert facts.get("child_name") == child


@pytest.mark.parametrize("text", ["Perfect, and it's for my son Theo", "Btw it's for our little one Theo",
                                  "Great stuff, my daughter Lucia"])
def test_a_word_before_the_child_clause_is_no_parents_name(text):
    facts = read(text, "parent_name").facts
    assert "parent_name" not in facts and facts.get("child_name") in ("Theo", "Lucia")


# --- a question in the middle of a booking is answered, and the booking goes on --------------------------------------

@pytest.mark.parametrize("text", [
    "ok tuesday 11am. oh and how much are the fees",
    "tuesday 11am is good, fees pls",
    "tuesday at 11 please, also what's the fee per month?",
    "book tuesday 11am pls what r the fees like",  # no stop between the booking and the question
])
async def test_a_question_in_a_booking_is_answered_and_the_booking_goes_on(text):
    school = FakeSchool()
    school.collected = {"child_name": "Leo", "child_age": 4}
    school.task_type = "tour_booking"
    reply = await Concierge(school).say(text)
    assert reply.called("get_faq_answer")
    assert "$1,450" in reply.text
    assert reply.called("book_tour")[0].get("preferred_time") == "11:00"
    assert "name" in reply.text.lower()


# --- "this coming Monday" is the next Monday from today --------------------------------------------------------------

@pytest.mark.parametrize(("today", "text", "expected"), [
    (dt.date(2026, 11, 19), "this coming mon", "2026-11-23"),  # said on a Thursday
    (dt.date(2026, 11, 22), "this coming monday", "2026-11-23"),  # said on a Sunday: tomorrow
    (dt.date(2026, 11, 21), "coming mon?", "2026-11-23"),  # said on a Saturday
    (dt.date(2026, 11, 19), "this coming fri at 9", "2026-11-20"),
])
def test_this_coming_weekday_is_the_next_one_from_today(today, text, expected):
    assert days(text, today) == expected


async def test_this_coming_weekday_after_another_day_was_held_is_the_next_one_and_no_update_is_claimed():
    school = FakeSchool()  # today is Sunday 22 November
    school.collected = {"child_name": "Leo", "child_age": 4, "preferred_date": "2026-12-02"}
    school.task_type = "tour_booking"
    reply = await Concierge(school).say("hmm actually could we do this coming monday instead")
    searched = [args.get("date_range_start") for args in reply.called("check_availability")]
    assert searched == ["2026-11-23"]  # tomorrow, not the Monday of the week held before
    assert "updated" not in reply.text and "changed" not in reply.text


# --- a day corrected inside a burst keeps the time said with the day before ------------------------------------------

@pytest.mark.parametrize(("burst", "day", "time", "window"), [
    (["friday around 4?", "oh wait not this friday, friday the 27th"], "2026-11-27", "16:00", None),
    (["monday between 10 and 12", "no sorry monday's out, tuesday same time"], "2026-11-24", None, ("10:00", "12:00")),
    (["tomorrow 2pm pls", "hmm make that monday"], "2026-11-23", "14:00", None),
])
def test_a_day_corrected_in_a_burst_keeps_the_time_said_before(burst, day, time, window):
    reading = understand(burst, Hints(today=THURSDAY, now=NOW, tour_times=TOURS))
    when = reading.when
    assert (when.date or when.start).isoformat() == day
    assert when.time == time and (window is None or (when.after, when.before) == window)


# --- a child's name said with the age in years answers the child's name --------------------------------------------

@pytest.mark.parametrize(("text", "name", "age"), [("Ivy 3yo", "Ivy", 3), ("Rafael 5 yrs old", "Rafael", 5),
                                                  ("Siti Hajar 4 years", "Siti Hajar", 4)])
def test_a_name_with_its_age_in_years_is_the_childs(text, name, age):
    facts = read(text, "child_name", "child_age").facts
    assert (facts.get("child_name"), facts.get("child_age")) == (name, age)


# --- a call back arranged while a booking waits for its yes: the read-back is asked again ---------------------------

@pytest.mark.django_db(transaction=True)
def test_a_call_back_arranged_while_a_read_back_waits_asks_for_the_yes_again(school, next_weekday):
    day = next_weekday(school, 1)
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0):
        parent = Parent(school)
        read_back = parent.say(f"Hi, I'm Jon Tan (+65 9123 4567), a tour for my girl Mia, 5, on {spoken(day)} at 9am")
        assert "Shall I book it?" in read_back
        reply = parent.say("also could someone ring me about the fees, between 2 and 4pm?")
        assert CallbackRequest.objects.filter(contact=parent.contact).exists() and not parent.bookings().exists()
        assert "Shall I book it?" in reply and spoken(day) in reply
        parent.say("yes please")
        assert parent.bookings().get().local_start.date() == day
