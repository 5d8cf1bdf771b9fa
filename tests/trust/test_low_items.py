"""Attack 6 (low): secrets in logs, over-deep JSON, /readyz exception text, open /metrics, unmasked exports."""

import io
import json
import logging

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from daphne.access import AccessLogGenerator
from django.test import Client
from django.utils import timezone

import plumbing.logging as concierge_logging
from chatbot.models import Conversation, Message, ReasoningStep
from config.asgi import application
from plumbing.redis import reset_clients
from tests.adminpanel.conftest import groups, reviewer, reviewer_client  # noqa: F401 (fixtures)
from tests.factories import ContactFactory, ConversationFactory, SchoolFactory
from tests.integrations import payloads as p
from tests.integrations.conftest import SECRET

pytestmark = [pytest.mark.filterwarnings("ignore:No directory at:UserWarning")]

DEEP = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"event": "message_created", "content": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}"


# --- the Chatwoot URL secret (and the other secrets that travel in URLs) never reach a log -----------------------
@pytest.fixture
def log_output():
    """Everything logged, rendered by the project's formatter (the JSON one of production)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(concierge_logging.formatter(json=True))
    root = logging.getLogger()
    root.addHandler(handler)
    yield stream
    root.removeHandler(handler)


@pytest.mark.django_db
def test_the_chatwoot_url_secret_is_not_in_the_request_log(chatwoot, log_output):
    client = Client(raise_request_exception=False)
    assert client.post(f"/webhooks/chatwoot/{SECRET}/", data=b"[1, 2]", content_type="application/json"
                       ).status_code == 400  # django.request logs "Bad Request: <path>" with the request
    logged = log_output.getvalue()
    assert "Bad Request" in logged and "/webhooks/chatwoot/" in logged
    assert SECRET not in logged, logged


def test_secrets_in_urls_are_not_in_the_access_log():
    stream = io.StringIO()
    log = AccessLogGenerator(stream)
    for path in (f"/webhooks/chatwoot/{SECRET}/", "/manage/InRfc3QiOnRydWV9:1xV:abc/",
                 "/calendar/ImZvbyI:1xVl:sig.ics", "/ws/chat/tampines/?visitor=eyJzY2hvb2wiOiJ0In0:1x:sig"):
        log("http", "complete", {"client": "203.0.113.7:5000", "path": path, "status": 200, "size": 2,
                                 "method": "POST"})
    written = stream.getvalue()
    assert SECRET not in written and "InRfc3QiOnRydWV9" not in written and "ImZvbyI" not in written
    assert "eyJzY2hvb2wiOiJ0In0" not in written
    assert "/webhooks/chatwoot/[secret]/" in written and "/calendar/[token].ics" in written


# --- over-deep JSON: 400 on webhooks, an error frame on the web chat ---------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT], ids=["array", "object"])
def test_over_deep_json_to_a_webhook_is_a_400(chatwoot, whatsapp, body):
    client = Client(raise_request_exception=False)
    assert client.post(f"/webhooks/chatwoot/{SECRET}/", data=body, content_type="application/json"
                       ).status_code == 400
    signed = {"HTTP_X_HUB_SIGNATURE_256": p.wa_signature(body, "app-secret")}
    assert client.post("/webhooks/whatsapp/", data=body, content_type="application/json", **signed).status_code == 400
    assert not Message.objects.exists()


@pytest.mark.django_db(transaction=True)
async def test_over_deep_json_on_the_web_chat_gets_an_error_frame_and_the_socket_stays_open():
    school = await database_sync_to_async(SchoolFactory)()
    comm = WebsocketCommunicator(application, f"/ws/chat/{school.slug}/",
                                 headers=[(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000")])
    assert (await comm.connect(timeout=10))[0]
    assert (await comm.receive_json_from(timeout=10))["type"] == "session"
    await comm.send_to(text_data=DEEP.decode())
    frame = await comm.receive_json_from(timeout=10)
    assert (frame["type"], frame["code"]) == ("error", "bad_json")
    await comm.send_json_to({"type": "ping"})
    assert (await comm.receive_json_from(timeout=10))["type"] == "pong", "the socket is still open"
    await comm.disconnect()


# --- /readyz names what is down, without the exception text ------------------------------------------------------
@pytest.mark.django_db
def test_readyz_says_which_dependency_is_down_but_not_the_error(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    reset_clients()
    try:
        response = client.get("/readyz")
    finally:
        reset_clients()
    assert response.status_code == 503
    assert response.json()["checks"]["redis"] == "unavailable"
    assert response.json()["checks"]["database"].startswith("ok")
    assert "127.0.0.1" not in response.text and "Error" not in response.text and "111" not in response.text


# --- /metrics needs a token or an allow-listed address ------------------------------------------------------------
@pytest.mark.django_db
def test_metrics_are_not_open_to_anyone(client, settings):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "", []
    assert client.get("/metrics").status_code == 404
    settings.METRICS_TOKEN = "scrape-me"
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 404
    scraped = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me")
    assert scraped.status_code == 200 and "django_http_requests" in scraped.text
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "", ["10.0.0.0/8", "127.0.0.1"]
    assert client.get("/metrics").status_code == 200  # the test client comes from 127.0.0.1
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.7").status_code == 404


# --- the JSONL export masks phones and e-mails as the CSV does -----------------------------------------------------
@pytest.mark.django_db
def test_the_jsonl_export_masks_phones_and_emails_like_the_csv(reviewer_client, school):  # noqa: F811
    contact = ContactFactory(school=school, phone="+6591234567", email="wei.ling@mail.example")
    conversation = ConversationFactory(school=school, contact=contact, channel="whatsapp")
    Message.objects.create(conversation=conversation, role="user", channel="whatsapp",
                           text="I'm Wei Ling, 9876 5432, wei.ling@mail.example, for Vera on 2026-11-25")
    reply = Message.objects.create(conversation=conversation, role="assistant", channel="whatsapp",
                                   text="Booked! We'll call 9876 5432.", payload={"blocks": []})
    ReasoningStep.objects.create(message=reply, cycle=1, position=1, kind="act", created_at=timezone.now(),
                                 tool_name="book_tour", tool_arguments={"parent_phone": "+65 9876 5432",
                                                                        "parent_email": "wei.ling@mail.example"})
    exported = {}
    for kind in ("jsonl", "csv"):
        response = reviewer_client.get(f"/admin/chatbot/conversation/export.{kind}")
        assert response.status_code == 200
        exported[kind] = b"".join(response.streaming_content).decode()
    for text in exported.values():
        for secret in ("91234567", "98765432", "9876 5432", "wei.ling@", "+6591234567"):
            assert secret not in text, f"{secret} in an export"
    record = json.loads(exported["jsonl"].splitlines()[0])
    assert record["messages"][0]["text"].endswith("for Vera on 2026-11-25"), "dates are not masked"
    assert Conversation.objects.count() == 1
