"""Issue 26 (low): while Redis is down, every web chat connection got an HTTP 500. Now the socket is accepted and
told, in words the widget shows, that the chat is unavailable for now; then closed with 4503."""

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from chatbot.channels.web.consumer import CLOSE_UNAVAILABLE
from config.asgi import application
from plumbing.redis import reset_clients
from tests.factories import SchoolFactory
from tests.faults.conftest import free_port

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_down():
    """REDIS_URL and the channel layer point at a port nobody listens on."""
    url = f"redis://127.0.0.1:{free_port()}/0"
    layers = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                          "CONFIG": {"hosts": [{"address": url, "socket_connect_timeout": 1}]}}}
    with override_settings(REDIS_URL=url, CHANNEL_LAYERS=layers):
        reset_clients()
        yield
    reset_clients()


async def test_while_redis_is_down_the_web_chat_says_so_instead_of_a_500(redis_down):
    school = await database_sync_to_async(SchoolFactory)()
    comm = WebsocketCommunicator(application, f"/ws/chat/{school.slug}/",
                                 headers=[(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000")])
    connected, _ = await comm.connect(timeout=20)
    assert connected, "the socket is accepted (a refusal before it is an HTTP error the widget cannot read)"
    frame = await comm.receive_json_from(timeout=20)
    assert frame["type"] == "error" and frame["code"] == "unavailable"
    assert "try again" in frame["text"]
    closed = await comm.receive_output(timeout=20)
    assert closed == {"type": "websocket.close", "code": CLOSE_UNAVAILABLE}
