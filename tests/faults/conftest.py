"""Fault drills: real processes (redis-server, PostgreSQL backends, Celery workers) broken on purpose.

Only what lives outside the machine is faked (the model provider, Chatwoot,
Pipedrive), and only at the HTTP boundary. The integration fakes and fixtures
are reused from tests/integrations.
"""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from django.conf import settings as django_settings
from django.db import connection
from django.test import override_settings

from chatbot.models import Message
from plumbing.redis import reset_clients
from tests.chatbot.scripted_model import ScriptedModel, register
from tests.integrations.conftest import (  # noqa: F401 (fixtures reused by the drills)
    SECRET,
    chatwoot,
    echo_model,
    http,
    local_http,
    pipedrive,
    turns,
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(condition: Callable[[], object], timeout: float = 15.0, what: str = "the condition") -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


class RedisServer:
    """A redis-server of our own on a free port, without persistence: a restart comes back empty."""

    def __init__(self, directory) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(  # noqa: S603 (a fixed command line)
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.directory)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2)
        wait_for(lambda: _pings(client), 10, "redis-server to start")
        client.close()

    def kill(self) -> None:
        """SIGKILL: no shutdown, no save; every key (lock, queue, active context) is gone."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


@pytest.fixture
def own_redis(tmp_path):
    """Point the app (clients, locks, channel layer) at a redis-server this test can kill and restart."""
    server = RedisServer(tmp_path)
    server.start()
    layers = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                          "CONFIG": {"hosts": [{"address": server.url, "socket_timeout": 15}]}}}
    with override_settings(REDIS_URL=server.url, CHANNEL_LAYERS=layers):
        reset_clients()
        yield server
    reset_clients()
    server.kill()


class DrillModel(ScriptedModel):
    """The scripted model; a callable in the script runs (e.g. arms a fault) when the model reaches it."""

    def _next(self, messages):
        while self.script and callable(self.script[0]):
            self.script.pop(0)()
        return super()._next(messages)


@pytest.fixture
def drill_model(settings):
    model = register("drill", DrillModel())
    settings.LLM_MODEL, settings.CHAT_BURST_WINDOW_SECONDS = "drill/test", 0
    return model


class BackendKiller:
    """From a second connection: hold a lock the app will need, and terminate the app backend that queues on it.

    This is how a turn loses its PostgreSQL connection at an exact point (mid-
    transaction, mid-statement) without touching the code under test.
    """

    def __init__(self) -> None:
        params = connection.get_connection_params()
        params.pop("cursor_factory", None)
        self.params = {k: v for k, v in params.items() if k in ("dbname", "user", "password", "host", "port")}
        self.killed: list[int] = []
        self.errors: list[BaseException] = []
        self.threads: list[threading.Thread] = []

    def _connect(self, autocommit: bool):
        import psycopg

        return psycopg.connect(**self.params, autocommit=autocommit)

    def arm(self, lock_sql: str, params: tuple = ()) -> None:
        """Take the lock now; kill the first backend that waits for it (within 15 s), then let go."""
        holder = self._connect(autocommit=False)
        holder.execute(lock_sql, params)
        thread = threading.Thread(target=self._watch, args=(holder,), daemon=True)
        thread.start()
        self.threads.append(thread)

    def _watch(self, holder) -> None:
        try:
            with self._connect(autocommit=True) as watcher:
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline:
                    row = watcher.execute(
                        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> %s "
                        "AND wait_event_type = 'Lock' LIMIT 1", (holder.info.backend_pid,)).fetchone()
                    if row:
                        watcher.execute("SELECT pg_terminate_backend(%s)", (row[0],))
                        self.killed.append(row[0])
                        return
                    time.sleep(0.02)
        except BaseException as exc:  # reported by the test through `errors`
            self.errors.append(exc)
        finally:
            with contextlib.suppress(Exception):
                holder.rollback()
                holder.close()

    def join(self) -> None:
        for thread in self.threads:
            thread.join(20)
        assert not self.errors, self.errors


@pytest.fixture
def backend_killer():
    killer = BackendKiller()
    yield killer
    killer.join()


def answered_once(conversation_filter: dict, texts: list[str]) -> list[Message]:
    """Assert every parent message is processed and answered by exactly one echo reply; returns the replies."""
    parent = list(Message.objects.filter(role="user", **conversation_filter).order_by("created_at", "id"))
    replies = list(Message.objects.filter(role="assistant", **conversation_filter).exclude(text="")
                   .order_by("created_at", "id"))
    assert sorted(m.text for m in parent) == sorted(texts), "every message stored"
    assert all(m.processed_at is not None for m in parent), "every message taken by a turn"
    echoed = [text for r in replies for text in r.text.removeprefix("Answered: ").split(" | ")]
    assert sorted(echoed) == sorted(texts), f"each message answered exactly once: {[r.text for r in replies]}"
    return replies


class AgentWorkerProcess:
    """`python manage.py runworker agent`, in a process (and session) of its own, logging to a file."""

    def __init__(self, env: dict, log: Path) -> None:
        self.log_path = log
        self.log = log.open("ab")
        self.process = subprocess.Popen(  # noqa: S603 (a fixed command line)
            [sys.executable, "manage.py", "runworker", "agent"], cwd=django_settings.BASE_DIR, env=env,
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def alive(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.alive():
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.log.close()


def database_url(port: int | None = None) -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{port or db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def worker_env(own_redis, chatwoot, http, tmp_path):  # noqa: F811 (the fixtures imported above)
    """The agent worker's environment: this test's database, its own Redis, the fake Chatwoot, eager sends."""
    env = {**os.environ, "DATABASE_URL": database_url(), "REDIS_URL": own_redis.url, "AGENT_WORKER": "True",
           "CELERY_TASK_ALWAYS_EAGER": "True", "LLM_MODEL": "offline/policy", "CHAT_BURST_WINDOW_SECONDS": "0",
           "CHATWOOT_URL": http.url_for("/chatwoot"), "CHATWOOT_API_TOKEN": chatwoot.bot_token,
           "CHATWOOT_USER_TOKEN": chatwoot.user_token, "CHATWOOT_WEBHOOK_SECRET": SECRET,
           "DB_POOL_TIMEOUT_SECONDS": "2", "LOG_LEVEL": "INFO", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with override_settings(AGENT_WORKER=True, CHAT_BURST_WINDOW_SECONDS=0):
        yield env
