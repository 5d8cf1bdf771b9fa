"""The WhatsApp Cloud API channel (direct, without Chatwoot): webhook in, Graph API out.

In: Meta posts `{"object": "whatsapp_business_account", "entry": [{"changes": [{"value": {...}}]}]}`
signed with `X-Hub-Signature-256` (HMAC-SHA256 of the raw body with the App
Secret). Text, interactive replies (button_reply / list_reply) and template
quick replies become the parent's messages; status updates are ignored. The
school is the one whose `whatsapp_phone_number_id` received the message.

Out: `POST {WHATSAPP_API_URL}/{phone number id}/messages` with a Bearer token:
slot choices as reply buttons (up to 3, titles <= 20 chars) or a list (up to 10
rows, titles <= 24 chars), everything else as text. A button's id is the
canonical slot text ("Wednesday 2026-11-25 at 09:00"), and that is what comes
back as the parent's message when they tap it.

Our Conversation.external_id is "<phone number id>:<wa_id>".
"""

import hashlib
import hmac
import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext, gettext_lazy

from bookings.models import School
from chatbot import handoff
from chatbot.channels.base import TurnObserver, register_observer
from chatbot.channels.inbound import Malformed, dead_letter, ident, items, obj, objects, string
from chatbot.channels.outbound import Sender, choice_options, queue_task, reply_text
from chatbot.language import ENGLISH
from chatbot.models import Channel, Conversation, Message
from chatbot.services import receive
from config.logging import mask_phone
from crm.external.http import ApiClient, call, make_client
from crm.identity import InvalidContactDetail, normalise_phone
from crm.models import Contact
from crm.services import find_or_create_contact
from plumbing.hops import database_hop

logger = logging.getLogger(__name__)

SYSTEM = "whatsapp"
TEXT_LIMIT = 4096
INTERACTIVE_BODY_LIMIT = 1024
LIST_BUTTON_LABEL = gettext_lazy("See times")  # WhatsApp: at most 20 characters


def valid_signature(body: bytes, header: str, secret: str) -> bool:
    if not header or not secret:
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header.strip())


# "<phone number id>:<wa_id>" fits Conversation.external_id (64); a message id fits Message.channel_message_id.
PHONE_NUMBER_ID_MAX, WA_ID_MAX, MESSAGE_ID_MAX = 31, 32, 128


@dataclass
class Inbound:
    phone_number_id: str
    wa_id: str
    profile_name: str
    message_id: str
    text: str


@dataclass
class Rejected:
    """A message of the delivery that could not be read (kept as a dead letter)."""

    reason: str
    item: Any


def _text(message: dict) -> str:
    kind = string(message.get("type"), "type")
    if kind == "text":
        return string(obj(message.get("text"), "text").get("body"), "text.body")
    if kind == "interactive":
        interactive = obj(message.get("interactive"), "interactive")
        reply = obj(interactive.get("button_reply"), "button_reply") or obj(interactive.get("list_reply"),
                                                                             "list_reply")
        reply_id, title = string(reply.get("id"), "reply id").strip(), string(reply.get("title"), "reply title").strip()
        # Our ids are the readable choice itself ("Wednesday 2026-11-25 at 09:00"); an opaque id
        # (someone else's button) falls back to the title the parent saw.
        return reply_id if " " in reply_id else (title or reply_id)
    if kind == "button":
        button = obj(message.get("button"), "button")
        return string(button.get("text"), "button text") or string(button.get("payload"), "button payload")
    return f"[sent {kind or 'a message'}]"


def _names(contacts: Any) -> dict[str, str]:
    """wa_id -> profile name. A contact that cannot be read is left out: the name only greets the parent."""
    names = {}
    for contact in items(contacts, "contacts"):
        try:
            profile = obj(obj(contact, "contact").get("profile"), "profile")
            names[string(contact.get("wa_id"), "wa_id")] = string(profile.get("name"), "profile name")
        except Malformed:
            continue
    return names


