"""The web chat websocket (protocol v1), end to end through the ASGI application.

Every test connects through `config.asgi.application`, so the origin check, the
URL routing and the consumer run exactly as they do behind daphne. The model is
the scripted one (or a gated one for a turn that is still running), except for
one test that talks to the default offline policy.
"""

import asyncio
import math
import time

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.core import signing
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings
from litellm import CustomLLM
from litellm.types.utils import ModelResponse, Usage

from chatbot.channels.web.consumer import CLOSE_UNKNOWN_SCHOOL, VISITOR_SALT, ChatOriginValidator
from chatbot.models import Conversation, Message
from config.asgi import application
from crm.models import Contact
from tests.chatbot import scripted_model
from tests.chatbot.scripted_model import Streamed, register
from tests.factories import SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]

ORIGIN = "http://127.0.0.1:8000"
SCHOOL_SITE = "https://www.tampines-school.sg"
TIMEOUT = 10


# --- helpers -----------------------------------------------------------------------


@pytest.fixture
def scripted():
    model = scripted_model.install()
    with override_settings(LLM_MODEL="scripted/test", CHAT_BURST_WINDOW_SECONDS=0):
        yield model


@pytest.fixture
async def school():
    return await database_sync_to_async(SchoolFactory)()


def communicator(slug: str, token: str | None = None, origin: str | None = ORIGIN) -> WebsocketCommunicator:
    """A browser on `origin` (None: a client that sends no Origin) opening the chat served on 127.0.0.1:8000."""
    path = f"/ws/chat/{slug}/" + (f"?visitor={token}" if token else "")
    headers = [(b"host", b"127.0.0.1:8000")] + ([(b"origin", origin.encode())] if origin is not None else [])
    return WebsocketCommunicator(application, path, headers=headers)


async def open_chat(slug: str, token: str | None = None) -> tuple[WebsocketCommunicator, dict]:
    comm = communicator(slug, token)
    connected, _ = await comm.connect(timeout=TIMEOUT)
    assert connected
    session = await comm.receive_json_from(timeout=TIMEOUT)
    assert session["type"] == "session"
    return comm, session


async def frames_until(comm: WebsocketCommunicator, done, timeout: float = TIMEOUT) -> list[dict]:
    """Frames in arrival order, up to and including the first one for which done(frame, frames) is true."""
    frames: list[dict] = []
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"timed out; frames so far: {frames}")
        frame = await comm.receive_json_from(timeout=remaining)
        frames.append(frame)
        if done(frame, frames):
            return frames


def replies(frames: list[dict]) -> list[dict]:
    return [f for f in frames if f["type"] == "message" and f["role"] == "assistant"]


def reply_count(n: int):
    return lambda frame, frames: len(replies(frames)) >= n


async def send_message(comm: WebsocketCommunicator, text: str, client_id: str) -> None:
    await comm.send_json_to({"type": "message", "text": text, "client_id": client_id})


async def assert_still_open(comm: WebsocketCommunicator) -> None:
    """A ping gets its pong (after whatever else was already on its way)."""
    await comm.send_json_to({"type": "ping"})
    frames = await frames_until(comm, lambda frame, frames: frame["type"] == "pong")
    assert frames[-1] == {"type": "pong"}


def visitor_id(session: dict) -> str:
    return signing.loads(session["visitor_token"], salt=VISITOR_SALT)["visitor"]


@database_sync_to_async
def _db(fn):
    return fn()


async def settled(contact_filter: dict, timeout: float = TIMEOUT) -> None:
    """Wait until every parent message of the contact has been answered (so no turn outlives the test)."""
    deadline = time.monotonic() + timeout
    while await _db(lambda: Message.objects.filter(conversation__contact__in=Contact.objects.filter(**contact_filter),
                                                   role=Message.Role.USER, processed_at__isnull=True).exists()):
        if time.monotonic() > deadline:
            raise AssertionError("turns still pending")
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)  # the reply of the last turn is being stored and sent


# --- the session -------------------------------------------------------------------


