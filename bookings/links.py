"""Signed, expiring links that let whoever holds them manage one booking.

The link is sent only through the channel the booking was made on (the
confirmation on WhatsApp, Chatwoot or the web chat that booked it). Holding it is
the proof of ownership: a web visitor who did not make a booking cannot see or
change it, but the parent who did can open the link from any browser
(docs/identity.md).
"""

from django.conf import settings
from django.core import signing
from django.urls import reverse

from bookings.models import TourBooking

MANAGE_SALT = "bookings.manage-link"


def manage_token(booking_reference: str) -> str:
    return signing.dumps(booking_reference, salt=MANAGE_SALT, compress=True)


def manage_path(booking_reference: str) -> str:
    """The site-relative URL of a booking's manage page."""
    return reverse("bookings:manage", args=[manage_token(booking_reference)])


def manage_url(booking_reference: str) -> str:
    """The absolute link for a platform message (SITE_URL + path); empty when SITE_URL is not set."""
    return f"{settings.SITE_URL}{manage_path(booking_reference)}" if settings.SITE_URL else ""


def booking_for_token(token: str) -> TourBooking | None:
    """The live booking a link was issued for (following reschedules), or None if forged or expired."""
    try:
        reference = signing.loads(token, salt=MANAGE_SALT, max_age=settings.BOOKING_MANAGE_LINK_MAX_AGE_DAYS * 86400)
    except signing.BadSignature:  # includes SignatureExpired
        return None
    booking = TourBooking.objects.select_related("school").filter(reference=reference).first()
    while booking is not None and booking.status == TourBooking.Status.RESCHEDULED:
        booking = TourBooking.objects.select_related("school").filter(replaces=booking).first()
    return booking
