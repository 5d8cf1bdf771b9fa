"""The flow of a booking or call-back conversation (lane w28e): details given with the time choice, "tmr can?",
a remark about the reply language, "not too early", goodbyes, call-back windows and moves of a booked tour."""

import datetime as dt

import pytest

from tests.chatbot.test_offline_policy import Concierge, FakeSchool, offered, slot

MONDAY = dt.date(2026, 11, 23)
LISTED = [slot(MONDAY, "09:00"), slot(MONDAY, "11:00"), slot(MONDAY, "14:00")]


@pytest.mark.parametrize(("language", "answer", "name"), [
    ("en", "11 works. I'm Jon Tan, mobile 91234567", "Jon Tan"),
    ("sg", "ok 11 lor. name Jon Tan, hp 9123 4567", "Jon Tan"),
    ("ms", "yang 11 la, nama saya Siti Aminah, 91234567", "Siti Aminah"),
    ("ta_latn", "11 mani, en peyar Priya Kumar, number 91234567", "Priya Kumar"),
    ("ta", "11 மணி, என் பெயர் Priya Kumar, 91234567", "Priya Kumar"),
    ("zh", "11点可以，我叫陈美玲，电话91234567", "陈美玲"),
])
async def test_a_choice_with_the_details_takes_both(language, answer, name):
    school = FakeSchool()
    school.collected = {"child_name": "Leo", "child_age": 4}
    concierge = Concierge(school)
    await concierge.say("what do you have on monday?")
    offered(school, LISTED)
    reply = await concierge.say(answer)
    booked = reply.called("book_tour")
    assert booked and booked[-1].get("preferred_date") == "2026-11-23", (language, reply.calls)
    assert booked[-1].get("preferred_time") == "11:00", (language, reply.calls)
    assert booked[-1].get("parent_name") == name and booked[-1].get("parent_phone") == "+6591234567", language
    assert "check_availability" not in reply.names, language
