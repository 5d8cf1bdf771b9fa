"""A turn's state in the prompt: the facts as they are at each model call, and the cycles left."""

import datetime as dt
import functools

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from bookings.models import TourBooking
from chatbot.agent import tools
from chatbot.agent.loop import GIVE_UP_TEXT
from chatbot.agent.offline.conversation import parse_facts
from chatbot.models import Message
from chatbot.services import current_conversation, receive, store_inbound
from tests.chatbot import scripted_model

pytestmark = [pytest.mark.django_db(transaction=True)]


def _say(school, contact, text: str) -> Message:
    async_to_sync(receive)(school=school, contact=contact, channel="web", text=text)
    return Message.objects.filter(conversation__contact=contact, role=Message.Role.ASSISTANT).latest("created_at")


def _facts(messages: list[dict]) -> dict[str, str]:
    return parse_facts(messages[0]["content"])


def test_a_tour_booked_in_one_cycle_is_in_the_next_cycles_facts(school, contact, next_weekday):
    tuesday = next_weekday(school, 1)
    details = {"parent_name": "Jon Tan", "parent_phone": "+6591234567", "child_name": "Mia", "child_age": 5,
               "preferred_date": tuesday.isoformat(), "preferred_time": "09:00"}
    model = scripted_model.install()
    model.script = [{"tool_calls": [("book_tour", details)]}, {"content": "Shall I book it?"},
                    {"tool_calls": [("book_tour", {**details, "confirmed": True})]}, {"content": "Booked."}]
    with override_settings(LLM_MODEL="scripted/test", LLM_MAX_CYCLES=4):
        _say(school, contact, "Please book Mia (5) next Tuesday at 9am, I'm Jon Tan, 91234567")
        _say(school, contact, "yes please")
    booking = TourBooking.objects.get(contact=contact)
    before, after = _facts(model.calls[2]), _facts(model.calls[3])  # the second turn's two calls
    assert booking.reference not in before.get("CONTACT", "")
    assert booking.reference in after["CONTACT"] and '"upcoming_tours":["' in after["CONTACT"]
    assert '"collected"' in before["ACTIVE_TASK"] and '"collected"' not in after["ACTIVE_TASK"]
    assert booking.reference in after["ACTIVE_TASK"]  # last_booking_id
    assert [_facts(call)["CYCLES_LEFT"] for call in model.calls] == ["4", "3", "4", "3"]


def test_a_message_that_arrives_during_the_turn_is_unread_until_it_is_taken_in(school, contact, monkeypatch):
    model = scripted_model.install()
    noted = tools.TOOLS["update_context"]

    @functools.wraps(noted)  # the same signature: the loop checks the arguments against it
    def noted_while_the_parent_writes(**arguments) -> dict:
        if not Message.objects.filter(text="also, is there a bus?").exists():
            store_inbound(current_conversation(school, contact, "web"), "also, is there a bus?")
        return noted(**arguments)

    monkeypatch.setitem(tools.TOOLS, "update_context", noted_while_the_parent_writes)
    model.script = [{"tool_calls": [("update_context", {"field_to_update": "parent_name", "new_value": "Jon"})]},
                    {"tool_calls": [("check_unread_messages", {})]}, {"content": "Thanks Jon. The bus: ..."}]
    with override_settings(LLM_MODEL="scripted/test"):
        reply = _say(school, contact, "I'm Jon")
    assert "UNREAD" not in _facts(model.calls[0])
    assert _facts(model.calls[1])["UNREAD"] == "1"
    assert "UNREAD" not in _facts(model.calls[2])  # taken in by check_unread_messages
    assert reply.text == "Thanks Jon. The bus: ..."


@pytest.mark.parametrize("cycles", [1, 2])
def test_the_offline_policy_answers_within_the_loops_budget(school, contact, cycles):
    with override_settings(LLM_MODEL="offline/policy", LLM_MAX_CYCLES=cycles):
        reply = _say(school, contact, "Hi, I'd like to book a tour for my son next Tuesday morning")
    assert "gave_up" not in reply.payload and str(GIVE_UP_TEXT) not in reply.text
    acts = [s.tool_name for s in reply.steps.filter(kind="act")]
    if cycles == 1:  # no call left for a tool: ask for what is needed at once
        assert acts == []
        assert "name" in reply.text and "how old" in reply.text.lower()
    else:  # one tool round, then the answer with what it found
        assert acts and set(acts) <= {"check_availability", "book_tour"}
        assert "name" in reply.text
        assert any(f"{dt.time(h):%H:%M}" in reply.text for h in range(8, 13)) or "no open" in reply.text.lower()
