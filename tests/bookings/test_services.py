"""The booking rules (bookings.services) with the inputs parents actually produce.

Every test passes an explicit `now` and picks its dates with the `next_weekday`
fixture, so nothing depends on the weekday the suite happens to run on. The
default factory school gives tours at 09:00, 11:00, 14:00 and 16:00 on weekdays,
5 families per tour, up to 30 days ahead with 24 hours' notice.
"""

import datetime as dt

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from bookings import services
from bookings.callbacks import request_callback
from bookings.models import TourBooking, TourSlot
from bookings.selectors import contact_booking, normalise_reference, open_callbacks, upcoming_bookings
from bookings.services import (
    BookingError,
    ChildDetails,
    available_slots,
    book_tour,
    cancel_tour,
    check_slot,
    correct_booking_details,
    describe_date,
    next_open_slots,
    record_tour_outcome,
    reschedule_tour,
)
from crm.models import Child
from tests.bookings.helpers import at, refused
from tests.factories import ContactFactory, SchoolClosureFactory, SchoolFactory

NINE, ELEVEN, TWO, FOUR = dt.time(9), dt.time(11), dt.time(14), dt.time(16)
MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, SATURDAY, SUNDAY = range(7)


# --- helpers ------------------------------------------------------------------


def book(school, contact, day, time=NINE, *, now, **overrides) -> TourBooking:
    details = {
        "parent_name": contact.name or "Mei Lin Tan",
        "parent_phone": contact.phone or "9123 4567",
        "parent_email": "",
        "child_name": "Ana",
        "child_age": 4,
    }
    details.update(overrides)
    return book_tour(school=school, contact=contact, local_date=day, local_time=time, now=now, **details)


def slot_at(school, day, time) -> TourSlot | None:
    return TourSlot.objects.filter(school=school, starts_at=at(school, day, time)).first()


def seats_taken(school, day, time) -> int:
    slot = slot_at(school, day, time)
    return slot.seats_taken if slot else 0



def assert_open_alternatives(school, alternatives, now, *, excluding: dt.datetime | None = None) -> None:
    """Alternatives are real, bookable, open slots, in order."""
    assert alternatives, "a refusal should offer some open slots"
    current = services.local_now(school, now)
    earliest = current + dt.timedelta(hours=school.min_notice_hours)
    last_day = current.date() + dt.timedelta(days=school.max_advance_days)
    closures = set(school.closures.values_list("date", flat=True))
    starts = [alt.starts_at for alt in alternatives]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    for alt in alternatives:
        assert alt.starts_at >= earliest
        assert alt.local_date <= last_day
        assert alt.local_date.weekday() not in school.closed_weekdays
        assert alt.local_date not in closures
        assert alt.local_time in services.tour_times(school)
        assert alt.starts_at == at(school, alt.local_date, alt.local_time)
        slot = TourSlot.objects.filter(school=school, starts_at=alt.starts_at).first()
        capacity, taken = (slot.capacity, slot.seats_taken) if slot else (school.seats_per_tour, 0)
        assert alt.seats_left == capacity - taken > 0
        assert alt.starts_at != excluding


def assert_nothing_booked() -> None:
    assert not TourBooking.objects.exists()
    assert not TourSlot.objects.filter(seats_taken__gt=0).exists()


# --- small pieces ----------------------------------------------------------------


def test_describe_date_always_carries_the_weekday():
    assert describe_date(dt.date(2026, 11, 25)) == "Wednesday 25 November 2026"
    assert describe_date(dt.date(2027, 1, 2)) == "Saturday 2 January 2027"


def test_slot_view_as_dict(school, tuesday, now):
    slot = available_slots(school, tuesday, tuesday, ["14:00"], now=now)[0]
    assert slot.as_dict() == {
        "date": tuesday.isoformat(),
        "weekday": "Tuesday",
        "time": "14:00",
        "label": f"Tue {tuesday.day} {tuesday:%b}, 14:00",
        "seats_left": 5,
        "duration_minutes": 60,
    }


@pytest.mark.parametrize("raw", ["T-7KQ3XM", "t 7kq3xm", "#T-7KQ3XM", "7KQ3XM", " t-7kq3xm "])
def test_normalise_reference(raw):
    assert normalise_reference(raw) == "T-7KQ3XM"


# --- availability ------------------------------------------------------------------


def test_a_weekday_offers_every_tour_time_with_all_seats(school, tuesday, now):
    slots = available_slots(school, tuesday, tuesday, now=now)
    assert [(s.local_date, s.local_time, s.seats_left) for s in slots] == [
        (tuesday, t, 5) for t in (NINE, ELEVEN, TWO, FOUR)
    ]
    assert all(s.starts_at.utcoffset() == dt.timedelta(hours=8) for s in slots)  # Singapore time
    assert all(s.duration_minutes == 60 for s in slots)


