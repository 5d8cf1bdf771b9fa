"""Parallel bookings against the real PostgreSQL: the seat count is never exceeded.

Each thread uses its own database connection (closed at the end of the thread),
so these are real concurrent transactions. Skipped on SQLite.
"""

import datetime as dt
import threading
from collections import Counter

import pytest
from django.db import connection
from django.utils import timezone

from bookings.models import TourBooking, TourSlot
from bookings.services import BookingError, ChildDetails, book_tour, cancel_tour, reschedule_tour
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

TIMES = (dt.time(9), dt.time(11), dt.time(14))


def run_in_threads(jobs) -> tuple[list, list[BaseException]]:
    """Start every job at once (a barrier), each in its own thread and connection; results and errors."""
    barrier = threading.Barrier(len(jobs))
    results, errors = [], []
    lock = threading.Lock()

    def worker(job):
        try:
            barrier.wait(timeout=30)
            outcome = job()
        except BaseException as exc:  # collected and asserted on
            with lock:
                errors.append(exc)
        else:
            with lock:
                results.append(outcome)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)
    assert not any(thread.is_alive() for thread in threads), "a booking thread hung"
    return results, errors


FAMILY = [ChildDetails("Leo", 5), ChildDetails("Mia", 5), ChildDetails("Sam", 2)]


def book(school, contact, day, time, now, children=FAMILY[:2]):
    """A family booking: twins by default (one seat, whatever the number of children)."""
    return book_tour(
        school=school, contact=contact, parent_name=contact.name, parent_phone=contact.phone, children=children,
        local_date=day, local_time=time, now=now,
    )


def assert_seat_counts_match(school) -> None:
    for slot in TourSlot.objects.filter(school=school):
        live = TourBooking.objects.filter(slot=slot, status=TourBooking.Status.SCHEDULED).count()
        assert slot.seats_taken == live <= slot.capacity, slot


def test_fifty_parents_race_for_the_last_seat(next_weekday):
    school = SchoolFactory(seats_per_tour=5)
    now = timezone.now()
    day = next_weekday(school, 1)
    for _ in range(4):  # four of the five seats already gone
        book(school, ContactFactory(school=school), day, TIMES[0], now)
    contacts = [ContactFactory(school=school) for _ in range(50)]

    results, errors = run_in_threads([lambda c=c: book(school, c, day, TIMES[0], now) for c in contacts])

    assert len(results) == 1, f"{len(results)} bookings for one seat"
    assert len(errors) == 49
    assert all(isinstance(exc, BookingError) for exc in errors), [repr(e) for e in errors if
                                                                 not isinstance(e, BookingError)]
    assert Counter(exc.code for exc in errors) == {"slot_full": 49}
    full = dt.datetime.combine(day, TIMES[0], school.tz)
    for exc in errors:
        assert exc.alternatives and all(alt.starts_at != full for alt in exc.alternatives)
    slot = TourSlot.objects.get(school=school, starts_at=full)
    assert slot.seats_taken == slot.capacity == 5
    assert TourBooking.objects.filter(slot=slot, status=TourBooking.Status.SCHEDULED).count() == 5
    assert_seat_counts_match(school)


def test_fifty_parents_race_for_a_new_slot(next_weekday):
    """No slot row exists yet: the first seats also create the row, concurrently."""
    school = SchoolFactory(seats_per_tour=3)
    now = timezone.now()
    day = next_weekday(school, 2)
    contacts = [ContactFactory(school=school) for _ in range(50)]

    results, errors = run_in_threads([lambda c=c: book(school, c, day, TIMES[1], now) for c in contacts])

    assert len(results) == 3
    assert all(isinstance(exc, BookingError) and exc.code == "slot_full" for exc in errors), errors
    assert TourSlot.objects.get(school=school).seats_taken == 3
    assert_seat_counts_match(school)


def test_parallel_reschedules_cancels_and_bookings_never_overbook(next_weekday):
    """20 at once: parents swap between three tours in opposite directions while others book and cancel."""
    school = SchoolFactory(seats_per_tour=4)
    now = timezone.now()
    day = next_weekday(school, 3)
    # Three of four seats taken on every tour.
    existing = [book(school, ContactFactory(school=school), day, TIMES[i % 3], now) for i in range(9)]
    jobs = []
    for i, booking in enumerate(existing):
        if i < 7:  # moves in both directions around the circle 09 -> 11 -> 14 -> 09 and back
            target = TIMES[(i + (1 if i % 2 else 2)) % 3]
            jobs.append(lambda b=booking, t=target: reschedule_tour(booking=b, new_date=day, new_time=t, now=now))
        else:
            jobs.append(lambda b=booking: cancel_tour(booking=b, reason="Plans changed", now=now))
    newcomers = [ContactFactory(school=school) for _ in range(11)]
    jobs += [lambda c=c, i=i: book(school, c, day, TIMES[i % 3], now) for i, c in enumerate(newcomers)]
    assert len(jobs) == 20

    results, errors = run_in_threads(jobs)

    unexpected = [exc for exc in errors if not isinstance(exc, BookingError)]
    assert unexpected == [], [repr(exc) for exc in unexpected]  # e.g. no deadlock reaches the parent
    assert {exc.code for exc in errors} <= {"slot_full"}
    assert len(results) + len(errors) == 20
    assert_seat_counts_match(school)
    live = TourBooking.objects.filter(school=school, status=TourBooking.Status.SCHEDULED)
    assert live.count() <= 12
    # Every original booking is accounted for exactly once, under its own reference: live (moved or not) or
    # cancelled; a move that happened is in its history and its seat is where the booking now is.
    for booking in existing:
        reference, started = booking.reference, booking.starts_at
        booking.refresh_from_db()
        assert booking.reference == reference
        assert booking.status in {"scheduled", "cancelled"}
        moves = list(booking.moves.all())
        assert len(moves) <= 1
        if moves:
            assert (moves[0].from_starts_at, moves[0].to_starts_at) == (started, booking.starts_at)
        assert booking.slot.starts_at == booking.starts_at
        assert [c.name for c in booking.children.all()] == ["Leo", "Mia"]


