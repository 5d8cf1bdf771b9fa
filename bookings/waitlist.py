"""The waitlist of a full tour: joining it, offering freed seats in order, holding them, and moving on.

Every change of seats happens under the slot's row lock (`SELECT ... FOR UPDATE`):
an offer adds one to `TourSlot.seats_held`, which `bookings.services._take_seat`
counts as taken, so a held seat is neither sold to someone else nor offered
twice, and the CHECK constraint (taken + held <= capacity) is the backstop.

A seat is offered when it frees (a cancellation, a move away, a capacity
raised by staff) or when a hold ends (declined, expired). The offer itself is
only state here (`bookings/offers.py` makes it); `bookings.signals.seat_offered` (sent once the transaction
commits) is how the chatbot tells the family on their channel.
"""

import datetime as dt

from django.db import IntegrityError, transaction
from django.db.models import F, Max, QuerySet
from django.utils import timezone

from bookings import services
from bookings.models import School, TourBooking, TourSlot, WaitlistEntry
from bookings.offers import offer_free_seats
from bookings.services import BookingError, describe_date
from bookings.signals import offer_lapsed


def join(*, school: School, contact, slot: TourSlot, parent_name: str, parent_phone: str, parent_email: str = "",
         child_name: str, child_age: int | None = None, now: dt.datetime | None = None) -> WaitlistEntry:
    """Put a family on a full tour's waitlist, last in line."""
    [child] = services.clean_children(school, [services.ChildDetails(child_name, child_age)])
    parent_name, phone, email = services._clean_details(school, parent_name, parent_phone, parent_email, [child])
    child_name, child_age = child.name, child.age
    if slot.starts_at <= (now or timezone.now()):
        raise BookingError("past_date", "That tour has already taken place.", field="preferred_date")
    if TourBooking.objects.filter(contact=contact, slot=slot, status=TourBooking.Status.SCHEDULED).exists():
        raise BookingError("already_booked", "You already have a place on that tour.", field="preferred_time")
    try:
        with transaction.atomic():
            locked = TourSlot.objects.select_for_update().get(pk=slot.pk)
            if locked.seats_free > 0:
                raise BookingError("not_full", "That tour still has free seats, so it can be booked now.",
                                   field="preferred_time")
            last = WaitlistEntry.objects.filter(slot=locked).aggregate(last=Max("position"))["last"] or 0
            return WaitlistEntry.objects.create(
                school=school, slot=locked, contact=contact, position=last + 1, parent_name=parent_name,
                parent_phone=phone, parent_email=email, child_name=child_name, child_age=child_age)
    except IntegrityError:
        raise BookingError("already_waiting", "You're already on the waitlist for that tour.",
                           field="preferred_time") from None


def place_in_line(entry: WaitlistEntry) -> int:
    """1 for the first family still waiting."""
    return WaitlistEntry.objects.filter(slot_id=entry.slot_id, status=WaitlistEntry.Status.WAITING,
                                        position__lt=entry.position).count() + 1


def _end_hold(entry: WaitlistEntry, status: str, now: dt.datetime) -> bool:
    """Release an offer's held seat (declined or expired) and offer it to the next family; False if the
    entry was no longer an offer (answered meanwhile)."""
    with transaction.atomic():
        TourSlot.objects.select_for_update().filter(pk=entry.slot_id).first()  # slot first, as everywhere
        locked = WaitlistEntry.objects.select_for_update().get(pk=entry.pk)
        if locked.status != WaitlistEntry.Status.OFFERED:
            return False
        locked.status = status
        locked.save(update_fields=["status", "updated_at"])
        TourSlot.objects.filter(pk=entry.slot_id, seats_held__gt=0).update(seats_held=F("seats_held") - 1)
        if status == WaitlistEntry.Status.EXPIRED:
            transaction.on_commit(lambda: offer_lapsed.send(sender=WaitlistEntry, entry=locked))
        offer_free_seats(entry.slot_id, now=now)
    return True


def decline(entry: WaitlistEntry, *, now: dt.datetime | None = None) -> WaitlistEntry:
    if not _end_hold(entry, WaitlistEntry.Status.DECLINED, now or timezone.now()):
        raise BookingError("no_offer", "There is no seat offer waiting for your answer.")
    entry.refresh_from_db()
    return entry


def accept(entry: WaitlistEntry, *, now: dt.datetime | None = None) -> TourBooking:
    """Book the held seat for the family (the booking rules of bookings.services.book_tour)."""
    local = entry.slot.starts_at.astimezone(entry.school.tz)
    return services.book_tour(
        school=entry.school, contact=entry.contact, parent_name=entry.parent_name, parent_phone=entry.parent_phone,
        parent_email=entry.parent_email, child_name=entry.child_name, child_age=entry.child_age,
        local_date=local.date(), local_time=local.time(), offer=entry, now=now)


