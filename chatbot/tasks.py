"""Scheduled conversation housekeeping: idle sessions ended, unanswered messages and lost replies sent again, tour
reminders. Each channel's own tasks (its sends) are in its package (chatbot/channels/<name>/tasks.py)."""

import datetime as dt
import logging

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from chatbot.channels import outbound, registry
from chatbot.channels.worker import sweep_stale_inbound
from chatbot.models import Conversation, Message
from chatbot.reminders import services as reminders
from chatbot.services import end_idle_conversations
from crm.models import ExternalCall

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, name="chatbot.tasks.end_idle_conversations_task")
def end_idle_conversations_task() -> int:
    """Session end for conversations idle past the active-context TTL."""
    return end_idle_conversations()


@shared_task(acks_late=True, name="chatbot.tasks.redispatch_stale_inbound")
def redispatch_stale_inbound() -> int:
    """Dispatch again webhook messages stored but not answered for INBOUND_REDISPATCH_AFTER_SECONDS (returns how
    many contacts), and send again the replies whose send task was lost (see `resend_lost_replies`)."""
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
    live = registry.delivering()
    unsent = list(
        Message.objects.filter(
            role=Message.Role.ASSISTANT,
            channel__in=list(live),
            delivered_at__isnull=True,
            conversation__status=Conversation.Status.ACTIVE,
            created_at__lt=cutoff,
            created_at__gte=now - dt.timedelta(days=1),
        )
        .exclude(text="")
        .order_by("created_at")[:200]
    )
    # Each reply's first part, as outbound.deliver claims it (a channel's name is its sender's system).
    first_parts = {m.pk: outbound.part_key(m.channel, m.pk, 0) for m in unsent}
    claimed = set(ExternalCall.objects.filter(key__in=list(first_parts.values())).values_list("key", flat=True))
    lost = [m for m in unsent if first_parts[m.pk] not in claimed]
    for message in lost:
        logger.warning("reply %s was never sent (its task was lost): queueing it again", message.pk)
        live[message.channel].task.delay(message.pk)
    return len(lost)


@shared_task(acks_late=True, name="chatbot.tasks.send_due_reminders")
def send_due_reminders() -> str:
    """The scheduled job of tour reminders (plumbing/scheduling/jobs.py runs it every minute)."""
    counts = reminders.send_due_reminders()
    return ", ".join(f"{count} {state}" for state, count in sorted(counts.items())) or "none due"
