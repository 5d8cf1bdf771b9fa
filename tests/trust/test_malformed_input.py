"""Malformed but correctly signed webhook deliveries: a 4xx, or the good message stored; never a 500.

Every payload of the issue's list (issue 26), signed with the platform's secret. A WhatsApp delivery batches
several messages: an unreadable one is a dead letter (RejectedInbound) and the others are stored, so a
redelivery is not a 500 forever.
"""

import copy
from collections.abc import Callable

import pytest
from django.test import Client

from chatbot.models import Message, RejectedInbound
from tests.factories import SchoolFactory
from tests.integrations import payloads as p
from tests.integrations.conftest import SECRET

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.filterwarnings("ignore:No directory at:UserWarning")]

HMAC = "chatwoot-signing-secret"
APP_SECRET = "app-secret"  # the whatsapp fixture's
LONG_ID = "9" * 200
STORED, REFUSED, DEAD_LETTER = "stored", "refused", "dead letter"


@pytest.fixture
def school(chatwoot, whatsapp, settings):
    settings.CHATWOOT_HMAC_SECRET = HMAC
    return SchoolFactory(chatwoot_inbox_ids=[p.INBOX_ID], whatsapp_phone_number_id=p.PHONE_NUMBER_ID)


def post_chatwoot(payload: dict):
    body = p.dumps(payload)
    return Client(raise_request_exception=False).post(
        f"/webhooks/chatwoot/{SECRET}/", data=body, content_type="application/json", **p.chatwoot_headers(body, HMAC))


def post_whatsapp(payload: dict):
    body = p.dumps(payload)
    return Client(raise_request_exception=False).post(
        "/webhooks/whatsapp/", data=body, content_type="application/json",
        HTTP_X_HUB_SIGNATURE_256=p.wa_signature(body, APP_SECRET))


def changed(payload: dict, edit: Callable[[dict], None]) -> dict:
    payload = copy.deepcopy(payload)
    edit(payload)
    return payload


def _set(path: str, value) -> Callable[[dict], None]:
    """An edit that sets a dotted path ("conversation.meta.sender"; numbers index lists)."""
    *parents, last = path.split(".")

    def edit(payload: dict) -> None:
        node = payload
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value
    return edit


def _wa(path: str) -> str:
    return f"entry.0.changes.0.value.{path}"


CHATWOOT_CASES = {
    "NUL in the sender's name": (_set("sender.name", "Ana\x00Lee"), STORED),
    "NUL in the message id": (_set("id", "9123\x00"), STORED),
    "a lone surrogate in the content": (_set("content", "hello \ud800 there"), STORED),
    '"conversation": [1, 2]': (_set("conversation", [1, 2]), REFUSED),
    '"sender": "mallory"': (_set("sender", "mallory"), REFUSED),
    '"attachments": "notalist"': (_set("attachments", "notalist"), REFUSED),
    '"content_attributes": [1]': (_set("content_attributes", [1]), REFUSED),
    "a message id longer than its column": (_set("id", LONG_ID), REFUSED),
    "a conversation id longer than its column": (_set("conversation.id", LONG_ID), REFUSED),
    "a contact id longer than its column": (_set("sender.id", LONG_ID), REFUSED),
    "an account id longer than its column": (_set("account.id", LONG_ID), REFUSED),
}

WHATSAPP_CASES = {
    '"entry": {...}': (_set("entry", {"id": "1", "changes": []}), REFUSED),
    '"text": "plain string"': (_set(_wa("messages.0.text"), "plain string"), DEAD_LETTER),
    '"contacts": ["x"]': (_set(_wa("contacts"), ["x"]), STORED),
    "NUL in the profile name": (_set(_wa("contacts.0.profile.name"), "Ana\x00"), STORED),
    "a 200-character message id": (_set(_wa("messages.0.id"), LONG_ID), DEAD_LETTER),
    "a lone surrogate in the text": (_set(_wa("messages.0.text.body"), "hello \udc00"), STORED),
    "a sender longer than its column": (_set(_wa("messages.0.from"), LONG_ID), DEAD_LETTER),
    '"messages": "x"': (_set(_wa("messages"), "x"), REFUSED),
}


def outcome(response) -> str:
    assert response.status_code < 500, response.content
    if 400 <= response.status_code < 500:
        return REFUSED
    if Message.objects.filter(role=Message.Role.USER).exists():
        return STORED
    assert RejectedInbound.objects.exists(), f"a 200 that stored nothing: {response.content!r}"
    return DEAD_LETTER


@pytest.mark.attack("low")
@pytest.mark.parametrize("case", list(CHATWOOT_CASES))
def test_a_malformed_chatwoot_event_is_a_4xx_or_its_message_is_stored(case, school, echo_model, turns):
    edit, expected = CHATWOOT_CASES[case]
    assert outcome(post_chatwoot(changed(p.message_created("hello there"), edit))) == expected
    for message in Message.objects.all():
        assert "\x00" not in message.text and "\ud800" not in message.text


@pytest.mark.attack("low")
@pytest.mark.parametrize("case", list(WHATSAPP_CASES))
def test_a_malformed_whatsapp_delivery_is_a_4xx_or_its_message_is_stored(case, school, echo_model, turns):
    edit, expected = WHATSAPP_CASES[case]
    assert outcome(post_whatsapp(changed(p.wa_text("hello there"), edit))) == expected


@pytest.mark.attack("low")
def test_webwidget_triggered_with_a_contact_that_is_not_an_object_is_a_400(school):
    response = post_chatwoot(changed(p.webwidget_triggered(), _set("contact", "x")))
    assert response.status_code == 400
    assert RejectedInbound.objects.get().channel == "chatwoot"


@pytest.mark.attack("medium")
def test_one_bad_message_does_not_keep_another_parents_message_of_the_batch_out(school, echo_model, turns):
    """The issue's case: a 200-character id ahead of another parent's valid message in one delivery."""
    delivery = p.wa_text("I'd like a tour", wa_id="6598765432")
    good = delivery["entry"][0]["changes"][0]["value"]["messages"][0]
    bad = {**good, "id": LONG_ID, "from": "6591234567", "text": {"body": "spam"}}
    delivery["entry"][0]["changes"][0]["value"]["messages"] = [bad, good]
    for _delivery in range(2):  # the platform's redelivery too: 200, nothing twice
        response = post_whatsapp(delivery)
        assert response.status_code == 200, response.content
    stored = Message.objects.filter(role=Message.Role.USER)
    assert [m.text for m in stored] == ["I'd like a tour"]
    assert stored.get().channel_message_id == good["id"]
    rejected = RejectedInbound.objects.all()
    assert rejected.count() == 1 and rejected[0].channel == "whatsapp", "a redelivered dead letter is kept once"
    assert "message id is longer than 128 characters" in rejected[0].reason
    assert rejected[0].item["text"] == {"body": "spam"}


def test_dead_letters_are_listed_for_staff(admin_client, school):
    post_whatsapp(changed(p.wa_text("hello"), _set(_wa("messages.0.text"), "plain string")))
    page = admin_client.get("/admin/chatbot/rejectedinbound/")
    assert page.status_code == 200 and "text is not an object" in page.content.decode()
