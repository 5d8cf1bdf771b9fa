"""A family whose child already has a tour coming up is asked before a second one is booked: move it, or both?"""

import datetime as dt

import pytest
from django.test import override_settings

from bookings import services as booking_services
from chatbot.agent import memory, tools
from chatbot.agent.offline.conversation import read
from chatbot.agent.offline.policy import Turn
from chatbot.agent.prompt import facts_section
from chatbot.models import ReasoningStep
from tests.chatbot.test_conversations import Parent, spoken

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _offline_and_fast():
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0):
        yield


@pytest.fixture
def family(school, next_weekday):
    """A parent whose Mia (5) has a tour next Tuesday at 09:00 (booked in an earlier chat)."""
    parent = Parent(school)
    tour = booking_services.book_tour(school=school, contact=parent.contact, parent_name="Jon Tan",
                                      parent_phone="+6591234567", child_name="Mia", child_age=5,
                                      local_date=next_weekday(school, 1), local_time=dt.time(9))
    return parent, tour, next_weekday(school, 3)


def _asks_first(parent, tour, thursday) -> str:
    reply = parent.say(f"Hi, I'm Jon Tan, 91234567. Please book a tour for Mia, 5, on {spoken(thursday)} at 11am")
    assert parent.bookings().count() == 1, "nothing booked before the parent chose"
    assert tour.reference in reply and "move" in reply and "another tour" in reply, reply
    assert "just to check" not in reply.lower()
    return reply


def test_the_parent_who_chooses_to_move_gets_the_tour_moved_not_a_second_one(family):
    parent, tour, thursday = family
    _asks_first(parent, tour, thursday)
    reply = parent.say("Please move that one")
    assert "just to check" in reply.lower() and tour.reference in reply and "11:00" in reply, reply
    reply = parent.say("yes please")
    moved = parent.bookings().get()
    assert moved.reference == tour.reference
    assert (moved.local_start.date(), moved.local_start.time()) == (thursday, dt.time(11))
    assert moved.reference in reply


def test_the_parent_who_wants_both_gets_a_read_back_then_a_second_tour(family):
    parent, tour, thursday = family
    _asks_first(parent, tour, thursday)
    reply = parent.say("Book another one as well please")
    assert "just to check" in reply.lower() and spoken(thursday) in reply and "Mia" in reply, reply
    assert parent.bookings().count() == 1
    reply = parent.say("yes")
    second = parent.bookings().exclude(pk=tour.pk).get()
    assert (second.child_name, second.local_start.date(), second.local_start.time()) == ("Mia", thursday,
                                                                                        dt.time(11))
    assert second.reference in reply
    tour.refresh_from_db()
    assert tour.status == "scheduled" and tour.local_start.time() == dt.time(9)
    assert not memory.ActiveContext.load(parent.school.pk, parent.contact.pk).another_tour  # used up


def test_a_siblings_own_tour_is_booked_without_the_question(family):
    parent, tour, thursday = family
    reply = parent.say(f"Hi, I'm Jon Tan, 91234567. Please book a tour for Sam, 7, on {spoken(thursday)} at 11am")
    assert "just to check" in reply.lower() and "Sam" in reply and tour.reference not in reply, reply
    parent.say("yes")
    assert sorted(b.child_name for b in parent.bookings()) == ["Mia", "Sam"]


def test_a_parent_who_asks_for_another_tour_is_not_asked_whether_to_move_the_first(family):
    parent, tour, thursday = family
    reply = parent.say(f"Hi, I'm Jon Tan, 91234567. We'd like another tour for Mia, 5, on {spoken(thursday)} "
                       "at 11am")
    assert "just to check" in reply.lower() and tour.reference not in reply, reply
    parent.say("yes")
    assert parent.bookings().count() == 2


def test_a_parent_with_no_tour_to_cancel_is_told_so_and_offered_one(school):
    parent = Parent(school)
    reply = parent.say("Please cancel my tour")
    assert "can't find an upcoming tour" in reply and "book a new tour" in reply, reply
    step = ReasoningStep.objects.get(kind="observe", tool_name="manage_tour_booking")
    assert step.tool_result["code"] == "no_upcoming_tours" and step.tool_result["suggest"] == "book_tour"


@pytest.mark.parametrize("answer, choice", [
    ("Please move that one", "move"), ("yes", "move"), ("Tolong pindahkan yang itu", "move"), ("请把那次改期", "move"),
    ("அதை மாற்றுங்கள்", "move"),
    ("Book another one as well please", "another"), ("both please", "another"), ("Tempah satu lagi juga", "another"),
    ("另外再预约一次", "another"), ("இன்னொன்றும் முன்பதிவு செய்யுங்கள்", "another"),
    ("what time does it start?", ""),
])
def test_the_answer_to_move_or_another_is_read_in_every_language(answer, choice):
    task = {"task_type": "tour_booking", "upcoming_tour_asked": "T-ABC123",
            "collected": {"child_name": "Mia", "preferred_date": "2026-11-26", "preferred_time": "11:00"},
            "dialogue": {"asked": ["move_or_another"], "about": "book"}}  # the state the question left
    system = "## Facts\n" + facts_section(dt.datetime(2026, 11, 22, 14, 5), "Asia/Singapore", {}, {
        "upcoming_tours": ["Tue 2026-11-24 09:00 T-ABC123 Mia"]}, task, "")
    asked = "Mia already has a tour on Tuesday 24 November at 09:00 (T-ABC123). Shall I move that tour ...?"
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "book Mia on Thursday at 11"},
                {"role": "assistant", "content": asked}, {"role": "user", "content": answer}]
    assert Turn(read(messages), set(tools.TOOLS)).upcoming_choice == choice


@pytest.mark.parametrize("words", [
    "Hi, it's Jon. Mia has the tour on {day} morning. Can change or not?",
    "salam, sy Jon. sy ada tempahan lawatan {day} pagi utk Mia. boleh ubah tak?",
])
def test_the_day_that_says_which_tour_to_move_is_not_the_day_to_move_it_to(family, words):
    parent, tour, thursday = family
    tuesday = tour.local_start.date()
    reply = parent.say(words.format(day=spoken(tuesday)))
    assert tour.reference in reply or "9:00" in reply or "09:00" in reply, reply
    offered = [line for line in reply.splitlines() if line[:2].strip().rstrip(".").isdigit()]
    assert offered, reply
    assert not all(spoken(tuesday) in line for line in offered), "only the tour's own day offered: " + reply
    assert parent.bookings().count() == 1
