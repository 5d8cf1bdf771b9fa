"""The manage page behind a signed booking link: see the tour, cancel it or move it."""

import datetime as dt

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from bookings import services
from bookings.links import booking_for_token
from bookings.models import TourBooking

CHOICES_DAYS = 14


@never_cache
@require_http_methods(["GET", "POST"])
def manage_booking(request: HttpRequest, token: str) -> HttpResponse:
    booking = booking_for_token(token)
    if booking is None:
        raise Http404("This link is not valid or has expired.")
    if request.method == "POST":
        try:
            if request.POST.get("action") == "cancel":
                services.cancel_tour(booking=booking, reason=request.POST.get("reason", "")[:300]
                                     or "cancelled with the manage link")
                messages.success(request, f"Tour {booking.reference} is cancelled.")
            elif request.POST.get("action") == "reschedule":
                starts_at = dt.datetime.fromisoformat(request.POST.get("slot", ""))
                local = starts_at.astimezone(booking.school.tz)
                moved = services.reschedule_tour(booking=booking, new_date=local.date(), new_time=local.time())
                messages.success(request, f"Your tour is now {services.describe_date(local.date())} at "
                                          f"{local:%H:%M} (reference {moved.reference}).")
            else:
                messages.error(request, "Choose cancel or a new time.")
        except (ValueError, TypeError):
            messages.error(request, "Please choose one of the times listed.")
        except services.BookingError as exc:
            messages.error(request, exc.message)
        return redirect(request.path)
    changeable = booking.status == TourBooking.Status.SCHEDULED and booking.starts_at > timezone.now()
    slots = []
    if changeable:
        today = services.local_now(booking.school).date()
        slots = [s for s in services.available_slots(booking.school, today, today + dt.timedelta(days=CHOICES_DAYS))
                 if s.starts_at != booking.starts_at]
    return render(request, "bookings/manage.html", {
        "booking": booking, "school": booking.school, "when": services.describe_date(booking.local_start.date()),
        "changeable": changeable, "slots": slots,
    })
