"""The Chatwoot channel: agent-bot events in, replies and handoffs out through Chatwoot's REST API.

In: `handle_event()` (called by the thin webhook view) stores a parent's message
idempotently (channel "chatwoot", channel_message_id = Chatwoot's message id)
and dispatches the turn to the agent worker; it never waits for the model, so
Chatwoot gets its 200 well inside its 5 s timeout.

Out: the observer queues Celery tasks (chatbot.tasks) that POST the reply as the
bot (`api_access_token` = CHATWOOT_API_TOKEN), toggle the conversation to `open`
on handoff, and write the persistent context back to the contact's custom
attributes (CHATWOOT_USER_TOKEN: contact endpoints refuse bot tokens). While a
turn runs it shows "typing" to the parent (`toggle_typing_status`), best effort.

Our Conversation.external_id is "<account id>:<conversation display id>"
(display ids are per account).
"""

import asyncio
import functools
import hashlib
import hmac
import logging
import time
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext, gettext_lazy

from bookings.models import School
from chatbot import handoff
from chatbot.channels.base import TurnObserver, register_observer
from chatbot.channels.inbound import clean, ident, items, obj, objects, string
from chatbot.channels.outbound import NotCheckable, Sender, Skip, choice_options, queue_task, reply_text
from chatbot.language import ENGLISH, reply_language
from chatbot.models import Channel, Conversation, Message
from chatbot.services import current_conversation, end_conversation, receive
from config.logging import mask_phone
from crm.external.http import ApiClient, ExternalError, call, make_client
from crm.identity import InvalidContactDetail, normalise_email, normalise_phone
from crm.models import PERSISTENT_CONTEXT_FIELDS, Contact
from crm.services import find_or_create_contact, trusted_context, update_persistent_context
from plumbing.hops import database_hop
from plumbing.redis import get_redis

logger = logging.getLogger(__name__)

SYSTEM = "chatwoot"
MAX_SELECT_TEXT = 1000  # longer replies go out as text, then the options with a short prompt
BOT_STATUS = "pending"  # the only Chatwoot status in which the bot may talk
TYPING_TIMEOUT_SECONDS = 3.0  # a typing indicator that cannot be shown quickly is not worth waiting for
# Persistent-context fields a person may correct in Chatwoot: Chatwoot's value wins at session start.
# The rest (tour, callback, Pipedrive ids) are written by our booking flow: ours wins.
CHATWOOT_WINS = ("parent_preferred_name", "parent_preferred_phone", "parent_preferred_email", "child_name",
                 "child_dob", "child_enrollment_date_preferred")


# --- identifiers -----------------------------------------------------------
def external_id(account_id: Any, conversation_id: Any) -> str:
    return f"{account_id}:{conversation_id}"


def split_external_id(value: str) -> tuple[str, str]:
    account, _, conversation = (value or "").partition(":")
    if not account or not conversation:
        raise ValueError(f"not a Chatwoot conversation reference: {value!r}")
    return account, conversation


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


# --- the REST client -----------------------------------------------------------
class ChatwootClient(ApiClient):
    """Chatwoot's application API: bot calls with the agent-bot token, contact calls with a user token."""

    def __init__(self, timeout: float | None = None) -> None:
        self.bot = make_client(settings.CHATWOOT_URL, {"api_access_token": settings.CHATWOOT_API_TOKEN}, timeout)
        self.user = make_client(settings.CHATWOOT_URL, {"api_access_token": settings.CHATWOOT_USER_TOKEN}, timeout)

    def close(self) -> None:
        self.bot.close()
        self.user.close()

    @staticmethod
    def _conversation(account: str, conversation: str) -> str:
        return f"/api/v1/accounts/{account}/conversations/{conversation}"

    def post_message(self, account: str, conversation: str, body: dict) -> str:
        response = call(self.bot, SYSTEM, "POST", f"{self._conversation(account, conversation)}/messages", json=body)
        return str(response.json().get("id") or "")

    def conversation_status(self, account: str, conversation: str) -> str:
        data = call(self.bot, SYSTEM, "GET", self._conversation(account, conversation)).json()
        return str(data.get("status") or (data.get("payload") or {}).get("status") or "")

    def toggle_status(self, account: str, conversation: str, status: str) -> str:
        data = call(self.bot, SYSTEM, "POST", f"{self._conversation(account, conversation)}/toggle_status",
                    json={"status": status}).json()
        return str((data.get("payload") or {}).get("current_status") or "")

    def toggle_typing(self, account: str, conversation: str, active: bool) -> None:
        call(self.bot, SYSTEM, "POST", f"{self._conversation(account, conversation)}/toggle_typing_status",
             json={"typing_status": "on" if active else "off"})

    def list_messages(self, account: str, conversation: str) -> list[dict]:
        data = call(self.user, SYSTEM, "GET", f"{self._conversation(account, conversation)}/messages").json()
        return list(data.get("payload") or [])

    def contact_attributes(self, account: str, contact_id: str) -> dict:
        data = call(self.user, SYSTEM, "GET", f"/api/v1/accounts/{account}/contacts/{contact_id}").json()
        return dict((data.get("payload") or {}).get("custom_attributes") or {})

    def merge_contact_attributes(self, account: str, contact_id: str, attributes: dict) -> None:
        """PUT merges `custom_attributes` into the contact's existing ones (it does not replace them)."""
        call(self.user, SYSTEM, "PUT", f"/api/v1/accounts/{account}/contacts/{contact_id}",
             json={"custom_attributes": attributes})


