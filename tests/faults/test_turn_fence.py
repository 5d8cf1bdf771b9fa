"""Drill 8: a turn that stalls past its lease is taken over, then wakes: the lease is a fence (issue 26).

A parent's Chatwoot message is taken by a turn (on the in-process runner) that stalls: its model call waits, and
its lease is not renewed (as when a process is paused: its renewals do not happen). The lease lapses; another
worker (this test's thread) takes the turn over (`take_over_lapsed_turns`) and answers the message. Then the
stalled turn wakes and tries to finish: its claim (the `processed_at` it set on the message) no longer holds, so
it stores nothing and sends nothing. Checked against the real PostgreSQL and Redis: one reply stored, one reply posted.
"""

import asyncio
import logging
import threading

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from chatbot import services
from chatbot.agent import memory
from chatbot.channels import worker
from chatbot.models import Message
from chatbot.services import answer_message
from config.celery import app as celery_app
from tests.chatbot.scripted_model import register
from tests.factories import SchoolFactory
from tests.faults.conftest import wait_for
from tests.integrations import payloads as p
from tests.integrations.conftest import SECRET, EchoModel

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]

LEASE_SECONDS = 1.5


class StallingModel(EchoModel):
    """The first call waits until `wake` is set; every call answers "Answered: <the turn's messages>"."""

    def __init__(self) -> None:
        super().__init__()
        self.stalled = threading.Event()
        self.wake = threading.Event()

    async def acompletion(self, *args, **kwargs):
        if not self.stalled.is_set():
            self.stalled.set()
            for _ in range(1200):
                if self.wake.is_set():
                    break
                await asyncio.sleep(0.05)
        return await super().acompletion(*args, **kwargs)


@pytest.fixture
def stalling_model():
    model = register("stalling", StallingModel())
    with override_settings(LLM_MODEL="stalling/test", CHAT_BURST_WINDOW_SECONDS=0, AGENT_WORKER=False,
                           SESSION_LOCK_TTL_SECONDS=LEASE_SECONDS):
        yield model
    model.wake.set()


async def _stalled(lock, school_id: int, contact_id: int) -> None:
    """A stalled process's lease keeping: nothing."""


def test_a_stalled_turn_taken_over_stores_and_sends_nothing_when_it_wakes(client, chatwoot, stalling_model,
                                                                           monkeypatch, caplog):
    SchoolFactory(chatwoot_inbox_ids=[p.INBOX_ID])
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)  # replies are posted as they are queued
    keep_lease = services._keep_lease
    monkeypatch.setattr(services, "_keep_lease", _stalled)  # the first turn's renewals never happen
    body = p.dumps(p.message_created("Do you have a school bus?"))
    assert client.post(f"/webhooks/chatwoot/{SECRET}/", data=body, content_type="application/json").status_code == 200
    assert stalling_model.stalled.wait(30), "the first turn reached the model"
    monkeypatch.setattr(services, "_keep_lease", keep_lease)  # every later turn renews its lease
    lapsed = wait_for(lambda: async_to_sync(memory.lapsed_leases)(), 10, "the stalled turn's lease to lapse")

    # Another worker: the stalled turn runs in this process, but in another worker it would not.
    monkeypatch.setattr(worker, "running_here", set())
    taken_over = async_to_sync(worker.take_over_lapsed_turns)()
    message = Message.objects.get(role="user")
    assert len(lapsed) == 1 and taken_over == [message.pk]
    async_to_sync(answer_message)(message.pk)
    wait_for(lambda: chatwoot.posted, 10, "the reply of the turn taken over to be posted")
    assert [m["content"] for m in chatwoot.posted] == ["Answered: Do you have a school bus?"]

    with caplog.at_level(logging.ERROR, logger="chatbot.services"):
        stalling_model.wake.set()
        assert worker.runner.wait_idle(30)
    assert "lost its claim" in caplog.text
    wait_for(lambda: not worker.in_flight(), 10, "the stalled turn to end")
    replies = Message.objects.filter(role="assistant").exclude(text="")
    assert [r.reply_to_id for r in replies] == [message.pk], "one reply stored"
    assert len(chatwoot.posted) == 1, "one reply sent"
    message.refresh_from_db()
    assert message.processed_at is not None
    assert len(stalling_model.turns) == 2, "both turns called the model; only one answer counts"
