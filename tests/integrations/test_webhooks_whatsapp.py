"""The WhatsApp Cloud API webhook (direct, without Chatwoot), end to end against a fake Graph API on 127.0.0.1."""

import json

import pytest

from bookings.models import TourBooking
from chatbot.models import Conversation, Message
from crm.models import Contact
from tests.factories import SchoolFactory
from tests.integrations import payloads as p

pytestmark = [pytest.mark.django_db(transaction=True)]

URL = "/webhooks/whatsapp/"
SEND_PATH = f"/{p.PHONE_NUMBER_ID}/messages"


@pytest.fixture
def school():
    return SchoolFactory(whatsapp_phone_number_id=p.PHONE_NUMBER_ID)


def post(client, payload, *, secret="app-secret", raw: bytes | None = None, signature: str | None = None):
    body = raw if raw is not None else p.dumps(payload)
    headers = {"HTTP_X_HUB_SIGNATURE_256": signature if signature is not None else p.wa_signature(body, secret)}
    return client.post(URL, data=body, content_type="application/json", **headers)


# --- verification handshake and signatures -----------------------------------------------------------------------
def test_the_verification_handshake_echoes_the_challenge(client, whatsapp):
    ok = client.get(URL, {"hub.mode": "subscribe", "hub.verify_token": "verify-me", "hub.challenge": "1158201444"})
    assert ok.status_code == 200 and ok.content == b"1158201444"
    wrong = client.get(URL, {"hub.mode": "subscribe", "hub.verify_token": "nope", "hub.challenge": "1158201444"})
    assert wrong.status_code == 403


def test_a_wrong_or_missing_signature_is_403_and_nothing_is_stored(client, school, whatsapp):
    payload = p.wa_text("hello")
    assert post(client, payload, secret="someone-else").status_code == 403
    assert post(client, payload, signature="").status_code == 403
    body = p.dumps(payload)
    assert post(client, None, raw=body + b" ", signature=p.wa_signature(body, "app-secret")).status_code == 403
    assert not Message.objects.exists()


def test_malformed_json_is_400_and_nothing_is_stored(client, school, whatsapp):
    assert post(client, None, raw=b"{oops").status_code == 400
    assert not Message.objects.exists()


# --- messages in, replies out ----------------------------------------------------------------------------------
def test_a_text_message_is_answered_through_the_graph_api(client, school, whatsapp, echo_model, turns):
    assert post(client, p.wa_text("Hola, quiero visitar el colegio", name="Ana")).status_code == 200
    turns.settle()
    contact = Contact.objects.get()
    assert (contact.phone, contact.whatsapp_name, contact.school) == ("+6591234567", "Ana", school)
    conversation = Conversation.objects.get()
    assert (conversation.channel, conversation.external_id) == ("whatsapp", f"{p.PHONE_NUMBER_ID}:6591234567")
    [call] = whatsapp.calls("POST", SEND_PATH)
    assert call.headers["Authorization"] == "Bearer wa-token"
    assert call.json == {"messaging_product": "whatsapp", "recipient_type": "individual", "to": "6591234567",
                         "type": "text", "text": {"preview_url": False,
                                                  "body": "Answered: Hola, quiero visitar el colegio"}}
    reply = Message.objects.get(role="assistant")
    assert reply.delivered_at and reply.channel_message_id == "wamid.OUT1"


@pytest.mark.parametrize("kind", ["button_reply", "list_reply"])
def test_interactive_replies_become_the_parents_message(client, school, whatsapp, echo_model, turns, kind):
    post(client, p.wa_interactive(kind, "Wednesday 2026-11-25 at 09:00", "Wed 25 Nov, 09:00"))
    turns.settle()
    assert Message.objects.get(role="user").text == "Wednesday 2026-11-25 at 09:00"


def test_an_opaque_button_id_falls_back_to_the_title(client, school, whatsapp, echo_model, turns):
    post(client, p.wa_interactive("button_reply", "btn_2", "Yes please"))
    turns.settle()
    assert Message.objects.get(role="user").text == "Yes please"


def test_status_updates_are_ignored(client, school, whatsapp, echo_model, turns):
    for status in ("sent", "delivered", "read", "failed"):
        assert post(client, p.wa_status(status)).status_code == 200
    turns.settle()
    assert not Message.objects.exists() and not whatsapp.requests


def test_an_unknown_phone_number_id_is_ignored(client, school, whatsapp):
    assert post(client, p.wa_text("hello", phone_number_id="999")).json()["results"] == [
        "ignored: unknown phone number id"]
    assert not Message.objects.exists()


def test_the_same_message_delivered_three_times_gets_one_reply(client, school, whatsapp, echo_model, turns):
    payload = p.wa_text("hello", message_id="wamid.HBgLSAME")
    results = [post(client, payload).json()["results"][0] for _ in range(3)]
    turns.settle()
    assert sorted(results) == ["dispatched", "duplicate", "duplicate"]
    assert len(whatsapp.sent) == 1


def test_a_batched_delivery_is_stored_in_order(client, school, whatsapp, echo_model, turns):
    payload = p.wa_text("first")
    second = p.wa_text("second")["entry"][0]["changes"][0]["value"]["messages"][0]
    payload["entry"][0]["changes"][0]["value"]["messages"].append(second)
    post(client, payload)
    turns.settle()
    assert list(Message.objects.filter(role="user").values_list("text", flat=True)) == ["first", "second"]
    answered = [t for m in Message.objects.filter(role="assistant").exclude(text="")
                for t in m.text.removeprefix("Answered: ").split(" | ")]
    assert answered == ["first", "second"]


