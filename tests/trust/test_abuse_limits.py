"""Attacks 3 and 4 (medium): getting around the web chat's limits, and locking parents out with handshakes.

3. The limit was per contact and every new visitor token is a new contact: 5 tokens x
   10 messages in one minute all reached the model. Its fixed one-minute window let
   20 messages through across a minute boundary.
4. Every socket handshake created a contact and a conversation before any message;
   120 concurrent handshakes and a real parent could not connect.
"""

import asyncio
import time

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from chatbot.agent import memory
from chatbot.models import Conversation, Message
from config.asgi import application
from crm.models import Contact
from plumbing.redis import get_redis
from tests.factories import SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]

ATTACKER, PARENT = "203.0.113.7", "198.51.100.20"
LIMITS = {"CHAT_VISITOR_BURST": 20, "CHAT_VISITOR_REFILL_SECONDS": 3.0, "CHAT_RATE_LIMIT_PER_ADDRESS_PER_MINUTE": 30,
          "CHAT_RATE_LIMIT_PER_SCHOOL_PER_MINUTE": 600, "CHAT_HANDSHAKES_PER_ADDRESS_PER_MINUTE": 30}


@pytest.fixture(autouse=True)
def _limits_and_a_fast_model(echo_model):
    with override_settings(**LIMITS):
        yield


@pytest.fixture
async def school():
    return await database_sync_to_async(SchoolFactory)()


def socket(slug: str, address: str, token: str | None = None) -> WebsocketCommunicator:
    path = f"/ws/chat/{slug}/" + (f"?visitor={token}" if token else "")
    comm = WebsocketCommunicator(application, path, headers=[(b"host", b"127.0.0.1:8000"),
                                                            (b"origin", b"http://127.0.0.1:8000")])
    comm.scope["client"] = (address, 40000)
    return comm


async def open_session(slug: str, address: str) -> tuple[WebsocketCommunicator, dict]:
    comm = socket(slug, address)
    connected, _ = await comm.connect(timeout=10)
    assert connected
    return comm, await comm.receive_json_from(timeout=10)


async def send_all(comm: WebsocketCommunicator, texts: list[str]) -> list[dict]:
    """Send each message and collect its ack or error frame (other frames are skipped)."""
    answers = []
    for n, text in enumerate(texts):
        await comm.send_json_to({"type": "message", "text": text, "client_id": f"c{n}"})
        while True:
            frame = await comm.receive_json_from(timeout=10)
            if frame["type"] in ("ack", "error") and frame.get("client_id") == f"c{n}":
                answers.append(frame)
                break
    return answers


def _busy() -> bool:
    """A message not taken yet, or a turn still holding a contact's session lock (it may be storing its reply)."""
    if Message.objects.filter(role="user", processed_at__isnull=True).exists():
        return True
    return any(get_redis().exists(memory.lock_key(school_id, contact_id))
               for school_id, contact_id in Contact.objects.values_list("school_id", "pk"))


async def settled(timeout: float = 20) -> None:
    """Every turn has finished (none may outlive the test and hold a database connection)."""
    deadline = time.monotonic() + timeout
    while await database_sync_to_async(_busy)():
        assert time.monotonic() < deadline, "turns still running"
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)


async def stored_messages() -> int:
    return await database_sync_to_async(Message.objects.filter(role="user").count)()


async def test_new_visitor_tokens_do_not_multiply_the_limit(school, echo_model):
    accepted, refused = [], []
    for visitor in range(5):
        comm, _ = await open_session(school.slug, ATTACKER)  # no token: a new visitor (a new contact) each time
        texts = [f"visitor {visitor} message {n}" for n in range(10)]
        for text, answer in zip(texts, await send_all(comm, texts), strict=True):
            (accepted if answer["type"] == "ack" else refused).append(text)
        await comm.disconnect()
    await settled()
    assert len(accepted) == LIMITS["CHAT_RATE_LIMIT_PER_ADDRESS_PER_MINUTE"], "the address limit holds across tokens"
    assert await stored_messages() == len(accepted)
    seen = {text for turn in echo_model.turns for text in turn}
    assert seen == set(accepted) and not seen & set(refused), "refused messages never reach the model"

    parent, _ = await open_session(school.slug, PARENT)  # another address still gets through
    assert [a["type"] for a in await send_all(parent, ["hello"])] == ["ack"]
    await parent.disconnect()
    await settled()


