"""The Chatwoot channel: agent-bot events in, replies and handoffs out through Chatwoot's REST API.

In: `handle_event()` (called by the thin webhook view) stores a parent's message
idempotently (channel "chatwoot", channel_message_id = Chatwoot's message id)
and dispatches the turn to the agent worker; it never waits for the model, so
Chatwoot gets its 200 well inside its 5 s timeout.

Out (the rest of this package): the observer queues Celery tasks (`tasks.py`) that POST the reply as the
bot (`api_access_token` = CHATWOOT_API_TOKEN), toggle the conversation to `open`
on handoff, and write the persistent context back to the contact's custom
attributes (CHATWOOT_USER_TOKEN: contact endpoints refuse bot tokens). While a
turn runs it shows "typing" to the parent (`toggle_typing_status`), best effort.

Our Conversation.external_id is "<account id>:<conversation display id>"
(display ids are per account).
"""

import hashlib
import hmac
import logging
import time
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy

from bookings.models import School
from chatbot import handoff
from chatbot.channels.chatwoot.client import BOT_STATUS, external_id, split_external_id
from chatbot.channels.chatwoot.tasks import deliver_chatwoot_message
from chatbot.channels.inbound import ident, items, obj, objects, string
from chatbot.channels.outbound import queue_task
from chatbot.channels.worker import dispatch
from chatbot.language import reply_language
from chatbot.models import Channel, Conversation, Message
from chatbot.services import current_conversation, end_conversation, receive
from crm.identity import InvalidContactDetail, normalise_email, normalise_phone
from crm.models import Contact
from crm.services import find_or_create_contact
from plumbing.hops import database_hop
from plumbing.logging import mask_phone
from plumbing.redis import get_redis

logger = logging.getLogger(__name__)


# --- signatures --------------------------------------------------------------
def valid_signature(body: bytes, timestamp: str, signature: str, secret: str, now: float | None = None) -> bool:
    """X-Chatwoot-Signature = "sha256=" + hex HMAC-SHA256(secret, "{timestamp}.{raw body}"), timestamp fresh."""
    if not timestamp or not signature:
        return False
    try:
        age = abs((now if now is not None else time.time()) - int(timestamp))
    except ValueError:
        return False
    if age > settings.CHATWOOT_SIGNATURE_MAX_AGE_SECONDS:
        return False
    expected = "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature.strip())


def _account_id(payload: dict, conversation: dict) -> str:
    for candidate in ((payload.get("account") or {}).get("id"), (conversation.get("account") or {}).get("id"),
                      conversation.get("account_id"), payload.get("account_id"),
                      next(iter(conversation.get("messages") or []), {}).get("account_id")):
        if candidate:
            return str(candidate)
    return ""


def _school_for_inbox(inbox_id: Any) -> School | None:
    if inbox_id in (None, ""):
        return None
    try:
        inbox = int(inbox_id)
    except (TypeError, ValueError):
        return None
    for school in School.objects.filter(is_active=True).exclude(chatwoot_inbox_ids=[]):
        if inbox in (school.chatwoot_inbox_ids or []):
            return school
    return None


def _contact_for(school: School, sender: dict, channel_type: str) -> Contact | None:
    if not sender.get("id"):
        return None
    phone = email = ""
    if sender.get("phone_number"):
        try:
            phone = normalise_phone(str(sender["phone_number"]), school.default_phone_region)
        except InvalidContactDetail:
            logger.info("ignoring unreadable phone %s of Chatwoot contact %s", mask_phone(str(sender["phone_number"])),
                        sender["id"])
    if sender.get("email"):
        try:
            email = normalise_email(str(sender["email"]))
        except InvalidContactDetail:
            email = ""
    on_whatsapp = "whatsapp" in (channel_type or "").lower()
    # The Chatwoot contact id identifies the parent. On a WhatsApp inbox the number is the sender's, vouched for
    # by WhatsApp; elsewhere (website widget, e-mail) it is whatever the visitor typed: a detail, never a key.
    return find_or_create_contact(school=school, chatwoot_contact_id=str(sender["id"]), email=email,
                                  **({"verified_phone": phone} if on_whatsapp else {"phone": phone}),
                                  whatsapp_name=str(sender.get("name") or "")[:200] if on_whatsapp else "")


def _text_of(payload: dict) -> str:
    text = str(payload.get("content") or "").strip()
    if not text and payload.get("attachments"):
        kinds = sorted({str(a.get("file_type") or "file") for a in payload["attachments"]})
        text = f"[sent {', '.join(kinds)}]"
    return text[: settings.CHAT_MAX_MESSAGE_CHARS]


