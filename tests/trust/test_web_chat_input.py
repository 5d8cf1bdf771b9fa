"""A web chat message no database can store (a lone surrogate, a NUL) gets an error frame for its client id, so
the widget stops resending it; nothing is stored and the socket stays open."""

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from chatbot.models import Message
from config.asgi import application
from tests.factories import SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.mark.attack("low")
@pytest.mark.parametrize("escaped", ["hello \\ud800", "\\udc00", "NUL \\u0000 inside"])
async def test_an_unstorable_message_gets_an_error_frame(escaped):
    school = await database_sync_to_async(SchoolFactory)()
    comm = WebsocketCommunicator(application, f"/ws/chat/{school.slug}/",
                                 headers=[(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000")])
    assert (await comm.connect(timeout=10))[0]
    assert (await comm.receive_json_from(timeout=10))["type"] == "session"
    await comm.send_to(text_data='{"type": "message", "client_id": "c-1", "text": "' + escaped + '"}')
    frame = await comm.receive_json_from(timeout=10)
    assert (frame["type"], frame["code"], frame["client_id"]) == ("error", "bad_text", "c-1")
    await comm.send_json_to({"type": "ping"})
    assert (await comm.receive_json_from(timeout=10))["type"] == "pong", "the socket is still open"
    await comm.disconnect()
    assert not await database_sync_to_async(Message.objects.exists)()
