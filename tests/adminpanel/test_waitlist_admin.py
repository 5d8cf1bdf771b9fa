"""Staff see and reorder the waitlist, raise a full tour's capacity (the new seats go to the waitlist first) and
publish open days on the school's clock."""

import datetime as dt

import pytest
from django.urls import reverse

from bookings import waitlist
from bookings.models import OpenDay, TourSlot, WaitlistEntry
from tests.adminpanel.conftest import book
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:No directory at:UserWarning")]


def waiting(school, slot, n):
    return [waitlist.join(school=school, contact=c, slot=slot, parent_name=c.name, parent_phone=c.phone,
                          child_name=f"Child {i}") for i, c in enumerate(ContactFactory(school=school)
                                                                         for _ in range(n))]


@pytest.fixture
def full_slot(school, tuesday):
    school.seats_per_tour = 1
    school.save()
    return book(school, tuesday).slot


def test_staff_see_the_waitlist_and_move_a_family_up(admin_client, school, full_slot):
    first, second = waiting(school, full_slot, 2)
    listing = admin_client.get(reverse("admin:bookings_waitlistentry_changelist"))
    assert listing.status_code == 200
    assert first.reference in listing.content.decode() and "Child 1" in listing.content.decode()

    admin_client.post(reverse("admin:bookings_waitlistentry_changelist"),
                      {"action": "move_up", "_selected_action": [second.pk]})
    line = list(WaitlistEntry.objects.filter(slot=full_slot).order_by("position").values_list("pk", flat=True))
    assert line == [second.pk, first.pk]


def test_raising_capacity_in_the_admin_offers_the_new_seat_to_the_first_family(admin_client, school, full_slot):
    first, second = waiting(school, full_slot, 2)
    response = admin_client.post(reverse("admin:bookings_tourslot_change", args=[full_slot.pk]), {"capacity": 2})
    assert response.status_code == 302
    first.refresh_from_db(), second.refresh_from_db(), full_slot.refresh_from_db()
    assert (first.status, second.status) == ("offered", "waiting")
    assert (full_slot.capacity, full_slot.seats_taken, full_slot.seats_held) == (2, 1, 1)


def test_an_open_day_is_published_on_the_schools_clock(admin_client):
    school = SchoolFactory(time_zone="Europe/London")
    response = admin_client.post(reverse("admin:bookings_openday_add"), {
        "school": school.pk, "title": "Autumn Open Evening", "date": "2026-12-12", "start_time": "18:00",
        "duration_minutes": 90, "capacity": 60, "published": "on"})
    assert response.status_code == 302, response.content.decode()[:2000]
    event = OpenDay.objects.get()
    assert (event.kind, event.title, event.capacity) == (TourSlot.Kind.OPEN_DAY, "Autumn Open Evening", 60)
    assert event.starts_at == dt.datetime(2026, 12, 12, 18, 0, tzinfo=school.tz)


def test_the_desk_shows_who_waits_for_a_tour_and_links_to_its_line(admin_client, school, full_slot, tuesday):
    first, second = waiting(school, full_slot, 2)
    other = book(school, tuesday, dt.time(14))  # a tour nobody waits for
    page = admin_client.get("/admin/desk/", {"school": school.pk, "date": tuesday.isoformat(), "days": 1})
    html = page.content.decode()
    link = f"{reverse('admin:bookings_waitlistentry_changelist')}?slot__id__exact={full_slot.pk}"
    assert "2 waiting" in html and link.replace("&", "&amp;") in html
    assert html.count(" waiting</a>") == 1, other.reference
    line = admin_client.get(link)
    assert line.status_code == 200 and first.reference in line.content.decode()
    assert list(line.context["cl"].queryset) == [first, second]