def _inbound(phone_number_id: str, names: dict[str, str], message: Any) -> Inbound:
    message = obj(message, "message")
    message_id = ident(message.get("id"), "message id", MESSAGE_ID_MAX)
    sender = ident(message.get("from"), "from", WA_ID_MAX)
    if not message_id or not sender:
        raise Malformed("a message without an id or a sender")
    return Inbound(phone_number_id, sender, names.get(sender, ""), message_id,
                   _text(message).strip()[: settings.CHAT_MAX_MESSAGE_CHARS])


def parse(payload: dict) -> tuple[list[Inbound], list[Rejected]]:
    """The parents' messages in one webhook delivery (several entries/changes may be batched; statuses
    skipped), and those that could not be read. An envelope (entry, changes, value, metadata) of the wrong
    shape raises Malformed: nothing in it can be trusted."""
    found, rejected = [], []
    for entry in objects(payload.get("entry"), "entry"):
        for change in objects(entry.get("changes"), "changes"):
            if change.get("field") != "messages":
                continue
            value = obj(change.get("value"), "value")
            phone_number_id = ident(obj(value.get("metadata"), "metadata").get("phone_number_id"),
                                    "phone_number_id", PHONE_NUMBER_ID_MAX)
            names = _names(value.get("contacts"))
            for message in items(value.get("messages"), "messages"):
                try:
                    found.append(_inbound(phone_number_id, names, message))
                except Malformed as problem:
                    rejected.append(Rejected(str(problem), message))
    return found, rejected


# --- the Graph API client ---------------------------------------------------------
class WhatsAppClient(ApiClient):
    def __init__(self) -> None:
        self.http = make_client(settings.WHATSAPP_API_URL, {"Authorization": f"Bearer {settings.WHATSAPP_TOKEN}"})

    def send(self, phone_number_id: str, body: dict) -> str:
        data = call(self.http, SYSTEM, "POST", f"/{phone_number_id}/messages", json=body).json()
        return str(((data.get("messages") or [{}])[0]).get("id") or "")


def _chunks(text: str, size: int) -> list[str]:
    text = text.strip()
    chunks = []
    while len(text) > size:
        cut = text.rfind("\n", 0, size)
        cut = cut if cut > size // 2 else text.rfind(" ", 0, size)
        cut = cut if cut > size // 2 else size
        chunks.append(text[:cut].strip())
        text = text[cut:].strip()
    return [*chunks, text] if text else chunks


def reply_bodies(message: Message, to: str) -> list[dict]:
    """Graph API message bodies for one reply: text, then the slot choice as buttons (<= 3) or a list."""
    base = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to}
    text = reply_text(message) or "…"
    texts = [{**base, "type": "text", "text": {"preview_url": False, "body": chunk}}
             for chunk in _chunks(text, TEXT_LIMIT)]
    options = choice_options(message, max_items=10, title_max=24)
    if not options:
        return texts
    with translation.override(message.language or ENGLISH):  # the reply's language
        parts, prompt = [], text
        if len(text) > INTERACTIVE_BODY_LIMIT:
            parts, prompt = texts, gettext("Please choose one:")
        if len(options) <= 3 and all(len(title) <= 20 for title, _ in options):
            action = {"buttons": [{"type": "reply", "reply": {"id": value[:256], "title": title}}
                                  for title, value in options]}
            interactive = {"type": "button", "body": {"text": prompt}, "action": action}
        else:
            rows = [{"id": value[:200], "title": title} for title, value in options]  # already <= 10, titles <= 24
            interactive = {"type": "list", "body": {"text": prompt},
                           "action": {"button": str(LIST_BUTTON_LABEL),
                                      "sections": [{"title": gettext("Tour times"), "rows": rows}]}}
    return [*parts, {**base, "type": "interactive", "interactive": interactive}]