async def test_session_frame_gives_a_new_visitor_a_token(school):
    comm, session = await open_chat(school.slug)
    assert session["protocol"] == 3
    assert session["new_visitor"] is True
    assert session["school"] == {"slug": school.slug, "name": school.name}
    assert session["max_message_chars"] == settings.CHAT_MAX_MESSAGE_CHARS
    assert session["history"] == []
    visitor = signing.loads(session["visitor_token"], salt=VISITOR_SALT)
    assert visitor["school"] == school.slug
    # Opening the chat writes nothing: the contact and the conversation come with the first message.
    assert session["conversation_id"] is None
    assert not await _db(lambda: Contact.objects.exists() or Conversation.objects.exists())
    await send_message(comm, "hello", "c-1")
    ack = await frames_until(comm, lambda f, fs: f["type"] == "ack")
    conversation = await _db(lambda: Conversation.objects.select_related("contact").get())
    assert conversation.channel == "web" and ack[-1]["message_id"]
    assert conversation.contact.web_visitor_id == visitor["visitor"]
    await settled({"school": school})
    await comm.disconnect()


async def test_reconnecting_with_the_token_resumes_the_conversation(school, scripted):
    scripted.script = [{"content": "Hello! How can I help?"}]
    comm, first = await open_chat(school.slug)
    await send_message(comm, "Hi there", "c-1")
    await frames_until(comm, reply_count(1))
    await comm.disconnect()

    comm, again = await open_chat(school.slug, first["visitor_token"])
    assert again["new_visitor"] is False
    assert visitor_id(again) == visitor_id(first), "the same visitor (the token is signed afresh at each use)"
    assert again["conversation_id"] == await _db(lambda: Conversation.objects.get().pk)
    assert [(m["role"], m["text"]) for m in again["history"]] == [
        ("user", "Hi there"), ("assistant", "Hello! How can I help?"),
    ]
    assert all({"id", "blocks", "created_at"} <= set(m) and m["type"] == "message" for m in again["history"])
    await comm.disconnect()


async def test_tampered_or_foreign_token_starts_a_new_visitor(school):
    comm, first = await open_chat(school.slug)
    await comm.disconnect()

    comm, tampered = await open_chat(school.slug, first["visitor_token"][:-2] + "xx")
    assert tampered["new_visitor"] is True
    assert tampered["visitor_token"] != first["visitor_token"]
    assert signing.loads(tampered["visitor_token"], salt=VISITOR_SALT) != signing.loads(first["visitor_token"],
                                                                                         salt=VISITOR_SALT)
    await comm.disconnect()

    other = await database_sync_to_async(SchoolFactory)()
    comm, foreign = await open_chat(other.slug, first["visitor_token"])  # a valid token, for another school
    assert foreign["new_visitor"] is True
    assert foreign["visitor_token"] != first["visitor_token"]
    await comm.disconnect()


async def test_unknown_or_inactive_school_closes_the_socket():
    inactive = await database_sync_to_async(SchoolFactory)(is_active=False)
    for slug in ("no-such-school", inactive.slug):
        comm = communicator(slug)
        connected, _ = await comm.connect(timeout=TIMEOUT)
        if connected:  # accepted, then closed with the code the widget understands
            closing = await comm.receive_output(timeout=TIMEOUT)
            assert closing == {"type": "websocket.close", "code": CLOSE_UNKNOWN_SCHOOL}
        await comm.disconnect()


async def test_bad_origin_is_rejected(school):
    comm = communicator(school.slug, origin="https://evil.example")
    connected, _ = await comm.connect(timeout=TIMEOUT)
    assert connected is False
    await comm.disconnect()


# --- embedding on a school's own website (CHAT_ALLOWED_ORIGINS) ----------------------------


async def connects(slug: str, origin: str | None) -> bool:
    comm = communicator(slug, origin=origin)
    connected, _ = await comm.connect(timeout=TIMEOUT)
    if connected:
        assert (await comm.receive_json_from(timeout=TIMEOUT))["type"] == "session"
    await comm.disconnect()
    return connected


async def test_a_listed_school_website_can_open_the_chat(school):
    assert await connects(school.slug, SCHOOL_SITE) is False, "not listed: refused, as before"
    with override_settings(CHAT_ALLOWED_ORIGINS=[SCHOOL_SITE, "http://localhost:3000"]):
        assert await connects(school.slug, SCHOOL_SITE) is True
        assert await connects(school.slug, "http://localhost:3000") is True
        assert await connects(school.slug, ORIGIN) is True, "pages on ALLOWED_HOSTS still can"