@pytest.mark.parametrize(
    ("preferred", "expected"),
    [
        (["morning"], [NINE, ELEVEN]),
        (["afternoon"], [TWO, FOUR]),
        (["14:00"], [TWO]),
        (["Morning "], [NINE, ELEVEN]),
        (["morning", "16:00"], [NINE, ELEVEN, FOUR]),
        (["evening"], []),
        (["10:00"], []),
        (["2pm"], []),  # not understood: nothing matches rather than a crash
        (["anytime"], [NINE, ELEVEN, TWO, FOUR]),
        ([], [NINE, ELEVEN, TWO, FOUR]),
        (None, [NINE, ELEVEN, TWO, FOUR]),
    ],
)
def test_filter_by_time_of_day_or_exact_time(school, tuesday, now, preferred, expected):
    slots = available_slots(school, tuesday, tuesday, preferred, now=now)
    assert [s.local_time for s in slots] == expected


def test_seats_left_goes_down_as_families_book_and_a_full_tour_disappears(school, tuesday, now):
    school.seats_per_tour = 2
    school.save()
    book(school, ContactFactory(school=school), tuesday, TWO, now=now)
    [slot] = available_slots(school, tuesday, tuesday, ["14:00"], now=now)
    assert slot.seats_left == 1
    assert [s.seats_left for s in available_slots(school, tuesday, tuesday, ["morning"], now=now)] == [2, 2]

    book(school, ContactFactory(school=school), tuesday, TWO, now=now)
    assert available_slots(school, tuesday, tuesday, ["14:00"], now=now) == []
    assert [s.local_time for s in available_slots(school, tuesday, tuesday, now=now)] == [NINE, ELEVEN, FOUR]


def test_a_slot_row_keeps_its_own_capacity(school, tuesday, now):
    TourSlot.objects.create(school=school, starts_at=at(school, tuesday, NINE), capacity=8, seats_taken=3)
    [slot] = available_slots(school, tuesday, tuesday, ["09:00"], now=now)
    assert slot.seats_left == 5


def test_weekends_and_closures_have_no_tours(school, next_weekday, now):
    monday = next_weekday(school, MONDAY)
    SchoolClosureFactory(school=school, date=monday + dt.timedelta(days=2), reason="Sports day")
    slots = available_slots(school, monday, monday + dt.timedelta(days=6), now=now)
    days = sorted({s.local_date for s in slots})
    assert days == [monday + dt.timedelta(days=n) for n in (0, 1, 3, 4)]  # no Wednesday, Saturday, Sunday
    assert len(slots) == 4 * 4


def test_minimum_notice_hides_slots_too_soon(school, tuesday):
    now = at(school, tuesday, dt.time(12)) - dt.timedelta(hours=24)  # Monday 12:00
    slots = available_slots(school, tuesday - dt.timedelta(days=1), tuesday, now=now)
    assert [(s.local_date, s.local_time) for s in slots] == [(tuesday, TWO), (tuesday, FOUR)]


def test_nothing_in_the_past_or_beyond_the_advance_window(school, now):
    today = services.local_now(school, now).date()
    last_day = today + dt.timedelta(days=school.max_advance_days)
    assert available_slots(school, today - dt.timedelta(days=10), today - dt.timedelta(days=1), now=now) == []
    assert available_slots(school, last_day + dt.timedelta(days=1), last_day + dt.timedelta(days=20), now=now) == []
    slots = available_slots(school, today - dt.timedelta(days=5), today + dt.timedelta(days=90), now=now)
    assert slots
    assert all(s.starts_at >= now + dt.timedelta(hours=24) for s in slots)
    assert max(s.local_date for s in slots) <= last_day
    assert available_slots(school, last_day, last_day - dt.timedelta(days=1), now=now) == []


def test_next_open_slots_are_the_next_seven_days(school, now):
    slots = next_open_slots(school, now=now)
    earliest = services.local_now(school, now) + dt.timedelta(hours=24)
    first_day = earliest.date()
    assert slots == available_slots(school, first_day, first_day + dt.timedelta(days=6), now=now)
    assert {s.local_date for s in slots} <= {first_day + dt.timedelta(days=n) for n in range(7)}
    assert len({s.local_date for s in slots}) >= 4  # a week has at least four open weekdays after the notice
    assert_open_alternatives(school, slots, now)


def test_next_open_slots_from_a_given_day(school, next_weekday, now):
    monday = next_weekday(school, MONDAY)
    slots = next_open_slots(school, after=monday, now=now)
    assert {s.local_date for s in slots} == {monday + dt.timedelta(days=n) for n in range(5)}
    assert len(slots) == 20


