"""Choosing from a list of offered slots (issue 28): by position, superlative, time, part of the day and weekday,
in every supported language, always against the options the dialogue state holds; two matches are asked about."""

import datetime as dt

import pytest

from bookings.models import CallbackRequest
from chatbot.agent.blocks import blocks_for
from chatbot.agent.datetimes import read_call_time
from chatbot.agent.offline.understanding import Hints, read_message
from tests.chatbot.test_offline_policy import Concierge, FakeSchool, offered, slot

MONDAY, TUESDAY = dt.date(2026, 11, 23), dt.date(2026, 11, 24)
LISTED = [slot(MONDAY, "09:00"), slot(MONDAY, "14:00"), slot(TUESDAY, "11:00")]
FIRST, SECOND, THIRD = ("2026-11-23", "09:00"), ("2026-11-23", "14:00"), ("2026-11-24", "11:00")
DETAILS = {"child_name": "Leo", "child_age": 4, "parent_name": "Jon Tan", "parent_phone": "+6591234567"}


async def _pick(answer: str):
    school = FakeSchool()
    school.collected = dict(DETAILS)
    concierge = Concierge(school)
    await concierge.say("what do you have next week?")
    offered(school, LISTED)
    return school, await concierge.say(answer)


def _booked(reply) -> tuple[str, str] | None:
    booked = reply.called("book_tour")
    return (booked[0].get("preferred_date"), booked[0].get("preferred_time")) if booked else None


BY_POSITION = [
    ("en", "the 2nd", SECOND), ("en", "no. 3", THIRD), ("en", "last one", THIRD), ("en", "the second one pls", SECOND),
    ("ms", "yang kedua", SECOND), ("ms", "yg terakhir", THIRD),
    ("zh", "第二个", SECOND), ("zh", "最后一个", THIRD),
    ("ta", "இரண்டாவது", SECOND),
]
BY_SUPERLATIVE = [
    ("en", "the soonest", FIRST), ("en", "earliest pls", FIRST), ("en", "the latest one", THIRD),
    ("sg", "soonest one can", FIRST),
    ("ms", "yang paling awal", FIRST), ("ms", "yg paling lewat", THIRD),
    ("zh", "最早的", FIRST), ("zh", "最晚的那个", THIRD),
]
BY_TIME = [
    ("en", "the 2pm one", SECOND), ("en", "11am", THIRD), ("en", "2.00 pls", SECOND),
    ("ms", "pukul 2 petang", SECOND), ("zh", "下午两点那个", SECOND), ("ta", "மதியம் 2 மணி", SECOND),
    ("en", "the 9 o'clock one", FIRST), ("zh", "9点的那个", FIRST), ("zh", "上午九点的那个吧", FIRST),  # never a name
    ("ms", "yang pukul 9", FIRST), ("ta", "காலை 9 மணி", FIRST),
]
# any of them will do: the soonest of those listed
BY_ANY = [
    ("en", "any of them is fine", FIRST), ("en", "whichever", FIRST), ("sg", "any one also can", FIRST),
    ("ms", "mana2 pun boleh", FIRST), ("ms", "bila-bila masa pun boleh", FIRST), ("zh", "哪个都可以", FIRST),
    ("ta", "எதுவானாலும் சரி", FIRST),
]


@pytest.mark.parametrize(("text", "choice"), [("no 3", 2), ("no. 3 pls", 2), ("no 3pm", None), ("number 2.30", None)])
def test_a_number_after_no_is_a_position_unless_it_is_a_time(text, choice):
    hints = Hints(today=MONDAY, now=dt.time(9), options=3)
    assert read_message(text, hints).choice == choice


BY_PART_OF_DAY = [
    ("en", "the afternoon one", SECOND), ("sg", "afternoon one can", SECOND),
    ("ms", "yang petang", SECOND), ("zh", "下午那个", SECOND), ("ta", "மதியம்", SECOND),
]
BY_WEEKDAY = [
    ("en", "the tuesday one", THIRD), ("ms", "hari selasa", THIRD), ("zh", "星期二那个", THIRD),
    ("ta", "செவ்வாய்", THIRD), ("mixed", "selasa one ok", THIRD),
]


@pytest.mark.parametrize(("language", "answer", "slot_"), BY_POSITION + BY_SUPERLATIVE + BY_TIME + BY_PART_OF_DAY
                         + BY_WEEKDAY + BY_ANY)
async def test_a_pick_books_the_option_it_names(language, answer, slot_):
    _, reply = await _pick(answer)
    assert _booked(reply) == slot_, (language, reply.text)


@pytest.mark.parametrize(("language", "answer"), [
    ("en", "the morning one"), ("ms", "yang pagi"), ("zh", "上午那个"), ("ta", "காலை"),
])
async def test_two_matches_are_asked_about_with_only_those_options(language, answer):
    school, reply = await _pick(answer)
    assert not reply.called("book_tour") and "more than one" in reply.text, (language, reply.text)
    assert [(o.date, o.time) for o in school.dialogue.options] == [FIRST, THIRD]
    assert "choice" in school.dialogue.asked
    assert len(blocks_for([], school.dialogue.options)[-1]["options"]) == 2  # a button for each


