"""Webhook payloads shaped like the platforms' real ones (Chatwoot v4.15 agent-bot events, WhatsApp Cloud API).

Field names and nesting follow Message#webhook_data / Conversation#webhook_data
(Chatwoot) and Meta's webhook reference; values are made up.
"""

import hashlib
import hmac
import itertools
import json
import time

ACCOUNT = {"id": 1, "name": "Acme Schools"}
INBOX_ID = 3
_ids = itertools.count(9001)


def contact_sender(contact_id: int = 42, phone: str = "+6591234567", name: str = "Ana", attributes=None) -> dict:
    """The top-level `sender` of an incoming message: Contact#webhook_data (no `type` key)."""
    return {"id": contact_id, "name": name, "phone_number": phone, "email": None, "identifier": None,
            "custom_attributes": attributes or {}, "additional_attributes": {}, "avatar": "", "thumbnail": "",
            "blocked": False, "account": ACCOUNT}


def conversation(conversation_id: int = 123, status: str = "pending", contact_id: int = 42,
                 phone: str = "+6591234567", name: str = "Ana", channel: str = "Channel::Whatsapp",
                 inbox_id: int = INBOX_ID) -> dict:
    """Conversation#webhook_data (conversations/event_data_presenter): `id` is the display id."""
    now = int(time.time())
    return {
        "id": conversation_id, "inbox_id": inbox_id, "status": status, "channel": channel, "can_reply": True,
        "contact_inbox": {"id": 77, "contact_id": contact_id, "inbox_id": inbox_id, "source_id": phone.lstrip("+"),
                          "hmac_verified": False, "pubsub_token": "pubsub", "created_at": "2026-06-17T10:00:00.000Z",
                          "updated_at": "2026-06-17T10:00:00.000Z"},
        "custom_attributes": {}, "additional_attributes": {}, "labels": [], "priority": None,
        "meta": {"sender": {"id": contact_id, "name": name, "phone_number": phone, "type": "contact",
                            "custom_attributes": {}},
                 "assignee": None, "assignee_type": None, "team": None, "hmac_verified": False},
        "messages": [{"id": 1, "message_type": 0, "content": "...", "conversation_id": conversation_id,
                      "account_id": ACCOUNT["id"]}],
        "unread_count": 1, "first_reply_created_at": None, "waiting_since": now, "snoozed_until": None,
        "agent_last_seen_at": 0, "contact_last_seen_at": 0, "last_activity_at": now, "timestamp": now,
        "created_at": now, "updated_at": now + 0.12, "account": ACCOUNT,
    }


def message_created(content: str, *, message_id: int | None = None, message_type: str = "incoming",
                    private: bool = False, sender: dict | None = None, status: str = "pending",
                    conversation_id: int = 123, contact_id: int = 42, phone: str = "+6591234567",
                    inbox_id: int = INBOX_ID, content_attributes: dict | None = None) -> dict:
    return {
        "event": "message_created", "id": message_id or next(_ids), "content": content, "content_type": "text",
        "content_attributes": content_attributes or {}, "additional_attributes": {}, "message_type": message_type,
        "private": private, "source_id": f"wamid.HBgL{next(_ids)}", "created_at": "2026-06-17T10:00:00.000Z",
        "sender": sender if sender is not None else contact_sender(contact_id, phone),
        "inbox": {"id": inbox_id, "name": "WhatsApp"}, "account": ACCOUNT,
        "conversation": conversation(conversation_id, status, contact_id, phone, inbox_id=inbox_id),
    }


def agent_user(user_id: int = 7) -> dict:
    return {"id": user_id, "name": "Mrs Tan", "email": "tan@school.example", "type": "user"}


def agent_bot(bot_id: int = 5) -> dict:
    return {"id": bot_id, "name": "Concierge", "type": "agent_bot"}


def message_updated_submission(message_id: int, title: str, value: str, *, conversation_id: int = 123,
                               contact_id: int = 42) -> dict:
    """The web widget PATCHed our input_select message: Chatwoot sends message_updated with submitted_values."""
    payload = message_created("Which time suits you?", message_id=message_id, message_type="outgoing",
                              sender=agent_bot(), conversation_id=conversation_id, contact_id=contact_id,
                              content_attributes={"items": [{"title": title, "value": value}],
                                                  "submitted_values": [{"title": title, "value": value}]})
    payload["event"] = "message_updated"
    payload["content_type"] = "input_select"
    payload["conversation"]["channel"] = "Channel::WebWidget"
    return payload


