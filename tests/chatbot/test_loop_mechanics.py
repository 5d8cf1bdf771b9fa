"""The ReAct loop's mechanics, pinned with a scripted model behind litellm."""

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from chatbot import hotpath
from chatbot.agent.loop import GIVE_UP_TEXT, run_turn
from chatbot.models import Message, ReasoningStep
from chatbot.services import current_conversation, store_inbound
from tests.chatbot import scripted_model
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def scripted():
    model = scripted_model.install()
    with override_settings(LLM_MODEL="scripted/test", CHAT_BURST_WINDOW_SECONDS=0):
        yield model


@database_sync_to_async
def _conversation_with(text: str):
    school = SchoolFactory()
    contact = ContactFactory(school=school)
    conversation = current_conversation(school, contact, "web")
    message, _ = store_inbound(conversation, text)
    return conversation, message


@database_sync_to_async
def _steps(reply: Message) -> list[ReasoningStep]:
    return list(reply.steps.order_by("position"))


async def _turn(text: str = "hello"):
    conversation, message = await _conversation_with(text)
    steps_seen = []

    async def on_step(step):
        steps_seen.append(step)

    reply = await run_turn(conversation, [message], hotpath, on_step=on_step)
    return reply, await _steps(reply), steps_seen


async def test_answer_without_tools(scripted):
    scripted.script = [{"content": "Hello! How can I help?"}]
    reply, steps, streamed = await _turn()
    assert reply.text == "Hello! How can I help?"
    assert "gave_up" not in reply.payload
    assert [s.kind for s in steps] == ["answer"]
    assert [s["kind"] for s in streamed] == ["answer"]
    assert reply.prompt_tokens == 100 and reply.completion_tokens == 10
    assert reply.model == "scripted/test"


async def test_five_cycle_cap_gives_a_graceful_answer(scripted):
    scripted.script = [{"tool_calls": [("check_availability", {"preferred_times": [f"{9 + i}:00"]})]}
                       for i in range(10)]
    reply, steps, _ = await _turn("any tours?")
    assert reply.text == GIVE_UP_TEXT
    assert reply.payload["gave_up"] is True, "marked in the reply's data, not recognised by its text"
    assert len(scripted.calls) == 5
    assert sum(s.kind == "act" for s in steps) == 5
    assert sum(s.kind == "observe" for s in steps) == 5
    assert steps[-1].kind == "answer"


async def test_tool_error_is_fed_back_to_the_model(scripted):
    scripted.script = [
        {"tool_calls": [("book_tour", {"parent_name": "Jon", "parent_phone": "12"})]},
        {"content": "That number doesn't look right."},
    ]
    reply, steps, _ = await _turn("book me")
    tool_messages = [m for m in scripted.calls[1] if m["role"] == "tool"]
    assert len(tool_messages) == 1
    assert '"status": "error"' in tool_messages[0]["content"]
    assert "phone" in tool_messages[0]["content"]
    observe = next(s for s in steps if s.kind == "observe")
    assert observe.tool_result["status"] == "error"
    assert reply.text == "That number doesn't look right."


async def test_unknown_tool_and_malformed_arguments_are_answered_not_raised(scripted):
    scripted.script = [
        {"tool_calls": [("delete_all_bookings", {}), ("book_tour", "{not json")]},
        {"content": "Sorry about that."},
    ]
    reply, steps, _ = await _turn()
    results = [s.tool_result for s in steps if s.kind == "observe"]
    assert "no tool called" in results[0]["message"]
    assert "not valid JSON" in results[1]["message"]
    acts = [s for s in steps if s.kind == "act"]
    assert acts[1].tool_arguments == {"_raw": "{not json"}
    tool_messages = [m for m in scripted.calls[1] if m["role"] == "tool"]
    call_ids = [c["id"] for c in scripted.calls[1][-3]["tool_calls"]]
    assert [m["tool_call_id"] for m in tool_messages] == call_ids
    assert reply.text == "Sorry about that."


async def test_missing_required_argument_is_reported(scripted):
    scripted.script = [{"tool_calls": [("manage_tour_booking", {"booking_id": "T-ABCDEF"})]}, {"content": "ok"}]
    _, steps, _ = await _turn()
    result = next(s.tool_result for s in steps if s.kind == "observe")
    assert result == {"status": "missing_fields", "missing": ["action"], "message": "manage_tour_booking needs action."}


async def test_provider_error_retries_once_then_falls_back_to_offline_policy(scripted):
    scripted.script = [RuntimeError("upstream 500"), RuntimeError("upstream 500 again")]
    reply, steps, _ = await _turn("hello")
    assert len(scripted.calls) == 2
    assert reply.text
    assert "offline/policy" in reply.model
    assert "failed twice" in steps[0].content


async def test_retry_succeeds_on_second_attempt(scripted):
    scripted.script = [RuntimeError("timeout"), {"content": "Hi there!"}]
    reply, _, _ = await _turn()
    assert reply.text == "Hi there!"
    assert reply.model == "scripted/test"