def test_next_open_slots_skips_a_closed_week(school, next_weekday, now):
    monday = next_weekday(school, MONDAY)
    for n in range(5):
        SchoolClosureFactory(school=school, date=monday + dt.timedelta(days=n), reason="Term break")
    slots = next_open_slots(school, after=monday, now=now)
    next_monday = monday + dt.timedelta(days=7)
    assert {s.local_date for s in slots} == {next_monday + dt.timedelta(days=n) for n in range(5)}


# --- the booking rules ------------------------------------------------------------------


def test_a_good_booking(school, contact, tuesday, now):
    booking = book(
        school, contact, tuesday, TWO, now=now, parent_name="  Mei Lin Tan ", parent_phone="9123 4567",
        parent_email="Mei@Example.COM", child_name=" Ana ", child_age=4, special_requirements=" Wheelchair ",
    )
    booking.refresh_from_db()
    assert booking.status == TourBooking.Status.SCHEDULED
    assert booking.reference.startswith("T-") and len(booking.reference) == 8
    assert booking.starts_at == at(school, tuesday, TWO)
    assert booking.local_start.time() == TWO
    assert (booking.parent_name, booking.parent_phone, booking.parent_email) == (
        "Mei Lin Tan", "+6591234567", "Mei@example.com",
    )
    assert (booking.child_name, booking.special_requirements) == ("Ana", "Wheelchair")
    assert [(c.name, c.age, c.child.contact) for c in booking.children.all()] == [("Ana", 4, contact)]
    assert booking.slot.seats_taken == 1
    assert booking.slot.capacity == 5
    assert contact_booking(contact, booking.reference) == booking


def test_check_slot_returns_the_aware_start(school, tuesday, now):
    assert check_slot(school, tuesday, ELEVEN, now=now) == at(school, tuesday, ELEVEN)


def test_past_date_is_refused(school, contact, now):
    past = services.local_now(school, now).date() - dt.timedelta(days=2)
    err = refused("past_date", "preferred_date", book, school=school, contact=contact, day=past, now=now)
    assert err.message == f"{describe_date(past)} has already passed."
    assert_open_alternatives(school, err.alternatives, now)
    assert err.alternatives == next_open_slots(school, now=now)
    assert_nothing_booked()


@pytest.mark.parametrize(("weekday", "name"), [(SATURDAY, "Saturday"), (SUNDAY, "Sunday")])
def test_closed_weekday_is_refused(school, contact, next_weekday, now, weekday, name):
    day = next_weekday(school, weekday)
    err = refused("closed_weekday", "preferred_date", book, school=school, contact=contact, day=day, now=now)
    assert err.message == f"We don't run tours on {name}s."
    assert_open_alternatives(school, err.alternatives, now)
    # The alternatives are the nearest open days around it: the Friday before (unless too soon) and the Monday after.
    friday, monday = day - dt.timedelta(days=day.weekday() - 4), day + dt.timedelta(days=7 - day.weekday())
    days = sorted({alt.local_date for alt in err.alternatives})
    assert days[-1] == monday and set(days[:-1]) <= {friday}
    assert_nothing_booked()


def test_a_closed_day_offers_the_nearest_open_days_on_either_side(school, next_weekday, now):
    saturday = next_weekday(school, SATURDAY, min_days_ahead=5)
    SchoolClosureFactory(school=school, date=saturday - dt.timedelta(days=1), reason="Sports day")  # the Friday
    SchoolClosureFactory(school=school, date=saturday + dt.timedelta(days=2), reason="")  # the Monday
    around = services.open_around(school, saturday, now=now)
    assert sorted({s.local_date for s in around}) == [saturday - dt.timedelta(days=2), saturday + dt.timedelta(days=3)]
    assert len(around) == 8  # every open tour of the Thursday before and of the Tuesday after


def test_holiday_is_refused_with_its_reason(school, contact, tuesday, now):
    SchoolClosureFactory(school=school, date=tuesday, reason="Deepavali")
    err = refused("closed_day", "preferred_date", book, school=school, contact=contact, day=tuesday, now=now)
    assert err.message == f"The school is closed on {describe_date(tuesday)} (Deepavali)."
    assert "Tuesday" in err.message
    assert_open_alternatives(school, err.alternatives, now)
    # the open days on either side of it: the Monday before and the Wednesday after
    assert {alt.local_date for alt in err.alternatives} == {tuesday - dt.timedelta(days=1),
                                                           tuesday + dt.timedelta(days=1)}
    assert err.alternatives[0].local_date == tuesday - dt.timedelta(days=1)
    assert_nothing_booked()


def test_closure_without_a_reason(school, contact, tuesday, now):
    SchoolClosureFactory(school=school, date=tuesday, reason="")
    err = refused("closed_day", "preferred_date", book, school=school, contact=contact, day=tuesday, now=now)
    assert err.message == f"The school is closed on {describe_date(tuesday)}."