@pytest.mark.parametrize("origin", [
    "http://www.tampines-school.sg",  # another scheme
    "https://www.tampines-school.sg:8443",  # another port
    "https://tampines-school.sg",  # the parent domain
    "https://evil.www.tampines-school.sg",  # a subdomain
    "https://www.tampines-school.sg.evil.example",  # a suffix
    "null",  # sandboxed iframes, file:// pages
    "",
    None,  # no Origin at all
])
async def test_embedding_origins_match_exactly_and_a_missing_origin_is_refused(school, origin):
    with override_settings(CHAT_ALLOWED_ORIGINS=[SCHOOL_SITE]):
        assert await connects(school.slug, origin) is False


async def test_a_default_port_written_out_is_the_same_origin(school):
    with override_settings(CHAT_ALLOWED_ORIGINS=["HTTPS://WWW.Tampines-School.sg:443"]):
        assert await connects(school.slug, SCHOOL_SITE) is True


@pytest.mark.parametrize("value", ["*", "www.tampines-school.sg", "https://www.tampines-school.sg/chat",
                                   "https://*.tampines-school.sg", "ftp://files.tampines-school.sg"])
def test_anything_but_an_exact_origin_in_the_setting_stops_the_server(value):
    with (override_settings(CHAT_ALLOWED_ORIGINS=[SCHOOL_SITE, value]),
          pytest.raises(ImproperlyConfigured, match="CHAT_ALLOWED_ORIGINS")):
        ChatOriginValidator(application)


# --- messages ------------------------------------------------------------------------


async def test_a_quick_turn_sends_its_steps_with_the_reply_in_one_frame(school, scripted):
    """Answered within CHAT_PROGRESS_AFTER_SECONDS of the tool round: no separate steps frame, the reply carries
    every step of the turn."""
    scripted.script = [
        {"content": "Let me look.", "tool_calls": [("check_availability", {})]},
        {"content": "Here are the next open tours."},
    ]
    comm, _ = await open_chat(school.slug)
    await send_message(comm, "Any tours next week?", "q-1")
    frames = await frames_until(comm, reply_count(1))
    frames += [f async for f in _rest(comm)]

    assert [f["type"] for f in frames] == ["ack", "typing", "message"]
    assert [s["kind"] for s in frames[-1]["steps"]] == ["think", "act", "observe", "answer"]
    await comm.disconnect()


@override_settings(CHAT_PROGRESS_AFTER_SECONDS=0.05)
async def test_message_gets_ack_typing_reasoning_and_a_stored_reply(school, scripted):
    scripted.script = [
        {"content": "Let me look.", "tool_calls": [("check_availability", {})]},
        {"content": "Here are the next open tours.", "delay": 0.3},
    ]
    comm, session = await open_chat(school.slug)
    await send_message(comm, "Any tours next week?", "c-1")
    frames = await frames_until(comm, reply_count(1))
    kinds = [f["type"] for f in frames]

    ack = frames[0]
    assert ack["type"] == "ack" and ack["client_id"] == "c-1" and ack["duplicate"] is False
    # Protocol 2, a turn that takes its time: typing, one frame for the tool cycle's steps, and the reply
    # carrying its language and the last step (it ends the typing indicator, so no typing-off frame follows).
    assert kinds == ["ack", "typing", "reasoning_steps", "message"]
    assert frames[1]["active"] is True
    steps = frames[2]["steps"] + frames[-1]["steps"]
    assert [s["kind"] for s in steps] == ["think", "act", "observe", "answer"]
    assert steps[1]["tool_name"] == "check_availability"
    assert steps[2]["tool_result"]["status"] == "success"
    assert all({"cycle", "position", "content", "tool_arguments", "latency_ms"} <= set(s) for s in steps)
    assert [s["position"] for s in steps] == sorted(s["position"] for s in steps)

    reply = frames[-1]
    assert reply["role"] == "assistant" and reply["text"] == "Here are the next open tours."
    buttons = next(b for b in reply["blocks"] if b["type"] == "buttons")
    assert buttons["options"] and {"label", "value"} <= set(buttons["options"][0])

    stored = await _db(lambda: list(Message.objects.filter(conversation__school=school)
                                    .order_by("created_at", "id").values_list("pk", "role", "text", "processed_at")))
    assert [(role, text) for _, role, text, _ in stored] == [
        ("user", "Any tours next week?"), ("assistant", "Here are the next open tours."),
    ]
    assert stored[0][0] == ack["message_id"] and stored[0][3] is not None
    assert stored[1][0] == reply["id"]
    await comm.disconnect()