async def test_the_address_window_slides_no_double_burst_at_a_minute_boundary(school, monkeypatch):
    now = [(time.time() // 60 + 1) * 60 - 0.5]  # half a second before a minute starts
    monkeypatch.setattr(time, "time", lambda: now[0])
    before, after = [], []
    for visitor in range(3):  # three visitor tokens from one address: ten messages each, within their bursts
        comm, _ = await open_session(school.slug, ATTACKER)
        before += await send_all(comm, [f"before {visitor} {n}" for n in range(10)])
        await comm.disconnect()
    now[0] += 1.0  # the next minute on the clock, one second later
    comm, _ = await open_session(school.slug, ATTACKER)
    after = await send_all(comm, [f"after {n}" for n in range(10)])
    assert [a["type"] for a in before] == ["ack"] * 30
    assert [a["type"] for a in after] == ["error"] * 10, "ten more let through across the minute boundary"
    assert {a["code"] for a in after} == {"rate_limited"}
    assert {a["retry_after"] for a in after} == {59}, "room again a minute after the first of the thirty"
    now[0] += 60.0  # a minute after the burst the address may write again
    assert [a["type"] for a in await send_all(comm, ["later"])] == ["ack"]
    await comm.disconnect()
    await settled()


async def test_an_honest_parent_clicking_and_typing_is_never_refused_but_a_flood_is(school, monkeypatch):
    """Issue 26: a parent's slot click, quick replies and confirming "yes" came within seconds of their typing,
    and the tenth in a minute was refused. A parent: five clicks at once, then a message every five seconds for
    three minutes. A script: as fast as it can, for a minute."""
    now = [time.time()]
    monkeypatch.setattr(time, "time", lambda: now[0])
    parent, _ = await open_session(school.slug, PARENT)
    answers = await send_all(parent, ["Tuesday 10:00", "yes", "Tom", "5", "yes"])
    for n in range(36):
        now[0] += 5.0
        answers += await send_all(parent, [f"and another question {n}"])
    assert [a["type"] for a in answers] == ["ack"] * 41
    await parent.disconnect()

    flood, _ = await open_session(school.slug, ATTACKER)
    sent = []
    with override_settings(CHAT_RATE_LIMIT_PER_ADDRESS_PER_MINUTE=1000):  # the visitor's own bucket alone
        for n in range(120):  # two a second for a minute
            now[0] += 0.5
            sent += await send_all(flood, [f"spam {n}"])
    accepted = sum(a["type"] == "ack" for a in sent)
    assert accepted == 20 + 19, "the burst, then one every three seconds of the 59.5 after it"
    assert sent[-1]["type"] == "error" and 1 <= sent[-1]["retry_after"] <= 3
    await flood.disconnect()
    await settled()


async def test_the_school_limit_caps_what_all_visitors_together_send(school):
    with override_settings(CHAT_RATE_LIMIT_PER_SCHOOL_PER_MINUTE=12):
        answers = []
        for n in range(3):
            comm, _ = await open_session(school.slug, f"192.0.2.{n + 1}")  # three networks, five messages each
            answers += await send_all(comm, [f"m{m}" for m in range(5)])
            await comm.disconnect()
    assert sum(a["type"] == "ack" for a in answers) == 12
    await settled()


async def test_a_handshake_flood_writes_nothing_and_does_not_lock_a_parent_out(school):
    flood = [socket(school.slug, ATTACKER) for _ in range(120)]
    results = await asyncio.gather(*(comm.connect(timeout=30) for comm in flood))
    assert all(connected for connected, _ in results)
    first_frames = await asyncio.gather(*(comm.receive_json_from(timeout=30) for comm in flood))
    sessions = [f for f in first_frames if f["type"] == "session"]
    refused = [f for f in first_frames if f["type"] == "error" and f["code"] == "rate_limited"]
    assert len(sessions) == LIMITS["CHAT_HANDSHAKES_PER_ADDRESS_PER_MINUTE"] and len(refused) == 90

    started = time.monotonic()
    parent, session = await open_session(school.slug, PARENT)
    assert session["type"] == "session" and time.monotonic() - started < 5, "a real parent connects at once"
    counts = await database_sync_to_async(lambda: (Contact.objects.count(), Conversation.objects.count()))()
    assert counts == (0, 0), "handshakes alone created contacts and conversations"
    await parent.disconnect()
    await asyncio.gather(*(comm.disconnect() for comm in flood))