def test_beyond_the_advance_window_is_refused(school, contact, next_weekday, now):
    day = next_weekday(school, WEDNESDAY, min_days_ahead=school.max_advance_days + 1)
    last_day = services.local_now(school, now).date() + dt.timedelta(days=30)
    err = refused("beyond_window", "preferred_date", book, school=school, contact=contact, day=day, now=now)
    assert err.message == f"Tours can be booked up to 30 days ahead, so until {describe_date(last_day)}."
    assert_open_alternatives(school, err.alternatives, now)
    # Offered: the last bookable week, the closest to what was asked.
    assert all(last_day - dt.timedelta(days=6) <= alt.local_date <= last_day for alt in err.alternatives)
    assert_nothing_booked()


def test_the_last_day_of_the_window_is_bookable(school, contact, tuesday):
    now = at(school, tuesday - dt.timedelta(days=30), dt.time(10))
    assert book(school, contact, tuesday, NINE, now=now).status == TourBooking.Status.SCHEDULED
    now = at(school, tuesday - dt.timedelta(days=31), dt.time(10))
    refused("beyond_window", "preferred_date", book, school=school, contact=ContactFactory(school=school),
            day=tuesday, time=NINE, now=now)


def test_inside_minimum_notice_is_refused(school, contact, tuesday):
    now = at(school, tuesday, NINE) - dt.timedelta(hours=23)  # Monday 10:00
    err = refused("too_soon", "preferred_date", book, school=school, contact=contact, day=tuesday, time=NINE,
                  now=now)
    assert err.message == "Tours need at least 24 hours' notice."
    assert_open_alternatives(school, err.alternatives, now)
    assert (err.alternatives[0].local_date, err.alternatives[0].local_time) == (tuesday, ELEVEN)
    assert_nothing_booked()


def test_exactly_the_minimum_notice_is_enough(school, contact, tuesday):
    now = at(school, tuesday, NINE) - dt.timedelta(hours=24)
    assert book(school, contact, tuesday, NINE, now=now).starts_at == at(school, tuesday, NINE)


def test_today_is_too_soon_not_past(school, contact, next_weekday):
    thursday = next_weekday(school, THURSDAY)
    now = at(school, thursday, dt.time(8))
    err = refused("too_soon", "preferred_date", book, school=school, contact=contact, day=thursday, time=FOUR,
                  now=now)
    assert_open_alternatives(school, err.alternatives, now)


@pytest.mark.parametrize(("asked", "nearest"), [
    (dt.time(10), (NINE, ELEVEN)), (dt.time(9, 30), (NINE,)), (dt.time(14, 1), (TWO,)), (dt.time(0), (NINE,)),
    (dt.time(15, 30), (FOUR,)),
])
def test_a_time_that_is_not_a_tour_start_is_refused(school, contact, tuesday, now, asked, nearest):
    err = refused("not_a_tour_time", "preferred_time", book, school=school, contact=contact, day=tuesday,
                  time=asked, now=now)
    assert err.message == f"Tours start at 09:00, 11:00, 14:00, 16:00; {asked:%H:%M} isn't one of them."
    assert_open_alternatives(school, err.alternatives, now)
    assert [(a.local_date, a.local_time) for a in err.alternatives] == [(tuesday, t) for t in nearest]  # nearest
    assert_nothing_booked()


def test_wrong_time_on_a_fully_booked_day_offers_the_week(school, tuesday, now):
    school.seats_per_tour = 1
    school.save()
    for time in (NINE, ELEVEN, TWO, FOUR):
        book(school, ContactFactory(school=school), tuesday, time, now=now)
    err = refused("not_a_tour_time", "preferred_time", book, school=school, contact=ContactFactory(school=school),
                  day=tuesday, time=dt.time(10), now=now)
    assert_open_alternatives(school, err.alternatives, now)
    assert tuesday not in {a.local_date for a in err.alternatives}


def test_full_slot_is_refused_with_other_open_slots(school, tuesday, now):
    school.seats_per_tour = 3
    school.save()
    for _ in range(3):
        book(school, ContactFactory(school=school), tuesday, TWO, now=now)
    late = ContactFactory(school=school)
    err = refused("slot_full", "preferred_time", book, school=school, contact=late, day=tuesday, time=TWO, now=now)
    assert err.message == f"The 14:00 tour on {describe_date(tuesday)} is fully booked."
    full = at(school, tuesday, TWO)
    assert_open_alternatives(school, err.alternatives, now, excluding=full)
    assert [(a.local_date, a.local_time) for a in err.alternatives[:3]] == [
        (tuesday, NINE), (tuesday, ELEVEN), (tuesday, FOUR),
    ]
    assert seats_taken(school, tuesday, TWO) == 3
    assert not TourBooking.objects.filter(contact=late).exists()


