"""Reading conversations for channels and the console."""

from chatbot.models import Conversation, Message

TRANSCRIPT_LIMIT = 50


def transcript(conversation: Conversation, limit: int = TRANSCRIPT_LIMIT) -> list[Message]:
    """The last `limit` visible messages (parent, concierge, staff), oldest first."""
    recent = (
        conversation.messages.filter(role__in=[Message.Role.USER, Message.Role.ASSISTANT, Message.Role.STAFF])
        .exclude(text="")
        .order_by("-created_at", "-id")[:limit]
    )
    return list(reversed(recent))