async def test_resent_client_id_is_acknowledged_as_duplicate_and_not_answered_again(school, scripted):
    scripted.script = [{"content": "First and only answer."}]
    comm, session = await open_chat(school.slug)
    await send_message(comm, "Hello", "same-id")
    first = await frames_until(comm, reply_count(1))

    await send_message(comm, "Hello", "same-id")  # the widget resends after a reconnect
    duplicate = await comm.receive_json_from(timeout=TIMEOUT)
    assert duplicate == {"type": "ack", "client_id": "same-id", "message_id": first[0]["message_id"],
                         "duplicate": True}
    assert await comm.receive_nothing(timeout=0.5)
    counts = await _db(lambda: (
        Message.objects.filter(conversation__school=school, role="user").count(),
        Message.objects.filter(conversation__school=school, role="assistant").count(),
    ))
    assert counts == (1, 1)
    assert len(scripted.calls) == 1
    await comm.disconnect()


async def test_a_new_visitors_first_messages_sent_at_once_share_one_contact_and_conversation(school, scripted):
    """The first message creates the visitor's contact without looking it up (the id was minted at the
    handshake); messages sent before it is stored wait for it rather than creating a second one."""
    comm, session = await open_chat(school.slug)
    for i in range(3):
        await send_message(comm, f"part {i}", f"burst-{i}")
    frames = await frames_until(comm, lambda frame, frames: sum(f["type"] == "ack" for f in frames) == 3)
    await settled({"school": school})

    assert sorted(f["client_id"] for f in frames if f["type"] == "ack") == ["burst-0", "burst-1", "burst-2"]
    counts = await _db(lambda: (Contact.objects.filter(school=school).count(),
                                Conversation.objects.filter(school=school).count(),
                                Message.objects.filter(conversation__school=school, role="user").count()))
    assert counts == (1, 1, 3)
    await comm.disconnect()


async def test_the_visitors_other_socket_may_create_the_contact_first(school, scripted):
    """The socket whose handshake minted the token creates the contact without a look-up, unless a second
    socket of the visitor (another tab, given the token) sent first: then it finds that contact."""
    first, session = await open_chat(school.slug)
    second, _ = await open_chat(school.slug, session["visitor_token"])
    await send_message(second, "from the second tab", "tab-2")
    await frames_until(second, lambda frame, frames: frame["type"] == "ack")
    await send_message(first, "from the first tab", "tab-1")
    acks = await frames_until(first, lambda frame, frames: frame["type"] == "ack" and frame["client_id"] == "tab-1")
    await settled({"school": school})

    assert acks[-1]["duplicate"] is False
    counts = await _db(lambda: (Contact.objects.filter(school=school).count(),
                                Conversation.objects.filter(school=school).count(),
                                Message.objects.filter(conversation__school=school, role="user").count()))
    assert counts == (1, 1, 2)
    await first.disconnect()
    await second.disconnect()


async def test_empty_and_oversize_messages_get_an_error_and_the_socket_stays_open(school, scripted):
    comm, session = await open_chat(school.slug)
    for text, code in (("", "empty"), ("   \n ", "empty"), (42, "empty"),
                       ("x" * (session["max_message_chars"] + 1), "too_long")):
        await comm.send_json_to({"type": "message", "text": text, "client_id": "bad"})
        error = await comm.receive_json_from(timeout=TIMEOUT)
        assert error["type"] == "error" and error["code"] == code and error["client_id"] == "bad"
        assert error["text"]
        await assert_still_open(comm)
    assert await _db(lambda: Message.objects.count()) == 0
    assert scripted.calls == []
    await comm.disconnect()


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("{not json", "bad_json"),
        ("[1, 2, 3]", "bad_frame"),
        ('"hello"', "bad_frame"),
        ('{"type": "shout", "text": "hi"}', "unknown_type"),
        ('{"text": "no type"}', "unknown_type"),
    ],
)
async def test_malformed_frames_get_an_error_and_the_socket_stays_open(school, frame, code):
    comm, _ = await open_chat(school.slug)
    await comm.send_to(text_data=frame)
    error = await comm.receive_json_from(timeout=TIMEOUT)
    assert error["type"] == "error" and error["code"] == code and error["text"]
    await assert_still_open(comm)
    await comm.disconnect()


async def test_binary_frame_gets_an_error(school):
    comm, _ = await open_chat(school.slug)
    await comm.send_to(bytes_data=b"\x00\x01")
    error = await comm.receive_json_from(timeout=TIMEOUT)
    assert error["type"] == "error" and error["code"] == "bad_frame"
    await assert_still_open(comm)
    await comm.disconnect()


