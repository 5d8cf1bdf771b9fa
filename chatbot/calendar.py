"""An iCalendar (RFC 5545) file for a booked tour, for "add to calendar", written by the icalendar library.

The tour is given in the school's time zone (DTSTART;TZID=... with the zone's VTIMEZONE), as the booking
pages show it; icalendar escapes the text and folds lines longer than 75 octets.
"""

import datetime as dt

from django.utils import timezone, translation
from django.utils.translation import gettext as _
from icalendar import Calendar, Event

from bookings.models import TourBooking, said_names, split_names
from chatbot.language import reply_language

PRODUCT_ID = "-//School tour concierge//EN"


def calendar_file(booking: TourBooking) -> str:
    """The booking as one event, its text in the parent's language; a cancelled tour says CANCELLED."""
    school = booking.school
    start = booking.starts_at.astimezone(school.tz)
    with translation.override(reply_language(school, booking.contact)):  # the parent's language
        child = said_names(split_names(booking.child_name))  # "Leo和Mia" in Chinese
        summary = _("School tour at %(school)s (%(child)s)") % {"school": school.name, "child": child}
        description = " ".join(
            [
                _("Booking reference %(reference)s.") % {"reference": booking.reference},
                _("Children: %(children)s.") % {"children": said_names(
                    [c.label for c in booking.children.all()]) or child},
            ]
        )
    event = Event()
    event.add("uid", f"{booking.reference}@{school.slug}.concierge")
    event.add("dtstamp", timezone.now())
    event.add("dtstart", start)
    event.add("dtend", start + dt.timedelta(minutes=school.tour_duration_minutes))
    event.add("summary", summary)
    event.add("location", school.address)
    event.add("description", description)
    event.add("status", "CANCELLED" if booking.status == TourBooking.Status.CANCELLED else "CONFIRMED")
    calendar = Calendar()
    calendar.add("prodid", PRODUCT_ID)
    calendar.add("version", "2.0")
    calendar.add("method", "PUBLISH")
    calendar.add_component(event)
    calendar.add_missing_timezones()
    return calendar.to_ical().decode()
