"""The waitlist: a freed seat is offered to the next family, held for them, booked on their yes, and moved on
when they decline or the hold runs out. The clock is frozen (time-machine) wherever a hold's time matters."""

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from bookings import waitlist
from bookings.models import TourSlot
from bookings.services import BookingError, book_tour, cancel_tour, reschedule_tour
from chatbot.models import Conversation, Message
from tests.factories import ContactFactory

pytestmark = pytest.mark.django_db

NINE = dt.time(9)


def book(school, contact, day, time=NINE, now=None):
    return book_tour(school=school, contact=contact, parent_name=contact.name, parent_phone=contact.phone,
                     child_name="Ana", child_age=5, local_date=day, local_time=time, now=now)


def full_tour(school, day, seats=2):
    """A tour with every seat booked by another family; returns (slot, bookings)."""
    school.seats_per_tour = seats
    school.save()
    booked = [book(school, ContactFactory(school=school), day) for _ in range(seats)]
    return booked[0].slot, booked


def join(school, slot, contact, child="Mia"):
    return waitlist.join(school=school, contact=contact, slot=slot, parent_name=contact.name,
                         parent_phone=contact.phone, child_name=child, child_age=5)


def with_chat(contact):
    """The family has chatted on the web, so an offer has somewhere to go."""
    Conversation.objects.create(school=contact.school, contact=contact, channel="web")
    return contact


@pytest.fixture
def day(school, next_weekday):
    return next_weekday(school, 1)


def test_only_a_full_tour_has_a_waitlist_and_families_line_up_in_order(school, day):
    slot, _ = full_tour(school, day, seats=1)
    first, second = ContactFactory(school=school), ContactFactory(school=school)
    assert join(school, slot, first).position == 1
    entry = join(school, slot, second)
    assert (entry.position, waitlist.place_in_line(entry)) == (2, 2)
    with pytest.raises(BookingError) as again:
        join(school, slot, first)
    assert again.value.code == "already_waiting"
    open_slot = TourSlot.objects.create(school=school, starts_at=slot.starts_at + dt.timedelta(hours=2), capacity=3)
    with pytest.raises(BookingError) as not_full:
        join(school, open_slot, first)
    assert not_full.value.code == "not_full"


def test_a_cancellation_offers_the_seat_to_the_first_family_and_holds_it(school, day,
                                                                         django_capture_on_commit_callbacks):
    slot, (theirs, _) = full_tour(school, day)
    first, second = with_chat(ContactFactory(school=school)), with_chat(ContactFactory(school=school))
    a, b = join(school, slot, first, "Mia"), join(school, slot, second, "Sam")
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        cancel_tour(booking=theirs, now=now)

    a.refresh_from_db(), b.refresh_from_db(), slot.refresh_from_db()
    assert (a.status, b.status) == ("offered", "waiting")
    assert a.hold_expires_at == now + dt.timedelta(minutes=school.waitlist_hold_minutes)
    assert (slot.seats_taken, slot.seats_held) == (1, 1)
    offer = Message.objects.get(conversation__contact=first, role="assistant")
    assert "Mia" in offer.text and "I'm holding it for" in offer.text and f"{day.day}" in offer.text
    assert not Message.objects.filter(conversation__contact=second).exists()
    with pytest.raises(BookingError) as taken:  # the held seat is nobody else's
        book(school, ContactFactory(school=school), day)
    assert taken.value.code == "slot_full"


def test_accepting_books_the_held_seat(school, day):
    slot, (theirs, _) = full_tour(school, day)
    parent = ContactFactory(school=school)
    entry = join(school, slot, parent)
    cancel_tour(booking=theirs)
    entry.refresh_from_db()

    booking = waitlist.accept(entry)

    slot.refresh_from_db(), entry.refresh_from_db()
    assert (booking.contact, booking.child_name, booking.starts_at) == (parent, "Mia", slot.starts_at)
    assert (slot.seats_taken, slot.seats_held) == (2, 0)
    assert (entry.status, entry.booking) == ("accepted", booking)
    with pytest.raises(BookingError) as twice:
        waitlist.accept(entry)
    assert twice.value.code == "offer_expired"


