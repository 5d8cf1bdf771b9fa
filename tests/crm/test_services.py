"""CRM side of bookings: contacts, children, deals, activities and the persistent context."""

import datetime as dt
import threading

import pytest
from django.db import connection
from django.utils import timezone

from bookings.callbacks import complete_callback, request_callback
from bookings.models import CallbackRequest, TourBooking
from bookings.services import book_tour, cancel_tour, record_tour_outcome
from bookings.services import reschedule_tour as reschedule
from crm import services as crm
from crm.models import PERSISTENT_CONTEXT_FIELDS, Activity, Child, Contact, Deal
from tests.factories import ContactFactory, DealFactory, SchoolFactory, UserFactory

NINE, ELEVEN, TWO = dt.time(9), dt.time(11), dt.time(14)


@pytest.fixture
def now():
    return timezone.now()


@pytest.fixture
def tuesday(school, next_weekday):
    return next_weekday(school, 1)


@pytest.fixture
def blank_contact(school):
    """A web visitor we know nothing about yet."""
    return Contact.objects.create(school=school, web_visitor_id="visitor-1")


def book(school, contact, day, time=NINE, *, now, **overrides) -> TourBooking:
    details = {"parent_name": "Mei Lin Tan", "parent_phone": "9123 4567", "parent_email": "mei@example.com",
               "child_name": "Ana", "child_age": 4}
    details.update(overrides)
    return book_tour(school=school, contact=contact, local_date=day, local_time=time, now=now, **details)


def context_of(contact) -> dict:
    return Contact.objects.get(pk=contact.pk).context


# --- booking -> CRM ----------------------------------------------------------------------


def test_booking_fills_the_contact_and_creates_child_deal_and_activity(school, blank_contact, tuesday, now):
    booking = book(school, blank_contact, tuesday, TWO, now=now, special_requirements="Needs lift access")

    contact = Contact.objects.get(pk=blank_contact.pk)
    assert (contact.name, contact.phone, contact.email) == ("Mei Lin Tan", "+6591234567", "mei@example.com")

    [child] = Child.objects.filter(contact=contact)
    assert (child.name, child.age) == ("Ana", 4)

    [deal] = Deal.objects.filter(contact=contact)
    assert deal.is_open and deal.stage == Deal.Stage.TOUR_BOOKED
    assert deal.title == "Admission enquiry: Ana (Mei Lin Tan)"

    [activity] = Activity.objects.filter(contact=contact)
    assert activity.deal == deal
    assert activity.kind == Activity.Kind.TOUR
    assert activity.tour_booking == booking and booking.activity == activity
    assert activity.due_at == booking.starts_at
    assert activity.duration_minutes == 60
    assert activity.subject == f"School tour: Ana (4) ({booking.reference})"
    assert activity.note == "Needs lift access"
    assert not activity.done


def test_booking_never_overwrites_what_the_contact_already_has(school, tuesday, now):
    contact = ContactFactory(school=school, name="Mrs Tan", phone="+6598765432", email="old@example.com")
    book(school, contact, tuesday, now=now, parent_name="Mei", parent_phone="9123 4567",
         parent_email="new@example.com")
    contact.refresh_from_db()
    assert (contact.name, contact.phone, contact.email) == ("Mrs Tan", "+6598765432", "old@example.com")


def test_a_typed_phone_is_kept_unverified_and_identifies_no_one(school, blank_contact, tuesday, now):
    owner = ContactFactory(school=school, phone="+6591234567")  # WhatsApp vouched for this number
    book(school, blank_contact, tuesday, now=now, parent_phone="9123 4567")
    blank_contact.refresh_from_db()
    assert (blank_contact.phone, blank_contact.phone_verified) == ("+6591234567", False), "a detail, unverified"
    assert Contact.objects.get(pk=owner.pk).phone == "+6591234567"
    assert crm.find_or_create_contact(school=school, verified_phone="+6591234567") == owner