def _resolve(payload: dict, conversation: dict, sender: dict) -> tuple[School, Contact, str] | None:
    inbox_id = conversation.get("inbox_id") or (payload.get("inbox") or {}).get("id")
    school = _school_for_inbox(inbox_id)
    if school is None:
        logger.warning("Chatwoot event for inbox %s, which no school lists: ignored", inbox_id)
        return None
    contact = _contact_for(school, sender, str(conversation.get("channel") or ""))
    account = _account_id(payload, conversation)
    if contact is None or not account or not conversation.get("id"):
        logger.warning("Chatwoot event without contact, account or conversation id: ignored")
        return None
    return school, contact, external_id(account, conversation["id"])


async def _inbound(payload: dict, conversation: dict, sender: dict, text: str, channel_message_id: str) -> str:
    if not text:
        return "ignored: empty message"
    resolved = await database_hop(_resolve)(payload, conversation, sender)
    if resolved is None:
        return "ignored: unknown inbox or contact"
    school, contact, ref = resolved
    received = await receive(school=school, contact=contact, channel=Channel.CHATWOOT, text=text,
                             channel_message_id=channel_message_id, external_id=ref, run=False)
    if received.duplicate:
        return "duplicate"
    bot_answers = await database_hop(handoff.route_inbound)(received.message, conversation.get("status"))
    if not bot_answers:
        return "stored: the conversation is with staff"
    first = await database_hop(
        received.conversation.messages.filter(role=Message.Role.USER).exclude(pk=received.message.pk).exists)()
    extra = {}
    if not first:
        account, _ = split_external_id(ref)
        extra["session_start"] = {"account_id": account, "contact_id": str(sender.get("id")),
                                  "attributes": sender.get("custom_attributes") or {}}
    await dispatch(received.message.pk, channel=Channel.CHATWOOT, **extra)
    return "dispatched"


def _staff_replied(payload: dict, conversation: dict) -> str:
    meta_sender = (conversation.get("meta") or {}).get("sender") or {}
    resolved = _resolve(payload, conversation, meta_sender)
    if resolved is None:
        return "ignored: unknown inbox or contact"
    school, contact, ref = resolved
    ours = current_conversation(school, contact, Channel.CHATWOOT, ref)
    try:
        with transaction.atomic():
            Message.objects.create(conversation=ours, role=Message.Role.STAFF, channel=Channel.CHATWOOT,
                                   text=str(payload.get("content") or ""), channel_message_id=str(payload["id"]),
                                   processed_at=timezone.now())
    except IntegrityError:
        return "duplicate"
    handoff.hand_off(ours, "a staff member replied in Chatwoot",
                     reopen_platform=conversation.get("status") == BOT_STATUS)
    return "handed off: staff replied"


async def _message_created(payload: dict) -> str:
    conversation = payload.get("conversation") or {}
    if payload.get("private"):
        return "ignored: private note"
    kind = payload.get("message_type")
    sender = payload.get("sender") or {}
    if kind == "outgoing":
        if sender.get("type") == "agent_bot":
            return "ignored: our own reply"
        if sender.get("type") == "user" and payload.get("id"):
            return await database_hop(_staff_replied)(payload, conversation)
        return "ignored: outgoing"
    if kind != "incoming":
        return f"ignored: {kind} message"
    if not payload.get("id"):
        return "ignored: no message id"
    return await _inbound(payload, conversation, sender, _text_of(payload), str(payload["id"]))


async def _message_updated(payload: dict) -> str:
    """A web-widget visitor picked an option of our input_select: that choice is their next message."""
    submitted = (payload.get("content_attributes") or {}).get("submitted_values") or []
    if payload.get("message_type") != "outgoing" or not submitted or not payload.get("id"):
        return "ignored: not an option submission"
    choice = submitted[0] if isinstance(submitted[0], dict) else {}
    text = str(choice.get("value") or choice.get("title") or "").strip()[: settings.CHAT_MAX_MESSAGE_CHARS]
    conversation = payload.get("conversation") or {}
    sender = (conversation.get("meta") or {}).get("sender") or {}
    return await _inbound(payload, conversation, sender, text, f"{payload['id']}:submitted")


def _status_changed(payload: dict) -> str:
    event = payload.get("event")
    if event == "conversation_updated":
        changed = [c for c in payload.get("changed_attributes") or [] if isinstance(c, dict) and "status" in c]
        if not changed:
            return "ignored: no status change"
    status = {"conversation_resolved": "resolved", "conversation_opened": "open"}.get(event) or payload.get("status")
    account = _account_id(payload, payload)
    ours = (Conversation.objects.filter(channel=Channel.CHATWOOT, external_id=external_id(account, payload.get("id")))
            .exclude(status=Conversation.Status.ENDED).order_by("-started_at").first())
    if ours is None:
        return "ignored: no conversation of ours"
    if status in ("open", "snoozed"):
        handoff.hand_off(ours, f"the conversation was set to {status} in Chatwoot", reopen_platform=False)
        return "handed off"
    if status == BOT_STATUS:
        handoff.resume_bot(ours, "set to pending in Chatwoot")
        return "bot resumed"
    if status == "resolved":
        end_conversation(ours)
        return "ended"
    return f"ignored: status {status}"