# --- structured replies ------------------------------------------------------------------------------------------
def _reply_with_slots(school, count: int) -> Message:
    from tests.factories import ContactFactory, ConversationFactory, MessageFactory

    conversation = ConversationFactory(school=school, contact=ContactFactory(school=school, phone="+6591234567"),
                                       channel="whatsapp", external_id=f"{p.PHONE_NUMBER_ID}:6591234567")
    options = [{"label": f"Mon {day} Dec, 09:00", "value": f"Monday 2026-12-{day:02d} at 09:00"}
               for day in range(1, count + 1)]
    return MessageFactory(conversation=conversation, role="assistant", text="Which time suits you?",
                          payload={"blocks": [{"type": "buttons", "options": options}]})


def test_up_to_three_slots_go_out_as_reply_buttons(school, whatsapp):
    from chatbot.channels.whatsapp.tasks import deliver_whatsapp_message

    reply = _reply_with_slots(school, 3)
    deliver_whatsapp_message.apply(args=[reply.pk])
    [body] = whatsapp.sent
    assert body["type"] == "interactive" and body["interactive"]["type"] == "button"
    assert body["interactive"]["body"] == {"text": "Which time suits you?"}
    assert body["interactive"]["action"]["buttons"][0] == {
        "type": "reply", "reply": {"id": "Monday 2026-12-01 at 09:00", "title": "Mon 1 Dec, 09:00"}}
    assert all(len(b["reply"]["title"]) <= 20 for b in body["interactive"]["action"]["buttons"])


def test_more_slots_go_out_as_a_list_of_at_most_ten_rows(school, whatsapp):
    from chatbot.channels.whatsapp.tasks import deliver_whatsapp_message

    reply = _reply_with_slots(school, 12)
    deliver_whatsapp_message.apply(args=[reply.pk])
    [body] = whatsapp.sent
    interactive = body["interactive"]
    assert interactive["type"] == "list" and interactive["action"]["button"]
    rows = interactive["action"]["sections"][0]["rows"]
    assert len(rows) == 10 and all(len(r["title"]) <= 24 and len(r["id"]) <= 200 for r in rows)


def test_a_long_reply_with_slots_is_split_into_text_then_choices(school, whatsapp):
    from chatbot.channels.whatsapp.tasks import deliver_whatsapp_message

    reply = _reply_with_slots(school, 2)
    reply.text = "Here is everything about our tours. " * 40
    reply.save()
    deliver_whatsapp_message.apply(args=[reply.pk])
    assert [b["type"] for b in whatsapp.sent] == ["text", "interactive"]
    assert len(whatsapp.sent[1]["interactive"]["body"]["text"]) <= 1024
    reply.refresh_from_db()
    assert reply.delivered_at is not None


def test_a_tapped_slot_books_it(client, school, whatsapp, turns, settings):
    settings.LLM_MODEL, settings.CHAT_BURST_WINDOW_SECONDS = "offline/policy", 0
    for text in ["Hi, I'd like to book a school tour", "My son Tom is 5", "I'm Ana Lim",
                 "Which times are free next week?"]:
        post(client, p.wa_text(text))
        turns.settle()
        if whatsapp.sent[-1]["type"] == "interactive":
            break
    interactive = whatsapp.sent[-1]["interactive"]
    choices = interactive["action"].get("buttons") or interactive["action"]["sections"][0]["rows"]
    choice = choices[0].get("reply") or choices[0]
    post(client, p.wa_interactive("button_reply" if "buttons" in interactive["action"] else "list_reply",
                                  choice["id"], choice["title"]))
    turns.settle()
    assert "Just to check" in whatsapp.sent[-1]["text"]["body"] and not TourBooking.objects.exists()
    post(client, p.wa_text("yes please"))
    turns.settle()
    booking = TourBooking.objects.get()
    local = booking.local_start
    assert f"{local:%a} {local.day} {local:%b}, {local:%H:%M}" == choice["id"]  # the words a person would send
    assert booking.reference in whatsapp.sent[-1]["text"]["body"]


# --- handoff and faults --------------------------------------------------------------------------------------------
def test_asking_for_a_person_hands_off_and_the_bot_goes_quiet(client, school, whatsapp, echo_model, turns):
    post(client, p.wa_text("I want to speak to someone from admissions"))
    turns.settle()
    conversation = Conversation.objects.get()
    assert conversation.status == Conversation.Status.HANDED_OFF
    assert "admissions team" in whatsapp.sent[0]["text"]["body"]
    post(client, p.wa_text("hello?"))
    turns.settle()
    assert len(whatsapp.sent) == 1 and not echo_model.turns


def test_graph_api_5xx_is_retried_and_sent_once(client, school, whatsapp, echo_model, turns):
    whatsapp.fail_next = [("POST", SEND_PATH, 503), ("POST", SEND_PATH, 500)]
    post(client, p.wa_text("hello"))
    turns.settle()
    assert len(whatsapp.calls("POST", SEND_PATH)) == 3
    assert [b["text"]["body"] for b in whatsapp.sent] == ["Answered: hello"]


def test_signature_is_checked_over_the_raw_bytes(client, school, whatsapp, echo_model, turns):
    body = json.dumps(p.wa_text("héllo"), ensure_ascii=False, separators=(",", ":")).encode()
    assert post(client, None, raw=body).status_code == 200
    turns.settle()
    assert Message.objects.get(role="user").text == "héllo"
