"""What the staff console changes that is not a booking rule: ratings, and telling a parent what staff did.

Tours and callbacks change only through bookings.services; the console calls
those and then, when a parent should know, `notify_parent`.
"""

import importlib
import logging

from asgiref.sync import async_to_sync
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from bookings.models import TourBooking
from chatbot.channels.base import observer_for
from chatbot.models import Conversation, Message

logger = logging.getLogger(__name__)

RATINGS = tuple(Conversation.Rating.values)


class RatingError(ValueError):
    pass


def _clean_rating(rating: str | None) -> str:
    rating = (rating or "").strip().lower()
    if rating and rating not in RATINGS:
        raise RatingError(f"A rating is one of {', '.join(RATINGS)} (or empty to clear it).")
    return rating


def rate_conversation(conversation: Conversation, *, rating: str, note: str | None = None, user) -> Conversation:
    """Rate one conversation good or bad ("" clears the rating); `note=None` keeps the current note."""
    rating = _clean_rating(rating)
    conversation.rating = rating
    if note is not None:
        conversation.rating_note = note.strip()
    conversation.rated_by = user if rating else None
    conversation.rated_at = timezone.now() if rating else None
    conversation.save(update_fields=["rating", "rating_note", "rated_by", "rated_at"])
    return conversation


def rate_conversations(queryset: QuerySet[Conversation], *, rating: str, user) -> int:
    """Bulk rating from the list: one UPDATE; notes are left as they are."""
    rating = _clean_rating(rating)
    return Conversation.objects.filter(pk__in=queryset.values("pk")).update(
        rating=rating, rated_by=user if rating else None, rated_at=timezone.now() if rating else None
    )


def _observer(channel: str):
    """The channel's observer; its module registers it on import (the web one is imported by the ASGI routing)."""
    try:
        importlib.import_module(f"chatbot.channels.{channel}")
    except ModuleNotFoundError:
        pass  # a channel without a module of its own (the terminal) registers its observer where it runs
    except Exception:
        logger.exception("the channel module for %s failed to import", channel)
    return observer_for(channel)


def notify_parent(booking: TourBooking, text: str) -> Message | None:
    """Tell the parent of a booking what staff did, on the channel of their latest conversation.

    The message is stored (role "staff") on that conversation, so it is in the
    transcript and the agent's history, then handed to the channel's observer.
    A delivery failure is logged, never raised: the booking change has happened.
    Returns None when the parent has never chatted (nothing to answer into).
    """
    conversation = (
        Conversation.objects.select_related("school", "contact")
        .filter(contact_id=booking.contact_id)
        .order_by("-started_at", "-id")
        .first()
    )
    if conversation is None:
        logger.info("no conversation to notify the parent of booking %s through", booking.reference)
        return None
    with transaction.atomic():
        message = Message.objects.create(conversation=conversation, role=Message.Role.STAFF, text=text,
                                         channel=conversation.channel)
        Conversation.objects.filter(pk=conversation.pk).update(last_message_at=message.created_at)
    try:
        async_to_sync(_observer(conversation.channel).reply)(conversation, message)
    except Exception:  # the channel is down or refuses: staff see the message in the transcript
        logger.exception("could not deliver the staff message %s on %s", message.pk, conversation.channel)
    return message
