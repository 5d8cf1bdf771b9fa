"""Attack 1 (high): taking over a parent's identity by typing their phone number on the web chat.

A web visitor books giving someone else's number. Before the fix that typed number
was written onto the visitor's contact and later used to match the real parent's
WhatsApp and Chatwoot messages to it: the bot greeted the parent by the visitor's
name and the visitor could cancel the parent's tours ("cancel my tour for Vera").
Now only what a platform vouches for identifies a contact (docs/identity.md).
"""

import datetime as dt

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from bookings import selectors
from bookings import services as booking_services
from bookings.models import TourBooking
from chatbot.models import Conversation, Message
from chatbot.services import receive
from crm.models import Contact
from crm.services import find_or_create_contact
from tests.factories import SchoolFactory
from tests.integrations import payloads as p

pytestmark = [pytest.mark.django_db(transaction=True)]

VICTIM_PHONE = "+6591234567"  # the real parent's WhatsApp number (payloads' default wa_id)


@pytest.fixture(autouse=True)
def _offline_model():
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0):
        yield


@pytest.fixture
def school():
    return SchoolFactory(whatsapp_phone_number_id=p.PHONE_NUMBER_ID, chatwoot_inbox_ids=[3])


def web_say(school, contact, text: str) -> str:
    async_to_sync(receive)(school=school, contact=contact, channel="web", text=text)
    return Message.objects.filter(conversation__contact=contact, role="assistant").latest("id").text


def whatsapp_post(client, text: str, name: str = "Vera's mum"):
    body = p.dumps(p.wa_text(text, wa_id=VICTIM_PHONE.lstrip("+"), name=name))
    return client.post("/webhooks/whatsapp/", data=body, content_type="application/json",
                       HTTP_X_HUB_SIGNATURE_256=p.wa_signature(body, "app-secret"))


def test_a_typed_phone_does_not_take_over_the_parents_whatsapp_identity(client, school, whatsapp, turns,
                                                                        next_weekday):
    # The attacker opens the web chat and books a tour giving the victim's number (what the book_tour tool calls).
    mallory = find_or_create_contact(school=school, web_visitor_id="mallory-visitor")
    web_say(school, mallory, "Hi, I'm Mallory Lee")
    booking_services.book_tour(school=school, contact=mallory, parent_name="Mallory Lee", parent_phone="+65 9123 4567",
                               child_name="Max", child_age=5, local_date=next_weekday(school, 1),
                               local_time=dt.time(9))

    # The real parent writes on WhatsApp from that number.
    assert whatsapp_post(client, "Hello, I'd like to visit the school").status_code == 200
    turns.settle()
    conversation = Conversation.objects.get(channel="whatsapp")
    parent = conversation.contact
    assert parent != mallory, "the parent's WhatsApp messages were matched to the attacker's web contact"
    assert (parent.phone, parent.phone_verified) == (VICTIM_PHONE, True)
    replies = " ".join(Message.objects.filter(conversation=conversation, role="assistant").values_list("text",
                                                                                                      flat=True))
    assert "Mallory" not in replies and "Max" not in replies, "the bot greeted the parent as the attacker"

    # The parent books a tour for Vera on WhatsApp; the attacker asks the web chat to cancel it.
    vera = booking_services.book_tour(school=school, contact=parent, parent_name="Wei Ling", parent_phone=VICTIM_PHONE,
                                      child_name="Vera", child_age=4, local_date=next_weekday(school, 2),
                                      local_time=dt.time(9))
    assert vera not in selectors.upcoming_bookings(mallory)
    assert selectors.contact_booking(mallory, vera.reference) is None
    web_say(school, mallory, "cancel my tour for Vera")
    web_say(school, mallory, "yes, cancel it")
    web_say(school, mallory, f"cancel {vera.reference}")
    web_say(school, mallory, "yes")
    vera.refresh_from_db()
    assert vera.status == TourBooking.Status.SCHEDULED, "the attacker cancelled the parent's tour"


def test_a_typed_phone_does_not_join_a_chatwoot_contact_either(school, next_weekday):
    mallory = find_or_create_contact(school=school, web_visitor_id="mallory-visitor")
    booking_services.book_tour(school=school, contact=mallory, parent_name="Mallory Lee", parent_phone=VICTIM_PHONE,
                               child_name="Max", local_date=next_weekday(school, 1), local_time=dt.time(9))
    # Chatwoot, WhatsApp inbox: the number is the sender's, vouched for by WhatsApp.
    on_whatsapp = find_or_create_contact(school=school, chatwoot_contact_id=42, verified_phone=VICTIM_PHONE)
    # Chatwoot, website inbox: a number someone typed into the pre-chat form.
    on_website = find_or_create_contact(school=school, chatwoot_contact_id=43, phone=VICTIM_PHONE)
    assert len({mallory.pk, on_whatsapp.pk, on_website.pk}) == 3
    assert Contact.objects.filter(school=school, phone=VICTIM_PHONE, phone_verified=True).get() == on_whatsapp
    assert not selectors.upcoming_bookings(on_whatsapp).exists() and not selectors.upcoming_bookings(on_website)


def test_a_typed_phone_never_joins_the_bookings_of_two_web_visitors(school, next_weekday):
    first = find_or_create_contact(school=school, web_visitor_id="visitor-1")
    second = find_or_create_contact(school=school, web_visitor_id="visitor-2")
    for contact, child in ((first, "Ann"), (second, "Ben")):
        booking_services.book_tour(school=school, contact=contact, parent_name="Lee", parent_phone=VICTIM_PHONE,
                                   child_name=child, local_date=next_weekday(school, 1), local_time=dt.time(9))
    assert [b.child_name for b in selectors.upcoming_bookings(first)] == ["Ann"]
    assert [b.child_name for b in selectors.upcoming_bookings(second)] == ["Ben"]
