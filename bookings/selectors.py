"""Reading bookings and callbacks, scoped to who is asking."""

import datetime as dt
import re

from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from bookings.models import CallbackRequest, SchoolClosure, TourBooking, TourSlot, split_names
from plumbing import rows


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
    """What `bookings.services.available_slots` reads, in one prepared statement (it runs in most turns): the
    tour slots starting on the local days `start` to `end` as {starts_at: (capacity, seats taken or held)},
    and the school's closure dates in those days."""
    starts_at, closure_date = TourSlot._meta.get_field("starts_at"), SchoolClosure._meta.get_field("date")
    sql = (f"SELECT s.starts_at, s.capacity, s.seats_taken + s.seats_held, NULL FROM {rows.table(TourSlot)} s "  # noqa: S608 (model table names)
           "WHERE s.school_id = %s AND s.kind = %s AND s.starts_at >= %s AND s.starts_at < %s "
           f"UNION ALL SELECT NULL, NULL, NULL, c.date FROM {rows.table(SchoolClosure)} c "
           "WHERE c.school_id = %s AND c.date BETWEEN %s AND %s")
    day = connection.ops.adapt_datefield_value
    params = [school.pk, TourSlot.Kind.TOUR, rows.when(dt.datetime.combine(start, dt.time.min, school.tz)),
              rows.when(dt.datetime.combine(end + dt.timedelta(days=1), dt.time.min, school.tz)),
              school.pk, day(start), day(end)]
    with rows.hot_cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchall()
    slots = {rows.from_db(starts_at, at): (capacity, gone) for at, capacity, gone, closed in found if closed is None}
    return slots, {rows.from_db(closure_date, closed) for *_, closed in found if closed is not None}
