"""Issue 26 (low): on SIGTERM a uvicorn worker waited over 80 s for background tasks and needed SIGKILL.

What kept it (a dump of the event loop's tasks after SIGTERM): the ASGI task of a web chat socket whose turn was
still running (waiting for the model), itself waiting for its channel-layer receive (channels_redis) to finish
cancelling; uvicorn waits for every connection's task, with no bound unless told. The Procfile's web
command now bounds it (`--timeout-graceful-shutdown`, WEB_SHUTDOWN_TIMEOUT_SECONDS, 10): past it the tasks are
cancelled. A turn cut short has claimed its messages under a lease that lapses, and the agent worker takes it
over (tests/faults/test_turn_lease.py); nothing is lost.

The test starts the real server with the Procfile's own command line, against this test's PostgreSQL and Redis,
with a model provider that never answers, opens a socket as a phone on a bad network does (it completes the
handshake and sends a message, then reads nothing more: the server's close is never answered), and sends
SIGTERM mid-turn; Celery eager, so the embedded scheduler runs in the process as under `make run`'s defaults
(the layout where the hang reproduces here). Without the bound the process was still running after 13 s (and
after 100 s in a manual run); with it, it exits in about a second.
"""

import base64
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

import pytest
from django.conf import settings as django_settings
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.factories import SchoolFactory
from tests.faults.conftest import database_url, free_port, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]

SHUTDOWN_SECONDS = 3


def procfile_command(name: str) -> str:
    line = next(line for line in (django_settings.BASE_DIR / "Procfile").read_text().splitlines()
                if line.startswith(f"{name}:"))
    return line.split(":", 1)[1].strip()


@pytest.fixture
def silent_provider():
    """A model provider that holds every request until the test ends."""
    done, asked = threading.Event(), threading.Event()

    def hold(request: Request) -> Response:
        asked.set()
        done.wait(120)
        return Response(json.dumps({"error": {"message": "gone"}}), status=500, content_type="application/json")

    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(hold)
    server.start()
    yield server.url_for("/v1"), asked
    done.set()
    server.clear()
    server.stop()


def test_sigterm_mid_turn_stops_the_web_process_within_its_bound(silent_provider, tmp_path):
    school = SchoolFactory()
    provider_url, asked = silent_provider
    port = free_port()
    command = procfile_command("web")
    assert re.search(r"--timeout-graceful-shutdown \$\{WEB_SHUTDOWN_TIMEOUT_SECONDS:-\d+\}", command)
    env = {**os.environ, "PORT": str(port), "WEB_CONCURRENCY": "1",
           "WEB_SHUTDOWN_TIMEOUT_SECONDS": str(SHUTDOWN_SECONDS),
           "DATABASE_URL": database_url(), "REDIS_URL": django_settings.REDIS_URL, "DEBUG": "True",
           "SECRET_KEY": "x", "ALLOWED_HOSTS": "127.0.0.1", "CELERY_TASK_ALWAYS_EAGER": "True",
           "LLM_MODEL": "openai/gpt-4o-mini", "LLM_API_BASE": provider_url,
           "LLM_API_KEY": "sk-test-not-real", "CHAT_BURST_WINDOW_SECONDS": "0",
           "PATH": f"{django_settings.BASE_DIR / '.venv' / 'bin'}:{os.environ['PATH']}"}
    log = (tmp_path / "web.log").open("wb")
    web = subprocess.Popen(["/bin/sh", "-c", f"exec {command}"], cwd=django_settings.BASE_DIR, env=env,  # noqa: S603
                           stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    client, idle = None, []
    try:
        client = wait_for(lambda: _open_socket(port, school.slug), 60, "the web process to serve the chat")
        idle = [_open_socket(port, school.slug) for _ in range(4)]  # other visitors, reading nothing either
        client.sendall(_frame({"type": "message", "text": "Do you have a school bus?", "client_id": "c1"}))
        assert asked.wait(30), "the turn reached the model"
        time.sleep(0.5)

        stopping = time.monotonic()
        os.killpg(web.pid, signal.SIGTERM)
        web.wait(SHUTDOWN_SECONDS + 10)
        took = time.monotonic() - stopping
    finally:
        for other in filter(None, [client, *idle]):
            other.close()
        if web.poll() is None:
            os.killpg(web.pid, signal.SIGKILL)
            web.wait(10)
        log.close()
    assert took < SHUTDOWN_SECONDS + 5, f"took {took:.1f}s:\n{(tmp_path / 'web.log').read_text()[-2000:]}"


def _open_socket(port: int, slug: str) -> socket.socket | None:
    """A websocket handshake over a plain socket; the socket, once the server switched protocols."""
    try:
        client = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        return None
    key = base64.b64encode(os.urandom(16)).decode()
    client.sendall(f"GET /ws/chat/{slug}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n"
                   f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n".encode())
    if not client.recv(12).startswith(b"HTTP/1.1 101"):
        client.close()
        return None
    return client


def _frame(message: dict) -> bytes:
    """One masked text frame (a client's), of under 126 bytes."""
    payload, mask = json.dumps(message).encode(), os.urandom(4)
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
