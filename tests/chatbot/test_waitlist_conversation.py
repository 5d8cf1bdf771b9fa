"""The waitlist in conversation, through the real loop, tools and services with the offline policy: a full tour
is offered a waitlist, the yes joins it, a seat freed by another family is offered in the chat and the parent's
yes books it (the offer is its read-back); a no passes it on."""

import datetime as dt

import pytest

from bookings import waitlist
from bookings.models import TourBooking, WaitlistEntry
from bookings.services import book_tour, cancel_tour
from tests.chatbot.test_conversations import Parent, _offline_and_fast, spoken  # noqa: F401 (fixture)
from tests.factories import ContactFactory

pytestmark = [pytest.mark.django_db(transaction=True)]


def fill(school, day, time=dt.time(11)) -> list[TourBooking]:
    return [book_tour(school=school, contact=c, parent_name=c.name, parent_phone=c.phone, child_name="Noah",
                      child_age=6, local_date=day, local_time=time)
            for c in (ContactFactory(school=school) for _ in range(school.seats_per_tour))]


def test_join_the_waitlist_of_a_full_tour_then_take_the_freed_seat(school, next_weekday):
    day = next_weekday(school, 2)
    theirs = fill(school, day)
    parent = Parent(school)
    reply = parent.say(f"Hello, I'm Priya Nair, 9876 5432. Could we visit on {spoken(day)} at 11am? "
                       "It's for my son Arjun, he's 4")
    assert "full" in reply and "waitlist?" in reply, reply
    reply = parent.say("yes please")
    entry = WaitlistEntry.objects.get(contact=parent.contact)
    assert (entry.status, entry.child_name, entry.child_age, entry.position) == ("waiting", "Arjun", 4, 1)
    assert entry.reference in reply and "number 1" in reply, reply
    assert not parent.bookings().exists()

    cancel_tour(booking=theirs[0])  # another family cancels: the seat is offered here, in the chat
    offer = parent.contact.conversations.get().messages.filter(role="assistant").latest("id").text
    assert "I'm holding it for Arjun" in offer and spoken(day) in offer, offer

    reply = parent.say("great, we'll take it!")
    booking = parent.bookings().get()
    assert (booking.child_name, booking.local_start.date(), booking.local_start.hour) == ("Arjun", day, 11)
    assert booking.reference in reply, reply
    entry.refresh_from_db()
    assert (entry.status, entry.booking) == ("accepted", booking)


def test_no_to_an_offered_seat_passes_it_to_the_next_family(school, next_weekday):
    day = next_weekday(school, 3)
    theirs = fill(school, day)
    parent = Parent(school)
    parent.say(f"I'm Li Wei (91112222). Put us on the waiting list for {spoken(day)} at 11am please, "
               "for my daughter Mei who is 5")
    entry = WaitlistEntry.objects.get(contact=parent.contact)
    slot = entry.slot
    nxt = ContactFactory(school=school)
    waitlist.join(school=school, contact=nxt, slot=slot, parent_name=nxt.name, parent_phone=nxt.phone,
                  child_name="Ben", child_age=4)
    cancel_tour(booking=theirs[0])

    reply = parent.say("no thanks, that's too late notice for us")
    entry.refresh_from_db()
    assert entry.status == "declined"
    assert "next family" in reply, reply
    assert WaitlistEntry.objects.get(contact=nxt).status == "offered"
    assert not parent.bookings().exists()


def test_a_yes_in_a_new_chat_still_takes_the_seat_held(school, next_weekday):
    day = next_weekday(school, 4)
    theirs = fill(school, day, dt.time(9))
    parent = Parent(school)
    parent.say(f"Hello, Sara Koh here, 90001111. Please add us to the wait list for {spoken(day)} at 9am, "
               "for my son Max, 6")
    assert WaitlistEntry.objects.get(contact=parent.contact).status == "waiting"
    cancel_tour(booking=theirs[0])
    parent.contact.conversations.update(status="ended")  # hours later: the next message opens a new chat

    reply = parent.say("Yes please")
    assert parent.contact.conversations.count() == 2
    booking = parent.bookings().get()
    assert (booking.child_name, booking.local_start.hour) == ("Max", 9) and booking.reference in reply
