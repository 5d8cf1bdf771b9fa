"""Reading conversations for channels and the console."""

import datetime as dt

from django.conf import settings
from django.utils import timezone

from chatbot.models import Conversation, Message

TRANSCRIPT_LIMIT = 50
WHATSAPP_WINDOW = dt.timedelta(hours=24)


def latest_conversation(contact_id: int) -> Conversation | None:
    """The contact's most recent conversation: where a message the parent did not ask for (a reminder, a seat
    offer, a follow-up) goes, on that conversation's channel."""
    return (Conversation.objects.select_related("school", "contact").filter(contact_id=contact_id)
            .order_by("-started_at", "-id").first())


def inside_whatsapp_window(conversation: Conversation, now: dt.datetime | None = None) -> bool:
    """Free text may go on WhatsApp (directly or through Chatwoot): the parent wrote on this channel within the
    last 24 hours. Outside it only an approved template message is delivered."""
    last = (Message.objects.filter(conversation__contact_id=conversation.contact_id, channel=conversation.channel,
                                   role=Message.Role.USER).order_by("-created_at").values_list("created_at", flat=True)
            .first())
    return last is not None and last > (now or timezone.now()) - WHATSAPP_WINDOW


def transcript(conversation: Conversation, limit: int = TRANSCRIPT_LIMIT) -> list[Message]:
    """The last `limit` visible messages (parent, concierge, staff), oldest first."""
    recent = (
        conversation.messages.filter(role__in=[Message.Role.USER, Message.Role.ASSISTANT, Message.Role.STAFF])
        .exclude(text="")
        .order_by("-created_at", "-id")[:limit]
    )
    return list(reversed(recent))


def open_conversation(school, contact, channel: str) -> Conversation | None:
    """The contact's conversation on this channel that a new message would continue, without creating or ending
    anything (`chatbot.services.current_conversation` does both when a message arrives)."""
    idle_since = timezone.now() - dt.timedelta(seconds=settings.ACTIVE_CONTEXT_TTL_SECONDS)
    conversation = (Conversation.objects.select_related("school", "contact")
                    .filter(school=school, contact=contact, channel=channel,
                            status__in=[Conversation.Status.ACTIVE, Conversation.Status.HANDED_OFF])
                    .order_by("-started_at").first())
    if conversation and (conversation.last_message_at is None or conversation.last_message_at >= idle_since
                         or conversation.status == Conversation.Status.HANDED_OFF):
        return conversation
    return None
