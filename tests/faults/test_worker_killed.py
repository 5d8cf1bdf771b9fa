"""Drill 5: a Celery worker is SIGKILLed in the middle of posting a reply to Chatwoot.

A real `celery worker` process (solo pool, so the kill takes the task with it)
runs against this test's PostgreSQL database and a Redis broker (DB 4). Chatwoot
(a fake on 127.0.0.1) receives the POST but the worker dies before the answer.
A new worker gets the unacked task again (acks_late) and must not post twice.
"""

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import redis
from django.conf import settings as django_settings
from django.db import connection

from chatbot.models import Message
from crm.models import ExternalCall, FailedTask
from tests.factories import ContactFactory, ConversationFactory, MessageFactory, SchoolFactory
from tests.faults.conftest import wait_for
from tests.integrations.fakes import FakeChatwoot

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]

BROKER = "redis://127.0.0.1:6379/4"
MESSAGES = r"/api/v1/accounts/1/conversations/123/messages"


class HeldChatwoot(FakeChatwoot):
    """Creates the first reply it is sent, then holds the HTTP answer back until released."""

    def __init__(self) -> None:
        super().__init__()
        self.landed = threading.Event()
        self.release = threading.Event()

    def handle(self, request):
        response = super().handle(request)
        if request.method == "POST" and request.path.endswith("/messages") and not self.landed.is_set():
            self.landed.set()
            self.release.wait(30)
        return response


@pytest.fixture
def held_chatwoot(http):
    fake = HeldChatwoot().install(http)
    yield fake
    fake.release.set()


@pytest.fixture
def broker():
    client = redis.Redis.from_url(BROKER)
    client.flushdb()
    yield BROKER
    client.flushdb()
    client.close()


class Worker:
    """`celery -A tests.faults.drill_celery worker` in a process (and session) of its own."""

    def __init__(self, env: dict, log: Path) -> None:
        self.log = log.open("ab")
        self.process = subprocess.Popen(  # noqa: S603 (a fixed command line)
            [sys.executable, "-m", "celery", "-A", "tests.faults.drill_celery", "worker", "-P", "solo",
             "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info", "-n", f"drill-{log.stem}@%h"],
            cwd=django_settings.BASE_DIR, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


def _worker_env(chatwoot_url: str, fake: FakeChatwoot) -> dict:
    db = connection.settings_dict
    return {**os.environ, "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
            "REDIS_URL": BROKER, "CELERY_BROKER_URL": BROKER, "CELERY_TASK_ALWAYS_EAGER": "False",
            "AGENT_WORKER": "False", "CHATWOOT_URL": chatwoot_url, "CHATWOOT_API_TOKEN": fake.bot_token,
            "CHATWOOT_USER_TOKEN": fake.user_token, "EXTERNAL_CALL_CLAIM_TIMEOUT_SECONDS": "1",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


@pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored")  # send_task goes to the real broker
def test_a_worker_killed_mid_post_is_replaced_and_the_reply_goes_out_once(http, held_chatwoot, broker, tmp_path):
    from config.celery import app

    school = SchoolFactory(chatwoot_inbox_ids=[3])
    conversation = ConversationFactory(school=school, contact=ContactFactory(school=school), channel="chatwoot",
                                       external_id="1:123")
    reply = MessageFactory(conversation=conversation, role="assistant", text="Your tour is booked.",
                           payload={"blocks": []})
    env = _worker_env(http.url_for("/chatwoot"), held_chatwoot)

    first = Worker(env, tmp_path / "first.log")
    try:
        with app.connection_for_write(broker) as conn:
            app.send_task("chatbot.tasks.deliver_chatwoot_message", args=[reply.pk], connection=conn)
        assert held_chatwoot.landed.wait(30), "the first worker never posted"
        first.kill()  # Chatwoot has the message; the worker never heard back
    finally:
        first.stop()
    held_chatwoot.release.set()
    call = ExternalCall.objects.get(key=f"chatwoot:message:{reply.pk}:0")
    assert call.state == "in_flight" and Message.objects.get(pk=reply.pk).delivered_at is None

    second = Worker(env, tmp_path / "second.log")
    try:
        wait_for(lambda: Message.objects.get(pk=reply.pk).delivered_at, 30, "the second worker to finish the task")
    finally:
        second.stop()

    assert len(held_chatwoot.posts()) == 1 and len(held_chatwoot.posted) == 1, "posted exactly once"
    call.refresh_from_db()
    assert (call.state, call.attempts, call.external_id) == ("done", 2, str(held_chatwoot.posted[0]["id"]))
    checked = held_chatwoot.calls("GET", MESSAGES)
    assert checked and checked[0].headers["api_access_token"] == held_chatwoot.user_token, "looked up, not reposted"
    assert not FailedTask.objects.exists()
