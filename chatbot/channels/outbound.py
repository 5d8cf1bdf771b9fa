"""Delivering a stored reply to a platform, exactly once, from a Celery task.

Each reply becomes one or more platform messages ("parts"); each part has a
deterministic ledger key `<system>:message:<message id>:<part>` that is claimed
before the POST and finished after it (crm.external.ledger). So:

- a retried or redelivered task skips the parts already posted;
- a part whose POST failed for sure (no connection, 5xx, 429) is posted again;
- a part whose outcome is unknown (the response was lost, or the worker died
  mid-call) is first looked up on the platform when it can be (`reconcile`);
  when it cannot, it is not posted again and a dead letter says so.

`Message.delivered_at` is set once every part is out. Before anything is posted
the conversation must still be the bot's (our status, then the platform's).
"""

import logging
from collections.abc import Callable

from django.db import IntegrityError
from django.utils import timezone

from bookings.links import manage_url
from chatbot.models import Conversation, Message
from crm.external import ledger
from crm.external.http import ApiClient, PermanentError, TransientError
from crm.external.tasks import GiveUp

logger = logging.getLogger(__name__)


class Skip(Exception):  # noqa: N818 (control flow)
    """Do not post: the conversation is no longer the bot's."""


class NotCheckable(Exception):  # noqa: N818 (control flow)
    """The platform offers no way to see whether an earlier attempt landed."""


class Sender:
    system = ""

    def bodies(self, message: Message) -> list[dict]:
        raise NotImplementedError

    def gate(self, conversation: Conversation) -> None:
        """Raise Skip if the platform says the bot must not talk now."""

    def post(self, conversation: Conversation, body: dict) -> str:
        raise NotImplementedError

    def reconcile(self, conversation: Conversation, body: dict, claimed_at) -> str | None:
        """The platform's id of `body` if an earlier attempt posted it, None if it surely did not."""
        raise NotCheckable


def part_key(system: str, message_id: int, index: int) -> str:
    """The ledger key of one part of a reply (see the module docstring)."""
    return f"{system}:message:{message_id}:{index}"


def queue_task(task, *args) -> None:
    """Queue a delivery task; with the broker down the reply stays undelivered in the database (the admin shows it)."""
    try:
        task.delay(*args)
    except Exception:
        logger.exception("could not queue %s%s", task.name, args)


def reply_text(message: Message) -> str:
    """The reply's text for a platform that shows no cards: a confirmed booking gets its signed manage link,
    sent to this channel only, the one that booked it (docs/identity.md). Without SITE_URL there is no link."""
    text = message.text.strip()
    for block in message.payload.get("blocks", []):
        if block.get("type") == "booking_confirmation" and block.get("booking_id"):
            link = manage_url(str(block["booking_id"]))
            if link and link not in text:
                text = f"{text}\n\nTo change or cancel this tour: {link}".strip()
    return text


def choice_options(message: Message, *, max_items: int = 10, title_max: int = 20) -> list[tuple[str, str]]:
    """(title, value) pairs of the reply's slot buttons: titles unique and within the platform's limit."""
    block = next((b for b in message.payload.get("blocks", []) if b.get("type") == "buttons"), None)
    options: list[tuple[str, str]] = []
    seen: set[str] = set()
    for option in (block or {}).get("options", [])[:max_items]:
        title = str(option.get("label") or option.get("value") or "").strip()[:title_max].strip()
        value = str(option.get("value") or title).strip()
        if not title or title.lower() in seen:
            continue
        seen.add(title.lower())
        options.append((title, value))
    return options


def deliver(message_id: int, sender: Sender) -> str:
    """Post the reply's parts that are not out yet; returns what happened (for logs and tests)."""
    message = (Message.objects.select_related("conversation__school", "conversation__contact")
               .filter(pk=message_id, role=Message.Role.ASSISTANT).first())
    if message is None:
        return "missing"
    if message.delivered_at:
        return "already delivered"
    conversation = message.conversation
    # A handoff notice or a tour reminder goes out whoever has the conversation (it is not a bot's answer).
    is_notice = bool(message.payload.get("handoff_notice") or message.payload.get("reminder"))
    if conversation.status == Conversation.Status.HANDED_OFF and not is_notice:
        return "skipped: handed off"
    gate_checked = is_notice
    last_id = ""
    for index, body in enumerate(sender.bodies(message)):
        key = part_key(sender.system, message.pk, index)
        attempt = ledger.begin(key, sender.system)
        if attempt.done:
            last_id = attempt.external_id
            continue
        if attempt.given_up:
            return "given up earlier"
        if attempt.ambiguous:
            try:
                found = sender.reconcile(conversation, body, attempt.row.claimed_at)
            except NotCheckable:
                ledger.give_up(attempt, "An earlier attempt may have posted this; there is no way to check.")
                raise GiveUp(f"{key}: an earlier attempt may have posted this part; not posting it twice",
                             ledger_key=key, system=sender.system) from None
            if found:
                ledger.finish(attempt, found)
                last_id = found
                continue
        try:
            if not gate_checked:
                sender.gate(conversation)
                gate_checked = True
            external_id = sender.post(conversation, body)
        except Skip as exc:
            ledger.release(attempt, f"skipped: {exc}")
            logger.info("reply %s not sent: %s", message.pk, exc)
            return f"skipped: {exc}"
        except TransientError as exc:  # the gate's GET never "maybe delivered": only a lost POST answer is
            (ledger.ambiguous if exc.maybe_delivered else ledger.release)(attempt, str(exc))
            raise
        except PermanentError as exc:
            ledger.refused(attempt, str(exc))
            exc.ledger_key = key
            raise
        except BaseException as exc:  # anything else: the POST did not complete here; let a rerun decide
            ledger.ambiguous(attempt, f"{type(exc).__name__}: {exc}")
            raise
        ledger.finish(attempt, external_id)
        last_id = external_id
    _mark_delivered(message, last_id)
    return "delivered"


def deliver_with(client: Callable[[], ApiClient], sender: Callable[[ApiClient], Sender], message_id: int) -> str:
    """`deliver` through a client of the platform of its own, closed after."""
    with client() as api:
        return deliver(message_id, sender(api))


def _mark_delivered(message: Message, external_id: str) -> None:
    fields = {"delivered_at": timezone.now()}
    if external_id and not message.channel_message_id:
        fields["channel_message_id"] = str(external_id)[:128]
    try:
        Message.objects.filter(pk=message.pk).update(**fields)
    except IntegrityError:  # that platform id is already on another row: keep the delivery time only
        Message.objects.filter(pk=message.pk).update(delivered_at=fields["delivered_at"])