def test_the_same_family_cannot_take_two_seats_on_one_tour(school, contact, tuesday, now):
    book(school, contact, tuesday, TWO, now=now)
    err = refused("already_booked", "preferred_time", book, school=school, contact=contact, day=tuesday, time=TWO,
                  now=now, child_name="Ben")
    assert err.message == "You already have a place on that tour."
    assert seats_taken(school, tuesday, TWO) == 1
    assert TourBooking.objects.filter(contact=contact).count() == 1


@pytest.mark.parametrize(
    ("overrides", "field", "missing"),
    [
        ({"parent_name": ""}, "parent_name", "parent_name"),
        ({"parent_name": "   "}, "parent_name", "parent_name"),
        ({"child_name": ""}, "child_name", "child_name"),
        ({"parent_phone": ""}, "parent_phone", "parent_phone"),
        ({"parent_name": "", "child_name": None}, "parent_name", "parent_name, child_name"),
    ],
)
def test_missing_names_are_asked_for(school, contact, tuesday, now, overrides, field, missing):
    err = refused("missing_fields", field, book, school=school, contact=contact, day=tuesday, now=now, **overrides)
    assert err.message == f"Still needed: {missing}."
    assert err.alternatives == []
    assert_nothing_booked()


@pytest.mark.parametrize("age", [0, 20, 42, 150, -1])
def test_silly_child_age_is_refused(school, contact, tuesday, now, age):
    err = refused("invalid_age", "child_age", book, school=school, contact=contact, day=tuesday, now=now,
                  child_age=age)
    assert str(age) in err.message
    assert_nothing_booked()


@pytest.mark.parametrize("age", [1, 4, 19, None])
def test_sensible_child_ages_are_accepted(school, contact, tuesday, now, age):
    assert book(school, contact, tuesday, now=now, child_age=age).children.get().age == age


@pytest.mark.parametrize("phone", ["12345", "+65 1234 5678", "call me", "9123 4567 8910 1112"])
def test_invalid_phone_is_refused(school, contact, tuesday, now, phone):
    err = refused("invalid_phone", "parent_phone", book, school=school, contact=contact, day=tuesday, now=now,
                  parent_phone=phone)
    assert phone in err.message
    assert_nothing_booked()


@pytest.mark.parametrize("email", ["mei", "mei@", "mei@example", "mei at example.com"])
def test_invalid_email_is_refused(school, contact, tuesday, now, email):
    err = refused("invalid_email", "parent_email", book, school=school, contact=contact, day=tuesday, now=now,
                  parent_email=email)
    assert email in err.message
    assert_nothing_booked()


def test_foreign_phone_with_country_code_is_fine(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, now=now, parent_phone="+44 20 7946 0958")
    assert booking.parent_phone == "+442079460958"


def test_details_are_checked_before_the_date(school, contact, now):
    past = services.local_now(school, now).date() - dt.timedelta(days=1)
    refused("invalid_phone", "parent_phone", book, school=school, contact=contact, day=past, now=now,
            parent_phone="123")


# --- families ------------------------------------------------------------------------


def test_twins_take_one_seat_and_are_the_contacts_children(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, now=now,
                   children=[ChildDetails("Leo", 4, year_group="K1"), ChildDetails("Mia", 4)])
    assert seats_taken(school, tuesday, NINE) == 1
    assert booking.child_name == "Leo and Mia"
    assert [(c.name, c.age, c.year_group, c.position) for c in booking.children.all()] == [
        ("Leo", 4, "K1", 0), ("Mia", 4, "", 1)]
    assert sorted(Child.objects.filter(contact=contact).values_list("name", "age", "year_group")) == [
        ("Leo", 4, "K1"), ("Mia", 4, "")]
    assert contact.activities.get().subject == f"School tour: Leo (4) and Mia (4) ({booking.reference})"


def test_a_returning_family_books_the_same_children_again(school, contact, tuesday, now):
    book(school, contact, tuesday, NINE, now=now, children=[ChildDetails("Sam", 6), ChildDetails("Ella", 3)])
    again = book(school, contact, tuesday, ELEVEN, now=now, children=[ChildDetails("sam", 7), ChildDetails("Ella")])
    assert Child.objects.filter(contact=contact).count() == 2
    assert Child.objects.get(contact=contact, name="Sam").age == 7  # the newer age; the name as first written
    assert [c.child.name for c in again.children.all()] == ["Sam", "Ella"]


def test_the_same_child_twice_is_one_child(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, now=now, children=[ChildDetails("Leo", 5), ChildDetails(" leo ")])
    assert [c.name for c in booking.children.all()] == ["Leo"]


def test_a_school_caps_the_people_per_family(school, contact, tuesday, now):
    school.max_people_per_booking = 3
    school.save()
    three = [ChildDetails("Aiden", 7), ChildDetails("Chloe", 4), ChildDetails("Zoe", 2)]
    err = refused("too_many_people", "children", book, school=school, contact=contact, day=tuesday, now=now,
                  children=three)
    assert "up to 3 people" in err.message and "would be 4 (3 children and 1 adult)" in err.message
    assert_nothing_booked()
    refused("too_many_people", "children", book, school=school, contact=contact, day=tuesday, now=now,
            children=three[:2], adults=2)
    booking = book(school, contact, tuesday, now=now, children=three[:2])
    assert (booking.adults, booking.children.count(), seats_taken(school, tuesday, NINE)) == (1, 2, 1)


