"""The web chat channel: the websocket consumer and its turn observer.

Protocol v3 (docs/web-chat-protocol.md): v2, plus a hosted model's answer as it is written (the draft
frames of `chatbot.agent.drafts`), sent only to sockets that opened with `?protocol=3`. Every socket of a visitor (tabs,
reconnects) joins the group `chat_<school>_<visitor>`. The observer writes a
turn's frames straight to the group's sockets in this process and sends them
over the channel layer only to the group's sockets in other processes, so
whichever process runs the turn, every open socket sees it.

`ChatOriginValidator` guards the handshake: pages on ALLOWED_HOSTS, plus the
schools' own websites listed in CHAT_ALLOWED_ORIGINS (exact origins).
"""

import asyncio
import datetime as dt
import logging
import re
import secrets
import time
from collections import OrderedDict
from urllib.parse import parse_qs, urlsplit

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from channels.security.websocket import AllowedHostsOriginValidator
from django.conf import settings
from django.core import signing
from django.core.exceptions import ImproperlyConfigured
from django.utils import translation
from django.utils.translation import gettext
from redis.exceptions import RedisError

from bookings.links import manage_path
from bookings.models import School
from chatbot import language, safejson, selectors
from chatbot.channels.base import TurnObserver
from chatbot.channels.inbound import clean, storable
from chatbot.channels.web.limits import allow_handshake, allow_message, client_address
from chatbot.models import Channel, Conversation, Message
from chatbot.services import Received, answer_or_queue, receive
from crm.models import Contact
from crm.services import create_web_visitor_contact, find_or_create_contact
from plumbing.hops import database_hop

logger = logging.getLogger(__name__)

PROTOCOL_VERSION = 3
DRAFT_PROTOCOL = 3  # the first version whose widget shows drafts; an older one is sent none
DRAFT_FRAMES = frozenset({"reply_delta", "reply_dropped"})
VISITOR_SALT = "chatbot.web-visitor"
CLOSE_UNKNOWN_SCHOOL = 4404
CLOSE_RATE_LIMITED = 4429
CLOSE_UNAVAILABLE = 4503
CHANNEL_RETRY_SECONDS = 5
DEFAULT_PORTS = {"http": 80, "https": 443}
HOSTNAME = re.compile(r"[a-z0-9.:-]+")  # what urlsplit leaves of a DNS name (punycode), an IPv4 or IPv6 address


def visitor_group(school_id: int, visitor: str) -> str:
    """Every socket of one visitor (tabs, reconnects) is in this group, from the handshake on: no database row
    is needed to join it, and it reaches them whichever of the visitor's conversations a turn runs in."""
    return f"chat_{school_id}_{visitor}"


def _with_manage_link(block: dict) -> dict:
    """A booking card on the web chat that booked it carries the tour's signed manage link (docs/identity.md)."""
    if block.get("type") == "booking_confirmation" and block.get("booking_id"):
        return {**block, "manage_url": manage_path(str(block["booking_id"]))}
    return block


def message_event(message: Message) -> dict:
    return {"type": "message", "id": message.pk, "role": message.role, "text": message.text,
            "blocks": [_with_manage_link(b) for b in message.payload.get("blocks", [])],
            "created_at": message.created_at.isoformat()}


def language_fields(code: str) -> dict:
    """The language the widget is to speak and its texts in it (frames "session" and "language")."""
    return {"language": code, "texts": language.widget_texts(code)}


def live_message_event(message: Message) -> dict:
    """A reply as it is sent live: with the language it is written in and the widget's texts in it, so the
    widget re-labels itself before showing it (one frame)."""
    return {**message_event(message), **(language_fields(message.language) if message.language else {})}


# The sockets of this process, by visitor group: a turn running here writes to them directly (no channel
# layer, no Redis); the channel layer carries a frame only to sockets of the group in other processes.
_local_sockets: dict[str, dict[str, "WebChatConsumer"]] = {}


async def _remote_members(layer, group: str) -> list[str]:
    """The group's channels in other processes (one Redis command with channels-redis)."""
    if hasattr(layer, "_group_key"):  # channels-redis: the group is a sorted set of (channel, joined at)
        key = layer._group_key(group)
        return _elsewhere(group, await layer.connection(layer.consistent_hash(group)).zrangebyscore(
            key, int(time.time()) - layer.group_expiry, "+inf"))
    return _elsewhere(group, getattr(layer, "groups", {}).get(group, {}))  # InMemoryChannelLayer: its table


