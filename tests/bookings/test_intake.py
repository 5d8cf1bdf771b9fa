"""The booking intake: how what a parent says about when refines what they said before, and what it asks for."""

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bookings.intake import DETAILS, REQUIRED, Intake, part_of_day, read_window, window_part, window_text

TUE, WED, THU = "2026-12-01", "2026-12-02", "2026-12-03"


def when(intake: Intake) -> tuple:
    return intake.preferred_date, intake.date_from, intake.date_to, intake.part_of_day, intake.preferred_time


# --- record_when ----------------------------------------------------------------------------------------------


def test_a_day_replaces_a_range():
    intake = Intake()
    intake.record_when(date_from=TUE, date_to=THU)
    intake.record_when(date=WED)
    assert when(intake) == (WED, None, None, None, None)


def test_a_range_replaces_a_day():
    intake = Intake()
    intake.record_when(date=WED)
    intake.record_when(date_from=TUE, date_to=THU)
    assert when(intake) == (None, TUE, THU, None, None)


@pytest.mark.parametrize("range_args", [{"date_from": WED, "date_to": WED}, {"date_from": WED}])
def test_a_one_day_range_is_that_day(range_args):
    intake = Intake(date_from=TUE, date_to=THU)
    intake.record_when(**range_args)
    assert when(intake) == (WED, None, None, None, None)


def test_dates_and_iso_strings_are_the_same_day():
    intake = Intake()
    intake.record_when(date=dt.date(2026, 12, 2))
    assert intake.preferred_date == WED
    intake.record_when(date_from=dt.date(2026, 12, 1), date_to=dt.date(2026, 12, 3))
    assert (intake.date_from, intake.date_to) == (TUE, THU)


def test_a_time_replaces_the_part_of_day():
    intake = Intake()
    intake.record_when(part="afternoon")
    intake.record_when(time="09:00")
    assert (intake.part_of_day, intake.preferred_time) == (None, "09:00")


def test_a_part_of_day_drops_a_time_outside_it():
    intake = Intake()
    intake.record_when(time="09:00")
    intake.record_when(part="afternoon")
    assert (intake.part_of_day, intake.preferred_time) == ("afternoon", None)


def test_a_part_of_day_keeps_a_time_inside_it():
    intake = Intake()
    intake.record_when(time="14:00")
    intake.record_when(part="afternoon")
    assert (intake.part_of_day, intake.preferred_time) == ("afternoon", "14:00")


def test_any_time_of_day_clears_the_part():
    intake = Intake(preferred_date=TUE, part_of_day="morning")
    intake.record_when(part="any")
    assert when(intake) == (TUE, None, None, None, None)


def test_an_unknown_part_of_day_changes_nothing():
    intake = Intake(preferred_date=TUE, part_of_day="morning")
    intake.record_when(part="teatime")
    assert when(intake) == (TUE, None, None, "morning", None)


def test_unsaid_constraints_stay():
    intake = Intake()
    intake.record_when(date=THU)
    intake.record_when(part="afternoon")  # "Thursday" then "in the afternoon": Thursday afternoon
    assert when(intake) == (THU, None, None, "afternoon", None)
    intake.record_when(time="14:00")
    intake.record_when(date=WED)  # "actually the Wednesday" keeps the time chosen
    assert when(intake) == (WED, None, None, None, "14:00")
    intake.record_when()
    assert when(intake) == (WED, None, None, None, "14:00")


def test_when_is_kept_apart_from_the_details():
    intake = Intake(details={"parent_name": "Jon"}, children=[{"name": "Mia"}])
    intake.record_when(date=TUE, time="09:00")
    intake.forget_when()
    assert when(intake) == (None,) * 5
    assert (intake.details, intake.children) == ({"parent_name": "Jon"}, [{"name": "Mia"}])