def test_a_child_without_a_name_is_refused(school, contact, tuesday, now):
    refused("missing_fields", "child_name", book, school=school, contact=contact, day=tuesday, now=now,
            children=[ChildDetails("Leo", 5), ChildDetails("", 3)])
    assert_nothing_booked()


def test_correcting_one_childs_name_or_age_on_a_family_booking(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, now=now, children=[ChildDetails("Leo", 5), ChildDetails("Mia", 3)])
    correct_booking_details(booking=booking, child_name="Miah", now=now)
    assert [c.label for c in booking.children.all()] == ["Leo (5)", "Miah (3)"]
    assert booking.child_name == TourBooking.objects.get(pk=booking.pk).child_name == "Leo and Miah"
    assert sorted(Child.objects.filter(contact=contact).values_list("name", flat=True)) == ["Leo", "Miah"]
    err = refused("which_child", "child", correct_booking_details, booking=booking, child_age=6, now=now)
    assert "Leo and Miah" in err.message
    correct_booking_details(booking=booking, child_age=6, child="Leo", now=now)
    assert [c.label for c in booking.children.all()] == ["Leo (6)", "Miah (3)"]


# --- looking a booking up -------------------------------------------------------------


def test_unknown_reference_and_someone_elses_booking_are_not_found(school, contact, tuesday, now):
    mine = book(school, contact, tuesday, now=now)
    stranger = ContactFactory(school=school)
    theirs = book(school, stranger, tuesday, ELEVEN, now=now)
    assert contact_booking(contact, mine.reference.lower().replace("-", " ")) == mine
    assert contact_booking(contact, "T-ZZZZZZ") is None
    assert contact_booking(contact, "") is None
    assert contact_booking(contact, theirs.reference) is None
    assert contact_booking(stranger, mine.reference) is None


def test_upcoming_bookings_and_open_callbacks(school, contact, tuesday, now):
    kept = book(school, contact, tuesday, NINE, now=now)
    dropped = book(school, contact, tuesday, ELEVEN, now=now)
    cancel_tour(booking=dropped, now=now)
    assert list(upcoming_bookings(contact, now=now)) == [kept]
    assert list(upcoming_bookings(contact, now=at(school, tuesday, dt.time(10)))) == []
    callback = request_callback(school=school, contact=contact, parent_name="Mei", parent_phone="91234567", now=now)
    assert list(open_callbacks(contact)) == [callback]


# --- reschedule -----------------------------------------------------------------------


def test_reschedule_moves_the_seat_and_keeps_the_reference(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, NINE, now=now, special_requirements="Pram",
                   children=[ChildDetails("Leo", 5), ChildDetails("Mia", 3)])
    wednesday = tuesday + dt.timedelta(days=1)
    moved = reschedule_tour(booking=booking, new_date=wednesday, new_time=TWO, now=now)

    moved.refresh_from_db()
    assert (moved.pk, moved.reference, moved.status) == (booking.pk, booking.reference, TourBooking.Status.SCHEDULED)
    assert moved.starts_at == at(school, wednesday, TWO) and moved.slot.starts_at == moved.starts_at
    assert [c.label for c in moved.children.all()] == ["Leo (5)", "Mia (3)"]
    assert (moved.child_name, moved.special_requirements) == ("Leo and Mia", "Pram")
    assert seats_taken(school, tuesday, NINE) == 0
    assert seats_taken(school, wednesday, TWO) == 1
    assert [(m.from_starts_at, m.to_starts_at) for m in moved.moves.all()] == [
        (at(school, tuesday, NINE), at(school, wednesday, TWO))]
    assert TourBooking.objects.count() == 1
    assert contact_booking(contact, booking.reference) == moved


def test_moving_twice_keeps_one_reference_and_both_moves(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, NINE, now=now)
    reschedule_tour(booking=booking, new_date=tuesday, new_time=ELEVEN, now=now)
    again = reschedule_tour(booking=TourBooking.objects.get(pk=booking.pk), new_date=tuesday, new_time=FOUR, now=now)
    assert again.reference == booking.reference
    assert [seats_taken(school, tuesday, t) for t in (NINE, ELEVEN, FOUR)] == [0, 0, 1]
    assert [(m.from_starts_at.astimezone(school.tz).time(), m.to_starts_at.astimezone(school.tz).time())
            for m in again.moves.all()] == [(NINE, ELEVEN), (ELEVEN, FOUR)]
    assert not TourBooking.objects.filter(status=TourBooking.Status.RESCHEDULED).exists()


