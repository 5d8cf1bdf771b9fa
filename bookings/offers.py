"""Offering a slot's freed seats to its waitlist, in order, holding one seat per family.

Below both `bookings.services` (a cancellation or a move frees a seat and offers it here, in the same
transaction) and `bookings.waitlist` (a hold that ends offers its seat again), so neither imports the other
to reach it.
"""

import datetime as dt

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from bookings.models import TourSlot, WaitlistEntry
from bookings.signals import seat_offered


def offer_free_seats(slot_id: int, *, now: dt.datetime | None = None) -> list[WaitlistEntry]:
    """Offer the slot's free seats to the next families waiting, holding one seat each.

    Runs inside the caller's transaction (or its own) under the slot's row lock."""
    now = now or timezone.now()
    with transaction.atomic():
        slot = TourSlot.objects.select_for_update(of=("self",)).select_related("school").get(pk=slot_id)
        if slot.starts_at <= now:
            return []
        waiting = list(
            WaitlistEntry.objects.select_for_update()
            .filter(slot=slot, status=WaitlistEntry.Status.WAITING)
            .order_by("position", "id")[: max(slot.seats_free, 0)]
        )
        if not waiting:
            return []
        expires = min(now + dt.timedelta(minutes=slot.school.waitlist_hold_minutes), slot.starts_at)
        for entry in waiting:
            entry.status, entry.offered_at, entry.hold_expires_at = WaitlistEntry.Status.OFFERED, now, expires
            entry.save(update_fields=["status", "offered_at", "hold_expires_at", "updated_at"])
        TourSlot.objects.filter(pk=slot.pk).update(seats_held=F("seats_held") + len(waiting))
        for entry in waiting:
            transaction.on_commit(lambda entry=entry: seat_offered.send(sender=WaitlistEntry, entry=entry))
    return waiting
