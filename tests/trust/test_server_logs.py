"""The production web process (the Procfile's `web:` line, uvicorn) writes no secret carried in a URL to its log.

The server is started exactly as the Procfile starts it (only the port is chosen), with production settings
(DEBUG off, JSON logs), and asked for a manage page, a calendar file, the Chatwoot webhook and the web chat
socket, each with its secret in the URL; then its whole output is read.
"""

import asyncio
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import websockets
from django.conf import settings
from django.core import signing
from django.db import connection

from bookings.links import manage_path
from chatbot.channels.web.consumer import VISITOR_SALT
from tests.factories import SchoolFactory, TourBookingFactory
from tests.faults.conftest import free_port, wait_for
from tests.integrations.conftest import SECRET


def procfile_command(process: str, port: int) -> list[str]:
    """The Procfile's command line of `process` as a shell would run it (`${NAME:-default}` from the environment,
    else the default), with the port given and the program run by this Python."""
    line = next(row for row in (Path(settings.BASE_DIR) / "Procfile").read_text().splitlines()
                if row.startswith(f"{process}:"))
    given = {**os.environ, "PORT": str(port)}
    expanded = re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: given.get(m[1]) or m[2], line.partition(":")[2])
    words = shlex.split(expanded)
    return [sys.executable, "-m", words[0], *words[1:]]


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def server_env(static_root: Path) -> dict:
    env = {key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    return {**env, "STATIC_ROOT": str(static_root), "DEBUG": "False", "SECRET_KEY": settings.SECRET_KEY,
            "DATABASE_URL": database_url(), "CHATWOOT_WEBHOOK_SECRET": SECRET, "SECURE_SSL_REDIRECT": "False",
            "LOG_JSON": "True",
            "LOG_LEVEL": "INFO", "EMBEDDED_SCHEDULER": "False", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "EMAIL_URL": "smtp://127.0.0.1:1"}


def _up(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


async def _open_socket(url: str) -> None:
    async with websockets.connect(url, origin="http://127.0.0.1", open_timeout=10) as socket:
        await asyncio.wait_for(socket.recv(), 10)


@pytest.mark.django_db(transaction=True)
@pytest.mark.attack("high")
@pytest.mark.timeout(300)  # collectstatic, then two uvicorn workers warming up (about 20 s each when busy)
def test_the_procfile_web_process_logs_no_url_secret(tmp_path):
    school = SchoolFactory()
    booking = TourBookingFactory(school=school)
    manage = manage_path(booking.reference)
    manage_token = manage.strip("/").split("/")[-1]
    visitor_token = signing.dumps({"school": school.slug, "visitor": "v-logcheck"}, salt=VISITOR_SALT)
    env = server_env(tmp_path / "static")
    # The Procfile's release step collects the static files the pages link (production reads their manifest).
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--no-input", "-v", "0"],  # noqa: S603
                   cwd=settings.BASE_DIR, env=env, check=True, timeout=120)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "web.log").open("wb")
    process = subprocess.Popen(procfile_command("web", port), cwd=settings.BASE_DIR, env=env,  # noqa: S603
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(lambda: _up(base), 180, "the web process to start")
        assert httpx.get(f"{base}{manage}", timeout=10).status_code == 200
        assert httpx.get(f"{base}/calendar/{manage_token}.ics", timeout=10).status_code in (200, 404)
        assert httpx.post(f"{base}/webhooks/chatwoot/{SECRET}/", content=b"[1]", timeout=10,
                          headers={"content-type": "application/json"}).status_code == 400
        asyncio.run(_open_socket(f"ws://127.0.0.1:{port}/ws/chat/{school.slug}/?visitor={visitor_token}"))
        time.sleep(0.5)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        log.close()
    written = (tmp_path / "web.log").read_text(errors="replace")
    assert "/webhooks/chatwoot/[secret]/" in written and "/manage/[token]/" in written, written
    assert "visitor=[token]" in written, written
    for secret in (SECRET, manage_token, visitor_token, visitor_token.split(":")[0]):
        assert secret not in written, f"{secret} in the web process's log:\n{written}"
