"""Drill 3: the model provider fails at the HTTP boundary (500s, timeouts, malformed bodies and tool calls).

A local OpenAI-compatible server stands in for the provider; the agent talks
to it through litellm exactly as to api.openai.com (LLM_MODEL=openai/...).
"""

import datetime as dt
import json
import threading
import time

import pytest
from channels.db import database_sync_to_async
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from bookings.models import TourBooking
from chatbot.models import Message, ReasoningStep
from chatbot.services import receive
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]


def completion(content: str | None = None, tool_calls: list[tuple[str, str]] = ()) -> dict:
    """A chat.completion body as the OpenAI API returns it; tool call arguments are sent as given (raw)."""
    message = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = [{"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": args}}
                                 for n, (name, args) in enumerate(tool_calls)]
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1763800000, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}


def events(body: dict) -> bytes:
    """A chat.completion body as the OpenAI API streams it: server-sent chunks (the text, each tool call), the
    finish reason, the usage, `[DONE]`."""
    choice = body["choices"][0]
    message = choice["message"]
    deltas = [{"role": "assistant", "content": message.get("content") or ""}]
    deltas += [{"tool_calls": [{"index": n, **call}]} for n, call in enumerate(message.get("tool_calls") or [])]
    chunk = {key: body[key] for key in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    lines = [chunk | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    lines += [chunk | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
              chunk | {"choices": [], "usage": body["usage"]}]
    return b"".join(b"data: " + json.dumps(line).encode() + b"\n\n" for line in lines) + b"data: [DONE]\n\n"


class Provider:
    """Answers each POST /v1/chat/completions with the next scripted behaviour; records every request."""

    def __init__(self) -> None:
        self.script: list = []
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        # A server of its own, threaded: a request left hanging must not delay the next one (or the next test).
        self.server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
        self.server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(self.handle)
        self.server.start()
        self.url = self.server.url_for("/v1")

    def stop(self) -> None:
        self.stopping.set()
        self.server.clear()
        self.server.stop()

    def handle(self, request: Request) -> Response:
        with self.lock:
            self.requests.append(json.loads(request.get_data()))
            step = self.script.pop(0) if self.script else completion("Fine.")
            streamed = self.requests[-1].get("stream")
        if isinstance(step, int):
            return Response(json.dumps({"error": {"message": "The server had an error", "type": "server_error"}}),
                            status=step, content_type="application/json")
        if isinstance(step, float):  # hang past the client's timeout
            self.stopping.wait(step)
            return Response(json.dumps(completion("too late")), content_type="application/json")
        if isinstance(step, bytes):
            return Response(step, content_type="application/json")
        if streamed:  # the web chat asks for the answer as it is written
            return Response(events(step), content_type="text/event-stream")
        return Response(json.dumps(step), content_type="application/json")


@pytest.fixture
def provider(settings):
    fake = Provider()
    settings.LLM_MODEL, settings.LLM_API_BASE, settings.LLM_API_KEY = "openai/gpt-4o-mini", fake.url, "sk-test-not-real"
    settings.LLM_TIMEOUT_SECONDS, settings.CHAT_BURST_WINDOW_SECONDS = 1.0, 0
    yield fake
    fake.stop()


@pytest.fixture
def world(next_weekday):
    school = SchoolFactory(time_zone="Asia/Singapore")
    return school, ContactFactory(school=school), next_weekday(school, 1)


def _booking_arguments(day: dt.date, **more) -> str:
    return json.dumps({"parent_name": "Mei Lin Tan", "parent_phone": "+6591234567", "child_name": "Tom",
                       "child_age": 5, "preferred_date": day.isoformat(), "preferred_time": "09:00", **more})


def _turn(contact) -> dict:
    """The latest turn: its reply and steps, and the contact's unanswered messages and bookings."""
    reply = Message.objects.filter(conversation__contact=contact, role="assistant").exclude(text="").latest("pk")
    steps = list(ReasoningStep.objects.filter(message=reply).order_by("position"))
    return {"reply": reply, "steps": steps,
            "unanswered": Message.objects.filter(conversation__contact=contact, role="user",
                                                 processed_at__isnull=True).count(),
            "bookings": TourBooking.objects.filter(contact=contact).count()}


async def test_500s_and_a_malformed_body_fall_back_to_the_offline_policy_and_say_so(world, provider):
    school, contact, _ = world
    # Every request of the first model call fails (the SDK's hidden retries included), then the provider is back.
    provider.script = [500, b'{"id": "chatcmpl-1", "choices": [', 502, 500, 503, 500]
    await receive(school=school, contact=contact, channel="web", text="Do you have a school bus?")

    turn = await database_sync_to_async(_turn)(contact)
    assert turn["unanswered"] == 0 and turn["reply"].text, "the parent is answered"
    assert turn["reply"].model.startswith("offline/policy"), "the reply names the model that answered"
    fallback = turn["steps"][0]
    assert fallback.kind == "think" and fallback.model == "offline/policy"
    assert "openai/gpt-4o-mini failed twice" in fallback.content and "offline policy answered" in fallback.content

    provider.script = [completion("Yes, two bus routes.")]  # the provider is back: the next turn uses it
    await receive(school=school, contact=contact, channel="web", text="And after-school care?")
    last = await database_sync_to_async(lambda: Message.objects.filter(role="assistant").latest("created_at"))()
    assert (last.text, last.model) == ("Yes, two bus routes.", "openai/gpt-4o-mini")


async def test_a_provider_that_hangs_is_cut_off_and_the_parent_answered(world, provider, settings):
    school, contact, _ = world
    settings.LLM_TIMEOUT_SECONDS = 0.3
    provider.script = [1.0] * 6
    await receive(school=school, contact=contact, channel="web", text="Do you have a school bus?")

    turn = await database_sync_to_async(_turn)(contact)
    assert turn["unanswered"] == 0 and turn["reply"].model.startswith("offline/policy")
    assert "Timeout" in turn["steps"][0].content, "the trace names the timeout"


@pytest.mark.parametrize("fault", [500, 1.0], ids=["http-500", "hang"])
async def test_one_retry_then_the_offline_policy(world, provider, settings, fault):
    """The documented policy, at the wire: two requests, then the offline answer; a hang costs two timeouts."""
    school, contact, _ = world
    settings.LLM_TIMEOUT_SECONDS = 0.3
    provider.script = [fault, fault, completion("a third request answered")]
    started = time.monotonic()
    await receive(school=school, contact=contact, channel="web", text="Do you have a school bus?")
    elapsed = time.monotonic() - started

    turn = await database_sync_to_async(_turn)(contact)
    assert provider.requests[2]["messages"][-1]["role"] == "tool", "the third request is the next cycle's"
    assert turn["steps"][0].model == "offline/policy" and "failed twice" in turn["steps"][0].content
    assert elapsed < 2 * 0.3 + 1


async def test_malformed_tool_calls_are_answered_as_errors_and_one_tour_is_booked(world, provider):
    school, contact, day = world
    provider.script = [
        completion(tool_calls=[("book_tour", '{"parent_name": "Mei Lin Tan", "child_name": ')]),  # cut-off JSON
        completion(tool_calls=[("book_a_tour", "{}"), ("book_tour", '["not", "an", "object"]')]),
        completion(tool_calls=[("book_tour", _booking_arguments(day))]),
        *[500] * 6,  # then the provider fails: the offline policy must not book the tour a second time
    ]
    await receive(school=school, contact=contact, channel="web", text="Book Tuesday 9am for Tom, I'm Mei Lin")

    turn = await database_sync_to_async(_turn)(contact)
    assert turn["unanswered"] == 0 and turn["bookings"] == 0  # read back first: nothing booked without a yes
    observed = [(s.tool_name, s.tool_result.get("status")) for s in turn["steps"] if s.kind == "observe"]
    assert observed[:4] == [("book_tour", "error"), ("book_a_tour", "error"), ("book_tour", "error"),
                            ("book_tour", "confirm")], "each malformed call got an error result, in the trace"
    assert "not valid JSON" in turn["steps"][2].content or "not valid JSON" in str(turn["steps"][2].tool_result)
    assert any(s.kind == "think" and "failed twice" in s.content for s in turn["steps"]), "the fallback is traced"

    provider.script = [completion(tool_calls=[("book_tour", _booking_arguments(day, confirmed=True))]), *[500] * 6]
    await receive(school=school, contact=contact, channel="web", text="yes please")
    turn = await database_sync_to_async(_turn)(contact)
    observed = [(s.tool_name, s.tool_result.get("status")) for s in turn["steps"] if s.kind == "observe"]
    assert turn["unanswered"] == 0 and turn["bookings"] == 1
    assert observed[0] == ("book_tour", "success")
    assert ("book_tour", "success") not in observed[1:], "no second booking after the fallback"

