"""Reading bookings and callbacks, scoped to who is asking."""

import re

from django.db.models import QuerySet
from django.utils import timezone

from bookings.models import CallbackRequest, TourBooking


def normalise_reference(raw: str, prefix: str = "T") -> str:
    """"t 7kq3xm", "#T-7KQ3XM", "7KQ3XM" -> "T-7KQ3XM"."""
    text = re.sub(r"[^A-Za-z0-9]", "", raw or "").upper()
    if text.startswith(prefix) and len(text) == 7:
        text = text[1:]
    return f"{prefix}-{text}"


def contact_booking(contact, reference: str) -> TourBooking | None:
    """The contact's own booking by reference, following reschedules to the live one.

    Someone else's booking is simply "not found": its existence is not revealed.
    """
    booking = (
        TourBooking.objects.select_related("school", "slot")
        .filter(contact=contact, reference=normalise_reference(reference))
        .first()
    )
    while booking is not None and booking.status == TourBooking.Status.RESCHEDULED:
        booking = TourBooking.objects.select_related("school", "slot").filter(replaces=booking).first()
    return booking


def upcoming_bookings(contact, now=None) -> QuerySet[TourBooking]:
    return TourBooking.objects.filter(
        contact=contact, status=TourBooking.Status.SCHEDULED, starts_at__gte=now or timezone.now()
    ).select_related("school")


def open_callbacks(contact) -> QuerySet[CallbackRequest]:
    return CallbackRequest.objects.filter(contact=contact, status=CallbackRequest.Status.OPEN)