def configured() -> bool:
    return bool(settings.CHATWOOT_URL and settings.CHATWOOT_API_TOKEN)


def contacts_configured() -> bool:
    """Contact endpoints (custom attributes) and message lists need a user token: bot tokens are refused there."""
    return bool(settings.CHATWOOT_URL and settings.CHATWOOT_USER_TOKEN)


# --- replies ----------------------------------------------------------------
def template_body(text: str, template: dict) -> dict:
    """A WhatsApp template through Chatwoot (`template_params`; the placeholders {{1}}, {{2}} ... as
    `processed_params.body`); `content` is what the conversation shows."""
    return {"content": text, "template_params": {
        "name": template["name"], "category": template.get("category") or "UTILITY",
        "language": template["language"],
        "processed_params": {"body": {str(index): str(value)
                                      for index, value in enumerate(template.get("parameters") or [], 1)}}}}


def reply_bodies(message: Message) -> list[dict]:
    """The Chatwoot messages for one reply: slot buttons become an `input_select` with readable titles.

    On WhatsApp a tapped option comes back as a new message whose text is its
    *title*, so titles are the slot itself ("Wed 25 Nov, 09:00"), unique, and
    within WhatsApp's 20-character button limit; the value is the canonical
    "Wednesday 2026-11-25 at 09:00" (the web widget sends that back).
    """
    text = reply_text(message)
    plain = {"content": text, "message_type": "outgoing", "private": False}
    options = choice_options(message, max_items=10, title_max=20)
    if not options:
        return [plain]
    select = {**plain, "content_type": "input_select",
              "content_attributes": {"items": [{"title": title, "value": value} for title, value in options]}}
    if len(text) > MAX_SELECT_TEXT:
        with translation.override(message.language or ENGLISH):
            return [plain, {**select, "content": gettext("Please choose one:")}]
    return [select]


class ChatwootSender(Sender):
    system = SYSTEM

    def __init__(self, client: ChatwootClient) -> None:
        self.client = client

    def bodies(self, message: Message) -> list[dict]:
        template = message.payload.get("template")
        return [template_body(message.text, template)] if template else reply_bodies(message)

    def gate(self, conversation: Conversation) -> None:
        account, number = split_external_id(conversation.external_id)
        status = self.client.conversation_status(account, number)
        if status != BOT_STATUS:
            if status in ("open", "snoozed"):
                handoff.hand_off(conversation, f"the conversation is {status} in Chatwoot", reopen_platform=False)
            raise Skip(f"the Chatwoot conversation is {status or 'unknown'}, not {BOT_STATUS}")

    def post(self, conversation: Conversation, body: dict) -> str:
        account, number = split_external_id(conversation.external_id)
        return self.client.post_message(account, number, body)

    def reconcile(self, conversation: Conversation, body: dict, claimed_at) -> str | None:
        if not settings.CHATWOOT_USER_TOKEN:
            raise NotCheckable
        account, number = split_external_id(conversation.external_id)
        since = (claimed_at.timestamp() if claimed_at else 0) - 120
        for item in reversed(self.client.list_messages(account, number)):
            outgoing = item.get("message_type") in (1, "outgoing")
            if outgoing and item.get("content") == body.get("content") and (item.get("created_at") or 0) >= since:
                return str(item.get("id"))
        return None


