"""Fixtures for the integration tests: fake platforms on 127.0.0.1, the model, the agent worker."""

import asyncio
import contextlib
import threading
import time

import pytest
from channels.layers import DEFAULT_CHANNEL_LAYER, channel_layers
from channels.routing import ChannelNameRouter
from channels.worker import Worker
from django.conf import settings
from django.db import close_old_connections
from django.test import override_settings
from litellm import CustomLLM
from litellm.types.utils import ModelResponse

from chatbot.channels import worker as agent_worker
from chatbot.models import Conversation, Message
from plumbing.redis import get_redis
from tests.chatbot.scripted_model import Streamed, register
from tests.integrations.fakes import FakeChatwoot, FakePipedrive, FakeWhatsApp, start_server

SECRET = "hook-secret"


@pytest.fixture(scope="session")
def local_http():
    server = start_server()
    yield server
    server.clear()
    server.stop()


@pytest.fixture
def http(local_http):
    local_http.clear()
    yield local_http
    local_http.clear()


@pytest.fixture
def chatwoot(http, settings):
    fake = FakeChatwoot().install(http)
    settings.CHATWOOT_URL = http.url_for("/chatwoot")
    settings.CHATWOOT_API_TOKEN = fake.bot_token
    settings.CHATWOOT_USER_TOKEN = fake.user_token
    settings.CHATWOOT_WEBHOOK_SECRET = SECRET
    settings.CHATWOOT_HMAC_SECRET = ""
    return fake


@pytest.fixture
def whatsapp(http, settings):
    fake = FakeWhatsApp().install(http)
    settings.WHATSAPP_API_URL = http.url_for("/graph")
    settings.WHATSAPP_TOKEN = fake.token
    settings.WHATSAPP_APP_SECRET = "app-secret"
    settings.WHATSAPP_VERIFY_TOKEN = "verify-me"
    settings.WHATSAPP_PHONE_NUMBER_ID = "106540352242922"
    return fake


@pytest.fixture
def pipedrive(http, settings):
    fake = FakePipedrive().install(http)
    settings.PIPEDRIVE_API_URL = http.url_for("/pipedrive")
    settings.PIPEDRIVE_API_TOKEN = fake.token
    return fake


class EchoModel(Streamed, CustomLLM):
    """Answers "Answered: <each parent message of the turn, joined by ' | '>"; records every turn."""

    def __init__(self) -> None:
        super().__init__()
        self.turns: list[list[str]] = []
        self.delay = 0.0
        self.fail = 0  # raise on the next `fail` calls

    async def acompletion(self, *args, **kwargs) -> ModelResponse:
        if self.fail:
            self.fail -= 1
            raise RuntimeError("the model is down")
        await asyncio.sleep(self.delay)
        messages = kwargs["messages"]
        last_assistant = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=0)
        turn = [m["content"] for m in messages[last_assistant + 1:] if m["role"] == "user"]
        self.turns.append(turn)
        response = ModelResponse()
        response.choices[0].message.content = "Answered: " + " | ".join(turn)
        return response


@pytest.fixture
def echo_model():
    model = register("echo", EchoModel())
    with override_settings(LLM_MODEL="echo/test", CHAT_BURST_WINDOW_SECONDS=0.2):
        yield model


class WorkerThread:
    """`manage.py runworker agent`, in a thread: the real Worker reading the real channel layer."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
        self.server = Worker(application=ChannelNameRouter({agent_worker.AGENT_CHANNEL:
                                                            agent_worker.AgentWorker.as_asgi()}),
                             channels=[agent_worker.AGENT_CHANNEL], channel_layer=self.layer)
        self.task: asyncio.Task | None = None
        self.thread = threading.Thread(target=self._run, name="agent-worker", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.task = self.loop.create_task(self.server.arun())
        with contextlib.suppress(asyncio.CancelledError, Exception):  # redis-py turns the cancel into a timeout
            self.loop.run_until_complete(self.task)
        # Stop what is left (consumer instances, litellm's logging worker) and close the sockets, as a
        # stopping process would: a BRPOP left blocked on the server would swallow the next test's events.
        leftovers = asyncio.all_tasks(self.loop)
        for task in leftovers:
            task.cancel()
        self.loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
        with contextlib.suppress(Exception):
            self.loop.run_until_complete(self.layer.close_pools())
        self.loop.close()

    def stop(self) -> None:
        while self.task is None:
            time.sleep(0.01)
        # Cancel until the thread ends: redis-py may turn a cancel into a timeout the worker's receive loop survives,
        # and a worker left running takes (and drops) the next tests' turn events.
        deadline = time.monotonic() + 30
        while self.thread.is_alive() and time.monotonic() < deadline:
            with contextlib.suppress(RuntimeError):  # the loop closed between the check and the call
                self.loop.call_soon_threadsafe(self.task.cancel)
            self.thread.join(0.5)
        if self.thread.is_alive():
            raise RuntimeError("the agent worker thread did not stop: it would take the next tests' turn events")


class Turns:
    """Waits for dispatched turns to finish, wherever they run (in-process runner or agent worker)."""

    def settle(self, timeout: float = 90.0) -> None:  # a slow disk (fsync) under a long run: minutes, not seconds
        deadline = time.monotonic() + timeout
        quiet = 0
        while time.monotonic() < deadline:
            agent_worker.runner.wait_idle(timeout=max(0.1, deadline - time.monotonic()))
            busy = agent_worker.in_flight() or _unanswered().exists()
            close_old_connections()
            quiet = 0 if busy else quiet + 1
            if quiet >= 3:
                return
            time.sleep(0.1)
        waiting = list(_unanswered().values_list("id", "conversation__channel", "created_at"))
        raise AssertionError(f"turns did not settle in time: {agent_worker.in_flight()} turn(s) in flight in this "
                             f"process, {agent_worker.runner.pending()} in the in-process runner, messages not yet "
                             f"answered: {waiting}; {_layer_state()}")


def _layer_state() -> str:
    """Where turns go and who listens (for a turn that never ran)."""
    client = get_redis()
    keys = {key.decode(): client.type(key).decode() for key in client.scan_iter(count=1000)}
    workers = [thread.name for thread in threading.enumerate() if "worker" in thread.name]
    return (f"AGENT_WORKER={settings.AGENT_WORKER}, CHANNEL_LAYERS={settings.CHANNEL_LAYERS}, "
            f"redis keys={keys}, worker threads={workers}")


def _unanswered():
    return Message.objects.filter(role=Message.Role.USER, processed_at__isnull=True,
                                  conversation__status=Conversation.Status.ACTIVE)


@pytest.fixture
def turns(settings):
    worker = WorkerThread() if settings.AGENT_WORKER else None
    yield Turns()
    if worker is not None:
        worker.stop()
    agent_worker.runner.wait_idle(10)


def pytest_unconfigure(config):
    """The SQLite test database is a file per process (config/settings.py); drop its WAL side files too."""
    import os

    from django.conf import settings

    name = str(settings.DATABASES["default"].get("TEST", {}).get("NAME") or "")
    if name.endswith(f"-{os.getpid()}.sqlite3") and not os.path.exists(name):
        for suffix in ("-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                os.remove(name + suffix)
