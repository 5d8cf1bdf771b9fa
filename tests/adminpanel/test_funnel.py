"""The dashboard's admissions funnel per week, counted in the school's time zone."""

import datetime as dt

import pytest
import time_machine
from django.urls import reverse

from adminpanel import selectors
from bookings import waitlist
from bookings.models import TourBooking
from bookings.services import book_tour, cancel_tour, record_tour_outcome
from chatbot.reminders.models import SentReminder
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:No directory at:UserWarning")]


def _book(school, day, hour=9, contact=None):
    contact = contact or ContactFactory(school=school)
    return book_tour(school=school, contact=contact, parent_name=contact.name, parent_phone=contact.phone,
                     child_name="Ana", child_age=5, local_date=day, local_time=dt.time(hour))


def test_funnel_counts_each_step_in_the_week_of_the_schools_clock():
    school = SchoolFactory(time_zone="Pacific/Auckland", seats_per_tour=1, min_notice_hours=0, closed_weekdays=[])
    monday = dt.date(2026, 11, 30)
    # Monday 30 Nov 00:30 in Auckland is still Sunday 29 Nov in UTC: it belongs to the week of 30 Nov here
    early_monday = dt.datetime(2026, 11, 30, 0, 30, tzinfo=school.tz)
    with time_machine.travel(early_monday - dt.timedelta(days=6), tick=False):  # Tuesday before
        toured = _book(school, monday + dt.timedelta(days=1))
        missed = _book(school, monday + dt.timedelta(days=2))
        full = _book(school, monday + dt.timedelta(days=3))
    with time_machine.travel(early_monday, tick=False):
        families = [ContactFactory(school=school) for _ in range(2)]
        entry = waitlist.join(school=school, contact=families[0], slot=full.slot, parent_name="A",
                              parent_phone="+6591234567", child_name="Bo")
        cancel_tour(booking=full)  # the seat goes to the family waiting: one promotion
        _book(school, monday + dt.timedelta(days=5), contact=families[1])
        SentReminder.objects.create(booking=toured, kind="24h", tour_starts_at=toured.starts_at,
                                    status=SentReminder.Status.SENT, sent_at=early_monday)
        SentReminder.objects.create(booking=missed, kind="24h", tour_starts_at=missed.starts_at,
                                    status=SentReminder.Status.FAILED)  # not sent: not counted
    with time_machine.travel(early_monday + dt.timedelta(days=3), tick=False):
        record_tour_outcome(booking=toured, status=TourBooking.Status.COMPLETED)
        record_tour_outcome(booking=missed, status=TourBooking.Status.NO_SHOW)
        period = selectors.Period.last_days(14, school=school)
        weeks = {w.monday: w.counts for w in selectors.funnel_per_week(period)}

    entry.refresh_from_db()
    assert entry.status == "offered"
    assert weeks[monday] == {"enquiries": 2, "booked": 1, "attended": 1, "no_shows": 1, "reminders": 1,
                             "promotions": 1}
    earlier = weeks[monday - dt.timedelta(weeks=1)]
    assert (earlier["enquiries"], earlier["booked"], earlier["attended"]) == (3, 3, 0)


def test_the_dashboard_shows_the_funnel(admin_client):
    school = SchoolFactory()
    response = admin_client.get(reverse("admin:dashboard"), {"school": school.pk, "days": 14})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Admissions funnel per week" in html and "Waitlist promotions" in html and "Reminders sent" in html