# --- what follows -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("intake", "args"), [
    (Intake(), {}),
    (Intake(children=[{"name": "Mia"}]), {}),
    (Intake(preferred_date=TUE), {"date_range_start": TUE, "date_range_end": TUE}),
    (Intake(date_from=TUE, date_to=THU), {"date_range_start": TUE, "date_range_end": THU}),
    (Intake(date_from=TUE), {"date_range_start": TUE, "date_range_end": TUE}),
    (Intake(part_of_day="morning"), {"preferred_times": ["morning"]}),
    (Intake(preferred_date=WED, preferred_time="11:00"),
     {"date_range_start": WED, "date_range_end": WED, "preferred_times": ["11:00"]}),
    (Intake(date_from=TUE, date_to=THU, part_of_day="afternoon"),
     {"date_range_start": TUE, "date_range_end": THU, "preferred_times": ["afternoon"]}),
])
def test_search_args(intake, args):
    assert intake.search_args() == args


@pytest.mark.parametrize(("intake", "slot", "fits"), [
    (Intake(), (TUE, "09:00"), True),
    (Intake(preferred_date=TUE), (TUE, "16:00"), True),
    (Intake(preferred_date=TUE), (WED, "09:00"), False),
    (Intake(date_from=TUE, date_to=THU), (WED, "09:00"), True),
    (Intake(date_from=TUE, date_to=THU), (THU, "09:00"), True),
    (Intake(date_from=TUE, date_to=WED), (THU, "09:00"), False),
    (Intake(part_of_day="afternoon"), (TUE, "14:00"), True),
    (Intake(part_of_day="afternoon"), (TUE, "11:00"), False),
    (Intake(part_of_day="morning"), (TUE, "12:00"), False),
    (Intake(preferred_time="11:00"), (TUE, "11:00"), True),
    (Intake(preferred_time="11:00"), (TUE, "09:00"), False),
    (Intake(preferred_date=WED, part_of_day="afternoon"), (WED, "16:00"), True),
    (Intake(preferred_date=WED, part_of_day="afternoon"), (TUE, "16:00"), False),
])
def test_fits(intake, slot, fits):
    assert intake.fits(*slot) is fits


def test_missing_lists_what_is_still_needed_in_order():
    intake = Intake()
    assert intake.missing() == list(REQUIRED)
    intake.record_details(child_name="Mia", parent_phone="+6591234567")
    intake.record_when(date=TUE, part="morning")  # a part of the day is not a start time yet
    assert intake.missing() == ["child_age", "parent_name", "preferred_time"]
    intake.record_details(child_age=5, parent_name="Jon Tan")
    intake.record_when(time="09:00")
    assert intake.missing() == []
    assert (intake.preferred_date, intake.preferred_time) == (TUE, "09:00")


def test_a_slot_needs_both_day_and_time():
    assert "preferred_time" in Intake(preferred_date=TUE).missing()
    assert "preferred_date" in Intake(preferred_time="09:00").missing()
    assert "preferred_date" in Intake(date_from=TUE, date_to=THU, preferred_time="09:00").missing()


@pytest.mark.parametrize("time", ["00:00", "09:00", "11:59", "12:00", "16:59", "17:00", "23:30"])
def test_part_of_day_of_a_start_time(time):
    hour = int(time[:2])
    assert part_of_day(time) == ("morning" if hour < 12 else "afternoon" if hour < 17 else "evening")


# --- the stored form ----------------------------------------------------------------------------------------


def test_as_dict_is_flat_and_says_only_what_was_said():
    intake = Intake(children=[{"name": "Mia", "age": 5}], preferred_date=TUE, part_of_day="morning")
    assert intake.as_dict() == {"children": [{"name": "Mia", "age": 5}], "preferred_date": TUE,
                                "part_of_day": "morning"}
    assert Intake().as_dict() == {}


def test_from_dict_round_trip():
    intake = Intake(details={"parent_name": "Jon Tan"}, children=[{"age": 5}], date_from=TUE, date_to=THU,
                    part_of_day="afternoon")
    again = Intake.from_dict(intake.as_dict())
    assert again == intake and again.as_dict() == intake.as_dict()


