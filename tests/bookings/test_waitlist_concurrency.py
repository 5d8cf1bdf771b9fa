"""The waitlist against the real PostgreSQL, with real concurrent transactions (one connection per thread):
a freed seat is offered to exactly one family, and held seats are never sold. Skipped on SQLite."""

import datetime as dt
from collections import Counter

import pytest
from django.utils import timezone

from bookings import waitlist
from bookings.models import TourBooking, TourSlot, WaitlistEntry
from bookings.services import BookingError, cancel_tour
from tests.bookings.test_concurrency import book, run_in_threads
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

NINE = dt.time(9)


def assert_seats_add_up(slot: TourSlot) -> None:
    slot.refresh_from_db()
    booked = TourBooking.objects.filter(slot=slot, status=TourBooking.Status.SCHEDULED).count()
    offered = WaitlistEntry.objects.filter(slot=slot, status=WaitlistEntry.Status.OFFERED).count()
    assert (slot.seats_taken, slot.seats_held) == (booked, offered)
    assert slot.seats_taken + slot.seats_held <= slot.capacity


def full_tour_with_waitlist(next_weekday, seats: int, waiting: int):
    school = SchoolFactory(seats_per_tour=seats)
    day = next_weekday(school, 1)
    booked = [book(school, ContactFactory(school=school), day, NINE, timezone.now()) for _ in range(seats)]
    slot = booked[0].slot
    entries = [waitlist.join(school=school, contact=c, slot=slot, parent_name=c.name, parent_phone=c.phone,
                             child_name="Mia", child_age=5)
               for c in (ContactFactory(school=school) for _ in range(waiting))]
    return school, day, slot, booked, entries


def test_parallel_cancellations_offer_each_freed_seat_to_one_family(next_weekday):
    school, day, slot, booked, entries = full_tour_with_waitlist(next_weekday, seats=5, waiting=20)
    strangers = [ContactFactory(school=school) for _ in range(10)]

    jobs = [lambda b=b: cancel_tour(booking=b) for b in booked]
    jobs += [lambda c=c: book(school, c, day, NINE, timezone.now()) for c in strangers]  # want the freed seats too
    results, errors = run_in_threads(jobs)

    assert len(results) == 5, [repr(e) for e in errors]  # the five cancellations; no stranger got a seat
    assert Counter(getattr(e, "code", repr(e)) for e in errors) == {"slot_full": 10}
    statuses = list(WaitlistEntry.objects.filter(slot=slot).order_by("position").values_list("status", flat=True))
    assert statuses == ["offered"] * 5 + ["waiting"] * 15  # the first five in line, each once
    assert_seats_add_up(slot)


def test_accepting_and_expiring_the_same_offers_at_once_never_double_offers(next_weekday):
    school, day, slot, booked, entries = full_tour_with_waitlist(next_weekday, seats=3, waiting=9)
    for b in booked:
        cancel_tour(booking=b)
    offered = list(WaitlistEntry.objects.filter(slot=slot, status="offered"))
    assert len(offered) == 3
    late = timezone.now() + dt.timedelta(minutes=school.waitlist_hold_minutes + 1)

    def accept(entry):
        return waitlist.accept(entry)

    jobs = [lambda e=e: accept(e) for e in offered]
    jobs += [lambda: waitlist.expire_offers(now=late) for _ in range(3)]  # the scheduled job, three times at once
    jobs += [lambda c=c: book(school, c, day, NINE, timezone.now())
             for c in (ContactFactory(school=school) for _ in range(6))]
    results, errors = run_in_threads(jobs)

    unexpected = [e for e in errors if not isinstance(e, BookingError)]
    assert not unexpected, [repr(e) for e in unexpected]
    accepted = WaitlistEntry.objects.filter(slot=slot, status="accepted").count()
    expired = WaitlistEntry.objects.filter(slot=slot, status="expired").count()
    assert accepted + expired >= 3  # each first offer was either taken or ran out, never both
    for entry in offered:
        entry.refresh_from_db()
        assert entry.status in ("accepted", "expired")
        assert (entry.booking is not None) == (entry.status == "accepted")
    # every offer made went to a different family, and no stranger took a held or freed seat
    assert WaitlistEntry.objects.filter(slot=slot, offered_at__isnull=False).values("contact").distinct().count() \
        == WaitlistEntry.objects.filter(slot=slot, offered_at__isnull=False).count()
    assert not TourBooking.objects.filter(slot=slot, status="scheduled", waitlist_entry__isnull=True).exists()
    assert_seats_add_up(slot)