async def test_a_message_past_the_burst_is_refused_and_says_when_to_send_it_again(school, scripted):
    comm, session = await open_chat(school.slug)
    limit = settings.CHAT_VISITOR_BURST
    for n in range(1, limit + 2):
        await send_message(comm, f"message {n}", f"m{n}")
    frames = await frames_until(comm, lambda f, fs: sum(g["type"] in ("ack", "error") for g in fs) == limit + 1)
    error = next(f for f in frames if f["type"] == "error")
    assert error["code"] == "rate_limited" and error["client_id"] == f"m{limit + 1}" and error["text"]
    # the bucket is empty: the next token comes one refill from now (a little less: the burst took a moment)
    assert 1 <= error["retry_after"] <= math.ceil(settings.CHAT_VISITOR_REFILL_SECONDS)
    await settled({"school": school})
    stored = await _db(lambda: Message.objects.filter(conversation__school=school, role="user").count())
    assert stored == limit
    await assert_still_open(comm)
    await comm.disconnect()


# --- a message while a turn runs ----------------------------------------------------------------


class GatedModel(Streamed, CustomLLM):
    """Holds its first answer until the test opens the gate; answers by echoing the parent messages it saw."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.calls: list[list[str]] = []

    async def acompletion(self, *args, **kwargs) -> ModelResponse:
        parents = [m["content"] for m in kwargs["messages"] if m["role"] == "user"]
        self.calls.append(parents)
        if len(self.calls) == 1:
            await self.gate.wait()
        response = ModelResponse()
        response.choices[0].message.content = "Answered: " + " / ".join(parents)
        response.choices[0].message.tool_calls = None
        response.choices[0].finish_reason = "stop"
        response.usage = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
        return response

    def completion(self, *args, **kwargs):
        raise NotImplementedError


@pytest.fixture
def gated():
    import litellm

    model = register("gated", GatedModel())
    with override_settings(LLM_MODEL="gated/test", CHAT_BURST_WINDOW_SECONDS=0):
        yield model
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != "gated"]


def _texts(content) -> str:
    return content if isinstance(content, str) else " ".join(part.get("text", "") for part in content)


async def test_message_sent_while_a_turn_runs_is_queued_then_answered(school, gated):
    comm, session = await open_chat(school.slug)
    await send_message(comm, "Do you run tours on Fridays?", "q-1")
    frames = await frames_until(comm, lambda f, fs: f["type"] == "typing" and f["active"])
    while not gated.calls:  # the model is now holding the first turn
        await asyncio.sleep(0.01)

    await send_message(comm, "And what are the fees?", "q-2")
    frames += await frames_until(comm, lambda f, fs: f["type"] == "queued")
    acks = {f["client_id"]: f["message_id"] for f in frames if f["type"] == "ack"}
    assert set(acks) == {"q-1", "q-2"}
    queued = frames[-1]
    assert queued["message_id"] == acks["q-2"] and queued["text"]
    assert not replies(frames)

    gated.gate.set()
    frames += await frames_until(comm, reply_count(1))
    await settled({"school": school})
    frames += [f async for f in _rest(comm)]

    # Nothing lost, each parent message answered exactly once, in the order sent.
    answered = replies(frames)
    assert len(answered) == 1
    assert "Do you run tours on Fridays?" in answered[0]["text"] and "And what are the fees?" in answered[0]["text"]
    last_call = [_texts(c) for c in gated.calls[-1]]
    assert last_call.index("Do you run tours on Fridays?") < last_call.index("And what are the fees?")
    assert sum("And what are the fees?" in _texts(c) for call in gated.calls for c in call) == 1
    user_rows = await _db(lambda: list(Message.objects.filter(conversation__school=school, role="user")
                                       .order_by("created_at", "id").values_list("pk", "processed_at")))
    assert [pk for pk, _ in user_rows] == [acks["q-1"], acks["q-2"]]
    assert all(processed for _, processed in user_rows)
    assistant = await _db(lambda: Message.objects.filter(conversation__school=school,
                                                         role="assistant").count())
    assert assistant == 1
    await comm.disconnect()


async def _rest(comm: WebsocketCommunicator):
    while not await comm.receive_nothing(timeout=0.2):
        yield await comm.receive_json_from()


async def test_two_sockets_of_one_visitor_both_see_the_reply(school, scripted):
    scripted.script = [{"content": "Hello to both tabs."}]
    first, session = await open_chat(school.slug)
    second, again = await open_chat(school.slug, session["visitor_token"])  # a second tab, before any message
    assert visitor_id(again) == visitor_id(session) and again["conversation_id"] is None
    await send_message(first, "Hi", "t-1")
    mine = await frames_until(first, reply_count(1))
    theirs = await frames_until(second, reply_count(1))
    assert replies(mine)[0]["id"] == replies(theirs)[0]["id"]
    assert not [f for f in theirs if f["type"] == "ack"]  # acks go to the sending socket only
    await first.disconnect()
    await second.disconnect()


# --- the default model -------------------------------------------------------------------------


def _offline_ready() -> bool:
    try:
        from chatbot.agent.offline import provider  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _offline_ready(), reason="the offline policy model is not there yet")
@override_settings(CHAT_BURST_WINDOW_SECONDS=0)
async def test_offline_policy_answers_a_tour_request_with_slot_buttons(school):
    comm, _ = await open_chat(school.slug)
    await send_message(comm, "Hello, I'd like to book a campus tour next week please", "o-1")
    frames = await frames_until(comm, reply_count(1), timeout=30)
    reply = replies(frames)[0]
    assert reply["text"]
    assert any(b["type"] == "buttons" and b["options"] for b in reply["blocks"])
    assert any(step["kind"] == "act" for f in frames for step in f.get("steps", []))
    await comm.disconnect()


async def test_the_widget_is_told_the_parents_language_and_its_texts_in_it(school):
    """A Chinese message: the reply frame says it is in Chinese and carries the widget's words in Chinese, and
    the visitor's next session opens in Chinese."""
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0):
        comm, session = await open_chat(school.slug)
        assert "language" not in session  # a new visitor: the widget's own English
        await send_message(comm, "Hi 你好", "z-1")
        frames = await frames_until(comm, reply_count(1), timeout=30)
        reply = replies(frames)[0]
        assert reply["language"] == "zh-hans"
        assert reply["texts"]["Type your message…"] == "请输入您的信息…"
        await comm.disconnect()
        comm, again = await open_chat(school.slug, session["visitor_token"])
        assert again["language"] == "zh-hans" and again["texts"]["Send message"] == "发送信息"
        await comm.send_json_to({"type": "message", "text": " ", "client_id": "blank"})
        error = await comm.receive_json_from(timeout=TIMEOUT)  # the widget's errors are in its language too
        assert (error["code"], error["text"]) == ("empty", "请输入信息。")
        await comm.disconnect()


