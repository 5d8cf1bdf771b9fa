"""check_unread_messages: the parent's messages that arrived during the turn, taken into it."""

from django.db import transaction
from django.utils import timezone

from chatbot.agent import memory
from chatbot.agent.tools.context import ToolContext, _ctx
from chatbot.models import Message


def take_unread(ctx: ToolContext) -> list[Message]:
    """The parent's messages that arrived during this turn, taken into it (marked processed), in order."""
    memory.drain_queue(ctx.school.pk, ctx.contact.pk)
    with transaction.atomic():
        pending = list(
            Message.objects.select_for_update()
            .filter(conversation__contact=ctx.contact, role=Message.Role.USER, processed_at__isnull=True)
            .exclude(pk__in=ctx.turn_message_ids)
            .order_by("created_at", "id")
        )
        taken_at = timezone.now()
        Message.objects.filter(pk__in=[m.pk for m in pending]).update(processed_at=taken_at)
    ctx.turn_message_ids.update(m.pk for m in pending)
    ctx.claims.update((m.pk, taken_at) for m in pending)
    return pending


def check_unread_messages() -> dict:
    """Take in the messages the parent sent meanwhile."""
    pending = take_unread(_ctx())
    return {"has_unread": bool(pending),
            "messages": [{"message": m.text, "timestamp": m.created_at.isoformat()} for m in pending]}
