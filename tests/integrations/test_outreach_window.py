"""Messages the parent did not ask for (a seat offer, its hold running out, the after-tour follow-up) on a frozen
clock: WhatsApp free text inside its 24 hours; outside them, e-mail, or a call back for staff when there is no
address; never a silent failure. WhatsApp is a fake on 127.0.0.1 (our client runs)."""

import datetime as dt

import pytest
from django.core import mail

from bookings import services as bookings
from bookings import waitlist
from bookings.models import CallbackRequest, WaitlistEntry
from chatbot.models import Channel, Message
from tests.factories import ContactFactory, ConversationFactory
from tests.integrations import test_reminders
from tests.integrations.test_reminders import MONDAY, TUESDAY, WEDNESDAY, at, book, parent_on

clock, school = test_reminders.clock, test_reminders.school  # the same frozen Monday and school as the reminders

pytestmark = [pytest.mark.django_db(transaction=True)]


def waiting_for_a_full_tour(school, parent, email: str = "mei@mail.example") -> tuple[WaitlistEntry, object]:
    """The parent waits for Wednesday's 09:00 tour, whose one seat another family has; returns (entry, booking)."""
    school.seats_per_tour = 1
    school.save()
    taken = book(school, ContactFactory(school=school), email="")
    entry = waitlist.join(school=school, contact=parent, slot=taken.slot, parent_name="Mei Lin Tan",
                          parent_phone="+6591234567", parent_email=email, child_name="Tom", child_age=5)
    return entry, taken


def last_told(contact) -> Message:
    return Message.objects.filter(conversation__contact=contact, role=Message.Role.ASSISTANT).latest("id")


def test_inside_24_hours_the_seat_offer_goes_on_whatsapp(clock, school, whatsapp):
    entry, taken = waiting_for_a_full_tour(school, parent_on(school, Channel.WHATSAPP))
    clock.move_to(at(MONDAY, 15))  # five hours after the parent's last message
    bookings.cancel_tour(booking=taken)

    [sent] = whatsapp.sent
    assert sent["type"] == "text" and "I'm holding it for Tom" in sent["text"]["body"]
    assert not mail.outbox and not CallbackRequest.objects.exists()


def test_outside_24_hours_the_seat_offer_goes_by_email(clock, school, whatsapp):
    parent = parent_on(school, Channel.WHATSAPP)
    entry, taken = waiting_for_a_full_tour(school, parent, email="mei.waitlist@mail.example")
    clock.move_to(at(TUESDAY, 11))  # 25 hours after the parent's last message
    bookings.cancel_tour(booking=taken)

    assert not whatsapp.sent, "free text outside the window would be refused: not even tried"
    [email] = mail.outbox
    assert email.to == ["mei.waitlist@mail.example"] and email.subject == "A seat has opened on a campus tour"
    assert "I'm holding it for Tom" in email.body and "You can answer on WhatsApp as usual." in email.body
    told = last_told(parent)
    assert told.payload["delivered_by"] == "email" and told.text in email.body, "the transcript shows it"


def test_outside_24_hours_with_no_email_staff_get_a_call_back_to_tell_the_family(clock, school, whatsapp):
    parent = parent_on(school, Channel.WHATSAPP, email="")
    entry, taken = waiting_for_a_full_tour(school, parent, email="")
    clock.move_to(at(TUESDAY, 11))
    bookings.cancel_tour(booking=taken)

    assert not whatsapp.sent and not mail.outbox
    callback = CallbackRequest.objects.get(contact=parent)
    assert callback.parent_phone == "+6591234567" and callback.status == CallbackRequest.Status.OPEN
    assert callback.topic.startswith("Please tell the family") and "I'm holding it for Tom" in callback.topic
    assert last_told(parent).payload == {"delivered_by": "staff_call_back", "callback": callback.reference}


def test_an_unanswered_hold_tells_the_family_and_offers_the_seat_to_the_next(clock, school):
    first = parent_on(school, Channel.WEB)
    entry, taken = waiting_for_a_full_tour(school, first)
    second = ContactFactory(school=school, name="Ravi Kumar", phone="+6598765432")
    ConversationFactory(school=school, contact=second, channel=Channel.WEB)
    waitlist.join(school=school, contact=second, slot=taken.slot, parent_name="Ravi Kumar",
                  parent_phone="+6598765432", child_name="Asha", child_age=4)
    bookings.cancel_tour(booking=taken)
    entry.refresh_from_db()

    clock.move_to(entry.hold_expires_at + dt.timedelta(minutes=1))
    assert waitlist.expire_offers() == 1

    lapsed = last_told(first).text
    assert "The seat we held for Tom" in lapsed and "has now gone to the next family" in lapsed
    assert "Wednesday 3 March" in lapsed and "just tell me a day that suits you" in lapsed
    assert "I'm holding it for Asha" in last_told(second).text


def test_the_follow_up_after_a_no_show_outside_24_hours_goes_by_email(clock, school, whatsapp):
    parent = parent_on(school, Channel.WHATSAPP)
    tour = book(school, parent, day=WEDNESDAY)
    clock.move_to(at(WEDNESDAY, 11))  # two days after the parent's last message
    bookings.record_tour_outcome(booking=tour, status="no_show")

    assert not whatsapp.sent
    [email] = mail.outbox
    assert email.subject == "Your campus tour at Hillside Primary" and "We missed you" in email.body
