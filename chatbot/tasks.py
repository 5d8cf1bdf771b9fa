"""Scheduled conversation housekeeping, and the Celery side of the webhook channels (external calls)."""

import datetime as dt
import logging

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from chatbot.channels import chatwoot, outbound, whatsapp
from chatbot.models import Channel, Conversation, Message
from chatbot.reminders import services as reminders
from chatbot.services import end_idle_conversations
from crm.external.tasks import ExternalTask
from crm.models import ExternalCall

logger = logging.getLogger(__name__)


@shared_task(acks_late=True)
def end_idle_conversations_task() -> int:
    """Session end for conversations idle past the active-context TTL."""
    return end_idle_conversations()


# --- Webhook channels: deliveries, handoff, persistent context, the inbound sweeper ---------------------------
@shared_task(acks_late=True, name="chatbot.tasks.redispatch_stale_inbound")
def redispatch_stale_inbound() -> int:
    """Dispatch again webhook messages stored but not answered for INBOUND_REDISPATCH_AFTER_SECONDS (returns how
    many contacts), and send again the replies whose send task was lost (see `resend_lost_replies`)."""
    from chatbot.channels.worker import sweep_stale_inbound

    dispatched = sweep_stale_inbound()
    resend_lost_replies()
    return dispatched


def resend_lost_replies(now: dt.datetime | None = None) -> int:
    """Queue again the webhook replies no send ever started; returns how many.

    The send task of a reply can vanish with the broker (Redis restarted without
    persistence, or down when the turn ended): the reply is stored, the parent
    never gets it, and no dead letter says so. A reply with no ledger claim after
    INBOUND_REDISPATCH_AFTER_SECONDS is such a reply. A send that did start is
    left to its task (retries, dead letters); the ledger keeps any resend single.
    """
    now = now or timezone.now()
    cutoff = now - dt.timedelta(seconds=settings.INBOUND_REDISPATCH_AFTER_SECONDS)
    senders = {Channel.CHATWOOT: deliver_chatwoot_message, Channel.WHATSAPP: deliver_whatsapp_message}
    live = [channel for channel, on in ((Channel.CHATWOOT, chatwoot.configured()),
                                        (Channel.WHATSAPP, bool(settings.WHATSAPP_TOKEN))) if on]
    unsent = list(Message.objects.filter(role=Message.Role.ASSISTANT, channel__in=live, delivered_at__isnull=True,
                                         conversation__status=Conversation.Status.ACTIVE, created_at__lt=cutoff,
                                         created_at__gte=now - dt.timedelta(days=1))
                  .exclude(text="").order_by("created_at")[:200])
    # Each reply's first part, as outbound.deliver claims it (a channel's name is its sender's system).
    first_parts = {m.pk: outbound.part_key(m.channel, m.pk, 0) for m in unsent}
    claimed = set(ExternalCall.objects.filter(key__in=list(first_parts.values())).values_list("key", flat=True))
    lost = [m for m in unsent if first_parts[m.pk] not in claimed]
    for message in lost:
        logger.warning("reply %s was never sent (its task was lost): queueing it again", message.pk)
        senders[message.channel].delay(message.pk)
    return len(lost)


@shared_task(base=ExternalTask, bind=True, name="chatbot.tasks.deliver_chatwoot_message")
def deliver_chatwoot_message(self, message_id: int) -> str:
    """Post one stored reply to its Chatwoot conversation (idempotent: see chatbot.channels.outbound)."""
    if not chatwoot.configured():
        return "skipped: Chatwoot is not configured"
    with chatwoot.ChatwootClient() as client:
        return outbound.deliver(message_id, chatwoot.ChatwootSender(client))


@shared_task(base=ExternalTask, bind=True, name="chatbot.tasks.chatwoot_hand_off")
def chatwoot_hand_off(self, conversation_id: int, notice_id: int | None, reopen_platform: bool) -> str:
    """Tell the parent (optional notice), then set the Chatwoot conversation to `open` for the team."""
    if not chatwoot.configured():
        return "skipped: Chatwoot is not configured"
    conversation = Conversation.objects.get(pk=conversation_id)
    account, number = chatwoot.split_external_id(conversation.external_id)
    with chatwoot.ChatwootClient() as client:
        if notice_id:
            outbound.deliver(notice_id, chatwoot.ChatwootSender(client))
        if reopen_platform:
            status = client.toggle_status(account, number, "open")
            logger.info("Chatwoot conversation %s handed to the team (now %s)", conversation.external_id, status)
    return "handed off"


@shared_task(base=ExternalTask, bind=True, name="chatbot.tasks.chatwoot_push_contact_context")
def chatwoot_push_contact_context(self, conversation_id: int) -> str:
    """Session end: merge the contact's persistent context into its Chatwoot custom attributes."""
    if not chatwoot.contacts_configured():
        return "skipped: no Chatwoot user token"
    conversation = Conversation.objects.select_related("contact").get(pk=conversation_id)
    contact = conversation.contact
    attributes = chatwoot.context_for_chatwoot(contact)
    if not contact.chatwoot_contact_id or not attributes:
        return "nothing to write"
    account, _ = chatwoot.split_external_id(conversation.external_id)
    with chatwoot.ChatwootClient() as client:
        client.merge_contact_attributes(account, contact.chatwoot_contact_id, attributes)
    return f"wrote {len(attributes)} attribute(s)"


@shared_task(base=ExternalTask, bind=True, name="chatbot.tasks.deliver_whatsapp_message")
def deliver_whatsapp_message(self, message_id: int) -> str:
    """Send one stored reply through the WhatsApp Cloud API (idempotent: see chatbot.channels.outbound)."""
    if not settings.WHATSAPP_TOKEN:
        return "skipped: WhatsApp is not configured"
    with whatsapp.WhatsAppClient() as client:
        return outbound.deliver(message_id, whatsapp.WhatsAppSender(client))


@shared_task(acks_late=True)
def send_due_reminders() -> str:
    """The scheduled job of tour reminders (adminpanel/scheduling/jobs.py runs it every minute)."""
    counts = reminders.send_due_reminders()
    return ", ".join(f"{count} {state}" for state, count in sorted(counts.items())) or "none due"
