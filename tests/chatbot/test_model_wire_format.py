"""The loop against a local OpenAI-compatible server replaying recorded responses: the real wire format."""

import json

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from chatbot import hotpath
from chatbot.agent.loop import run_turn
from chatbot.services import current_conversation, store_inbound
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]

TOOL_CALL_ID = "call_Qm2r8x1"


def _completion(message: dict, finish_reason: str) -> dict:
    """A chat.completion body as the OpenAI API returns it (recorded shape)."""
    return {
        "id": "chatcmpl-9x1",
        "object": "chat.completion",
        "created": 1763800000,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 812, "completion_tokens": 24, "total_tokens": 836},
        "system_fingerprint": "fp_0ba0d124f1",
    }


RECORDED = [
    _completion({"role": "assistant", "content": None, "refusal": None, "tool_calls": [{
        "id": TOOL_CALL_ID, "type": "function",
        "function": {"name": "check_availability",
                     "arguments": json.dumps({"preferred_times": ["morning"]})},
    }]}, "tool_calls"),
    _completion({"role": "assistant", "content": "We have morning tours on Tuesday at 09:00 and 11:00.",
                 "refusal": None}, "stop"),
]


@database_sync_to_async
def _conversation():
    school = SchoolFactory()
    conversation = current_conversation(school, ContactFactory(school=school), "web")
    message, _ = store_inbound(conversation, "Any morning tours next week?")
    return conversation, message


async def test_openai_wire_format(httpserver):
    for body in RECORDED:
        httpserver.expect_ordered_request("/v1/chat/completions", method="POST").respond_with_json(body)
    conversation, message = await _conversation()
    with override_settings(LLM_MODEL="openai/gpt-4o-mini", LLM_API_BASE=httpserver.url_for("/v1"),
                           LLM_API_KEY="sk-test-not-a-real-key"):
        reply = await run_turn(conversation, [message], hotpath)

    first, second = (json.loads(request.get_data()) for request, _ in httpserver.log)
    assert httpserver.log[0][0].headers["Authorization"] == "Bearer sk-test-not-a-real-key"
    assert first["model"] == "gpt-4o-mini"
    assert (first["tool_choice"], second["tool_choice"]) == ("auto", "auto")
    everything = ["check_availability", "book_tour", "manage_tour_booking", "request_callback", "manage_callback",
                  "get_faq_answer",
                  "update_context", "check_unread_messages", "join_waitlist", "answer_seat_offer", "check_open_days"]
    # every tool on every call, in one order (the tool list is the start of the prompt a provider caches)
    assert [t["function"]["name"] for t in first["tools"]] == everything
    assert second["tools"] == first["tools"]
    schema = next(t for t in first["tools"] if t["function"]["name"] == "book_tour")["function"]["parameters"]
    assert "child_age" in schema["properties"]
    assert first["messages"][0]["role"] == "system" and "TODAY:" in first["messages"][0]["content"]
    assert first["messages"][-1] == {"role": "user", "content": "Any morning tours next week?"}

    assistant, tool = second["messages"][-2:]
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"][0]["id"] == TOOL_CALL_ID
    assert assistant["tool_calls"][0]["function"]["name"] == "check_availability"
    assert tool["role"] == "tool" and tool["tool_call_id"] == TOOL_CALL_ID
    assert json.loads(tool["content"])["status"] in ("success", "no_match")

    assert reply.text == "We have morning tours on Tuesday at 09:00 and 11:00."
    assert reply.prompt_tokens == 2 * 812 and reply.completion_tokens == 2 * 24
    assert reply.model == "openai/gpt-4o-mini"


def _llama_cpp_server(request):
    """Validates like llama.cpp's OpenAI-compatible server: every message's content must be a string (or a list
    of parts); a null content is refused with HTTP 400, as llama-server does for an assistant tool-call message."""
    from werkzeug import Response

    body = json.loads(request.get_data())
    for message in body["messages"]:
        if not isinstance(message.get("content"), str | list):
            return Response(json.dumps({"error": {"code": 400, "type": "invalid_request_error",
                                                  "message": "Expected 'content' to be a string or an array"}}),
                            status=400, content_type="application/json")
    if body["messages"][-1]["role"] == "tool":
        message = {"role": "assistant", "content": "Tuesday at 09:00 is open."}
        return Response(json.dumps(_completion(message, "stop")), content_type="application/json")
    return Response(json.dumps(_completion({"role": "assistant", "content": None, "tool_calls": [{
        "id": TOOL_CALL_ID, "type": "function",
        "function": {"name": "check_availability", "arguments": "{}"}}]}, "tool_calls")),
        content_type="application/json")


async def test_the_last_call_of_a_turn_keeps_the_tools_but_may_only_answer(httpserver):
    for body in RECORDED:
        httpserver.expect_ordered_request("/v1/chat/completions", method="POST").respond_with_json(body)
    conversation, message = await _conversation()
    with override_settings(LLM_MODEL="openai/gpt-4o-mini", LLM_API_BASE=httpserver.url_for("/v1"),
                           LLM_API_KEY="sk-test-not-a-real-key", LLM_MAX_CYCLES=2):
        reply = await run_turn(conversation, [message], hotpath)
    first, second = (json.loads(request.get_data()) for request, _ in httpserver.log)
    assert (first["tool_choice"], second["tool_choice"]) == ("auto", "none")
    assert second["tools"] == first["tools"]  # the same prefix: only the choice differs
    assert "CYCLES_LEFT: 1" in second["messages"][0]["content"]
    assert reply.text == "We have morning tours on Tuesday at 09:00 and 11:00."


async def test_a_self_hosted_llama_cpp_server_accepts_the_tool_call_history(httpserver):
    """The assistant message that only called a tool goes back to the server with content "", not null."""
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(_llama_cpp_server)
    conversation, message = await _conversation()
    with override_settings(LLM_MODEL="openai/qwen2.5-7b-instruct", LLM_API_BASE=httpserver.url_for("/v1"),
                           LLM_API_KEY="sk-no-key-required"):
        reply = await run_turn(conversation, [message], hotpath)

    assert len(httpserver.log) == 2
    assert [response.status_code for _, response in httpserver.log] == [200, 200]
    assistant = json.loads(httpserver.log[1][0].get_data())["messages"][-2]
    assert assistant["role"] == "assistant" and assistant["content"] == "" and assistant["tool_calls"]
    assert reply.text == "Tuesday at 09:00 is open." and reply.model == "openai/qwen2.5-7b-instruct"