def _elsewhere(group: str, channels) -> list[str]:
    """These channel names of the group (bytes or text), less this process's sockets."""
    local = _local_sockets.get(group, {})
    names = (name.decode() if isinstance(name, bytes) else name for name in channels)
    return [name for name in names if name not in local]


# The group's sockets in other processes as last looked up (by a reply), for progress frames: bounded, oldest
# groups forgotten first.
_last_remote: "OrderedDict[str, list[str]]" = OrderedDict()
LAST_REMOTE_GROUPS = 4096


def group_in_our_redis(school_id: int, visitor: str) -> tuple[bytes, int] | None:
    """(the Redis key, the lowest live score) of the visitor's group when the channel layer keeps its groups
    in the Redis at REDIS_URL (channels-redis on that one host): another step on that Redis can read the
    group's members in its own round trip. None otherwise."""
    layer = get_channel_layer()
    if not hasattr(layer, "_group_key") or [host.get("address") for host in layer.hosts] != [settings.REDIS_URL]:
        return None
    return layer._group_key(visitor_group(school_id, visitor)), int(time.time()) - layer.group_expiry


async def _remote(layer, group: str, fresh: bool, found: list | None = None) -> list[str]:
    if found is not None:  # read by the caller just now (`group_in_our_redis`)
        members = _elsewhere(group, found)
    elif not fresh and group in _last_remote:
        return _last_remote[group]
    else:
        members = await _remote_members(layer, group)
    _last_remote[group] = members
    _last_remote.move_to_end(group)
    while len(_last_remote) > LAST_REMOTE_GROUPS:
        _last_remote.popitem(last=False)
    return members


async def send_to_visitor(school_id: int, visitor: str, payload: dict, fresh: bool = True,
                          found: list | None = None) -> None:
    """One frame to every socket of the visitor: those of this process directly, the others over the layer.

    `fresh=False` (progress: typing, reasoning steps): the visitor's sockets in other processes as a reply last
    found them, saving a look-up per frame; a tab opened in another process since then sees the turn's reply
    but not its progress. A reply always looks them up, after it was stored: a tab that joins later reads it
    in its history; `found`: the group's members as the caller read them after storing the reply
    (`group_in_our_redis`), instead of looking them up here."""
    group = visitor_group(school_id, visitor)
    layer = get_channel_layer()
    event = {"type": "chat.event", "payload": payload}
    running = asyncio.get_running_loop()
    for consumer in list(_local_sockets.get(group, {}).values()):
        if consumer.loop is running:
            await consumer.chat_event(event)
        else:  # a turn on another event loop of this process (the in-process runner): through the layer
            await layer.send(consumer.channel_name, event)
    for channel in await _remote(layer, group, fresh, found):
        await layer.send(channel, event)


class WebObserver(TurnObserver):
    """Protocol v3 frames: `typing` at a turn's start, one `reasoning_steps` per tool cycle, a hosted model's
    answer as it is written (`reply_delta`, `reply_dropped`), and the reply's `message` carrying the turn's last
    steps and what it is to the draft shown (it also ends the typing indicator)."""

    shows_drafts = True

    async def _send(self, conversation: Conversation, payload: dict, fresh: bool = True,
                    found: list | None = None) -> None:
        # Turns load the conversation with its contact (select_related): no query here.
        await send_to_visitor(conversation.school_id, conversation.contact.web_visitor_id, payload, fresh, found)

    def reply_lookup(self, conversation):
        return group_in_our_redis(conversation.school_id, conversation.contact.web_visitor_id)

    async def typing(self, conversation, active):
        await self._send(conversation, {"type": "typing", "active": active}, fresh=False)

    async def steps(self, conversation, steps):
        await self._send(conversation, {"type": "reasoning_steps", "steps": steps}, fresh=False)

    async def draft(self, conversation, frame):
        await self._send(conversation, frame, fresh=False)

    async def queued(self, conversation, message):
        with translation.override(language.reply_language(conversation.school, conversation.contact)):
            text = gettext("Got it. I'll answer this as soon as I've finished the last one.")
        await self._send(conversation, {"type": "queued", "message_id": message.pk, "text": text})

    async def reply(self, conversation, message):
        await self._send(conversation, live_message_event(message))

    async def turn_reply(self, conversation, message, steps, looked_up=None, draft=""):
        await self._send(conversation, {**live_message_event(message), "steps": steps,
                                        **({"draft": draft} if draft else {})}, found=looked_up)


