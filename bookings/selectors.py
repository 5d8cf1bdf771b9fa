"""Reading bookings and callbacks, scoped to who is asking."""

import datetime as dt
import re

from django.db.models import DateField, DateTimeField, F, IntegerField, QuerySet, Value
from django.utils import timezone

from bookings.models import CallbackRequest, SchoolClosure, TourBooking, TourSlot, split_names


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


def upcoming_with_children(contact, names: list[str], now=None) -> list[TourBooking]:
    """The contact's upcoming tours that one of these children (by name, any case) is already coming to."""
    wanted = {name.strip().casefold() for name in names if name and name.strip()}
    return [booking for booking in upcoming_bookings(contact, now).order_by("starts_at")
            if wanted & {name.strip().casefold() for name in split_names(booking.child_name)}]


def open_callbacks(contact) -> QuerySet[CallbackRequest]:
    return CallbackRequest.objects.filter(contact=contact, status=CallbackRequest.Status.OPEN)


def contact_callback(contact, reference: str) -> CallbackRequest | None:
    """The contact's own call back by reference ("C-WUC3X6", "c wuc3x6", "WUC3X6"), whatever its status.

    Someone else's call back is simply "not found": its existence is not revealed.
    """
    return (CallbackRequest.objects.select_related("school", "contact")
            .filter(contact=contact, reference=normalise_reference(reference, "C")).first())


def seats_gone_and_closures(school, start: dt.date, end: dt.date) -> tuple[dict[dt.datetime, tuple[int, int]],
                                                                            set[dt.date]]:
    """What `bookings.services.available_slots` reads, in one query (it runs in most turns): the tour slots
    starting on the local days `start` to `end` as {starts_at: (capacity, seats taken or held)}, and the
    school's closure dates in those days."""
    slots = TourSlot.objects.filter(
        school=school, kind=TourSlot.Kind.TOUR, starts_at__gte=dt.datetime.combine(start, dt.time.min, school.tz),
        starts_at__lt=dt.datetime.combine(end + dt.timedelta(days=1), dt.time.min, school.tz),
    ).order_by().values_list("starts_at", "capacity", F("seats_taken") + F("seats_held"),
                             Value(None, output_field=DateField()))
    closures = SchoolClosure.objects.filter(school=school, date__range=(start, end)).order_by().values_list(
        Value(None, output_field=DateTimeField()), Value(None, output_field=IntegerField()),
        Value(None, output_field=IntegerField()), "date")
    found = list(slots.union(closures, all=True))
    return ({at: (capacity, gone) for at, capacity, gone, closed in found if closed is None},
            {closed for *_, closed in found if closed is not None})
