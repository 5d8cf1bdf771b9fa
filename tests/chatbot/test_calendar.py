"""The tour's .ics file (chatbot/calendar.py): RFC 5545 lines folded, the tour in the school's zone."""

import datetime as dt

import pytest
from icalendar import Calendar

from bookings.models import TourBooking
from chatbot.calendar import calendar_file
from tests.factories import SchoolFactory, TourBookingFactory, TourSlotFactory

LONDON = "Europe/London"


def event_of(ics: str):
    """The file's one event, as a calendar program reads it (lines unfolded, text unescaped)."""
    [event] = Calendar.from_ical(ics).walk("VEVENT")
    return event


@pytest.fixture
def london_tour(db) -> TourBooking:
    """A tour at 15:30 London time on a summer day (BST, UTC+1), at a school with a long name and address."""
    school = SchoolFactory(
        time_zone=LONDON,
        tour_duration_minutes=45,
        name="Riverside Montessori Academy for Early Years, Primary and Lower Secondary Education",
        address="48 Towpath Lane; Richmond upon Thames, London TW9 2QD, United Kingdom (the blue gate, by the river)",
    )
    starts_at = dt.datetime(2027, 6, 15, 14, 30, tzinfo=dt.UTC)
    slot = TourSlotFactory(school=school, starts_at=starts_at)
    return TourBookingFactory(school=school, slot=slot, starts_at=starts_at, child_name="Nur Aisyah binti Rahman")


def test_long_lines_are_folded_at_75_octets_and_read_back_whole(london_tour):
    ics = calendar_file(london_tour)
    lines = ics.split("\r\n")
    assert ics.endswith("\r\n") and lines[-1] == ""
    assert all(len(line.encode()) <= 75 for line in lines), "RFC 5545 3.1: no line longer than 75 octets"
    assert any(line.startswith(" ") for line in lines), "the long summary and location are folded"
    event = event_of(ics)
    assert str(event["summary"]) == f"School tour at {london_tour.school.name} (Nur Aisyah binti Rahman)"
    assert str(event["location"]) == london_tour.school.address  # ";" and "," escaped and read back


def test_the_tour_is_in_the_schools_zone_and_at_the_same_instant(london_tour):
    ics = calendar_file(london_tour)
    assert "DTSTART;TZID=Europe/London:20270615T153000\r\n" in ics  # 14:30 UTC is 15:30 in London in June
    assert "DTEND;TZID=Europe/London:20270615T161500\r\n" in ics
    assert "BEGIN:VTIMEZONE\r\nTZID:Europe/London\r\n" in ics  # the zone is defined in the file
    event = event_of(ics)
    assert event.decoded("dtstart") == london_tour.starts_at
    assert event.decoded("dtend") - event.decoded("dtstart") == dt.timedelta(minutes=45)
    assert event.decoded("dtstamp").utcoffset() == dt.timedelta(0)
    assert str(event["status"]) == "CONFIRMED"


def test_a_cancelled_tour_says_so(london_tour):
    london_tour.status = TourBooking.Status.CANCELLED
    london_tour.save(update_fields=["status"])
    assert str(event_of(calendar_file(london_tour))["status"]) == "CANCELLED"