def withdraw(entry: WaitlistEntry) -> WaitlistEntry:
    """Take a waiting family off the list (an offer is declined instead)."""
    if entry.status == WaitlistEntry.Status.OFFERED:
        return decline(entry)
    WaitlistEntry.objects.filter(pk=entry.pk, status=WaitlistEntry.Status.WAITING).update(
        status=WaitlistEntry.Status.WITHDRAWN, updated_at=timezone.now())
    entry.refresh_from_db()
    return entry


def expire_offers(*, now: dt.datetime | None = None) -> int:
    """End every hold past its time and offer the seat to the next family: the scheduled job."""
    now = now or timezone.now()
    due = WaitlistEntry.objects.filter(status=WaitlistEntry.Status.OFFERED, hold_expires_at__lte=now)
    return sum(_end_hold(entry, WaitlistEntry.Status.EXPIRED, now) for entry in due)


def set_capacity(slot: TourSlot, capacity: int, *, now: dt.datetime | None = None) -> TourSlot:
    """Staff change a tour's seats: never below what is taken or held; new seats go to the waitlist first."""
    with transaction.atomic():
        locked = TourSlot.objects.select_for_update().get(pk=slot.pk)
        if capacity < max(1, locked.seats_taken + locked.seats_held):
            raise BookingError("capacity_too_low", f"{locked.seats_taken} seats are taken and {locked.seats_held} "
                                                   "held; cancel bookings before lowering capacity.")
        TourSlot.objects.filter(pk=locked.pk).update(capacity=capacity)
        offer_free_seats(locked.pk, now=now)
    slot.refresh_from_db()
    return slot


def move(entry: WaitlistEntry, places: int) -> None:
    """Staff reorder: swap a waiting family with the one `places` ahead (-1) or behind (+1)."""
    with transaction.atomic():
        TourSlot.objects.select_for_update().filter(pk=entry.slot_id).first()
        line = list(WaitlistEntry.objects.select_for_update()
                    .filter(slot_id=entry.slot_id, status=WaitlistEntry.Status.WAITING).order_by("position", "id"))
        index = next((i for i, e in enumerate(line) if e.pk == entry.pk), None)
        if index is None:
            raise BookingError("not_waiting", f"{entry.reference} is not waiting.")
        other = index + places
        if not 0 <= other < len(line):
            return
        line[index], line[other] = line[other], line[index]
        for position, item in enumerate(line, 1):
            if item.position != position:
                WaitlistEntry.objects.filter(pk=item.pk).update(position=position)


def live_offer(contact) -> WaitlistEntry | None:
    """The contact's seat offer still held for them, soonest expiry first."""
    return (WaitlistEntry.objects.select_related("slot", "school")
            .filter(contact=contact, status=WaitlistEntry.Status.OFFERED, hold_expires_at__gt=timezone.now())
            .order_by("hold_expires_at").first())


def waiting_or_offered(contact, now: dt.datetime | None = None) -> QuerySet[WaitlistEntry]:
    """The contact's entries waiting or offered for tours still ahead (an offer may have lapsed since)."""
    return WaitlistEntry.objects.filter(contact=contact, status__in=[WaitlistEntry.Status.WAITING,
                                                                     WaitlistEntry.Status.OFFERED],
                                        slot__starts_at__gt=now or timezone.now())


def live_entries(contact) -> list[WaitlistEntry]:
    """The contact's entries still waiting or offered, for tours still ahead (one query, for the prompt)."""
    now = timezone.now()
    entries = waiting_or_offered(contact, now).select_related("slot", "school").order_by("slot__starts_at")
    return [e for e in entries if e.status == WaitlistEntry.Status.WAITING or e.hold_expires_at > now]


def describe_offer(entry: WaitlistEntry) -> dict:
    """The offer as a parent is told it: which tour, for whom, how long it is held (the school's zone)."""
    tz = entry.school.tz
    local, until = entry.slot.starts_at.astimezone(tz), entry.hold_expires_at.astimezone(tz)
    return {
        "waitlist_id": entry.reference, "date": local.date().isoformat(), "time": f"{local:%H:%M}",
        "label": f"{describe_date(local.date())}, {local:%H:%M}", "child_name": entry.child_name,
        "child_age": entry.child_age, "parent_name": entry.parent_name, "parent_phone": entry.parent_phone,
        "held_until": f"{describe_date(until.date())}, {until:%H:%M}", "held_until_date": until.date().isoformat(),
        "held_until_time": f"{until:%H:%M}", "school": entry.school.name,
        "address": entry.school.address,
    }