def test_a_second_booking_reuses_the_open_deal(school, contact, tuesday, now):
    book(school, contact, tuesday, NINE, now=now, child_name="Ana", child_age=4)
    book(school, contact, tuesday, ELEVEN, now=now, child_name="Ben", child_age=6)
    book(school, contact, tuesday + dt.timedelta(days=1), NINE, now=now, child_name="Ana", child_age=5)
    assert Deal.objects.filter(contact=contact).count() == 1
    assert Activity.objects.filter(contact=contact, kind=Activity.Kind.TOUR).count() == 3
    assert dict(Child.objects.filter(contact=contact).values_list("name", "age")) == {"Ana": 5, "Ben": 6}


def test_booking_moves_an_enquiry_deal_to_tour_booked(school, contact, tuesday, now):
    deal = DealFactory(contact=contact, stage=Deal.Stage.ENQUIRY)
    book(school, contact, tuesday, now=now)
    deal.refresh_from_db()
    assert deal.stage == Deal.Stage.TOUR_BOOKED
    assert Deal.objects.filter(contact=contact).count() == 1


def test_booking_writes_the_persistent_context(school, blank_contact, tuesday, now):
    booking = book(school, blank_contact, tuesday, TWO, now=now)
    context = context_of(blank_contact)
    assert set(context) <= set(PERSISTENT_CONTEXT_FIELDS)
    assert context["tour_booking_id"] == booking.reference
    assert context["tour_scheduled_date"] == tuesday.isoformat()
    assert context["tour_scheduled_time"] == "14:00"
    assert context["tour_status"] == "scheduled"
    assert context["parent_preferred_name"] == "Mei Lin Tan"
    assert context["parent_preferred_phone"] == "+6591234567"
    assert context["parent_preferred_email"] == "mei@example.com"
    assert context["child_name"] == "Ana"
    assert dt.datetime.fromisoformat(context["tour_booked_at"]) <= timezone.now()
    assert blank_contact.context == context  # the caller's instance is kept in step


def test_a_preferred_name_already_given_is_kept(school, contact, tuesday, now):
    crm.set_preferred_name(contact, "Mei")
    book(school, contact, tuesday, now=now, parent_name="Tan Mei Lin", parent_email="")
    contact.refresh_from_db()
    assert contact.preferred_name == "Mei"
    assert contact.context["parent_preferred_name"] == "Mei"
    assert contact.context["parent_preferred_email"] == ""


def test_reschedule_moves_the_activity_and_the_context(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, NINE, now=now)
    activity = booking.activity
    wednesday = tuesday + dt.timedelta(days=1)
    moved = reschedule(booking=booking, new_date=wednesday, new_time=TWO, now=now)

    activity.refresh_from_db()
    assert activity.tour_booking == moved and moved.reference == booking.reference
    assert activity.due_at == moved.starts_at
    assert activity.subject == f"School tour: Ana (4) ({booking.reference})"
    was = dt.datetime.combine(tuesday, NINE)
    assert activity.note.endswith(f"Moved from {was:%a %d %b %Y %H:%M}.")
    assert not activity.done
    assert Activity.objects.filter(contact=contact).count() == 1

    context = context_of(contact)
    assert (context["tour_booking_id"], context["tour_scheduled_date"], context["tour_scheduled_time"]) == (
        booking.reference, wednesday.isoformat(), "14:00",
    )
    assert context["tour_status"] == "scheduled"


def test_cancel_marks_the_activity_done_with_the_reason(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, NINE, now=now, special_requirements="Pram")
    cancel_tour(booking=booking, reason="Moving overseas", now=now)
    activity = Activity.objects.get(tour_booking=booking)
    assert activity.done
    assert activity.note == "Pram\nCancelled: Moving overseas."
    context = context_of(contact)
    assert context["tour_status"] == "cancelled"
    assert context["tour_booking_id"] == booking.reference


def test_cancel_without_a_reason(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, NINE, now=now)
    cancel_tour(booking=booking, now=now)
    assert Activity.objects.get(tour_booking=booking).note == "Cancelled: no reason given."