def template_body(template: dict, to: str) -> dict:
    """An approved template message, the only kind WhatsApp delivers outside 24 hours of the parent's last
    message: `template` is {"name", "language", "parameters": values of {{1}}, {{2}} ... in order}."""
    body: dict = {"name": template["name"], "language": {"code": template["language"]}}
    if template.get("parameters"):
        body["components"] = [{"type": "body", "parameters": [{"type": "text", "text": str(value)}
                                                              for value in template["parameters"]]}]
    return {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to, "type": "template",
            "template": body}


def _route(conversation: Conversation) -> tuple[str, str]:
    phone_number_id, _, wa_id = conversation.external_id.partition(":")
    return (phone_number_id or conversation.school.whatsapp_phone_number_id or settings.WHATSAPP_PHONE_NUMBER_ID,
            wa_id or conversation.contact.phone.lstrip("+"))


class WhatsAppSender(Sender):
    system = SYSTEM

    def __init__(self, client: WhatsAppClient) -> None:
        self.client = client

    def bodies(self, message: Message) -> list[dict]:
        to = _route(message.conversation)[1]
        template = message.payload.get("template")
        return [template_body(template, to)] if template else reply_bodies(message, to)

    def post(self, conversation: Conversation, body: dict) -> str:
        return self.client.send(_route(conversation)[0], body)


class WhatsAppObserver(TurnObserver):
    async def reply(self, conversation: Conversation, message: Message) -> None:
        from chatbot.tasks import deliver_whatsapp_message

        await database_hop(queue_task)(deliver_whatsapp_message, message.pk)

    def handed_off(self, conversation: Conversation, notice: Message | None, *, reopen_platform: bool) -> None:
        from chatbot.tasks import deliver_whatsapp_message

        if notice is not None:  # no staff inbox here: the admin shows the conversation as handed off
            queue_task(deliver_whatsapp_message, notice.pk)


register_observer(Channel.WHATSAPP, WhatsAppObserver())


# --- events in ------------------------------------------------------------------
def _school_for(phone_number_id: str) -> School | None:
    if not phone_number_id:
        return None
    return School.objects.filter(is_active=True, whatsapp_phone_number_id=phone_number_id).first()


def _contact_for(school: School, inbound: Inbound) -> Contact | None:
    try:
        phone = normalise_phone("+" + inbound.wa_id.lstrip("+"), school.default_phone_region)
    except InvalidContactDetail:
        logger.warning("WhatsApp sender %s is not a phone number: ignored", mask_phone(inbound.wa_id))
        return None
    # WhatsApp vouches for the sender's number: it identifies the contact (docs/identity.md).
    return find_or_create_contact(school=school, verified_phone=phone, whatsapp_name=inbound.profile_name[:200])


async def handle_payload(payload: dict) -> list[str]:
    """Store and dispatch every parent message of one delivery; returns what happened to each."""
    from chatbot.channels.worker import dispatch

    found, rejected = parse(payload)
    results = []
    for bad in rejected:
        logger.warning("WhatsApp message dead-lettered: %s", bad.reason)
        await database_hop(dead_letter)(Channel.WHATSAPP, bad.reason, bad.item)
        results.append(f"rejected: {bad.reason}")
    for inbound in found:
        school = await database_hop(_school_for)(inbound.phone_number_id)
        if school is None:
            logger.warning("WhatsApp message for phone number id %s, which no school has: ignored",
                           inbound.phone_number_id)
            results.append("ignored: unknown phone number id")
            continue
        contact = await database_hop(_contact_for)(school, inbound)
        if contact is None or not inbound.text:
            results.append("ignored")
            continue
        received = await receive(school=school, contact=contact, channel=Channel.WHATSAPP, text=inbound.text,
                                 channel_message_id=inbound.message_id,
                                 external_id=f"{inbound.phone_number_id}:{inbound.wa_id}", run=False)
        if received.duplicate:
            results.append("duplicate")
            continue
        if not await database_hop(handoff.route_inbound)(received.message):
            results.append("stored: the conversation is with staff")
            continue
        await dispatch(received.message.pk)
        results.append("dispatched")
    return results