# --- the observer -----------------------------------------------------------------
def _toggle_typing(external: str, active: bool) -> None:
    """Best effort: the indicator is cosmetic, so a failure is logged and the turn goes on."""
    try:
        account, conversation = split_external_id(external)
        with ChatwootClient(timeout=TYPING_TIMEOUT_SECONDS) as client:
            client.toggle_typing(account, conversation, active)
    except Exception as exc:
        logger.warning("could not turn the typing indicator %s in Chatwoot conversation %s (%s: %s)",
                       "on" if active else "off", external, type(exc).__name__, exc)


# The last typing toggle per conversation: "off" waits for the "on" before it, so it can never overtake it
# and leave the parent looking at a bot that types forever.
_typing: dict[int, asyncio.Task] = {}


def _forget_typing(conversation_pk: int, task: asyncio.Task) -> None:
    if _typing.get(conversation_pk) is task:
        del _typing[conversation_pk]


async def _send_typing(previous: asyncio.Task | None, external: str, active: bool) -> None:
    if previous is not None:
        await asyncio.wait([previous])
    await asyncio.to_thread(_toggle_typing, external, active)


class ChatwootObserver(TurnObserver):
    async def typing(self, conversation: Conversation, active: bool) -> None:
        """Toggle Chatwoot's typing indicator in the background: the turn never waits for Chatwoot.

        Not a message, so not through the send ledger: a lost toggle is harmless, a repeated one too.
        """
        if not configured() or not conversation.external_id:
            return
        previous = _typing.get(conversation.pk)
        if previous is not None and (previous.done() or previous.get_loop() is not asyncio.get_running_loop()):
            previous = None
        task = asyncio.create_task(_send_typing(previous, conversation.external_id, active))
        _typing[conversation.pk] = task
        task.add_done_callback(functools.partial(_forget_typing, conversation.pk))

    async def reply(self, conversation: Conversation, message: Message) -> None:
        from chatbot.tasks import deliver_chatwoot_message

        await database_hop(queue_task)(deliver_chatwoot_message, message.pk)

    def handed_off(self, conversation: Conversation, notice: Message | None, *, reopen_platform: bool) -> None:
        from chatbot.tasks import chatwoot_hand_off

        if notice is not None or reopen_platform:
            queue_task(chatwoot_hand_off, conversation.pk, notice.pk if notice else None, reopen_platform)

    def session_ended(self, conversation: Conversation) -> None:
        from chatbot.tasks import chatwoot_push_contact_context

        if contacts_configured():
            transaction.on_commit(lambda: queue_task(chatwoot_push_contact_context, conversation.pk))


register_observer(Channel.CHATWOOT, ChatwootObserver())


# --- persistent context ---------------------------------------------------------
def _clean_attributes(attributes: dict) -> dict:
    return {k: v for k, v in (attributes or {}).items() if k in PERSISTENT_CONTEXT_FIELDS and v not in (None, "")}


def merge_into_context(contact: Contact, attributes: dict) -> dict:
    """Session start: Chatwoot's custom attributes into the contact's persistent context (see CHATWOOT_WINS).

    A website visitor can set them: only what crm.services.trusted_context takes is read (clean details, and a
    tour or call back only when it is this contact's own)."""
    incoming = trusted_context(contact, clean(attributes) if isinstance(attributes, dict) else {}, CHATWOOT_WINS)
    current = Contact.objects.values_list("context", flat=True).get(pk=contact.pk) or {}
    changes = {k: v for k, v in incoming.items()
               if (k in CHATWOOT_WINS and current.get(k) != v) or current.get(k) in (None, "")}
    if changes:
        update_persistent_context(contact, **changes)
    return changes


def load_contact_context(message_id: int, data: dict) -> None:
    """Read the contact's custom attributes (API when a user token is set, else the webhook's copy) and merge."""
    message = Message.objects.select_related("conversation__contact").filter(pk=message_id).first()
    if message is None:
        return
    attributes = data.get("attributes") or {}
    if contacts_configured() and data.get("contact_id"):
        try:
            with ChatwootClient(timeout=3.0) as client:
                attributes = client.contact_attributes(str(data["account_id"]), str(data["contact_id"]))
        except ExternalError as exc:
            logger.warning("could not read Chatwoot contact %s, using the webhook's copy: %s", data["contact_id"], exc)
    merge_into_context(message.conversation.contact, attributes)


def context_for_chatwoot(contact: Contact) -> dict:
    """Session end: what goes back to the contact's custom attributes (merged there, never replacing)."""
    return _clean_attributes(contact.context or {})


# --- events in --------------------------------------------------------------------
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
    from chatbot.channels.worker import dispatch

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
    await dispatch(received.message.pk, **extra)
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
    from chatbot.tasks import deliver_chatwoot_message

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