@pytest.mark.parametrize("status", ["completed", "no_show"])
def test_tour_outcome_closes_the_activity(school, contact, tuesday, now, status):
    booking = book(school, contact, tuesday, NINE, now=now)
    record_tour_outcome(booking=booking, status=status)
    assert Activity.objects.get(tour_booking=booking).done
    assert context_of(contact)["tour_status"] == status


# --- callbacks -> CRM --------------------------------------------------------------------


def test_callback_creates_a_call_activity_and_context(school, blank_contact, tuesday, now):
    cb = request_callback(school=school, contact=blank_contact, parent_name="Mei", parent_phone="9123 4567",
                          best_time="afternoon", due_date=tuesday, topic="Fees", now=now)
    [deal] = Deal.objects.filter(contact=blank_contact)
    assert deal.stage == Deal.Stage.CALLBACK and deal.title == "Admission enquiry: Mei"
    [activity] = Activity.objects.filter(contact=blank_contact)
    assert activity.kind == Activity.Kind.CALLBACK
    assert activity.callback == cb and activity.deal == deal
    assert activity.due_date == tuesday
    assert activity.subject == "Call back Mei (afternoon, 12:00-17:00)"  # the window, in the school's time
    assert activity.note == "Fees"
    assert Contact.objects.get(pk=blank_contact.pk).phone == "+6591234567"

    context = context_of(blank_contact)
    assert context["callback_requested"] is True
    assert context["callback_preference"] == "afternoon"
    assert context["callback_date"] == tuesday.isoformat()
    assert (context["callback_id"], context["callback_window"]) == (cb.reference, "12:00-17:00")
    assert context["parent_preferred_phone"] == "+6591234567"
    assert "callback_requested_at" in context
    assert set(context) <= set(PERSISTENT_CONTEXT_FIELDS)

    complete_callback(callback=cb, user=UserFactory())
    activity.refresh_from_db()
    assert activity.done
    assert context_of(blank_contact)["callback_requested"] is False
    assert CallbackRequest.objects.get(pk=cb.pk).status == CallbackRequest.Status.DONE


def test_callback_after_a_booking_keeps_the_tour_stage_and_context(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, NINE, now=now)
    request_callback(school=school, contact=contact, parent_name="Mei", parent_phone="9123 4567", now=now)
    [deal] = Deal.objects.filter(contact=contact)
    assert deal.stage == Deal.Stage.TOUR_BOOKED
    assert deal.activities.count() == 2
    context = context_of(contact)
    assert context["tour_booking_id"] == booking.reference
    assert context["callback_requested"] is True


# --- the persistent context ---------------------------------------------------------------


def test_update_persistent_context_merges(contact):
    crm.update_persistent_context(contact, child_name="Ana")
    result = crm.update_persistent_context(contact, child_dob="2021-03-04")
    assert result == {"child_name": "Ana", "child_dob": "2021-03-04"}
    assert contact.context == result == context_of(contact)


def test_update_persistent_context_refuses_unknown_keys(contact):
    crm.update_persistent_context(contact, child_name="Ana")
    with pytest.raises(ValueError, match="favourite_colour"):
        crm.update_persistent_context(contact, child_name="Ben", favourite_colour="blue")
    assert context_of(contact) == {"child_name": "Ana"}


def test_update_persistent_context_never_loses_an_update_made_through_another_instance(contact):
    first = Contact.objects.get(pk=contact.pk)
    second = Contact.objects.get(pk=contact.pk)
    crm.update_persistent_context(first, tour_status="scheduled", tour_booking_id="T-AAAAAA")
    # `second` was loaded before that update and still has an empty context.
    assert second.context == {}
    crm.update_persistent_context(second, callback_requested=True)
    assert context_of(contact) == {"tour_status": "scheduled", "tour_booking_id": "T-AAAAAA",
                                   "callback_requested": True}
    assert second.context == context_of(contact)
    # And the other way round: the first instance is stale now.
    crm.update_persistent_context(first, tour_status="cancelled")
    assert context_of(contact) == {"tour_status": "cancelled", "tour_booking_id": "T-AAAAAA",
                                   "callback_requested": True}