def status_changed(status: str, *, previous: str = "pending", conversation_id: int = 123) -> dict:
    payload = conversation(conversation_id, status)
    payload.update({"event": "conversation_status_changed",
                    "changed_attributes": [{"status": {"previous_value": previous, "current_value": status}}]})
    return payload


def legacy_event(event: str, status: str, conversation_id: int = 123) -> dict:
    return {**conversation(conversation_id, status), "event": event}


def webwidget_triggered(conversation_id: int | None = 123, contact_id: int = 42) -> dict:
    current = conversation(conversation_id, "pending", contact_id, phone="", channel="Channel::WebWidget") \
        if conversation_id else None
    if current:
        current["meta"]["sender"]["phone_number"] = None
    return {"id": 77, "source_id": "visitor-source-id", "event": "webwidget_triggered",
            "contact": {"id": contact_id, "name": "falling-sun-123", "phone_number": None, "email": None,
                        "custom_attributes": {}, "additional_attributes": {}},
            "inbox": {"id": INBOX_ID, "name": "Website"}, "account": ACCOUNT, "current_conversation": current,
            "event_info": {"initiated_at": {"timestamp": "Wed Jun 17 2026 10:00:00"}, "referer": "https://school.example/",
                           "widget_language": None, "browser_language": "en", "browser": {"browser_name": "Chrome"}}}


def chatwoot_headers(body: bytes, secret: str, timestamp: int | None = None) -> dict:
    ts = str(timestamp if timestamp is not None else int(time.time()))
    signature = "sha256=" + hmac.new(secret.encode(), f"{ts}.".encode() + body, hashlib.sha256).hexdigest()
    return {"HTTP_X_CHATWOOT_TIMESTAMP": ts, "HTTP_X_CHATWOOT_SIGNATURE": signature,
            "HTTP_X_CHATWOOT_DELIVERY": "4b7f3c1e-2d7a-4c35-9d6e-6f1c2a9b8e01"}


# --- WhatsApp Cloud API -----------------------------------------------------------
PHONE_NUMBER_ID = "106540352242922"


def _envelope(value: dict, phone_number_id: str = PHONE_NUMBER_ID) -> dict:
    return {"object": "whatsapp_business_account", "entry": [{"id": "102290129340398", "changes": [{
        "field": "messages",
        "value": {"messaging_product": "whatsapp",
                  "metadata": {"display_phone_number": "15550783881", "phone_number_id": phone_number_id},
                  **value}}]}]}


def wa_text(body: str, *, wa_id: str = "6591234567", name: str = "Ana", message_id: str | None = None,
            phone_number_id: str = PHONE_NUMBER_ID) -> dict:
    return _envelope({"contacts": [{"profile": {"name": name}, "wa_id": wa_id}],
                      "messages": [{"from": wa_id, "id": message_id or f"wamid.IN{next(_ids)}",
                                    "timestamp": str(int(time.time())), "type": "text", "text": {"body": body}}]},
                     phone_number_id)


def wa_interactive(kind: str, reply_id: str, title: str, *, wa_id: str = "6591234567",
                   message_id: str | None = None) -> dict:
    reply = {"id": reply_id, "title": title}
    if kind == "list_reply":
        reply["description"] = ""
    return _envelope({"contacts": [{"profile": {"name": "Ana"}, "wa_id": wa_id}],
                      "messages": [{"context": {"from": "15550783881", "id": "wamid.OUT1"}, "from": wa_id,
                                    "id": message_id or f"wamid.IN{next(_ids)}", "timestamp": str(int(time.time())),
                                    "type": "interactive", "interactive": {"type": kind, kind: reply}}]})


def wa_status(status: str = "delivered", wamid: str = "wamid.OUT1", wa_id: str = "6591234567") -> dict:
    return _envelope({"statuses": [{"id": wamid, "status": status, "timestamp": str(int(time.time())),
                                    "recipient_id": wa_id,
                                    "conversation": {"id": "c1", "origin": {"type": "service"}},
                                    "pricing": {"billable": True, "pricing_model": "CBP", "category": "service"}}]})


def wa_signature(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def dumps(payload: dict) -> bytes:
    return json.dumps(payload).encode()
