"""The bookings and callbacks desk: today's and upcoming tours per school, and the callbacks due.

Every change goes through bookings.services (the same rules and CRM sync as the
concierge); a refusal is shown with the BookingError's message. Every change is
written to the object's admin history (who, what, when). When a tour is
cancelled or moved, the parent is told on their channel (adminpanel.services.notify_parent).
Times are the school's (adminpanel.schooltime): each school's tours in its own zone, named.

Reading needs `bookings.view_tourbooking`; tour actions `bookings.change_tourbooking`;
callback actions `bookings.change_callbackrequest`.
"""

import datetime as dt

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme

from adminpanel import schooltime, selectors
from adminpanel.forms import CancelTourForm, RescheduleTourForm
from adminpanel.services import notify_parent, record_history, sees_contact_details
from bookings import callbacks, services
from bookings.models import CallbackRequest, School, TourBooking
from crm.identity import format_phone
from plumbing.logging import mask_phone

DEFAULT_DAYS = 7
MAX_DAYS = 31


def _require(request, permission: str) -> None:
    if not request.user.has_perm(permission):
        raise PermissionDenied


def _next(request) -> str:
    return request.POST.get("next") or request.GET.get("next") or ""


def _back(request) -> HttpResponseRedirect:
    """Back to where the action was started (the desk with its filters), never off the site."""
    target = _next(request)
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        target = reverse("admin:desk")
    return HttpResponseRedirect(target)


def _when(booking: TourBooking, *, zone: bool = True) -> str:
    """"Tuesday 25 November 2026 at 14:00 Singapore time": in the school's zone, named for staff (a parent reads
    their own school's clock, so their messages leave the zone out)."""
    local = booking.local_start
    text = f"{services.describe_date(local.date())} at {local:%H:%M}"
    return f"{text} {schooltime.zone_label(booking.school, local)}" if zone else text


def phone_for(user, phone: str) -> dict[str, str]:
    """How a parent's number is shown to this user: in full with a click-to-call link to those who handle
    callbacks (Admissions), masked to everyone else."""
    if sees_contact_details(user):
        return {"text": format_phone(phone), "tel": phone}
    return {"text": mask_phone(phone), "tel": ""}


def desk_view(request, site):
    _require(request, "bookings.view_tourbooking")
    schools = list(School.objects.filter(is_active=True).order_by("name"))
    chosen = request.GET.get("school", "")
    shown = [s for s in schools if str(s.pk) == chosen] or schools
    try:
        start = dt.date.fromisoformat(request.GET["date"]) if request.GET.get("date") else None
    except ValueError:
        start = None
    try:
        days = min(max(int(request.GET.get("days", DEFAULT_DAYS)), 1), MAX_DAYS)
    except ValueError:
        days = DEFAULT_DAYS
    desk = selectors.desk(shown, start, days)
    now = timezone.now()
    for school_desk in desk:
        school_desk.zone_name = schooltime.zone_name(school_desk.school)
        school_desk.zone_label = schooltime.zone_label(school_desk.school)
        for day in school_desk.days:
            for tour in day.tours:
                tour.masked_phone = mask_phone(tour.parent_phone)
                tour.can_change = tour.status == TourBooking.Status.SCHEDULED
                tour.has_started = tour.starts_at <= now
        for callback in [*school_desk.callbacks_due, *school_desk.callbacks_upcoming]:
            callback.phone = phone_for(request.user, callback.parent_phone)
    first = start or (desk[0].today if desk else None)
    context = {
        **site.each_context(request),
        "title": "Tours and callbacks desk",
        "desk": desk,
        "schools": schools,
        "chosen_school": chosen,
        "days": days,
        "start": start,
        "previous_start": (first - dt.timedelta(days=days)).isoformat() if first else "",
        "next_start": (first + dt.timedelta(days=days)).isoformat() if first else "",
        "can_change_tours": request.user.has_perm("bookings.change_tourbooking"),
        "can_change_callbacks": request.user.has_perm("bookings.change_callbackrequest"),
        "can_view_callbacks": request.user.has_perm("bookings.view_callbackrequest"),
        "here": request.get_full_path(),
    }
    request.current_app = site.name
    return schooltime.render_in(TemplateResponse(request, "adminpanel/desk.html", context),
                                schooltime.shared_zone(shown))


def tour_outcome_view(request, pk: int, site):
    """POST status=completed|no_show."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    _require(request, "bookings.change_tourbooking")
    booking = get_object_or_404(TourBooking.objects.select_related("school", "contact"), pk=pk)
    status = request.POST.get("status", "")
    try:
        done = services.record_tour_outcome(booking=booking, status=status)
    except services.BookingError as exc:
        messages.error(request, f"{booking.reference}: {exc.message}")
    else:
        word = "completed" if status == TourBooking.Status.COMPLETED else "a no-show"
        record_history(request.user, done, f"Marked {word} on the desk (tour {_when(done)}).")
        messages.success(request, f"{booking.reference} ({booking.child_name}) marked {word}.")
    return _back(request)


def _tell_parent(form, booking: TourBooking, text: str) -> str:
    """Send `text` to the parent when the form asks to; the sentence to add to the staff's message."""
    if not form.cleaned_data["notify"]:
        return ""
    sent = notify_parent(booking, text)
    return " The parent has been told." if sent else " The parent has no chat to tell them in."