def test_saving_other_fields_of_a_stale_instance_keeps_the_context(contact):
    stale = Contact.objects.get(pk=contact.pk)
    crm.update_persistent_context(contact, child_name="Ana")
    crm.set_preferred_name(stale, "Mei")
    crm.fill_contact_details(stale, email="", name="")
    assert context_of(contact) == {"child_name": "Ana", "parent_preferred_name": "Mei"}
    assert Contact.objects.get(pk=contact.pk).preferred_name == "Mei"


def test_booking_through_a_stale_contact_keeps_context_written_elsewhere(school, contact, tuesday, now):
    stale = Contact.objects.get(pk=contact.pk)
    crm.update_persistent_context(contact, child_dob="2021-03-04", child_enrollment_date_preferred="2027-01")
    book(school, stale, tuesday, now=now)
    context = context_of(contact)
    assert context["child_dob"] == "2021-03-04"
    assert context["child_enrollment_date_preferred"] == "2027-01"
    assert context["tour_status"] == "scheduled"


def test_set_preferred_name(contact):
    crm.set_preferred_name(contact, "Mei")
    contact.refresh_from_db()
    assert contact.preferred_name == "Mei" and contact.display_name == "Mei"
    assert contact.context == {"parent_preferred_name": "Mei"}


def test_display_name_falls_back(school):
    contact = Contact.objects.create(school=school)
    assert contact.display_name == f"Visitor #{contact.pk}"
    contact.whatsapp_name = "Mei 🌸"
    assert contact.display_name == "Mei 🌸"
    contact.name = "Tan Mei Lin"
    assert str(contact) == "Tan Mei Lin"


# --- find_or_create_contact: only what a platform vouches for identifies a contact (docs/identity.md) ------------


def test_creates_a_contact_on_first_sight(school):
    contact = crm.find_or_create_contact(school=school, verified_phone="+6591234567", name="Mei",
                                         chatwoot_contact_id=42, whatsapp_name="Mei T")
    assert (contact.phone, contact.phone_verified, contact.name, contact.chatwoot_contact_id,
            contact.whatsapp_name) == ("+6591234567", True, "Mei", "42", "Mei T")
    assert contact.school == school


@pytest.mark.parametrize(
    "identity",
    [{"chatwoot_contact_id": 42}, {"chatwoot_contact_id": "42"}, {"web_visitor_id": "v-1"},
     {"verified_phone": "+6591234567"}],
)
def test_finds_the_contact_by_any_platform_identifier(school, identity):
    existing = ContactFactory(school=school, phone="+6591234567", web_visitor_id="v-1", chatwoot_contact_id="42")
    assert crm.find_or_create_contact(school=school, **identity) == existing
    assert Contact.objects.count() == 1


def test_a_typed_phone_or_email_never_finds_a_contact(school):
    verified = ContactFactory(school=school, phone="+6591234567", email="mei@example.com")
    typed = Contact.objects.create(school=school, web_visitor_id="v-1", phone="+6598765432")
    assert crm.find_or_create_contact(school=school, phone="+6591234567") not in (verified, typed)
    assert crm.find_or_create_contact(school=school, email="mei@example.com") != verified
    assert crm.find_or_create_contact(school=school, verified_phone="+6598765432") != typed, \
        "an unverified number is not an identity, even for a platform that vouches for it later"
    assert Contact.objects.get(pk=typed.pk).phone_verified is False


def test_the_strongest_identifier_wins(school):
    by_phone = ContactFactory(school=school, phone="+6591234567")
    by_visitor = ContactFactory(school=school, phone="+6598765432", web_visitor_id="v-1")
    by_chatwoot = ContactFactory(school=school, phone="+6581234567", chatwoot_contact_id="42")
    assert crm.find_or_create_contact(school=school, verified_phone=by_phone.phone, web_visitor_id="v-1") == by_visitor
    assert crm.find_or_create_contact(school=school, verified_phone=by_phone.phone, web_visitor_id="v-1",
                                      chatwoot_contact_id="42") == by_chatwoot
    assert Contact.objects.count() == 3