@pytest.mark.parametrize(("language", "answer"), [
    ("en", "either is fine honestly"), ("en", "both work for me"), ("zh", "两个都行"), ("ms", "kedua-dua ok"),
])
async def test_either_of_two_takes_the_sooner_and_of_three_asks_which(language, answer):
    school = FakeSchool()
    school.collected = dict(DETAILS)
    concierge = Concierge(school)
    await concierge.say("what do you have next week?")
    offered(school, LISTED[1:])
    assert _booked(await concierge.say(answer)) == SECOND, language
    _, reply = await _pick(answer)  # three listed: "either" says which two no more than "both" does
    assert not reply.called("book_tour"), (language, reply.text)


async def test_the_2nd_is_the_day_when_a_listed_slot_falls_on_it_else_the_position():
    school = FakeSchool()
    school.collected = dict(DETAILS)
    concierge = Concierge(school)
    await concierge.say("what do you have next week?")
    offered(school, [slot(dt.date(2026, 12, 2), "09:00"), slot(dt.date(2026, 12, 3), "09:00"),
                     slot(dt.date(2026, 12, 4), "09:00")])
    assert _booked(await concierge.say("the 2nd")) == ("2026-12-02", "09:00")
    _, reply = await _pick("the 3rd")  # no listed slot on the 3rd: the third listed
    assert _booked(reply) == THIRD


# --- a time said as people say it, against the slots on offer ----------------------------------------------------


async def _after_offer(answer: str):
    school = FakeSchool()
    school.collected = {**DETAILS, "preferred_date": MONDAY.isoformat(), "part_of_day": "morning"}  # as the tool keeps
    concierge = Concierge(school)
    await concierge.say("what do you have on Monday morning?")
    offered(school, [slot(MONDAY, "09:00"), slot(MONDAY, "11:00")])
    return school, await concierge.say(answer)


@pytest.mark.parametrize(("language", "answer"), [
    ("sg", "9 is tough with drop off. after lunch same day?"),
    ("en", "mornings are hard for us, the afternoon that day?"),
    ("ms", "petang lagi bagus sbb pagi i kerja"),
    ("zh", "上午不行，下午可以吗？"),
])
async def test_the_part_of_day_preferred_is_searched_not_the_one_turned_down(language, answer):
    _, reply = await _after_offer(answer)
    searched = reply.called("check_availability")
    # "after lunch" is searched as the window it is (13:00 on), the others as the afternoon: the same tours
    assert searched and searched[-1].get("preferred_times") in (["afternoon"], ["after 13:00"]), (language, reply.calls)
    assert searched[-1].get("date_range_start") == MONDAY.isoformat()  # the same day
    assert not reply.called("get_faq_answer"), (language, reply.calls)


@pytest.mark.parametrize(("language", "answer"), [
    ("en", "can do after 3 same day?"), ("ms", "lepas pukul 3 boleh?"), ("zh", "3点以后可以吗"),
    ("ta", "3 மணிக்கு பிறகு"),
])
async def test_a_window_lists_only_the_slots_inside_it_with_buttons_for_them(language, answer):
    school, reply = await _after_offer(answer)
    assert "16:00" in reply.text and "14:00" not in reply.text, (language, reply.text)
    assert [(o.date, o.time) for o in school.dialogue.options] == [("2026-11-23", "16:00")]  # the buttons' options
    assert blocks_for([], school.dialogue.options)[-1]["options"][0]["value"] == school.dialogue.options[0].label


# --- a call back at a time said as people say it -----------------------------------------------------------------


@pytest.mark.parametrize(("language", "text", "start", "day"), [
    ("sg", "call me tmrw after 5 pls, Jon Tan 91234567", "17:00", "2026-11-23"),
    ("ms", "telefon saya esok lepas pukul 5, Jon Tan 91234567", "17:00", "2026-11-23"),
    ("zh", "明天下午5点以后打电话给我，Jon Tan 91234567", "17:00", "2026-11-23"),
    ("ta", "நாளை மாலை 5 மணிக்கு பிறகு அழைக்கவும், Jon Tan 91234567", "17:00", "2026-11-23"),
])
async def test_a_call_back_after_5_is_asked_for_as_a_window(language, text, start, day):
    reply = await Concierge().say(text)
    asked = reply.called("request_callback")
    assert asked and asked[0]["parent_name"] == "Jon Tan", (language, reply.calls)
    wish = read_call_time(asked[0]["best_time_to_call"], dt.date(2026, 11, 22))
    assert wish.best_time == CallbackRequest.BestTime.WINDOW and wish.start == dt.time.fromisoformat(start), language
    assert wish.day == dt.date.fromisoformat(day), (language, asked[0]["best_time_to_call"])
