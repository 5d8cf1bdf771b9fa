"""Chatwoot contact custom attributes can be set by a website visitor: read as untrusted input.

A bad date or a NUL must not make the parent's turns fail, and a reference of another parent's tour must never
enter the visitor's saved context (only the contact's own records are trusted, with their own values)."""

import pytest

from bookings.models import TourBooking
from chatbot.models import Conversation, Message
from crm.models import Contact
from tests.factories import SchoolFactory, TourBookingFactory
from tests.integrations import payloads as p
from tests.trust.test_malformed_input import post_chatwoot

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.filterwarnings("ignore:No directory at:UserWarning")]


@pytest.fixture
def school(chatwoot, settings):
    settings.CHATWOOT_HMAC_SECRET = "chatwoot-signing-secret"
    return SchoolFactory(chatwoot_inbox_ids=[p.INBOX_ID])


def _answered(chatwoot) -> bool:
    return bool(chatwoot.posted) and not Conversation.objects.filter(status=Conversation.Status.HANDED_OFF).exists()


@pytest.mark.attack("low")
def test_attacker_set_attributes_do_not_fail_turns_or_borrow_another_parents_tour(school, chatwoot, echo_model,
                                                                                 turns):
    other = TourBookingFactory(school=school)
    chatwoot.contacts["42"] = {"tour_scheduled_date": "next tuesday-ish", "tour_scheduled_time": "25:99",
                               "tour_booking_id": other.reference, "tour_status": "scheduled",
                               "child_name": "Ve\x00ra", "child_dob": "not a date", "parent_preferred_name": ["x"],
                               "pipedrive_person_id": 4242, "callback_id": "C-NOTOURS"}
    assert post_chatwoot(p.message_created("hello")).status_code == 200
    turns.settle()
    assert _answered(chatwoot), "the turn was answered"
    context = Contact.objects.get(chatwoot_contact_id="42").context
    assert context == {"child_name": "Vera"}, context
    assert post_chatwoot(p.message_created("is my tour still on?")).status_code == 200
    turns.settle()
    assert Message.objects.filter(role="assistant").exclude(text="").count() == 2


@pytest.mark.attack("low")
def test_the_contacts_own_tour_is_taken_with_the_values_of_its_record(school, chatwoot, echo_model, turns):
    contact = Contact.objects.create(school=school, chatwoot_contact_id="42", phone="+6591234567")
    own = TourBookingFactory(school=school, contact=contact)
    chatwoot.contacts["42"] = {"tour_booking_id": own.reference, "tour_scheduled_date": "2031-01-01",
                               "tour_scheduled_time": "03:00", "tour_status": "cancelled"}
    post_chatwoot(p.message_created("hello"))
    turns.settle()
    context = Contact.objects.get(pk=contact.pk).context
    local = own.local_start
    assert context["tour_booking_id"] == own.reference
    assert (context["tour_scheduled_date"], context["tour_scheduled_time"]) == (local.date().isoformat(),
                                                                                f"{local:%H:%M}")
    assert context["tour_status"] == TourBooking.Status.SCHEDULED