def _form_page(request, site, booking: TourBooking, form, *, title: str, action: str, submit: str):
    context = {
        **site.each_context(request),
        "title": title,
        "subtitle": f"{booking.reference} · {booking.child_name} · {_when(booking)}",
        "booking": booking,
        "when": _when(booking),
        "zone_name": schooltime.zone_name(booking.school),
        "masked_phone": mask_phone(booking.parent_phone),
        "form": form,
        "action": action,
        "submit": submit,
        "next": _next(request) or reverse("admin:desk"),
    }
    request.current_app = site.name
    return schooltime.render_in(TemplateResponse(request, "adminpanel/desk_form.html", context), booking.school)


def tour_cancel_view(request, pk: int, site):
    """Ask for the reason, cancel through the booking service, tell the parent."""
    _require(request, "bookings.change_tourbooking")
    booking = get_object_or_404(TourBooking.objects.select_related("school", "contact"), pk=pk)
    form = CancelTourForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        reason = form.cleaned_data["reason"].strip()
        try:
            cancelled = services.cancel_tour(booking=booking, reason=reason)
        except services.BookingError as exc:
            form.add_error(None, exc.message)
        else:
            note = _tell_parent(form, cancelled, (
                f"Your school tour on {_when(cancelled, zone=False)} (booking {cancelled.reference}) has been "
                f"cancelled by the admissions team: {reason.rstrip('.')}. Reply here if you would like to book "
                "another time."
            ))
            record_history(request.user, cancelled,
                           f"Cancelled on the desk (tour {_when(cancelled)}): {reason.rstrip('.')}.{note}")
            messages.success(request, f"{cancelled.reference} cancelled; the seat is free again.{note}")
            return _back(request)
    return _form_page(request, site, booking, form, title=f"Cancel tour {booking.reference}",
                      action=reverse("admin:desk_tour_cancel", args=[booking.pk]), submit="Cancel the tour")


def tour_reschedule_view(request, pk: int, site):
    """Pick a new date and time, move the tour through the booking service, tell the parent."""
    _require(request, "bookings.change_tourbooking")
    booking = get_object_or_404(TourBooking.objects.select_related("school", "contact"), pk=pk)
    form = RescheduleTourForm(request.POST or None, booking=booking)
    if request.method == "POST" and form.is_valid():
        was = _when(booking)
        try:
            moved = services.reschedule_tour(booking=booking, new_date=form.cleaned_data["new_date"],
                                             new_time=dt.time.fromisoformat(form.cleaned_data["new_time"]))
        except services.BookingError as exc:
            field = RescheduleTourForm.ERROR_FIELDS.get(exc.field)
            text = exc.message
            if exc.alternatives:
                text += " Open instead: " + ", ".join(slot.label for slot in exc.alternatives[:6]) + "."
            form.add_error(field, text)
        else:
            note = _tell_parent(form, moved, (
                f"The admissions team has moved your school tour to {_when(moved, zone=False)}. "
                f"Your booking reference stays {moved.reference}."
            ))
            record_history(request.user, moved, f"Moved on the desk from {was} to {_when(moved)}.{note}")
            messages.success(request, f"{moved.reference} moved from {was} to {_when(moved)}; the reference "
                                      f"stays.{note}")
            return _back(request)
    return _form_page(request, site, booking, form, title=f"Reschedule tour {booking.reference}",
                      action=reverse("admin:desk_tour_reschedule", args=[booking.pk]), submit="Move the tour")


def callback_assign_view(request, pk: int, site):
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    _require(request, "bookings.change_callbackrequest")
    callback = get_object_or_404(CallbackRequest, pk=pk)
    callbacks.assign_callback(callback=callback, user=request.user)
    record_history(request.user, callback, f"Assigned to {request.user.get_username()} on the desk.")
    messages.success(request, f"Callback {callback.reference} ({callback.parent_name}) is yours.")
    return _back(request)


def callback_done_view(request, pk: int, site):
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    _require(request, "bookings.change_callbackrequest")
    callback = get_object_or_404(CallbackRequest.objects.select_related("contact"), pk=pk)
    try:
        callbacks.complete_callback(callback=callback, user=request.user)
    except services.BookingError as exc:
        messages.error(request, exc.message)
    else:
        record_history(request.user, callback, "Marked done (parent called back) on the desk.")
        messages.success(request, f"Callback {callback.reference} ({callback.parent_name}) marked done.")
    return _back(request)