GREETING = gettext_lazy("Hello! I'm the %(school)s concierge. I can book a campus tour, move or cancel one, arrange "
                        "a call from our admissions team, or answer questions about the school. How can I help?")


def _greet(payload: dict) -> str:
    conversation = payload.get("current_conversation") or {}
    if not conversation.get("id"):
        return "ignored: no conversation yet"
    if conversation.get("status") not in (None, BOT_STATUS):
        return "ignored: the conversation is with staff"
    conversation.setdefault("inbox_id", (payload.get("inbox") or {}).get("id"))
    resolved = _resolve(payload, conversation, payload.get("contact") or {})
    if resolved is None:
        return "ignored: unknown inbox or contact"
    school, contact, ref = resolved
    if not get_redis().set(f"chatwoot:greeted:{ref}", "1", nx=True, ex=settings.ACTIVE_CONTEXT_TTL_SECONDS):
        return "ignored: already greeted"
    ours = current_conversation(school, contact, Channel.CHATWOOT, ref)
    if ours.status != Conversation.Status.ACTIVE or ours.messages.filter(role=Message.Role.ASSISTANT).exists():
        return "ignored: already talking"
    spoken = reply_language(school, contact)
    with translation.override(spoken):
        text = str(GREETING) % {"school": school.name}
    greeting = Message.objects.create(conversation=ours, role=Message.Role.ASSISTANT, channel=Channel.CHATWOOT,
                                      text=text, language=spoken, payload={"blocks": [], "greeting": True})
    transaction.on_commit(lambda: queue_task(deliver_chatwoot_message, greeting.pk))
    return "greeted"


ID_MAX = 20  # Chatwoot's ids are integers (a bigint has at most 20 digits); "<account>:<conversation>" fits 64


def _person(value: Any, what: str) -> None:
    person = obj(value, what)
    ident(person.get("id"), f"{what}.id", ID_MAX)
    obj(person.get("custom_attributes"), f"{what}.custom_attributes")
    for field in ("name", "email", "phone_number", "type"):
        string(person.get(field), f"{what}.{field}")


def check_event(payload: dict) -> None:
    """Raise Malformed when a field this module reads is not of the type Chatwoot sends, or an id is longer than
    its column: the event is then refused whole (it carries one message)."""
    ident(payload.get("id"), "id", ID_MAX)
    ident(payload.get("account_id"), "account_id", ID_MAX)
    for what in ("event", "content", "message_type", "status"):
        string(payload.get(what), what)
    _person(payload.get("sender"), "sender")
    _person(payload.get("contact"), "contact")
    for what in ("account", "inbox"):
        ident(obj(payload.get(what), what).get("id"), f"{what}.id", ID_MAX)
    objects(payload.get("attachments"), "attachments")
    items(obj(payload.get("content_attributes"), "content_attributes").get("submitted_values"), "submitted_values")
    items(payload.get("changed_attributes"), "changed_attributes")
    for message in objects(payload.get("messages"), "messages"):  # a conversation event is the conversation
        ident(message.get("account_id"), "messages.account_id", ID_MAX)
    for what in ("conversation", "current_conversation"):
        conversation = obj(payload.get(what), what)
        for field in ("id", "inbox_id", "account_id"):
            ident(conversation.get(field), f"{what}.{field}", ID_MAX)
        string(conversation.get("channel"), f"{what}.channel")
        string(conversation.get("status"), f"{what}.status")
        ident(obj(conversation.get("account"), f"{what}.account").get("id"), f"{what}.account.id", ID_MAX)
        for message in objects(conversation.get("messages"), f"{what}.messages"):
            ident(message.get("account_id"), f"{what}.messages.account_id", ID_MAX)
        _person(obj(conversation.get("meta"), f"{what}.meta").get("sender"), f"{what}.meta.sender")


async def handle_event(payload: dict) -> str:
    """Act on one agent-bot event; returns a short description of what was done. Malformed: see check_event."""
    check_event(payload)
    event = payload.get("event")
    if event == "message_created":
        return await _message_created(payload)
    if event == "message_updated":
        return await _message_updated(payload)
    if event in ("conversation_status_changed", "conversation_updated", "conversation_opened",
                 "conversation_resolved"):
        return await database_hop(_status_changed)(payload)
    if event == "webwidget_triggered":
        return await database_hop(_greet)(payload)
    return f"ignored: event {event}"