async def test_independent_tool_calls_all_run_and_each_gets_its_result(scripted):
    scripted.script = [
        {"tool_calls": [("check_availability", {"preferred_times": ["morning"]}),
                        ("check_availability", {"preferred_times": ["afternoon"]})]},
        {"content": "Here are the slots."},
    ]
    _, steps, _ = await _turn()
    observed = [s for s in steps if s.kind == "observe"]
    acted = [s for s in steps if s.kind == "act"]
    assert {s.tool_call_id for s in observed} == {s.tool_call_id for s in acted}
    assert all(s.tool_result["status"] in ("success", "no_match") for s in observed)


async def test_nul_characters_from_parent_or_model_are_dropped_before_storing(scripted):
    """PostgreSQL text and JSONB cannot hold U+0000: it must never reach them."""
    scripted.script = [{"tool_calls": [("get_faq_answer", {"question": "lunch\x00?"})]}, {"content": "Yes\x00."}]
    reply, steps, _ = await _turn("hello\x00 there")
    act = next(s for s in steps if s.kind == "act")
    assert act.tool_arguments == {"question": "lunch?"}
    assert reply.text == "Yes."
    parent = await database_sync_to_async(lambda: reply.reply_to.text)()
    assert parent == "hello there"


async def _turn_with_progress(text: str):
    """A turn run with `run_prepared`, recording each progress batch and whether its steps were stored by then."""
    from chatbot.agent.loop import TurnInput, prepare_turn, run_prepared
    from plumbing.hops import database_hop

    conversation, message = await _conversation_with(text)
    turn = await database_hop(prepare_turn)(TurnInput(conversation, [message]), hotpath)
    batches = []

    async def on_steps(steps: list[dict]) -> None:
        stored = await database_sync_to_async(lambda: set(turn.reply.steps.values_list("position", flat=True)))()
        batches.append(([s["kind"] for s in steps], all(s["position"] in stored for s in steps)))

    finished = await run_prepared(turn, on_steps)
    return finished, batches


async def test_a_quick_read_only_round_is_stored_and_sent_with_the_answer(scripted):
    """Answered within CHAT_PROGRESS_AFTER_SECONDS of a round of a tool that only reads: no progress, and the
    round's steps are written with the answer (one write for the turn's steps)."""
    scripted.script = [{"content": "Let me look.", "tool_calls": [("check_availability", {})]},
                       {"content": "Here are the tours."}]
    finished, batches = await _turn_with_progress("any tours?")

    assert batches == []
    assert [s["kind"] for s in finished.steps] == ["think", "act", "observe", "answer"]
    assert [s.kind for s in await _steps(finished.reply)] == ["think", "act", "observe", "answer"]


@override_settings(CHAT_PROGRESS_AFTER_SECONDS=0.05)
async def test_a_slow_turn_streams_its_round_as_progress_once_it_is_stored(scripted):
    scripted.script = [{"content": "Let me look.", "tool_calls": [("check_availability", {})]},
                       {"content": "Here are the tours.", "delay": 0.4}]
    finished, batches = await _turn_with_progress("any tours?")

    assert batches == [(["think", "act", "observe"], True)], "progress, each step durable before it is shown"
    assert [s["kind"] for s in finished.steps] == ["answer"]
    assert [s.kind for s in await _steps(finished.reply)] == ["think", "act", "observe", "answer"]


@pytest.mark.parametrize("slow", ["tool", "store"])
async def test_a_writing_tool_past_its_timeout_has_its_round_stored_once(scripted, monkeypatch, slow):
    """A tool past TOOL_TIMEOUT_SECONDS goes on in its thread. Slow in the tool: it is given up (a timeout error),
    and what it then does never stores its round. Slow in storing its round (in its hop): that is waited for,
    with the tool's own result. Either way one round of steps and one reply, never both."""
    import asyncio
    import time as clock

    from chatbot.agent import tools
    from chatbot.agent.tools import registry

    def slowly(function):
        def run(*args, **kwargs):
            clock.sleep(0.3)
            return function(*args, **kwargs)
        return run

    if slow == "tool":
        monkeypatch.setitem(tools.TOOLS, "update_context", slowly(tools.TOOLS["update_context"]))
    else:
        monkeypatch.setattr(hotpath, "store_steps", slowly(hotpath.store_steps))
    monkeypatch.setattr(registry, "TOOL_TIMEOUT_SECONDS", 0.05)
    scripted.script = [{"tool_calls": [("update_context", {"field_to_update": "child_name", "new_value": "Tom"})]},
                       {"content": "Noted."}]
    reply, steps, _ = await _turn("my son is Tom")
    await asyncio.sleep(0.5)  # the tool's thread is done by now

    steps = await _steps(reply)
    assert [s.kind for s in steps] == ["think", "act", "observe", "answer"] and reply.text == "Noted."
    assert steps[2].tool_result["status"] == ("error" if slow == "tool" else "updated")
    assert await database_sync_to_async(Message.objects.filter(role=Message.Role.ASSISTANT).count)() == 1
