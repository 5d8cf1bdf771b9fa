"""A hosted model's answer streamed into the web chat (protocol v3), against a local OpenAI-compatible server.

The stand-in (`quality.bench.standin`) streams server-sent events as OpenAI does; litellm's own client reads
them (LLM_MODEL=openai/..., LLM_API_BASE at the stand-in), and the turn runs through the ASGI application as
behind daphne. Only the socket is in-process.
"""

import pytest
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from chatbot.agent.drafts import Draft
from chatbot.agent.model import warm_up_hosted
from chatbot.agent.tools import all_schemas
from chatbot.models import Message
from config.asgi import application
from quality.bench.standin import PROMPT_TOKENS, Break, Call, Say, StandIn
from tests.chatbot.test_web_consumer import TIMEOUT, _db, frames_until, replies, reply_count, send_message, settled
from tests.factories import SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]

ANSWER = "We have tours on Tuesday at 9:00 and Thursday at 14:00. Which one suits you?"


@pytest.fixture
async def school():
    return await _db(SchoolFactory)


def hosted(stand_in: StandIn):
    return override_settings(LLM_MODEL="openai/standin", LLM_API_BASE=stand_in.api_base, LLM_API_KEY="sk-local",
                             CHAT_BURST_WINDOW_SECONDS=0, CHAT_PROGRESS_AFTER_SECONDS=60)


async def open_chat(slug: str, protocol: int | None = 3) -> WebsocketCommunicator:
    path = f"/ws/chat/{slug}/" + (f"?protocol={protocol}" if protocol else "")
    comm = WebsocketCommunicator(application, path, headers=[(b"host", b"127.0.0.1:8000"),
                                                             (b"origin", b"http://127.0.0.1:8000")])
    connected, _ = await comm.connect(timeout=TIMEOUT)
    assert connected
    session = await comm.receive_json_from(timeout=TIMEOUT)
    assert session["type"] == "session" and session["protocol"] == 3
    return comm


async def converse(school, script: list, protocol: int | None = 3) -> tuple[list[dict], StandIn]:
    """One message in a new chat, every frame up to its reply."""
    with StandIn(script) as stand_in, hosted(stand_in):
        comm = await open_chat(school.slug, protocol)
        await send_message(comm, "Any tours next week?", "c1")
        frames = await frames_until(comm, reply_count(1))
        await settled({"school": school})
        await comm.disconnect()
    return frames, stand_in


def deltas(frames: list[dict], draft: int | None = None) -> list[dict]:
    return [f for f in frames if f["type"] == "reply_delta" and draft in (None, f["draft"])]


async def stored_reply() -> Message:
    return await _db(lambda: Message.objects.get(role=Message.Role.ASSISTANT))


async def test_the_answer_arrives_in_pieces_before_the_reply_which_is_their_text_and_is_stored(school):
    frames, stand_in = await converse(school, [Say(ANSWER, seconds=0.5)])

    [reply] = replies(frames)
    pieces = deltas(frames)
    assert len(pieces) >= 2  # written as it came, not at once
    assert frames.index(pieces[-1]) < frames.index(reply)
    assert "".join(p["text"] for p in pieces) == ANSWER == reply["text"]
    assert [p["at"] for p in pieces] == [sum(len(q["text"]) for q in pieces[:i]) for i in range(len(pieces))]
    assert reply["draft"] == "kept"
    stored = await stored_reply()
    assert stored.text == ANSWER and stored.pk == reply["id"]
    # the request streamed, asking for the usage; the tokens and cost come from the stream's last chunk
    [request] = stand_in.requests
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}
    assert (stored.prompt_tokens, stored.completion_tokens) == (PROMPT_TOKENS, len(ANSWER.split()))
    assert stored.model == "openai/standin"


async def test_a_tool_round_shows_no_text_and_the_answer_after_it_streams(school):
    frames, stand_in = await converse(school, [Call("check_availability"), Say(ANSWER)])

    [reply] = replies(frames)
    assert {p["draft"] for p in deltas(frames)} == {1}  # the tool call's round wrote nothing
    assert not [f for f in frames if f["type"] == "reply_dropped"]
    assert "".join(p["text"] for p in deltas(frames)) == ANSWER == reply["text"] == (await stored_reply()).text
    assert len(stand_in.requests) == 2 and all(r["stream"] for r in stand_in.requests)
    assert (await stored_reply()).prompt_tokens == 2 * PROMPT_TOKENS


async def test_text_before_a_tool_call_is_dropped_as_the_model_turns_to_the_tool(school):
    frames, _ = await converse(school, [Call("check_availability", text="Let me look that up."), Say(ANSWER)])

    [dropped] = [f for f in frames if f["type"] == "reply_dropped"]
    assert dropped == {"type": "reply_dropped", "draft": 1, "reason": "tool_calls"}
    assert "".join(p["text"] for p in deltas(frames, 1)) == "Let me look that up."
    assert frames.index(dropped) < frames.index(deltas(frames, 2)[0])
    [reply] = replies(frames)
    assert "".join(p["text"] for p in deltas(frames, 2)) == ANSWER == reply["text"]
    assert reply["draft"] == "kept"