def test_fills_blanks_without_overwriting(school):
    existing = Contact.objects.create(school=school, web_visitor_id="v-1", name="Mei")
    found = crm.find_or_create_contact(school=school, web_visitor_id="v-1", phone="+6591234567", name="Someone else",
                                       email="mei@example.com", chatwoot_contact_id=7)
    assert found == existing
    found.refresh_from_db()
    assert (found.name, found.phone, found.phone_verified, found.email, found.chatwoot_contact_id) == (
        "Mei", "+6591234567", False, "mei@example.com", "7",
    )


def test_a_platform_number_replaces_a_typed_one_but_is_never_taken_from_another_contact(school):
    chatwoot = Contact.objects.create(school=school, chatwoot_contact_id="42", phone="+6598765432")
    found = crm.find_or_create_contact(school=school, chatwoot_contact_id=42, verified_phone="+6591234567")
    assert found == chatwoot
    assert (found.phone, found.phone_verified) == ("+6591234567", True)
    owner = ContactFactory(school=school, phone="+6581234567")
    other = crm.find_or_create_contact(school=school, chatwoot_contact_id=43, phone="+6581234567")
    assert other != owner
    crm.find_or_create_contact(school=school, chatwoot_contact_id=43, verified_phone="+6581234567")
    assert Contact.objects.get(pk=other.pk).phone_verified is False, "that number is another contact's identity"


def test_never_steals_another_contacts_visitor_or_chatwoot_id(school):
    web = Contact.objects.create(school=school, web_visitor_id="v-1")
    chatwoot = Contact.objects.create(school=school, chatwoot_contact_id="42")
    found = crm.find_or_create_contact(school=school, chatwoot_contact_id=42, web_visitor_id="v-1")
    assert found == chatwoot
    assert Contact.objects.get(pk=chatwoot.pk).web_visitor_id == ""
    assert Contact.objects.get(pk=web.pk).web_visitor_id == "v-1"
    # Two identities a platform vouches for (a WhatsApp number, then the same number's Chatwoot contact) join.
    phone_only = ContactFactory(school=school, phone="+6591234567")
    assert crm.find_or_create_contact(school=school, verified_phone="+6591234567", chatwoot_contact_id="43") == \
        phone_only
    assert Contact.objects.get(pk=phone_only.pk).chatwoot_contact_id == "43"


def test_identity_is_per_school(school):
    other_school = SchoolFactory()
    here = crm.find_or_create_contact(school=school, verified_phone="+6591234567")
    there = crm.find_or_create_contact(school=other_school, verified_phone="+6591234567")
    assert here != there
    assert crm.find_or_create_contact(school=school, verified_phone="+6591234567") == here


def test_nothing_to_go_on_creates_an_anonymous_contact(school):
    first = crm.find_or_create_contact(school=school)
    second = crm.find_or_create_contact(school=school)
    assert first != second
    assert first.display_name.startswith("Visitor #")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_parallel_first_messages_create_one_contact():
    school = SchoolFactory()
    barrier = threading.Barrier(12)
    found, errors = [], []

    def first_message():
        try:
            barrier.wait()
            found.append(crm.find_or_create_contact(school=school, verified_phone="+6591234567",
                                                   web_visitor_id="v-1").pk)
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=first_message) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(set(found)) == 1 and len(found) == 12
    assert Contact.objects.filter(school=school).count() == 1


@pytest.mark.django_db
def test_a_new_contact_keeps_the_language_of_its_first_message_and_an_existing_one_is_left_as_it_is():
    school = SchoolFactory()
    new = crm.find_or_create_contact(school=school, web_visitor_id="v-1", language="ms")
    assert Contact.objects.get(pk=new.pk).language == "ms"
    again = crm.find_or_create_contact(school=school, web_visitor_id="v-1", language="ta")
    assert again.pk == new.pk and Contact.objects.get(pk=new.pk).language == "ms"

