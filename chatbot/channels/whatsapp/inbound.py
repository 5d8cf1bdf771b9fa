"""The WhatsApp Cloud API channel (direct, without Chatwoot): webhook in, Graph API out.

In: Meta posts `{"object": "whatsapp_business_account", "entry": [{"changes": [{"value": {...}}]}]}`
signed with `X-Hub-Signature-256` (HMAC-SHA256 of the raw body with the App
Secret). Text, interactive replies (button_reply / list_reply) and template
quick replies become the parent's messages; status updates are ignored. The
school is the one whose `whatsapp_phone_number_id` received the message.

Out (`sender.py`, `tasks.py`): `POST {WHATSAPP_API_URL}/{phone number id}/messages` with a Bearer token:
slot choices as reply buttons (up to 3, titles <= 20 chars) or a list (up to 10
rows, titles <= 24 chars), everything else as text. A button's id is the
canonical slot text ("Wednesday 2026-11-25 at 09:00"), and that is what comes
back as the parent's message when they tap it.

Our Conversation.external_id is "<phone number id>:<wa_id>".
"""

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from bookings.models import School
from chatbot import handoff
from chatbot.channels.inbound import Malformed, dead_letter, ident, items, obj, objects, string
from chatbot.channels.worker import dispatch
from chatbot.models import Channel
from chatbot.services import receive
from crm.identity import InvalidContactDetail, normalise_phone
from crm.models import Contact
from crm.services import find_or_create_contact
from plumbing.hops import database_hop
from plumbing.logging import mask_phone

logger = logging.getLogger(__name__)

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
        await dispatch(received.message.pk, channel=Channel.WHATSAPP)
        results.append("dispatched")
    return results
