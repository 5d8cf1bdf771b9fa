"""The manage page behind a signed booking link: see the tour, cancel it or move it.

It speaks the parent's language (the one they last wrote in, when the school offers it) and shows every time on
the school's clock, whatever the server's zone. A time that is not a real date (years 1 or 9999 shifted out of
range by their offset) is a 400 with the page, never a 500.
"""

import datetime as dt

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import formats, timezone, translation
from django.utils.translation import gettext, pgettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from bookings import services
from bookings.links import booking_for_token
from bookings.models import School, TourBooking

CHOICES_DAYS = 14


def tour_when(local: dt.datetime) -> str:
    """"Wednesday 9 December 2026 at 11:00" in the active language (the catalogue's date shapes)."""
    day = formats.date_format(local, pgettext("a tour date with its year (Django date format)", "l j F Y"))
    return pgettext("a tour's date and start time", "%(date)s at %(time)s") % {"date": day, "time": f"{local:%H:%M}"}


def chosen_start(value: str, school: School) -> dt.datetime | None:
    """The start time a form sent, on the school's clock; None when it is no datetime with an offset there."""
    try:
        starts_at = dt.datetime.fromisoformat(value)
        return starts_at.astimezone(school.tz) if starts_at.tzinfo else None
    except (ValueError, TypeError, OverflowError):  # OverflowError: 9999-12-31T23:59-23:59 is past year 9999 in UTC
        return None


def _page(request: HttpRequest, booking: TourBooking, status: int = 200) -> HttpResponse:
    changeable = booking.status == TourBooking.Status.SCHEDULED and booking.starts_at > timezone.now()
    slots = []
    if changeable:
        today = services.local_now(booking.school).date()
        slots = [(s.starts_at.isoformat(), tour_when(s.starts_at.astimezone(booking.school.tz)))
                 for s in services.available_slots(booking.school, today, today + dt.timedelta(days=CHOICES_DAYS))
                 if s.starts_at != booking.starts_at]
    return render(request, "bookings/manage.html", {
        "booking": booking, "school": booking.school, "when": tour_when(booking.local_start),
        "changeable": changeable, "slots": slots, "language": translation.get_language(),
    }, status=status)


def _act(request: HttpRequest, booking: TourBooking) -> HttpResponse:
    action = request.POST.get("action")
    if action == "reschedule":
        local = chosen_start(request.POST.get("slot", ""), booking.school)
        if local is None:
            messages.error(request, gettext("Please choose one of the times listed."))
            return _page(request, booking, status=400)
    elif action != "cancel":
        messages.error(request, gettext("Choose cancel or a new time."))
        return _page(request, booking, status=400)
    try:
        if action == "cancel":
            services.cancel_tour(booking=booking, reason=request.POST.get("reason", "")[:300]
                                 or "cancelled with the manage link")
            messages.success(request, gettext("Tour %(reference)s is cancelled.") % {"reference": booking.reference})
        else:
            moved = services.reschedule_tour(booking=booking, new_date=local.date(), new_time=local.time())
            messages.success(request, gettext("Your tour is now %(when)s (reference %(reference)s).") % {
                "when": tour_when(moved.local_start), "reference": moved.reference})
    except services.BookingError as exc:
        messages.error(request, exc.message)
    return redirect(request.path)


@never_cache
@require_http_methods(["GET", "POST"])
def manage_booking(request: HttpRequest, token: str) -> HttpResponse:
    booking = booking_for_token(token)
    if booking is None:
        raise Http404("This link is not valid or has expired.")
    school = booking.school
    with timezone.override(school.tz), translation.override(school.language_for(booking.contact.language)):
        return _act(request, booking) if request.method == "POST" else _page(request, booking)
