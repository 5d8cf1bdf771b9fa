"""Property-based tests: trace invariants of the loop, and tool result shapes on random input."""

import asyncio
import json

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatbot import hotpath
from chatbot.agent import memory, tools
from chatbot.agent.loop import run_turn
from chatbot.services import current_conversation, store_inbound
from tests.chatbot import scripted_model
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]

STATUSES = {"success", "error", "missing_fields", "no_match", "updated", "not_changed", "confirm", "has_upcoming_tour"}
text = st.text(max_size=40)
maybe_text = st.none() | text
TOOL_ARGUMENTS = {
    "check_availability": st.fixed_dictionaries({}, optional={
        "date_range_start": maybe_text, "date_range_end": maybe_text,
        "preferred_times": st.none() | st.lists(text, max_size=3)}),
    "book_tour": st.fixed_dictionaries({}, optional={
        name: maybe_text for name in ("parent_name", "parent_phone", "parent_email", "child_name", "preferred_date",
                                      "preferred_time", "special_requirements")} | {
        "child_age": st.none() | st.integers(-5, 200)}),
    "manage_tour_booking": st.fixed_dictionaries(
        {"booking_id": text, "action": st.sampled_from(["cancel", "reschedule", "delete", ""]) | text},
        optional={"new_date": maybe_text, "new_time": maybe_text, "cancellation_reason": maybe_text}),
    "request_callback": st.fixed_dictionaries(
        {"parent_name": text, "parent_phone": text, "best_time_to_call": text}, optional={"topic": maybe_text}),
    "get_faq_answer": st.fixed_dictionaries({"question": text}),
    "update_context": st.fixed_dictionaries(
        {"field_to_update": st.sampled_from(list(memory.ACTIVE_FIELDS)) | text, "new_value": text},
        optional={"reason": maybe_text}),
    "check_unread_messages": st.just({}),
}
any_call = st.sampled_from(sorted(TOOL_ARGUMENTS)).flatmap(
    lambda name: TOOL_ARGUMENTS[name].map(lambda args: (name, args)))


@pytest.fixture
def tool_context(db):
    school = SchoolFactory()
    contact = ContactFactory(school=school)
    conversation = current_conversation(school, contact, "web")
    return tools.ToolContext(school=school, contact=contact, conversation=conversation,
                             active=memory.ActiveContext(school.pk, contact.pk))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=any_call)
def test_tools_answer_random_input_with_a_known_shape(tool_context, call):
    name, arguments = call
    _, result = async_to_sync(tools.execute)(name, json.dumps(arguments), tool_context)
    assert isinstance(result, dict)
    json.dumps(result)  # always serialisable for the model
    if name == "check_unread_messages":
        assert set(result) == {"has_unread", "messages"}
    else:
        assert result["status"] in STATUSES
        if result["status"] == "error":
            assert isinstance(result["message"], str) and result["message"]
        if result["status"] == "missing_fields":
            assert result["missing"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=st.lists(st.lists(any_call, min_size=1, max_size=3), max_size=6),
       final=st.text(min_size=1, max_size=30).filter(str.strip))
def test_trace_invariants(db, script, final):
    model = scripted_model.install()
    model.script = [{"tool_calls": calls} for calls in script] + [{"content": final}]
    school = SchoolFactory()
    conversation = current_conversation(school, ContactFactory(school=school), "web")
    message, _ = store_inbound(conversation, "hello")
    with override_settings(LLM_MODEL="scripted/test"):
        reply = asyncio.run(run_turn(conversation, [message], hotpath))
    steps = list(reply.steps.order_by("position"))
    kinds = [s.kind for s in steps]
    assert [s.position for s in steps] == list(range(len(steps))), "steps are numbered in order"
    assert kinds[-1] == "answer" and kinds.count("answer") == 1, "one answer, last"
    acts = [s.tool_call_id for s in steps if s.kind == "act"]
    observes = [s.tool_call_id for s in steps if s.kind == "observe"]
    assert sorted(acts) == sorted(observes) and len(set(acts)) == len(acts), "every act has exactly one observe"
    cycles = [s.cycle for s in steps if s.kind != "answer"]
    assert cycles == sorted(cycles), "cycles never go backwards"
    assert all(s.created_at <= t.created_at for s, t in zip(steps, steps[1:], strict=False))