def test_a_booking_moved_before_one_reference_still_finds_the_live_one(school, contact, tuesday, now):
    """Rows written when every move made a new booking (status "rescheduled", `replaces`) still resolve."""
    first = book(school, contact, tuesday, NINE, now=now)
    live = book(school, contact, tuesday, ELEVEN, now=now)
    TourBooking.objects.filter(pk=first.pk).update(status=TourBooking.Status.RESCHEDULED)
    TourBooking.objects.filter(pk=live.pk).update(replaces=first)
    assert contact_booking(contact, first.reference) == live


def test_rescheduling_to_the_same_slot_is_refused(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, NINE, now=now)
    err = refused("same_slot", "new_time", reschedule_tour, booking=booking, new_date=tuesday, new_time=NINE, now=now)
    assert err.message == "Your tour is already at that time."
    booking.refresh_from_db()
    assert booking.status == TourBooking.Status.SCHEDULED
    assert seats_taken(school, tuesday, NINE) == 1


def test_a_cancelled_booking_cannot_be_rescheduled(school, contact, tuesday, now):
    booking = cancel_tour(booking=book(school, contact, tuesday, NINE, now=now), now=now)
    err = refused("not_scheduled", "", reschedule_tour, booking=booking, new_date=tuesday, new_time=ELEVEN, now=now)
    assert booking.reference in err.message and "cancelled" in err.message
    assert seats_taken(school, tuesday, ELEVEN) == 0


def test_a_stale_instance_of_a_cancelled_booking_cannot_be_rescheduled(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, NINE, now=now)
    cancel_tour(booking=TourBooking.objects.get(pk=booking.pk), now=now)
    assert booking.status == TourBooking.Status.SCHEDULED  # the caller's copy has not heard
    refused("not_scheduled", "", reschedule_tour, booking=booking, new_date=tuesday, new_time=ELEVEN, now=now)
    assert seats_taken(school, tuesday, ELEVEN) == 0
    assert seats_taken(school, tuesday, NINE) == 0


def test_rescheduling_into_a_full_slot_changes_nothing(school, contact, tuesday, now):
    school.seats_per_tour = 1
    school.save()
    booking = book(school, contact, tuesday, NINE, now=now)
    book(school, ContactFactory(school=school), tuesday, ELEVEN, now=now)
    err = refused("slot_full", "preferred_time", reschedule_tour, booking=booking, new_date=tuesday,
                  new_time=ELEVEN, now=now)
    assert_open_alternatives(school, err.alternatives, now, excluding=at(school, tuesday, ELEVEN))
    booking.refresh_from_db()
    assert booking.status == TourBooking.Status.SCHEDULED
    assert (seats_taken(school, tuesday, NINE), seats_taken(school, tuesday, ELEVEN)) == (1, 1)
    assert TourBooking.objects.count() == 2
    assert not booking.moves.exists()


def test_rescheduling_onto_a_tour_the_family_already_has_is_refused(school, contact, tuesday, now):
    first = book(school, contact, tuesday, NINE, now=now, child_name="Ana")
    book(school, contact, tuesday, ELEVEN, now=now, child_name="Ben")
    err = refused("already_booked", "new_time", reschedule_tour, booking=first, new_date=tuesday, new_time=ELEVEN,
                  now=now)
    assert "already" in err.message
    first.refresh_from_db()
    assert first.status == TourBooking.Status.SCHEDULED
    assert (seats_taken(school, tuesday, NINE), seats_taken(school, tuesday, ELEVEN)) == (1, 1)


@pytest.mark.parametrize(
    ("weekday", "time", "code", "field"),
    [(SATURDAY, NINE, "closed_weekday", "preferred_date"), (WEDNESDAY, dt.time(10), "not_a_tour_time",
                                                            "preferred_time")],
)
def test_reschedule_applies_the_booking_rules(school, contact, tuesday, next_weekday, now, weekday, time, code,
                                              field):
    booking = book(school, contact, tuesday, NINE, now=now)
    err = refused(code, field, reschedule_tour, booking=booking, new_date=next_weekday(school, weekday),
                  new_time=time, now=now)
    assert_open_alternatives(school, err.alternatives, now)
    assert seats_taken(school, tuesday, NINE) == 1


def test_a_tour_that_has_taken_place_cannot_be_changed(school, contact, tuesday, now):
    booking = book(school, contact, tuesday, NINE, now=now)
    later = at(school, tuesday, dt.time(10))
    err = refused("tour_passed", "", reschedule_tour, booking=booking, new_date=tuesday + dt.timedelta(days=1),
                  new_time=NINE, now=later)
    assert booking.reference in err.message
    refused("tour_passed", "", cancel_tour, booking=booking, now=later)


# --- cancel ------------------------------------------------------------------------------


