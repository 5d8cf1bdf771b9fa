"""The booking flow keeps what the parent chose (issue 28, second round): a window of the day stays the filter of
every later list, a choice by comparison ("the later one") is a pick, a move "same time" keeps the moved tour's
time, weeks ahead with a weekday in Malay and Chinese, and a time that is no tour start offers the nearest tours."""

import datetime as dt

import pytest

from chatbot.agent.offline.gloss import gloss
from chatbot.agent.offline.when import find_when
from tests.chatbot.test_messy_time_and_choice import FIRST, THIRD, _booked, _pick
from tests.chatbot.test_offline_policy import Concierge, FakeSchool, offered, slot
from tests.chatbot.tool_calls import call

BY_COMPARISON = [
    ("en", "ok whatever works, the earlier one", FIRST), ("sg", "the later one lah", THIRD),
    ("en", "the later slot pls", THIRD), ("ms", "yg awal sikit", FIRST), ("ms", "yang lebih lewat", THIRD),
    ("zh", "晚点的", THIRD), ("zh", "较早的那个", FIRST),
]


@pytest.mark.parametrize(("language", "answer", "slot_"), BY_COMPARISON)
async def test_a_comparison_picks_the_option(language, answer, slot_):
    _, reply = await _pick(answer)
    assert _booked(reply) == slot_, (language, reply.text)


@pytest.mark.parametrize(("language", "text", "day"), [
    ("ms", "2 minggu lagi hari rabu, pagi", dt.date(2026, 12, 16)),
    ("ms", "dua minggu lagi hari khamis", dt.date(2026, 12, 17)),
    ("ms", "minggu depan lagi hari isnin", dt.date(2026, 12, 14)),
    ("zh", "两个星期后的星期三上午", dt.date(2026, 12, 16)),
    ("zh", "下下周三", dt.date(2026, 12, 16)),
])
def test_weeks_ahead_with_a_weekday(language, text, day):
    assert find_when(gloss(text).text, dt.date(2026, 12, 3), dt.time(9)).date == day, language


@pytest.mark.parametrize(("language", "answer"), [
    ("en", "thurs same time instead"), ("ms", "khamis masa sama"), ("zh", "改成星期四同一时间"),
])
async def test_a_move_to_another_day_at_the_same_time_keeps_the_tours_time(language, answer):
    school = FakeSchool({"name": "Tom Lee", "phone": "+6591234567"})
    monday = dt.date(2026, 11, 23)
    ref = school.add_booking(monday, "11:00", "Leo")
    concierge = Concierge(school)
    await concierge.say(f"can we move {ref}")
    offered(school, [slot(monday, "09:00"), slot(monday, "14:00")])
    reply = await concierge.say(answer)
    moved = reply.called("manage_tour_booking")
    assert moved and moved[-1].get("new_date") == "2026-11-26" and moved[-1].get("new_time") == "11:00", (
        language, reply.calls)


@pytest.mark.django_db(transaction=True)
def test_a_window_stays_the_filter_once_the_details_arrive(ctx, next_weekday, school):
    monday = next_weekday(school, 0)
    found = call(ctx, "check_availability", date_range_start=monday.isoformat(), date_range_end=monday.isoformat(),
                 preferred_times=["10:00-12:00"])
    assert [s["time"] for s in found["available_slots"]] == ["11:00"]
    asked = call(ctx, "book_tour", parent_name="Jenny Wong", parent_phone="+6596781234", child_name="Chloe",
                 child_age=4)
    assert asked["status"] == "missing_fields" and [s["time"] for s in asked["options"]] == ["11:00"]
    again = call(ctx, "check_availability", date_range_start=monday.isoformat())
    assert [s["time"] for s in again["available_slots"]] == ["11:00"]


@pytest.mark.django_db(transaction=True)
def test_a_time_that_is_no_tour_start_offers_the_nearest_tours(ctx, next_weekday, school):
    thursday = next_weekday(school, 3)
    result = call(ctx, "book_tour", preferred_date=thursday.isoformat(), preferred_time="15:30")
    assert result["status"] == "error" and [s["time"] for s in result["alternatives"]] == ["16:00"]