def test_an_unanswered_offer_expires_and_moves_to_the_next_family(school, day):
    slot, (theirs, _) = full_tour(school, day)
    first, second = ContactFactory(school=school), ContactFactory(school=school)
    a, b = join(school, slot, first), join(school, slot, second)
    start = timezone.now().replace(microsecond=0)
    with time_machine.travel(start, tick=False):
        cancel_tour(booking=theirs)
    hold = dt.timedelta(minutes=school.waitlist_hold_minutes)

    with time_machine.travel(start + hold - dt.timedelta(minutes=1), tick=False):
        assert waitlist.expire_offers() == 0  # still held
    with time_machine.travel(start + hold, tick=False):
        assert waitlist.expire_offers() == 1

    a.refresh_from_db(), b.refresh_from_db(), slot.refresh_from_db()
    assert (a.status, b.status) == ("expired", "offered")
    assert b.hold_expires_at == start + 2 * hold
    assert (slot.seats_taken, slot.seats_held) == (1, 1)
    with time_machine.travel(start + hold + dt.timedelta(minutes=5), tick=False), pytest.raises(BookingError):
        waitlist.accept(a)  # too late for the first family
    with time_machine.travel(start + 2 * hold, tick=False):
        assert waitlist.expire_offers() == 1
    slot.refresh_from_db()
    assert (slot.seats_taken, slot.seats_held) == (1, 0)  # nobody left: the seat is open to anyone again
    book(school, ContactFactory(school=school), day)


def test_a_hold_never_outlives_the_tour(school, day):
    school.waitlist_hold_minutes = 60 * 24 * 30
    school.save()
    slot, (theirs, _) = full_tour(school, day)
    entry = join(school, slot, ContactFactory(school=school))
    cancel_tour(booking=theirs)
    entry.refresh_from_db()
    assert entry.hold_expires_at == slot.starts_at


def test_declining_passes_the_seat_on(school, day):
    slot, (theirs, _) = full_tour(school, day)
    a, b = join(school, slot, ContactFactory(school=school)), join(school, slot, ContactFactory(school=school))
    cancel_tour(booking=theirs)
    a.refresh_from_db()
    waitlist.decline(a)
    b.refresh_from_db(), slot.refresh_from_db()
    assert (a.status, b.status, slot.seats_held) == ("declined", "offered", 1)


def test_a_move_away_and_a_capacity_raise_free_seats_for_the_waitlist(school, day, next_weekday):
    slot, (theirs, _) = full_tour(school, day)
    a, b, c = (join(school, slot, ContactFactory(school=school)) for _ in range(3))
    reschedule_tour(booking=theirs, new_date=next_weekday(school, 2), new_time=NINE)
    a.refresh_from_db()
    assert a.status == "offered"
    waitlist.set_capacity(slot, 4)
    b.refresh_from_db(), c.refresh_from_db(), slot.refresh_from_db()
    assert (b.status, c.status) == ("offered", "offered")
    assert (slot.capacity, slot.seats_taken, slot.seats_held) == (4, 1, 3)
    with pytest.raises(BookingError):
        waitlist.set_capacity(slot, 3)  # below taken + held


def test_staff_reorder_changes_who_is_offered_first(school, day):
    slot, (theirs, _) = full_tour(school, day)
    a, b = join(school, slot, ContactFactory(school=school)), join(school, slot, ContactFactory(school=school))
    waitlist.move(b, -1)
    cancel_tour(booking=theirs)
    a.refresh_from_db(), b.refresh_from_db()
    assert (a.status, b.status) == ("waiting", "offered")


def test_no_offer_once_the_tour_has_started(school, day):
    slot, _ = full_tour(school, day)
    entry = join(school, slot, ContactFactory(school=school))
    TourSlot.objects.filter(pk=slot.pk).update(capacity=3)  # a seat appears, too late to use
    assert waitlist.offer_free_seats(slot.pk, now=slot.starts_at) == []
    entry.refresh_from_db()
    assert entry.status == "waiting"


def test_the_scheduled_job_expires_holds(school, day):
    from bookings.tasks import expire_seat_offers

    slot, (theirs, _) = full_tour(school, day)
    entry = join(school, slot, ContactFactory(school=school))
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        cancel_tour(booking=theirs)
    with time_machine.travel(start + dt.timedelta(minutes=school.waitlist_hold_minutes, seconds=1), tick=False):
        assert expire_seat_offers.apply().get() == 1
    entry.refresh_from_db()
    assert entry.status == "expired"
