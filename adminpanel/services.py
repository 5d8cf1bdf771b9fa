"""What the staff console changes that is not a booking rule: ratings, the review queue, the admin history of
what staff did, and telling a parent what staff did.

Tours and callbacks change only through bookings.services; the console calls
those, records the action in the admin history (`record_history`) and then,
when a parent should know, `notify_parent`.
"""

import logging
from typing import Any

from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from bookings.models import TourBooking
from chatbot import outreach
from chatbot.models import Conversation, Message
from plumbing.logging import mask_contact_details

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


def record_history(user, obj: models.Model, message: str, *, added: bool = False) -> LogEntry:
    """Write what staff did to `obj` into its admin history (who, what, when), as Django's admin does for its
    own edits: the object's History page and the index's recent actions show it."""
    return LogEntry.objects.log_actions(user_id=user.pk, queryset=[obj], action_flag=ADDITION if added else CHANGE,
                                        change_message=message, single_object=True)


# --- who sees a parent's contact details ----------------------------------------------------------------------
CONTACT_DETAILS_PERMISSION = "bookings.change_callbackrequest"  # those who call parents back (Admissions)


def sees_contact_details(user) -> bool:
    """Whether this user sees parents' phones and e-mails in full; everyone else sees them masked, everywhere."""
    return user.has_perm(CONTACT_DETAILS_PERMISSION)


def contact_details_for(user, value: Any, region: str) -> Any:
    """`value` (text or a structure: a tool call's arguments) as this user may see it: phones and e-mails masked
    unless they call parents back (plumbing.logging.mask_contact_details, as in the exports)."""
    return value if sees_contact_details(user) else mask_contact_details(value, region)


# --- the review queue ------------------------------------------------------------------------------


class AssignError(ValueError):
    pass


REVIEW_PERMISSION = "chatbot.change_conversation"


def reviewers() -> QuerySet:
    """Staff who may rate conversations (the Reviewer role, or the permission given directly, or superusers)."""
    app_label, codename = REVIEW_PERMISSION.split(".")
    may = (Q(groups__permissions__codename=codename, groups__permissions__content_type__app_label=app_label)
           | Q(user_permissions__codename=codename, user_permissions__content_type__app_label=app_label)
           | Q(is_superuser=True))
    users = get_user_model().objects.filter(is_active=True, is_staff=True)
    return users.filter(pk__in=users.filter(may).values("pk")).order_by("username")


def assign_reviewer(queryset: QuerySet[Conversation], *, reviewer, by) -> int:
    """Put conversations in a reviewer's queue (None takes them out): one UPDATE, one history entry each."""
    if reviewer is not None and not reviewer.has_perm(REVIEW_PERMISSION):
        raise AssignError(f"{reviewer.get_username()} cannot rate conversations.")
    ids = list(queryset.values_list("pk", flat=True))
    with transaction.atomic():
        count = Conversation.objects.filter(pk__in=ids).update(
            reviewer=reviewer, reviewer_assigned_at=timezone.now() if reviewer else None)
        message = f"Assigned for review to {reviewer.get_username()}." if reviewer else "Taken out of the review queue."
        assigned = Conversation.objects.filter(pk__in=ids).select_related("contact")
        LogEntry.objects.log_actions(user_id=by.pk, queryset=assigned, action_flag=CHANGE, change_message=message)
    return count


def notify_parent(booking: TourBooking, text: str) -> Message | None:
    """Tell the parent of a booking what staff did, on the channel of their latest conversation (stored as a
    staff message: in the transcript, not answered by the agent). None when the parent has never chatted."""
    return outreach.tell_contact(booking.contact_id, text, role=Message.Role.STAFF)