async def test_progress_reaches_other_processes_sockets_a_reply_found_and_every_reply_looks_again():
    """A frame reaches the visitor's sockets in other processes over the channel layer. Progress frames (typing,
    steps) go to those the last reply found; a reply looks them up again, so a tab opened in another process
    since then gets the reply (and the next turn's progress)."""
    from channels.layers import get_channel_layer

    from chatbot.channels.web import consumer as web

    layer = get_channel_layer()
    group = web.visitor_group(1, "v-remote")
    await web.send_to_visitor(1, "v-remote", {"type": "message", "text": "first"})  # nobody elsewhere yet
    elsewhere = await layer.new_channel()
    await layer.group_add(group, elsewhere)

    await web.send_to_visitor(1, "v-remote", {"type": "typing", "active": True}, fresh=False)
    await web.send_to_visitor(1, "v-remote", {"type": "message", "text": "second"})
    await web.send_to_visitor(1, "v-remote", {"type": "typing", "active": True}, fresh=False)

    received = [(await layer.receive(elsewhere))["payload"]["type"] for _ in range(2)]
    assert received == ["message", "typing"]
    await layer.group_discard(group, elsewhere)


async def test_a_reply_goes_to_the_sockets_its_turn_read_with_the_lock_release():
    """`found` (read in the turn's last Redis step, after the reply was stored) is used as the group's sockets in
    other processes: no look-up of its own."""
    from channels.layers import get_channel_layer

    from chatbot.channels.web import consumer as web

    layer = get_channel_layer()
    elsewhere = await layer.new_channel()  # not in the group's table: only `found` names it

    await web.send_to_visitor(1, "v-found", {"type": "message", "text": "hi"}, True, [elsewhere.encode()])

    assert (await layer.receive(elsewhere))["payload"]["text"] == "hi"