def test_cancel_releases_the_seat_and_keeps_the_reason(school, tuesday, now):
    contact = ContactFactory(school=school)
    booking = book(school, contact, tuesday, NINE, now=now)
    book(school, ContactFactory(school=school), tuesday, NINE, now=now)
    assert seats_taken(school, tuesday, NINE) == 2

    cancelled = cancel_tour(booking=booking, reason="  Child is unwell  ", now=now)
    assert cancelled.status == TourBooking.Status.CANCELLED
    assert cancelled.cancellation_reason == "Child is unwell"
    assert cancelled.cancelled_at is not None
    booking.refresh_from_db()
    assert booking.status == TourBooking.Status.CANCELLED
    assert seats_taken(school, tuesday, NINE) == 1

    err = refused("not_scheduled", "", cancel_tour, booking=cancelled, now=now)
    assert "cancelled" in err.message
    # A stale copy that still says "scheduled" is refused too, and no second seat is released.
    stale = TourBooking.objects.get(pk=booking.pk)
    stale.status = TourBooking.Status.SCHEDULED
    err = refused("not_scheduled", "", cancel_tour, booking=stale, now=now)
    assert err.message == f"Booking {booking.reference} is already cancelled."
    assert seats_taken(school, tuesday, NINE) == 1
    # The freed seat can be booked again.
    assert available_slots(school, tuesday, tuesday, ["09:00"], now=now)[0].seats_left == 4


def test_a_long_reason_is_cut_to_fit(school, contact, tuesday, now):
    booking = cancel_tour(booking=book(school, contact, tuesday, now=now), reason="x" * 500, now=now)
    assert len(booking.cancellation_reason) == 300


def test_the_same_family_can_book_the_tour_again_after_cancelling(school, contact, tuesday, now):
    cancel_tour(booking=book(school, contact, tuesday, NINE, now=now), now=now)
    again = book(school, contact, tuesday, NINE, now=now)
    assert again.status == TourBooking.Status.SCHEDULED
    assert seats_taken(school, tuesday, NINE) == 1


# --- outcome -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [TourBooking.Status.COMPLETED, TourBooking.Status.NO_SHOW])
def test_record_tour_outcome(school, contact, tuesday, now, status):
    booking = book(school, contact, tuesday, NINE, now=now)
    done = record_tour_outcome(booking=booking, status=status)
    assert done.status == status
    assert seats_taken(school, tuesday, NINE) == 1  # the seat was used: it is not released
    err = refused("not_scheduled", "", record_tour_outcome, booking=done, status=TourBooking.Status.COMPLETED)
    assert booking.reference in err.message


@pytest.mark.parametrize("status", ["cancelled", "scheduled", "rescheduled", "great"])
def test_record_tour_outcome_accepts_only_completed_or_no_show(school, contact, tuesday, now, status):
    booking = book(school, contact, tuesday, NINE, now=now)
    refused("invalid_status", "", record_tour_outcome, booking=booking, status=status)
    booking.refresh_from_db()
    assert booking.status == TourBooking.Status.SCHEDULED


# --- property: the seat count never drifts -------------------------------------------------------

operations = st.lists(
    st.one_of(
        st.tuples(st.just("book"), st.integers(0, 3), st.integers(0, 1)),
        st.tuples(st.just("cancel"), st.integers(0, 30), st.just(0)),
        st.tuples(st.just("reschedule"), st.integers(0, 30), st.integers(0, 1)),
    ),
    max_size=14,
)
EXPECTED_REFUSALS = {"slot_full", "already_booked", "not_scheduled", "same_slot"}


@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_seats_taken_always_equals_the_scheduled_bookings(db, next_weekday, ops):
    """For any sequence of book / cancel / reschedule, each slot's seat count is its live bookings."""
    now = timezone.now()
    with transaction.atomic():
        school = SchoolFactory(seats_per_tour=2)
        day = next_weekday(school, TUESDAY)
        times = (NINE, ELEVEN)
        contacts = [ContactFactory(school=school) for _ in range(4)]
        bookings: list[TourBooking] = []
        for op, a, b in ops:
            try:
                if op == "book":
                    bookings.append(book(school, contacts[a], day, times[b], now=now))
                elif op == "cancel" and bookings:
                    cancel_tour(booking=bookings[a % len(bookings)], now=now)
                elif op == "reschedule" and bookings:
                    bookings.append(
                        reschedule_tour(booking=bookings[a % len(bookings)], new_date=day, new_time=times[b], now=now)
                    )
            except BookingError as exc:
                assert exc.code in EXPECTED_REFUSALS, exc.message
            for slot in TourSlot.objects.filter(school=school):
                live = TourBooking.objects.filter(slot=slot, status=TourBooking.Status.SCHEDULED).count()
                assert slot.seats_taken == live <= slot.capacity
        transaction.set_rollback(True)
