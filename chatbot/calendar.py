"""An iCalendar (RFC 5545) file for a booked tour, for "add to calendar"."""

import datetime as dt

from django.utils import translation
from django.utils.translation import gettext as _

from bookings.models import TourBooking
from chatbot.language import reply_language


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def calendar_file(booking: TourBooking) -> str:
    start = booking.starts_at.astimezone(dt.UTC)
    end = start + dt.timedelta(minutes=booking.school.tour_duration_minutes)
    stamp = "%Y%m%dT%H%M%SZ"
    status = "CANCELLED" if booking.status == TourBooking.Status.CANCELLED else "CONFIRMED"
    with translation.override(reply_language(booking.school, booking.contact)):  # the parent's language
        summary = _("School tour at %(school)s (%(child)s)") % {"school": booking.school.name,
                                                                "child": booking.child_name}
        description = " ".join([_("Booking reference %(reference)s.") % {"reference": booking.reference},
                                _("Children: %(children)s.") % {"children": booking.children_label}])
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//School tour concierge//EN",
        "METHOD:PUBLISH",
        "BEGIN:VEVENT",
        f"UID:{booking.reference}@{booking.school.slug}.concierge",
        f"DTSTAMP:{dt.datetime.now(dt.UTC):{stamp}}",
        f"DTSTART:{start:{stamp}}",
        f"DTEND:{end:{stamp}}",
        f"SUMMARY:{_escape(summary)}",
        f"LOCATION:{_escape(booking.school.address)}",
        f"DESCRIPTION:{_escape(description)}",
        f"STATUS:{status}",
        "END:VEVENT",
        "END:VCALENDAR",
    ]
    return "\r\n".join(lines) + "\r\n"
