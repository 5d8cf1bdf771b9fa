"""Reading bookings and callbacks, scoped to who is asking."""

import datetime as dt
import re

from django.db.models import DateField, DateTimeField, F, IntegerField, QuerySet, Value
from django.utils import timezone

from bookings.models import CallbackRequest, SchoolClosure, TourBooking, TourSlot, split_names
from plumbing.rows import Names, database, hot_cursor


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


SLOT, CLOSURE = Names(TourSlot), Names(SchoolClosure)
# Hand-written on PostgreSQL (prepared once per connection): the ORM's query costs about 1 ms of Python per call,
# in most turns; this one 0.05 ms (docs/benchmarks.md, issue 29).
SEATS_GONE_AND_CLOSURES = (
    f"SELECT s.{SLOT.starts_at}, s.{SLOT.capacity}, s.{SLOT.seats_taken} + s.{SLOT.seats_held}, NULL "  # noqa: S608
    f"FROM {SLOT.table} s WHERE s.{SLOT.school} = %s AND s.{SLOT.kind} = %s AND s.{SLOT.starts_at} >= %s "
    f"AND s.{SLOT.starts_at} < %s "
    f"UNION ALL SELECT NULL, NULL, NULL, c.{CLOSURE.date} FROM {CLOSURE.table} c "
    f"WHERE c.{CLOSURE.school} = %s AND c.{CLOSURE.date} BETWEEN %s AND %s")


def seats_gone_and_closures(school, start: dt.date, end: dt.date) -> tuple[dict[dt.datetime, tuple[int, int]],
                                                                            set[dt.date]]:
    """What `bookings.services.available_slots` reads, in one query (it runs in most turns): the tour slots
    starting on the local days `start` to `end` as {starts_at: (capacity, seats taken or held)}, and the
    school's closure dates in those days."""
    since = dt.datetime.combine(start, dt.time.min, school.tz)
    until = dt.datetime.combine(end + dt.timedelta(days=1), dt.time.min, school.tz)
    if database().vendor == "postgresql":
        with hot_cursor() as cursor:
            cursor.execute(SEATS_GONE_AND_CLOSURES,
                           [school.pk, TourSlot.Kind.TOUR, since, until, school.pk, start, end])
            found = cursor.fetchall()
    else:
        found = list(seats_gone_and_closures_query(school, since, until, start, end))
    return ({at: (capacity, gone) for at, capacity, gone, closed in found if closed is None},
            {closed for *_, closed in found if closed is not None})


def seats_gone_and_closures_query(school, since: dt.datetime, until: dt.datetime, start: dt.date,
                                  end: dt.date) -> QuerySet:
    """`SEATS_GONE_AND_CLOSURES` in the ORM (SQLite, and the reference the statement is tested against)."""
    slots = TourSlot.objects.filter(school=school, kind=TourSlot.Kind.TOUR, starts_at__gte=since, starts_at__lt=until)
    closures = SchoolClosure.objects.filter(school=school, date__range=(start, end))
    nothing = Value(None, output_field=IntegerField())
    return slots.order_by().values_list("starts_at", "capacity", F("seats_taken") + F("seats_held"),
                                        Value(None, output_field=DateField())).union(
        closures.order_by().values_list(Value(None, output_field=DateTimeField()), nothing, nothing, "date"),
        all=True)