def test_opposite_swaps_in_parallel_do_not_deadlock(next_weekday):
    """Parents on 09:00 move to 11:00 while parents on 11:00 move to 09:00, all at the same moment."""
    school = SchoolFactory(seats_per_tour=16)  # room for everyone at once: any error is a real one
    now = timezone.now()
    day = next_weekday(school, 4)
    morning = [book(school, ContactFactory(school=school), day, TIMES[0], now) for _ in range(8)]
    later = [book(school, ContactFactory(school=school), day, TIMES[1], now) for _ in range(8)]
    jobs = [lambda b=b: reschedule_tour(booking=b, new_date=day, new_time=TIMES[1], now=now) for b in morning]
    jobs += [lambda b=b: reschedule_tour(booking=b, new_date=day, new_time=TIMES[0], now=now) for b in later]

    results, errors = run_in_threads(jobs)

    assert errors == [], [repr(exc) for exc in errors]
    assert len(results) == 16
    slots = {slot.starts_at.astimezone(school.tz).time(): slot.seats_taken
             for slot in TourSlot.objects.filter(school=school)}
    assert slots == {TIMES[0]: 8, TIMES[1]: 8}
    assert_seat_counts_match(school)


def test_one_family_booking_several_tours_at_once(next_weekday):
    """The same contact in several tabs: every booking lands, with one deal and a consistent context."""
    from crm.models import Activity, Deal

    school = SchoolFactory()
    now = timezone.now()
    day = next_weekday(school, 1)
    contact = ContactFactory(school=school)
    days = [day + dt.timedelta(days=n) for n in range(3)]
    jobs = [lambda d=d, t=t: book(school, contact, d, t, now) for d in days for t in TIMES]

    results, errors = run_in_threads(jobs)

    assert errors == [], [repr(exc) for exc in errors]
    assert len(results) == 9
    assert Deal.objects.filter(contact=contact, is_open=True).count() == 1
    assert Activity.objects.filter(contact=contact, kind="tour").count() == 9
    contact.refresh_from_db()
    assert contact.context["tour_booking_id"] in {booking.reference for booking in results}
    assert_seat_counts_match(school)


def test_families_moving_back_and_forth_while_others_book(next_weekday):
    """Families of one to three children move the same tour twice in a row (09 -> 11 -> 14) in parallel with
    newcomers booking: seats never exceed capacity, every family keeps one reference and both moves."""
    school = SchoolFactory(seats_per_tour=3, max_people_per_booking=4)
    now = timezone.now()
    day = next_weekday(school, 2)
    families = [book(school, ContactFactory(school=school), day, TIMES[0], now, children=FAMILY[: 1 + i % 3])
                for i in range(3)]
    newcomers = [ContactFactory(school=school) for _ in range(9)]

    def move_twice(booking):
        moved = reschedule_tour(booking=booking, new_date=day, new_time=TIMES[1], now=now)
        return reschedule_tour(booking=moved, new_date=day, new_time=TIMES[2], now=now)

    jobs = [lambda b=b: move_twice(b) for b in families]
    jobs += [lambda c=c, i=i: book(school, c, day, TIMES[1 + i % 2], now) for i, c in enumerate(newcomers)]
    results, errors = run_in_threads(jobs)

    assert all(isinstance(exc, BookingError) and exc.code == "slot_full" for exc in errors), [repr(e) for e in errors]
    assert_seat_counts_match(school)
    for slot in TourSlot.objects.filter(school=school):
        assert slot.seats_taken <= 3
    for family in families:
        reference = family.reference
        family.refresh_from_db()
        assert family.reference == reference and family.status == "scheduled"
        hops = [m.to_starts_at.astimezone(school.tz).time() for m in family.moves.all()]
        assert hops == [TIMES[1], TIMES[2]][: len(hops)]
        assert family.starts_at.astimezone(school.tz).time() == ([TIMES[0]] + hops)[-1]
    booked = {r.pk for r in results if r.contact in newcomers}
    assert set(TourBooking.objects.filter(school=school).values_list("pk", flat=True)) == booked | {
        f.pk for f in families}  # a failed move made no booking, a failed newcomer none either