def test_from_dict_keeps_only_what_it_knows():
    intake = Intake.from_dict({"child_name": "Mia", "parent_email": "", "task_type": "tour_booking",
                               "preferred_time": "", "preferred_date": TUE, "children": [{"age": 3}, 7, {}]})
    assert (intake.details, intake.children) == ({}, [{"name": "Mia", "age": 3}])  # a state kept before children
    assert when(intake) == (TUE, None, None, None, None)
    assert Intake.from_dict(None) == Intake() == Intake.from_dict({})


def test_record_details_returns_what_changed_and_ignores_empty_values():
    intake = Intake()
    assert intake.record_details(child_name="Mia", child_age=5, parent_email="", parent_phone=None) == [
        "children"]
    assert intake.children == [{"name": "Mia", "age": 5}]
    assert intake.record_details(child_name="Mia", child_age=6, parent_name="Jon") == ["children", "parent_name"]
    assert intake.record_details(child_name="", preferred_date=TUE, favourite_colour="blue") == []
    assert (intake.details, intake.children) == ({"parent_name": "Jon"}, [{"name": "Mia", "age": 6}])
    assert intake.preferred_date is None  # when is said through record_when, not as a detail


# --- several children ---------------------------------------------------------------------------------------


def test_a_family_is_collected_child_by_child():
    intake = Intake()
    intake.record_details(children=[{"name": "Leo"}, {"name": "Mia"}], parent_name="Ana", parent_phone="+6591234567")
    assert intake.missing() == ["child_age", "preferred_date", "preferred_time"]
    assert [c["name"] for c in intake.children_without("age")] == ["Leo", "Mia"]
    intake.record_details(child_name="Mia", child_age=3)  # one child at a time, by name
    intake.record_details(child_age=5)  # an age alone: the first child still without one
    assert intake.children == [{"name": "Leo", "age": 5}, {"name": "Mia", "age": 3}]
    intake.record_details(child_name="Max", child_age=1)  # a name not yet known among several: one child more
    assert [c["name"] for c in intake.children] == ["Leo", "Mia", "Max"]
    intake.record_details(children=[{"name": "leo"}, {"name": "Mia", "year_group": "K1"}])  # the whole list again
    assert intake.children == [{"name": "leo", "age": 5}, {"name": "Mia", "age": 3, "year_group": "K1"}]


def test_children_named_later_fill_the_unnamed_ones():
    intake = Intake(children=[{"age": 6}, {"age": 4}])  # "my two boys, 6 and 4"
    assert intake.missing()[:1] == ["child_name"]
    intake.record_details(child_name="Sam")
    intake.record_details(child_name="Ben")
    assert intake.children == [{"age": 6, "name": "Sam"}, {"age": 4, "name": "Ben"}]
    assert "child_name" not in intake.missing() and "child_age" not in intake.missing()


def test_a_respelt_name_among_several_is_a_correction_not_another_child():
    intake = Intake(children=[{"name": "Aiden", "age": 7}, {"name": "Chloe", "age": 4}])
    intake.record_details(child_name="Khloe")
    assert intake.children == [{"name": "Aiden", "age": 7}, {"name": "Khloe", "age": 4}]
    intake.record_details(child_name="Max")
    assert [c["name"] for c in intake.children] == ["Aiden", "Khloe", "Max"]


def test_one_child_renamed_is_a_correction():
    intake = Intake(children=[{"name": "Mia", "age": 5}])
    intake.record_details(child_name="Miah")
    assert intake.children == [{"name": "Miah", "age": 5}]


# --- properties ---------------------------------------------------------------------------------------------

FIRST_DAY = dt.date(2026, 12, 1)
DAYS = [FIRST_DAY + dt.timedelta(days=n) for n in range(10)]
TIMES = [f"{hour:02d}:{minute:02d}" for hour in range(24) for minute in (0, 30)]
PARTS = ["morning", "afternoon", "evening", "any", "teatime"]

