"""The flow of a booking or call-back conversation (lane w28e): details given with the time choice, "tmr can?",
a remark about the reply language, "not too early", goodbyes, call-back windows and moves of a booked tour."""

import datetime as dt

import pytest
import time_machine
from django.test import override_settings

from chatbot.language import detect
from chatbot.language_request import asked_language
from crm.models import Contact
from tests.chatbot.test_callback_conversation import Parent, coming
from tests.chatbot.test_language import _say
from tests.chatbot.test_offline_policy import Concierge, FakeSchool, offered, slot
from tests.factories import ContactFactory

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


@pytest.fixture
def offline():
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0):
        yield


LANGUAGE_REQUESTS = [
    ("english pls", "zh-hans", "en"), ("can speak english?", "ms", "en"), ("reply in English instead", "ta", "en"),
    ("bahasa melayu boleh?", "en", "ms"), ("boleh cakap bahasa inggeris?", "ms", "en"), ("in malay pls", "en", "ms"),
    ("中文可以吗", "en", "zh-hans"), ("可以说中文吗", "en", "zh-hans"), ("请用英文", "zh-hans", "en"),
    ("தமிழில் பேசலாமா?", "en", "ta"), ("tamil la pesalama?", "en", "ta"),
]


@pytest.mark.parametrize(("text", "before", "asked"), LANGUAGE_REQUESTS)
def test_a_request_for_a_language_is_that_language(text, before, asked):
    assert detect(text, before) == asked


@pytest.mark.parametrize("text", ["do you teach english?", "有英文课吗", "is english the main language there?",
                                  "ada kelas bahasa melayu?"])
def test_a_question_about_a_language_is_no_request(text):
    assert asked_language(text) == ""


@pytest.mark.parametrize(("text", "_", "__"), LANGUAGE_REQUESTS)
async def test_a_request_for_a_language_repeats_the_question_asked_and_is_no_faq(text, _, __):
    school = FakeSchool()
    concierge = Concierge(school)
    await concierge.say("I want a tour for my son Leo")
    reply = await concierge.say(text)
    assert "get_faq_answer" not in reply.names, reply.calls
    assert "How old is Leo" in reply.text and "not sure" not in reply.text, reply.text


async def test_a_request_for_a_language_with_nothing_asked_says_what_the_concierge_does():
    reply = await Concierge().say("english pls")
    assert reply.calls == [] and "book a campus tour" in reply.text, reply.text


@pytest.mark.django_db(transaction=True)
def test_a_request_for_english_switches_the_reply_language(school, offline):
    contact = ContactFactory(school=school, phone="", email="", name="")
    first = _say(school, contact, "我想带儿子Leo来参观学校")
    assert first.language == "zh-hans"
    reply = _say(school, contact, "english pls")
    assert reply.language == "en" and "Leo" in reply.text and "old" in reply.text, reply.text
    assert Contact.objects.get(pk=contact.pk).language == "en"


@pytest.mark.parametrize(("language", "text"), [
    ("en", "monday, not too early"), ("sg", "monday can, not so early pls"), ("ms", "isnin, jangan terlalu awal"),
    ("zh", "星期一，不要太早"), ("ta", "திங்கள், ரொம்ப சீக்கிரம் வேண்டாம்"), ("ta_latn", "monday romba seekiram vendam"),
])
async def test_not_too_early_leaves_out_the_first_tours_of_the_day(language, text):
    school = FakeSchool()
    school.collected = {"child_name": "Leo", "child_age": 4}
    reply = await Concierge(school).say(text)
    asked = reply.called("check_availability")
    assert asked and asked[-1].get("date_range_start") == "2026-11-23", (language, reply.calls)
    assert "09:00" not in reply.text and "11:00" in reply.text, (language, reply.text)


async def test_not_too_early_said_after_the_slots_narrows_them():
    school = FakeSchool()
    school.collected = {"child_name": "Leo", "child_age": 4}
    concierge = Concierge(school)
    await concierge.say("what do you have on monday?")
    offered(school, LISTED)
    reply = await concierge.say("not so early pls")
    assert "09:00" not in reply.text and "11:00" in reply.text, reply.text


@pytest.mark.parametrize(("language", "goodbye"), [
    ("en", "ok thanks, bye"), ("sg", "ok can, will come back later"), ("en", "ok let me think about it first"),
    ("ms", "ok terima kasih, bye"), ("ms", "ok nanti saya fikir dulu"), ("zh", "好的谢谢，再见"),
    ("zh", "好的，我再考虑一下"), ("ta", "சரி நன்றி, bye"),
])
async def test_a_goodbye_gets_no_question_glued_on(language, goodbye):
    concierge = Concierge(FakeSchool())
    await concierge.say("I want a tour for my son Leo")
    reply = await concierge.say(goodbye)
    assert reply.calls == [] and "?" not in reply.text and "Goodbye" in reply.text, (language, reply.text)


async def test_just_browsing_is_answered_and_nothing_is_asked_after_it():
    concierge = Concierge(FakeSchool())
    await concierge.say("I want a tour")
    browsing = await concierge.say("just browsing for now")
    assert "name" not in browsing.text and "didn't quite catch" not in browsing.text, browsing.text
    fees = await concierge.say("ok what are the fees?")
    assert fees.called("get_faq_answer") and "name" not in fees.text, fees.text


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("text", "window"), [
    ("Can someone call me on {day} from half 2 onwards, til 4? I'm Ana Lim, 91234567", (14, 30, 16, 0)),
    ("pls call me {day} morning after 10. Ana Lim 91234567", (10, 0, 12, 0)),
    ("boleh call saya {day} pagi lepas 10? Saya Ana Lim, 91234567", (10, 0, 12, 0)),
    ("call me {day} afternoon after 3, Ana Lim 91234567", (15, 0, 18, 0)),
    ("call me {day} from 3 onwards, Ana Lim 91234567", (15, 0, 18, 0)),
])
def test_a_call_back_window_is_stored_and_read_back_as_said(school, offline, text, window):
    friday = coming(school, 4)
    monday = friday + dt.timedelta(days=3)
    with time_machine.travel(dt.datetime.combine(friday, dt.time(11), school.tz), tick=True):
        parent = Parent(school)
        reply = parent.say(text.format(day="Monday"))
    callback = parent.callbacks().get()
    start, end = dt.time(window[0], window[1]), dt.time(window[2], window[3])
    assert (callback.due_date, callback.window_start, callback.window_end) == (monday, start, end), reply
    assert f"{start:%H:%M}" in reply and f"{end:%H:%M}" in reply, reply


@pytest.mark.parametrize("text", ["can someone call me from half 2 onwards, til 4", "call me tmr 3 onwards pls"])
async def test_onwards_is_part_of_the_window_not_a_name(text):
    reply = await Concierge(FakeSchool()).say(text)
    named = [args.get("parent_name") for name, args in reply.calls if args.get("parent_name")]
    assert not named and "Onwards" not in reply.text, reply.calls


@pytest.mark.parametrize("text", ["seri, book pannunga. english la reply pannunga pls",
                                  "can reply in english? tamil ezhuthu padikka kastam"])
def test_a_sentence_of_its_own_may_ask_for_the_language(text):
    assert asked_language(text) == "en"