async def test_a_stream_that_breaks_is_replaced_by_the_fallbacks_answer_and_the_reply_says_so(school):
    frames, stand_in = await converse(school, [Break(ANSWER, words=4), Break(ANSWER, words=2)])

    # each call's stream breaks (the offline policy's tool round leads to another call, which breaks too)
    dropped = [f for f in frames if f["type"] == "reply_dropped"]
    assert [f["draft"] for f in dropped] == list(range(1, len(dropped) + 1)) and len(dropped) >= 2
    assert {f["reason"] for f in dropped} == {"interrupted"}
    assert len(stand_in.requests) == len(dropped)
    assert "".join(p["text"] for p in deltas(frames, 1)) == "We have tours on"
    assert "".join(p["text"] for p in deltas(frames, 2)) == "We have"  # the retry, streamed again
    [reply] = replies(frames)
    assert reply["draft"] == "replaced"
    stored = await stored_reply()
    assert stored.text == reply["text"] and stored.text and not stored.text.startswith("We have")
    assert stored.model == "offline/policy"  # the offline policy answered, and the trace says why
    assert await _db(lambda: stored.steps.filter(kind="think", content__contains="failed twice").exists())


async def test_a_message_written_while_the_answer_streams_is_answered_with_it_and_the_draft_written_again(school):
    with StandIn([Say(ANSWER, seconds=1.0), Say("Both answered.")]) as stand_in, hosted(stand_in):
        comm = await open_chat(school.slug)
        await send_message(comm, "Any tours next week?", "c1")
        frames = await frames_until(comm, lambda frame, frames: frame["type"] == "reply_delta")
        await send_message(comm, "And is there a school bus?", "c2")
        frames += await frames_until(comm, reply_count(1))
        await settled({"school": school})
        await comm.disconnect()

    assert [f for f in frames if f["type"] == "reply_dropped"] == [
        {"type": "reply_dropped", "draft": 1, "reason": "more_messages"}]
    [reply] = replies(frames)
    assert "".join(p["text"] for p in deltas(frames, 2)) == "Both answered." == reply["text"]
    assert reply["draft"] == "kept"
    assert (await stored_reply()).text == "Both answered."  # one reply, for both messages
    asked = [m["content"] for m in stand_in.requests[-1]["messages"] if m["role"] == "user"]
    assert asked[-2:] == ["Any tours next week?", "And is there a school bus?"]


async def test_a_widget_of_protocol_2_gets_no_draft_and_the_same_reply(school):
    frames, stand_in = await converse(school, [Say(ANSWER)], protocol=None)

    assert [f["type"] for f in frames if f["type"] in ("reply_delta", "reply_dropped")] == []
    [reply] = replies(frames)
    assert reply["text"] == ANSWER == (await stored_reply()).text
    assert stand_in.requests[0]["stream"] is True  # the turn streamed all the same (other tabs may show it)


async def test_the_offline_policy_answers_at_once_with_no_draft(school):
    with override_settings(CHAT_BURST_WINDOW_SECONDS=0):
        comm = await open_chat(school.slug)
        await send_message(comm, "Any tours next week?", "c1")
        frames = await frames_until(comm, reply_count(1))
        await settled({"school": school})
        await comm.disconnect()
    assert deltas(frames) == [] and "draft" not in replies(frames)[0]


def test_a_draft_coalesces_pieces_written_while_one_is_on_its_way_and_says_what_the_reply_is_to_it():
    scheduled = []
    draft = Draft(scheduled.append)
    draft.write("Hello")
    draft.write(" there")
    assert [make() for make in scheduled] == [{"type": "reply_delta", "draft": 1, "at": 0, "text": "Hello there"}]
    draft.write(",")
    assert scheduled[-1]() == {"type": "reply_delta", "draft": 1, "at": 11, "text": ","}
    assert draft.outcome("Hello there,") == "kept"
    assert draft.outcome("Something else.") == "replaced"
    draft.drop("tool_calls")
    assert scheduled[-1]() == {"type": "reply_dropped", "draft": 1, "reason": "tool_calls"}
    assert draft.outcome("Hello there,") == ""  # taken off the screen: the reply replaces nothing
    draft.write("Next")
    draft.drop("interrupted")
    assert draft.outcome("Next") == "replaced"  # an interrupted draft stays on screen until the reply



def test_a_serving_process_loads_a_hosted_models_first_call_at_start_without_calling_it(caplog):
    with StandIn([Say(ANSWER)]) as stand_in, hosted(stand_in):
        warm_up_hosted(all_schemas())
        assert stand_in.requests == []  # a mock answer: nothing left the process
    with override_settings(LLM_MODEL="nosuchprovider/model"):
        warm_up_hosted(all_schemas())  # a model litellm does not know: the server starts all the same
    assert "warming up nosuchprovider/model failed" in caplog.text