days = st.sampled_from(DAYS)
said = st.fixed_dictionaries({}, optional={
    "date": days, "date_from": days, "date_to": days, "part": st.sampled_from(PARTS), "time": st.sampled_from(TIMES),
})


def _respects(args: dict, date: str, time: str) -> bool:
    """Whether a slot satisfies every constraint check_availability would be called with."""
    if "date_range_start" in args and not args["date_range_start"] <= date <= args["date_range_end"]:
        return False
    for wanted in args.get("preferred_times", []):
        if ":" in wanted and time != wanted:
            return False
        if ":" not in wanted and part_of_day(time) != wanted:
            return False
    return True


@given(st.lists(said, max_size=8))
def test_every_slot_that_fits_respects_the_search(calls):
    intake = Intake()
    for call in calls:
        intake.record_when(**call)
    args = intake.search_args()
    for day in DAYS:
        for time in TIMES:
            if intake.fits(day.isoformat(), time):
                assert _respects(args, day.isoformat(), time), (calls, args, day, time)


@given(st.lists(said, max_size=8),
       st.dictionaries(st.sampled_from(DETAILS), st.one_of(st.text(min_size=1, max_size=8), st.integers(0, 18))))
def test_the_stored_form_round_trips(calls, details):
    intake = Intake()
    intake.record_details(**details)
    for call in calls:
        intake.record_when(**call)
    assert Intake.from_dict(intake.as_dict()) == intake


def test_a_bare_weekday_falls_in_the_range_or_in_the_week_of_the_day_held():
    ranged = Intake()
    ranged.record_when(date_from="2026-12-07", date_to="2026-12-13")  # "the week of the 7th"
    assert ranged.day_in_range(3) == "2026-12-10"
    held = Intake()
    held.record_when(date="2026-12-01")  # a Tuesday
    assert (held.day_in_range(2), held.day_in_range(0), held.day_in_range(6)) == (
        "2026-12-02", "2026-11-30", "2026-12-06")
    assert Intake().day_in_range(2) is None


# --- a window of the day ("after 10", "between 10 n 12") -------------------------------------------------------


def test_a_window_is_kept_and_searched_as_written():
    intake = Intake()
    intake.record_when(date="2026-12-07", window=("10:00", "12:00"))
    assert (intake.time_after, intake.time_before, intake.part_of_day) == ("10:00", "12:00", "morning")
    assert intake.search_args()["preferred_times"] == ["10:00-12:00"]
    assert [t for t in ("09:00", "11:00", "14:00") if intake.fits_time(t)] == ["11:00"]
    intake.record_when(date="2026-12-08")  # a new day keeps the window
    assert Intake.from_dict(intake.as_dict()).search_args()["preferred_times"] == ["10:00-12:00"]


def test_a_time_or_a_part_of_the_day_said_later_replaces_the_window():
    intake = Intake()
    intake.record_when(window=("10:00", None))
    intake.record_when(time="14:00")
    assert (intake.time_after, intake.preferred_time) == (None, "14:00")
    intake.record_when(window=(None, "12:00"))
    assert intake.preferred_time is None  # 14:00 is outside "before 12"
    intake.record_when(part="afternoon")
    assert (intake.time_before, intake.part_of_day) == (None, "afternoon")


@pytest.mark.parametrize(("window", "part"), [
    (("10:00", None), None), (("13:00", None), "afternoon"), (("17:00", None), "evening"),
    ((None, "10:00"), "morning"), (("10:00", "12:00"), "morning"), (("11:00", "13:00"), None),
])
def test_the_part_of_the_day_a_window_lies_in(window, part):
    assert window_part(*window) == part


@pytest.mark.parametrize("window", [("10:00", None), (None, "12:00"), ("10:00", "12:00")])
def test_a_window_reads_back_as_written(window):
    assert read_window(window_text(*window)) == window
