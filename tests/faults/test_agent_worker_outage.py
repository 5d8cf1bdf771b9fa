"""Drill 6: the `runworker agent` process when Redis, then PostgreSQL, go away and come back (issue 12, attack 5).

A real `manage.py runworker agent` process answers Chatwoot webhooks (a fake on
127.0.0.1) through its own redis-server and, for the second drill, through a TCP
proxy to PostgreSQL that the test can cut. channels' own worker exited when Redis
restarted, and webhook messages then waited for someone to restart it by hand.
Here the worker must stay up, reconnect, and answer the message that arrived
during the outage after it, exactly once.
"""

import contextlib
import select
import socket
import threading
import time

import pytest
from django.db import connection

from chatbot.models import Conversation, Message
from chatbot.tasks import redispatch_stale_inbound
from crm.models import FailedTask
from tests.factories import SchoolFactory
from tests.faults.conftest import AgentWorkerProcess, database_url, free_port, wait_for
from tests.integrations import payloads as p
from tests.integrations.conftest import SECRET

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


class TcpProxy:
    """127.0.0.1:<port> -> PostgreSQL; `cut()` drops every connection and refuses new ones until `restore()`."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self.up = threading.Event()
        self.up.set()
        self.pairs: list[tuple[socket.socket, socket.socket]] = []
        self.lock = threading.Lock()
        self.server = socket.create_server(("127.0.0.1", self.port))
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            if not self.up.is_set():
                client.close()  # PostgreSQL is "down": the connection is refused at once
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.pairs.append((client, upstream))
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()

    def _pipe(self, client: socket.socket, upstream: socket.socket) -> None:
        sockets = [client, upstream]
        try:
            while True:
                readable, _, _ = select.select(sockets, [], [], 0.5)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (upstream if sock is client else client).sendall(data)
        except (OSError, ValueError):
            return
        finally:
            for sock in sockets:
                with contextlib.suppress(OSError):
                    sock.close()

    def cut(self) -> None:
        self.up.clear()
        with self.lock:
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            for sock in pair:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                    sock.close()

    def restore(self) -> None:
        self.up.set()

    def close(self) -> None:
        self.stopped = True
        self.cut()
        self.server.close()


def post(client, text: str):
    body = p.dumps(p.message_created(text))
    response = client.post(f"/webhooks/chatwoot/{SECRET}/", data=body, content_type="application/json")
    assert response.status_code == 200, response.content
    return response


def replies_to(text: str) -> list[Message]:
    message = Message.objects.get(role="user", text=text)
    return list(Message.objects.filter(role="assistant", reply_to=message).exclude(text=""))


def answered(text: str) -> bool:
    return bool(Message.objects.filter(role="user", text=text, processed_at__isnull=False).exists()
                and replies_to(text))


def assert_each_answered_once(texts: list[str], chatwoot) -> None:
    for text in texts:
        assert len(replies_to(text)) == 1, f"{text!r}: {len(replies_to(text))} replies"
    replies = Message.objects.filter(role="assistant").exclude(text="")
    assert replies.count() == len(texts), "no other reply"
    posted = [m["content"] for m in chatwoot.posted]
    assert len(posted) == len(texts), f"each reply posted to Chatwoot once: {posted}"
    assert Conversation.objects.get().status == Conversation.Status.ACTIVE, "not handed to staff"
    assert not FailedTask.objects.exists()


def test_redis_restart_the_worker_reconnects_and_answers_what_arrived_during_the_outage(
        client, own_redis, chatwoot, worker_env, tmp_path, settings):
    SchoolFactory(chatwoot_inbox_ids=[p.INBOX_ID])
    worker = AgentWorkerProcess(worker_env, tmp_path / "agent.log")
    try:
        post(client, "Do you have a school bus?")
        wait_for(lambda: answered("Do you have a school bus?"), 60, "the worker to answer before the outage")
        time.sleep(2)  # that turn has ended: only a dispatch can bring the next message to the worker

        own_redis.kill()
        post(client, "What are the school fees?")  # stored; the dispatch over Redis fails (logged)
        time.sleep(3)  # the worker's listener fails, backs off, tries again
        assert worker.alive(), f"the agent worker exited when Redis went away:\n{worker.output()[-3000:]}"
        own_redis.start()

        # Beat runs the sweeper every minute; it finds the stored, unanswered message and dispatches it again.
        settings.INBOUND_REDISPATCH_AFTER_SECONDS = 0
        wait_for(lambda: redispatch_stale_inbound.apply().get() or answered("What are the school fees?"), 30,
                 "the sweeper to dispatch the message again")
        wait_for(lambda: answered("What are the school fees?"), 60, "the reconnected worker to answer it")
        time.sleep(1.5)
        assert redispatch_stale_inbound.apply().get() == 0, "nothing left to answer"
        time.sleep(1)
        assert worker.alive()
        assert "channel layer back" in worker.output()
        assert_each_answered_once(["Do you have a school bus?", "What are the school fees?"], chatwoot)
    finally:
        worker.stop()


def test_postgres_outage_the_worker_waits_and_answers_what_arrived_during_it(
        client, own_redis, chatwoot, worker_env, tmp_path):
    SchoolFactory(chatwoot_inbox_ids=[p.INBOX_ID])
    db = connection.settings_dict
    proxy = TcpProxy((db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432)))
    worker = AgentWorkerProcess({**worker_env, "DATABASE_URL": database_url(proxy.port)}, tmp_path / "agent.log")
    try:
        post(client, "Do you have a school bus?")
        wait_for(lambda: answered("Do you have a school bus?"), 60, "the worker to answer before the outage")
        time.sleep(2)  # that turn has ended

        proxy.cut()  # PostgreSQL is gone for the worker (this test still reaches it directly)
        post(client, "What are the school fees?")  # stored and dispatched: the worker cannot read it
        time.sleep(4)
        assert not answered("What are the school fees?")
        assert worker.alive()
        proxy.restore()

        wait_for(lambda: answered("What are the school fees?"), 60, "the worker to answer once PostgreSQL is back")
        time.sleep(2)
        assert worker.alive()
        assert "database unreachable" in worker.output()
        assert_each_answered_once(["Do you have a school bus?", "What are the school fees?"], chatwoot)
    finally:
        worker.stop()
        proxy.close()