# --- who may open the socket ------------------------------------------------------------
def origin_key(value: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin such as "https://www.school.sg"; None for anything else ("null", paths)."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if (scheme not in DEFAULT_PORTS or not HOSTNAME.fullmatch(parts.hostname or "") or parts.path not in ("", "/")
            or parts.query or parts.fragment or parts.username is not None):
        return None
    return scheme, parts.hostname, port or DEFAULT_PORTS[scheme]


def embedding_origins() -> frozenset[tuple[str, str, int]]:
    """CHAT_ALLOWED_ORIGINS, parsed. No wildcards: each school website is listed with its scheme and host."""
    keys = set()
    for value in settings.CHAT_ALLOWED_ORIGINS:
        key = origin_key(value)
        if key is None:
            raise ImproperlyConfigured(f"CHAT_ALLOWED_ORIGINS: {value!r} is not an origin like https://www.school.sg "
                                       "(scheme and host, optional port; no path, no wildcard)")
        keys.add(key)
    return frozenset(keys)


def _header(scope: dict, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin1")
    return None


class ChatOriginValidator:
    """Websocket handshakes from ALLOWED_HOSTS pages (as channels checks them), or from an exact
    CHAT_ALLOWED_ORIGINS origin; everything else, a missing Origin included, is refused (HTTP 403).

    The browser's Origin is the only thing that stops another site from opening a parent's chat in the
    background, so embedding origins are compared exactly: scheme, host and port.
    """

    def __init__(self, application) -> None:
        self.application = application
        self.allowed_hosts = AllowedHostsOriginValidator(application)
        embedding_origins()  # a malformed CHAT_ALLOWED_ORIGINS stops the server at start, not each handshake

    async def __call__(self, scope: dict, receive, send) -> None:
        origin = _header(scope, b"origin")
        if origin is not None and origin_key(origin) in embedding_origins():
            return await self.application(scope, receive, send)
        return await self.allowed_hosts(scope, receive, send)


# --- the consumer -------------------------------------------------------------------------
def _visitor_identity(school: School, token: str | None) -> tuple[str, str, bool]:
    """(visitor id, signed token, is_new). A missing, tampered, foreign or expired token starts a new visitor.

    A token expires VISITOR_TOKEN_MAX_AGE_DAYS after its last use: every connection signs it afresh (the widget
    keeps the one of the session frame), so a parent who comes back within that keeps the conversation, and a
    token found on a shared or stolen device months later resumes nothing."""
    visitor = None
    if token:
        try:
            data = signing.loads(token, salt=VISITOR_SALT,
                                 max_age=dt.timedelta(days=settings.VISITOR_TOKEN_MAX_AGE_DAYS))
            if data.get("school") == school.slug:
                visitor = data["visitor"]
        except signing.BadSignature:  # tampered, or expired (SignatureExpired)
            pass
    is_new = visitor is None
    if is_new:
        visitor = secrets.token_urlsafe(12)
    return visitor, signing.dumps({"school": school.slug, "visitor": visitor}, salt=VISITOR_SALT), is_new


def _open_session(slug: str, token: str | None):
    """Read-only: the school, the visitor, and (for a returning visitor) its current conversation and history.

    Nothing is written: a contact and a conversation are created by the visitor's first message, so opening the
    page (or a flood of handshakes) leaves no rows behind.
    """
    school = School.objects.filter(slug=slug, is_active=True).first()
    if school is None:
        return None
    visitor, token, is_new = _visitor_identity(school, token)
    conversation, spoken = None, ""
    if not is_new:
        contact = Contact.objects.filter(school=school, web_visitor_id=visitor).first()
        conversation = selectors.open_conversation(school, contact, Channel.WEB) if contact else None
        spoken = language.reply_language(school, contact) if contact and contact.language else ""
    return school, visitor, token, is_new, conversation, spoken


def _message_id(contact: Contact, client_id: str) -> str:
    """The channel message id of a frame: the widget's own id, per contact (a resent frame is stored once)."""
    return f"{contact.pk}:{client_id}" if client_id else ""


def _visitor_contact(school: School, visitor: str, text: str, new_visitor: bool) -> tuple[Contact, bool]:
    """The visitor's contact for the socket's first message, and whether it was created just now (it has no
    conversation to look up). A new one keeps the language of this message: no second write for it."""
    spoken = language.detect(text, language.ENGLISH)
    contact = None
    if new_visitor:
        contact = create_web_visitor_contact(school=school, web_visitor_id=visitor, language=spoken)
    if contact is not None:
        return contact, True
    # A returning visitor, or another of this visitor's sockets was first.
    return find_or_create_contact(school=school, web_visitor_id=visitor, language=spoken), False


def _history(conversation: Conversation) -> list[dict]:
    return [message_event(m) for m in selectors.transcript(conversation)]


class WebChatConsumer(AsyncJsonWebsocketConsumer):
    """`ws /ws/chat/<school_slug>/?visitor=<token>`: the parent's side of the web chat."""

    async def connect(self) -> None:
        self.tasks: set[asyncio.Task] = set()
        self.contact: Contact | None = None
        self.new_visitor = False  # a visitor id minted at this handshake: no contact has it yet
        self.first_message = asyncio.Lock()
        self.address = client_address(self.scope)
        self.protocol = _protocol(self.scope)
        if not await allow_handshake(self.address):
            # Refused before any database work: a flood of handshakes costs the server one Redis call each.
            logger.warning("web chat handshake refused: too many from %s", self.address)
            await self.accept()
            await self._error("rate_limited", "Too many connections from your network. Please try again in a "
                                              "minute.")
            await self.close(code=CLOSE_RATE_LIMITED)
            return
        slug = self.scope["url_route"]["kwargs"]["school_slug"]
        token = _query_param(self.scope, "visitor")
        session = await database_hop(_open_session)(slug, token)
        if session is None:
            # Accept first: a close before the handshake becomes an HTTP 403 and the browser never sees the code.
            await self.accept()
            await self.close(code=CLOSE_UNKNOWN_SCHOOL)
            return
        self.school, self.visitor, token, self.new_visitor, conversation, spoken = session
        self.spoken = spoken or language.ENGLISH  # the widget's language: its errors are said in it
        self.group = visitor_group(self.school.pk, self.visitor)
        self.loop = asyncio.get_running_loop()
        try:
            await self.channel_layer.group_add(self.group, self.channel_name)
        except (RedisError, OSError) as exc:
            await self._unavailable(exc)
            return
        _local_sockets.setdefault(self.group, {})[self.channel_name] = self
        # Read the history only once in the group: a reply stored in between is then in the history or sent
        # live (the widget de-duplicates by id), never in neither.
        history = await database_hop(_history)(conversation) if conversation else []
        await self.accept()
        await self.send_json({"type": "session", "protocol": PROTOCOL_VERSION, "visitor_token": token,
                              "new_visitor": self.new_visitor,
                              "conversation_id": conversation.pk if conversation else None,
                              "school": {"slug": self.school.slug, "name": self.school.name},
                              "max_message_chars": settings.CHAT_MAX_MESSAGE_CHARS, "history": history,
                              **(language_fields(spoken) if spoken else {})})

    @property
    def channel_receive(self):
        return self._channel_receive

    @channel_receive.setter
    def channel_receive(self, receive) -> None:
        """channels sets this to the channel layer's receive and ends the consumer when it raises: with Redis
        unreachable, before the handshake is answered (an HTTP 500). Here an unreachable layer is waited out."""
        async def waiting_out_outages() -> dict:
            while True:
                try:
                    return await receive()
                except (RedisError, OSError) as exc:
                    logger.warning("channel layer unreachable for a web chat socket (%s); trying again in %ss",
                                   type(exc).__name__, CHANNEL_RETRY_SECONDS)
                    await asyncio.sleep(CHANNEL_RETRY_SECONDS)

        self._channel_receive = waiting_out_outages

    async def _unavailable(self, exc: Exception) -> None:
        """Redis (the channel layer) is unreachable: no reply could reach this socket. Say so, in the visitor's
        language, and close (4503): the widget shows the text and tries again later. Never an HTTP 500."""
        logger.warning("web chat unavailable, the channel layer is unreachable (%s: %s)", type(exc).__name__, exc)
        del self.group  # not in it: nothing to leave on disconnect
        await self.accept()
        with translation.override(self.spoken):
            await self._error("unavailable", gettext("We can't chat right now. Please try again in a few minutes, "
                                                     "or call the school."))
        await self.close(code=CLOSE_UNAVAILABLE)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            local = _local_sockets.get(self.group, {})
            local.pop(self.channel_name, None)
            if not local:
                _local_sockets.pop(self.group, None)
            await self.channel_layer.group_discard(self.group, self.channel_name)
        # Running turns are not cancelled: their replies are stored and shown on reconnect.

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs) -> None:
        if text_data is None:
            await self._error("bad_frame", "Send JSON text frames, not binary.")
            return
        try:
            content = safejson.loads(text_data)
        except safejson.MalformedJSON:  # over-deep nesting too: an error frame, and the socket stays open
            await self._error("bad_json", "That wasn't valid JSON.")
            return
        if not isinstance(content, dict):
            await self._error("bad_frame", "Send a JSON object with a \"type\".")
            return
        await self.receive_json(content)

    async def receive_json(self, content: dict, **kwargs) -> None:
        kind = content.get("type")
        if kind == "ping":
            await self.send_json({"type": "pong"})
        elif kind == "message":
            await self._on_message(content)
        else:
            await self._error("unknown_type", f"Unknown message type {kind!r}. Use \"message\" or \"ping\".")

    async def _on_message(self, content: dict) -> None:
        text, client_id = content.get("text"), clean(str(content.get("client_id") or "")[:64])
        with translation.override(self.spoken):
            if not isinstance(text, str) or not text.strip():
                await self._error("empty", gettext("Please type a message."), client_id)
                return
            if not storable(text):  # NUL or a lone surrogate: no database stores it, and the widget would resend it
                await self._error("bad_text", gettext("Sorry, I couldn't read some characters of that message. "
                                                      "Please type it again."), client_id)
                return
            if len(text) > settings.CHAT_MAX_MESSAGE_CHARS:
                await self._error("too_long", gettext("That message is too long: please keep it under %(chars)s "
                                                      "characters.") % {"chars": settings.CHAT_MAX_MESSAGE_CHARS},
                                  client_id)
                return
            refused = await allow_message(school_id=self.school.pk, visitor=self.visitor, address=self.address)
            if refused:
                logger.info("web chat message refused by the %s limit", refused.scope)
                await self._error("rate_limited", gettext("You're sending messages very quickly. I'll send this "
                                                          "one for you in a moment."), client_id,
                                  retry_after=refused.retry_after)
                return
        task = asyncio.create_task(self._deliver(text.strip(), client_id))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _deliver(self, text: str, client_id: str) -> None:
        async def ack(received: Received) -> None:
            if received.message is not None:
                await self.send_json({"type": "ack", "client_id": client_id, "message_id": received.message.pk,
                                      "duplicate": received.duplicate})

        first = None
        # Messages sent at once: the first finds or creates the contact and is stored in its conversation (through
        # `receive`, the entry point of every channel); the others wait for that, then take the usual path.
        async with self.first_message:
            if self.contact is None:
                contact, new_contact = await database_hop(_visitor_contact)(self.school, self.visitor, text,
                                                                           self.new_visitor)
                first = await receive(school=self.school, contact=contact, channel=Channel.WEB, text=text,
                                      channel_message_id=_message_id(contact, client_id), new_contact=new_contact,
                                      run=False, on_stored=ack)
                self.contact = contact
        if first is None:
            await receive(school=self.school, contact=self.contact, channel=Channel.WEB, text=text,
                          channel_message_id=_message_id(self.contact, client_id), on_stored=ack)
        elif not first.duplicate:
            await answer_or_queue(first)

    async def _error(self, code: str, text: str, client_id: str = "", **fields) -> None:
        await self.send_json({"type": "error", "code": code, "text": text, "client_id": client_id, **fields})

    async def chat_event(self, event: dict) -> None:
        payload = event["payload"]
        if payload["type"] in DRAFT_FRAMES and self.protocol < DRAFT_PROTOCOL:
            return
        self.spoken = payload.get("language") or self.spoken
        await self.send_json(payload)


def _query_param(scope: dict, name: str) -> str | None:
    values = parse_qs(scope.get("query_string", b"").decode()).get(name)
    return values[0] if values else None


def _protocol(scope: dict) -> int:
    """The protocol version the widget speaks (`?protocol=3`); 2 when it does not say (or says nonsense)."""
    value = _query_param(scope, "protocol") or ""
    return int(value) if value.isdigit() and len(value) < 4 else 2
