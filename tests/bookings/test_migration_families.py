"""bookings 0004: every existing booking's child becomes a BookingChild of the contact's CRM child, and every chain
of reschedules (a new booking per move) becomes move history on the booking the parent was last given."""

import datetime as dt

import pytest
from django.utils import timezone

from tests.bookings.helpers import migrate_to

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("bookings", "0003_languages"), ("crm", "0005_languages")]
AFTER = [("bookings", "0004_families_and_moves")]


def test_existing_children_and_reschedule_chains_are_carried_over(back_to_latest):
    old = migrate_to(BEFORE)
    School, Contact = old.get_model("bookings", "School"), old.get_model("crm", "Contact")
    TourSlot, TourBooking = old.get_model("bookings", "TourSlot"), old.get_model("bookings", "TourBooking")
    school = School.objects.create(slug="m", name="M", tour_start_times=["09:00"])
    contact = Contact.objects.create(school=school, name="Jon", phone="+6591234567")
    start = timezone.now().replace(microsecond=0) + dt.timedelta(days=3)
    slots = [TourSlot.objects.create(school=school, starts_at=start + dt.timedelta(hours=h), capacity=5)
             for h in range(3)]
    common = {"school": school, "contact": contact, "parent_name": "Jon", "parent_phone": "+6591234567",
              "child_name": "Mia", "child_age": 5}
    first = TourBooking.objects.create(reference="T-AAAAAA", slot=slots[0], starts_at=slots[0].starts_at,
                                       status="rescheduled", **common)
    second = TourBooking.objects.create(reference="T-BBBBBB", slot=slots[1], starts_at=slots[1].starts_at,
                                        status="rescheduled", replaces=first, **common)
    TourBooking.objects.create(reference="T-CCCCCC", slot=slots[2], starts_at=slots[2].starts_at, replaces=second,
                               **common)

    new = migrate_to(AFTER)
    live = new.get_model("bookings", "TourBooking").objects.get(reference="T-CCCCCC")
    moves = list(new.get_model("bookings", "TourBookingMove").objects.filter(booking=live).order_by("pk"))
    assert [(m.previous_reference, m.from_starts_at, m.to_starts_at) for m in moves] == [
        ("T-AAAAAA", slots[0].starts_at, slots[1].starts_at), ("T-BBBBBB", slots[1].starts_at, slots[2].starts_at)]
    places = new.get_model("bookings", "BookingChild").objects.all()
    assert places.count() == 3 and {(p.name, p.age) for p in places} == {("Mia", 5)}
    assert new.get_model("crm", "Child").objects.filter(contact_id=contact.pk).count() == 1  # one Mia
