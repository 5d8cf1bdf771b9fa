"""The prompt's Facts stay small and bounded however long the conversation, and the offline policy reads them."""

import datetime as dt

import pytest
from django.test import override_settings
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from bookings import services as bookings
from chatbot import hotpath
from chatbot.agent import prompt
from chatbot.agent.memory import ActiveContext
from chatbot.agent.offline.conversation import parse_facts, read
from chatbot.models import Message
from tests.factories import ContactFactory, ConversationFactory, MessageFactory

pytestmark = [pytest.mark.django_db]

FULL_CONTEXT = {  # what the CRM keeps after a booking, a cancellation and a call back
    "parent_preferred_name": "Jon Tan", "parent_preferred_phone": "+6591234567", "parent_preferred_email": "",
    "child_name": "Mia", "pipedrive_person_id": 4411, "pipedrive_deal_id": 981, "tour_activity_id": 77,
    "tour_booked_at": "2026-11-20T10:00:00+00:00", "tour_booking_id": "T-OLD123", "tour_scheduled_date": "2026-11-30",
    "tour_scheduled_time": "09:00", "tour_status": "cancelled", "callback_requested": True,
    "callback_preference": "afternoon", "callback_date": "2026-11-24", "callback_requested_at": "2026-11-22T10:00:00Z",
}


def _facts(school, contact, active: ActiveContext, summary: str = "") -> dict[str, str]:
    return parse_facts(prompt.system_prompt(school, contact, active, summary))


def test_facts_leave_out_what_is_empty(school):
    contact = ContactFactory(school=school, name="", phone="", email="")
    facts = _facts(school, contact, ActiveContext(school.pk, contact.pk))
    assert "CONTACT" not in facts and facts["ACTIVE_TASK"] == "{}"  # nothing on file: no line
    assert "SUMMARY" not in facts and "UNREAD" not in facts
    assert '""' not in "".join(facts.values()) and "[]" not in "".join(facts.values())


def test_persistent_context_gives_only_what_the_agent_needs(school):
    contact = ContactFactory(school=school, name="Jon Tan", phone="+6591234567", context=FULL_CONTEXT)
    line = _facts(school, contact, ActiveContext(school.pk, contact.pk))["CONTACT"]
    assert '"child_name":"Mia"' in line
    assert '"last_tour":"Mon 2026-11-30 09:00 T-OLD123 cancelled"' in line
    assert '"callback_requested":"2026-11-24 afternoon"' in line
    for noise in ("pipedrive", "activity", "_at", "parent_preferred", "2026-11-20"):
        assert noise not in line


def test_the_offline_policy_reads_back_tours_and_the_slots_offered(school, next_weekday):
    tuesday, friday = next_weekday(school, 1), next_weekday(school, 4)
    contact = ContactFactory(school=school, name="Jon Tan", phone="+6591234567")
    booked = bookings.book_tour(school=school, contact=contact, parent_name="Jon Tan", parent_phone="+6591234567",
                                child_name="Mia Rose", child_age=5, local_date=tuesday, local_time=dt.time(9))
    active = ActiveContext(school.pk, contact.pk, task_type="tour_booking", collected={"child_name": "Leo"},
                           slots_shown=[s.as_dict() for s in bookings.available_slots(school, friday, friday, [])])
    system = prompt.system_prompt(school, contact, active, "Parent: hi")
    conv = read([{"role": "system", "content": system}, {"role": "user", "content": "the first one"}])
    assert conv.upcoming_tours == [
        {"date": tuesday.isoformat(), "time": "09:00", "booking_id": booked.reference, "child_name": "Mia Rose"},
    ]
    assert conv.slots_shown[0] == {"date": friday.isoformat(), "time": school.tour_start_times[0]}
    assert len(conv.slots_shown) == len(school.tour_start_times)
    assert conv.collected == {"child_name": "Leo"} and conv.task["task_type"] == "tour_booking"
    assert conv.contact_name == "Jon" and conv.school["tour_start_times"] == school.tour_start_times


@override_settings(LLM_PROMPT_TOKEN_BUDGET=300)
def test_history_and_summary_share_the_budget(school):
    conversation = ConversationFactory(school=school)
    for turn in range(30):
        MessageFactory(conversation=conversation, text=f"Question {turn}: is there a bus to the school from Bedok?",
                       processed_at=timezone.now())
        MessageFactory(conversation=conversation, role=Message.Role.ASSISTANT,
                       text=f"Answer {turn}: our bus partner runs routes across the east, door to door.")
        chat = prompt.history(conversation, hotpath.earlier_messages(conversation, set()))
        lines = conversation.summary.splitlines()
        assert prompt.count_tokens(chat) + prompt._summary_tokens(lines) <= 300
        assert prompt._summary_tokens(lines) <= 300 * prompt.SUMMARY_SHARE
    assert lines and all(line.startswith("Parent: Question") for line in lines)  # outcomes live in the facts


def test_the_model_is_told_the_parents_language_when_the_school_offers_it(school):
    contact = ContactFactory(school=school, language="ta")
    system = prompt.system_prompt(school, contact, ActiveContext(school.pk, contact.pk), "")
    assert parse_facts(system)["LANGUAGE"] == "ta" and "Answer in LANGUAGE" in system
    assert read([{"role": "system", "content": system}]).language == "ta"
    school.languages = ["en", "zh-hans"]
    assert _facts(school, contact, ActiveContext(school.pk, contact.pk))["LANGUAGE"] == "en"


@given(st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system"]),
                                       "content": st.text(max_size=60)}), max_size=6))
def test_the_cheap_token_bound_never_undercounts(messages):
    """The history skips the tokenizer when `token_bound` fits the budget: it must never be below the real count."""
    assert prompt.token_bound(messages) >= prompt.count_tokens(messages)


@given(st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system"]),
                                       "content": st.text(max_size=60)}), max_size=6))
def test_chat_messages_counted_one_by_one_match_the_tokenizer_on_the_whole_list(messages):
    """`count_tokens` sums remembered per-message counts for plain chat messages: the same as the tokenizer's."""
    assert prompt.count_tokens(messages) == prompt._litellm_tokens(messages)
