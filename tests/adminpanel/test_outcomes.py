"""Outcomes that tell the truth: a conversation's outcome is its final state, decided in chatbot.outcomes, stored
when a turn ends, and the list filters by it."""

import importlib

import pytest
from asgiref.sync import async_to_sync
from django.apps import apps
from django.test import override_settings

from bookings.models import TourBooking
from chatbot import outcomes
from chatbot.models import Conversation, Message, ReasoningStep
from chatbot.services import end_conversation, receive
from tests.adminpanel.conftest import LIST_URL, make_conversation
from tests.factories import ContactFactory

pytestmark = pytest.mark.filterwarnings("ignore:No directory at:UserWarning")

BOOKED = ("book_tour", {"status": "success", "booking_id": "T-AAAAAA"})
MOVED = ("manage_tour_booking", {"status": "success", "action": "rescheduled", "booking_id": "T-BBBBBB"})
CANCELLED = ("manage_tour_booking", {"status": "success", "action": "cancelled", "booking_id": "T-BBBBBB"})
CALLBACK = ("request_callback", {"status": "success", "callback_id": "C-AAAAAA"})
ANSWERED = ("get_faq_answer", {"status": "success", "answer": "Yes."})
FULL = ("book_tour", {"status": "error", "message": "That tour is full."})
NO_MATCH = ("get_faq_answer", {"status": "no_match"})


@pytest.mark.parametrize(("turns", "expected"), [
    ([[BOOKED], [CANCELLED], [CALLBACK]], "callback"),  # the conversation: not "booked"
    ([[BOOKED, CANCELLED]], "cancelled"),
    ([[BOOKED], [MOVED]], "rescheduled"),
    ([[BOOKED], [ANSWERED]], "booked"),  # a question after booking keeps it booked
    ([[ANSWERED], [BOOKED]], "booked"),
    ([[ANSWERED], [NO_MATCH]], "faq_only"),
    ([[FULL], [NO_MATCH]], ""),  # nothing happened (yet)
    ([[CALLBACK], [BOOKED]], "booked"),
])
def test_the_outcome_is_the_final_state(turns, expected):
    outcome = ""
    for observations in turns:
        outcome = outcomes.after_turn(outcome, observations)
    assert outcome == expected


def test_handed_off_stays_unless_something_happens_after_the_handback_and_an_empty_end_is_abandoned():
    assert outcomes.after_turn("handed_off", [ANSWERED, NO_MATCH, FULL]) == "handed_off"
    assert outcomes.after_turn("handed_off", [BOOKED]) == "booked"  # the concierge, given it back, booked a tour
    assert outcomes.at_end("") == "abandoned"
    assert outcomes.at_end("cancelled") == "cancelled"
    assert outcomes.after_turn("abandoned", [ANSWERED]) == "faq_only"


@override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0)
@pytest.mark.django_db(transaction=True)
def test_a_conversation_that_booked_then_cancelled_and_asked_for_a_call_is_listed_as_callback(school, next_weekday,
                                                                                              head_client):
    """Through the real loop and tools: book, cancel, ask for a callback; the list says Callback, not Booked."""
    contact = ContactFactory(school=school, phone="", email="", name="")
    day = next_weekday(school, 2)

    def say(text: str, done) -> None:
        """Say it; confirm the read-back if the concierge asks for one first."""
        async_to_sync(receive)(school=school, contact=contact, channel="web", text=text)
        if not done():
            async_to_sync(receive)(school=school, contact=contact, channel="web", text="yes")
        assert done(), Message.objects.filter(role="assistant").latest("id").text

    def outcome() -> str:
        return Conversation.objects.get(contact=contact).outcome

    say(f"Hi, I'm Jon Tan (+65 9123 4567), I'd like a tour for my daughter Mia, 5, on {day:%A} {day.day} "
        f"{day:%B} at 11am", lambda: TourBooking.objects.filter(contact=contact, status="scheduled").exists())
    assert outcome() == "booked"
    booking = TourBooking.objects.get(contact=contact)
    say(f"please cancel {booking.reference}, we moved abroad",
        lambda: TourBooking.objects.get(pk=booking.pk).status == "cancelled")
    assert outcome() == "cancelled"
    say("can someone call me tomorrow morning about fees?", lambda: contact.callbacks.exists())
    assert outcome() == "callback"
    conversation = Conversation.objects.get(contact=contact)
    end_conversation(conversation)
    assert Conversation.objects.get(pk=conversation.pk).outcome == "callback"

    callbacks = head_client.get(LIST_URL, {"outcome__exact": "callback"}).context["cl"].result_list
    assert [c.pk for c in callbacks] == [conversation.pk]
    assert not head_client.get(LIST_URL, {"outcome__exact": "booked"}).context["cl"].result_list


def test_recorded_conversations_are_recomputed_by_the_migration(school):
    """Conversations stored under the old rule ("most significant thing ever") get their final state."""
    wrong = make_conversation(school, outcome="booked")
    handed = make_conversation(school, outcome="handed_off", status="handed_off")
    faq = make_conversation(school, outcome="faq_only")
    for conversation in (wrong, handed):
        for position, (name, result) in enumerate([BOOKED, CANCELLED, CALLBACK], start=10):
            answer = Message.objects.filter(conversation=conversation, role="assistant").first()
            ReasoningStep.objects.create(message=answer, cycle=2, position=position, kind="observe", tool_name=name,
                                         tool_result=result, created_at=answer.created_at)
    migration = importlib.import_module("chatbot.migrations.0003_outcomes_from_final_state")
    migration.recompute(apps, None)
    assert Conversation.objects.get(pk=wrong.pk).outcome == "callback"
    assert Conversation.objects.get(pk=handed.pk).outcome == "handed_off"
    assert Conversation.objects.get(pk=faq.pk).outcome == "faq_only"
