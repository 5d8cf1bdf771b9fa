"""The parent's language: recognised per message, stored on it and on the contact, answered in.

The phrases are my own, written as Singapore parents write: whole sentences in one
language, English with a Malay or Chinese word in it, and the short answers
("ok", "Leo, 5", a phone number) that say nothing about the language.
"""

import re

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings
from django.urls import reverse
from django.utils import translation

from chatbot.agent.blocks import blocks_for
from chatbot.calendar import calendar_file
from chatbot.language import detect, reply_language
from chatbot.models import Message
from chatbot.services import receive
from crm.models import Contact
from tests.chatbot.test_calendar import event_of
from tests.factories import ContactFactory, SchoolFactory, TourBookingFactory


@pytest.mark.parametrize("text", [
    "我想带孩子来参观学校",
    "请问星期五上午有位吗？",
    "Hi, can I book a tour 星期四 afternoon?",  # mixed: the Chinese counts
    "好的 thanks",
])
def test_han_script_is_chinese(text):
    assert detect(text, "en") == "zh-hans"


@pytest.mark.parametrize("text", [
    "எனக்கு ஒரு பள்ளி சுற்றுப்பார்வை வேண்டும்",
    "tour book பண்ணலாமா?",  # mixed
    "நன்றி",
])
def test_tamil_script_is_tamil(text):
    assert detect(text, "en") == "ta"


@pytest.mark.parametrize("text", [
    "Saya nak tempah lawatan untuk anak saya",
    "Berapa yuran bulanan sekolah ini?",
    "can book tour hari Khamis?",  # English with a Malay day: Malay
    "Thursday pagi ok?",
    "esok boleh tak",
    "Boleh",
])
def test_malay_whole_or_mixed(text):
    assert detect(text, "en") == "ms"


@pytest.mark.parametrize("text", [
    "Hello, I would like to visit the school next week",
    "What time does the school day end?",
    "can I change my tour to Friday instead",
    "no thanks, that's all",
])
def test_english_sentences(text):
    assert detect(text, "ms") == "en"


@pytest.mark.parametrize("text", ["earliest one pls", "my number is 9123 4567", "the afternoon one", "ok can"])
@pytest.mark.parametrize("language", ["zh-hans", "ms", "ta"])
def test_a_few_english_words_mixed_in_keep_the_language_the_parent_writes(text, language):
    assert detect(text, language) == language
    assert detect(text, "en") == "en"


@pytest.mark.parametrize("text", ["ok", "Leo, 5", "91234567", "Siti Aminah", "Muhammad bin Abdullah 98765432",
                                  "Hari Krishnan", "👍"])
def test_a_message_that_does_not_tell_keeps_the_language_in_use(text):
    assert detect(text, "zh-hans") == "zh-hans"
    assert detect(text, "ms") == "ms"


@pytest.mark.parametrize("text", [
    "naalaikku tour irukka?",  # Tamil in Latin letters ("Tanglish"): not Malay, not English
    "enakku oru tour vendum",
    "eppo free ah?",
    "ungal school fees evvalavu?",
    "naan Kavin amma, tour book pannanum",
    "romba nandri",
])
@pytest.mark.parametrize("previous", ["", "en", "ms"])
def test_tanglish_is_tamil(text, previous):
    assert detect(text, previous) == "ta"


@pytest.mark.parametrize("text", ["ok can lah", "can ah", "got or not", "sure lah, friday ok", "ok lor see you"])
@pytest.mark.parametrize("language", ["en", "zh-hans", "ta"])
def test_a_singlish_particle_never_makes_it_malay(text, language):
    assert detect(text, language) == language


def test_the_reply_language_is_one_the_school_offers(db):
    school = SchoolFactory(languages=["en", "zh-hans"])
    assert reply_language(school, ContactFactory(school=school, language="zh-hans")) == "zh-hans"
    assert reply_language(school, ContactFactory(school=school, language="ta")) == "en"  # not offered
    assert reply_language(school, ContactFactory(school=school, language="")) == "en"


@pytest.fixture
def offline():
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0):
        yield


def _say(school, contact, text: str) -> Message:
    async_to_sync(receive)(school=school, contact=contact, channel="web", text=text)
    return Message.objects.filter(conversation__contact=contact, role="assistant").latest("id")


@pytest.mark.django_db(transaction=True)
def test_each_message_and_the_contact_remember_the_language(school, offline):
    contact = ContactFactory(school=school, phone="", email="", name="")
    _say(school, contact, "你好")
    _say(school, contact, "ok")
    _say(school, contact, "Selamat pagi, saya nak tanya sesuatu")
    languages = list(Message.objects.filter(conversation__contact=contact, role="user")
                     .order_by("id").values_list("language", flat=True))
    assert languages == ["zh-hans", "zh-hans", "ms"]
    assert Contact.objects.get(pk=contact.pk).language == "ms"


@pytest.mark.django_db(transaction=True)
def test_the_reply_is_written_in_the_parents_language(school, offline):
    contact = ContactFactory(school=school, phone="", email="", name="")
    reply = _say(school, contact, "Hi 你好")  # understood from its English, answered in Chinese
    assert reply.language == "zh-hans"
    assert "您好" in reply.text and "I can book" not in reply.text, reply.text


@pytest.mark.django_db(transaction=True)
def test_a_language_the_school_does_not_offer_is_answered_in_english(offline):
    school = SchoolFactory(languages=["en", "ms"])
    contact = ContactFactory(school=school, phone="", email="", name="")
    reply = _say(school, contact, "Hi 你好")
    assert Message.objects.filter(conversation__contact=contact, role="user").get().language == "zh-hans"
    assert reply.language == "en" and reply.text.startswith("Hello"), reply.text


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("text", "said", "english"), [
    ("我想星期天带孩子来参观学校", "星期日不安排校园导览", "We don't run tours"),
    ("Boleh saya tempah lawatan hari Ahad?", "pelawat pada hari Ahad", "We don't run tours"),
    ("ஞாயிற்றுக்கிழமை பள்ளியைச் சுற்றிப் பார்க்க முன்பதிவு செய்யலாமா?", "பார்வையிட ஏற்பாடு இல்லை", "We don't run tours"),
])
def test_a_booking_rule_is_said_in_the_parents_language(school, offline, text, said, english):
    """The school's rules (here: no tours on Sundays) reach the parent in their language, not the tools'."""
    school.closed_weekdays = [6]
    school.save()
    reply = _say(school, ContactFactory(school=school, phone="", email="", name=""), text)
    assert said in reply.text and english not in reply.text, reply.text


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("text", ["你好，我想下个星期带孩子来参观", "Saya nak bawa anak melawat sekolah minggu depan",
                                  "அடுத்த வாரம் பள்ளியைப் பார்வையிட வர விரும்புகிறோம்"])
def test_slot_buttons_read_as_the_replys_list_and_a_press_picks_that_slot(school, offline, text):
    contact = ContactFactory(school=school, phone="", email="", name="")
    reply = _say(school, contact, text)
    [buttons] = [b for b in reply.payload["blocks"] if b["type"] == "buttons"]
    labels = [o["label"] for o in buttons["options"]]
    assert labels and all(label in reply.text for label in labels), (labels, reply.text)
    picked = _say(school, contact, buttons["options"][1]["value"])
    assert labels[1] in picked.text and not picked.payload["blocks"], picked.text


@pytest.mark.django_db(transaction=True)
def test_a_chinese_booking_is_read_back_and_booked_in_chinese(school, next_weekday, offline):
    """English booking words with Chinese in them: the whole exchange is in Chinese, and the policy still
    reads its own Chinese read-back, so the parent's yes books the tour."""
    day = next_weekday(school, 2)
    contact = ContactFactory(school=school, phone="", email="", name="")
    reply = _say(school, contact, f"Hi 你好, I'm Jon Tan +65 9123 4567, tour for my son Leo, 6, on "
                                  f"{day:%A} {day.day} {day:%B} at 9am 谢谢")
    assert "确认一下" in reply.text and f"{day.month}月{day.day}日" in reply.text and "09:00" in reply.text, reply.text
    assert not contact.tour_bookings.exists()
    reply = _say(school, contact, "yes")
    booking = contact.tour_bookings.get()
    assert booking.child_name == "Leo" and booking.reference in reply.text
    assert "预约编号是" in reply.text, reply.text


def test_the_chat_page_speaks_the_browsers_language_when_the_school_offers_it(client, db):
    school = SchoolFactory(languages=["en", "zh-hans"])
    url = reverse("chatbot:chat", kwargs={"school_slug": school.slug})
    page = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    assert '<html lang="zh-hans">' in page and f"<title>与{school.name}对话</title>" in page
    page = client.get(url, HTTP_ACCEPT_LANGUAGE="ta-IN,ta").content.decode()
    assert '<html lang="en">' in page and f"<title>Chat with {school.name}</title>" in page  # not offered


def test_the_calendar_file_is_in_the_parents_language(db):
    booking = TourBookingFactory(contact=ContactFactory(language="zh-hans"), child_name="Aisyah")
    event = event_of(calendar_file(booking))
    assert str(event["summary"]) == f"{booking.school.name}校园参观（Aisyah）"
    assert str(event["description"]).startswith(f"预约编号 {booking.reference}。")


@pytest.mark.parametrize(("language", "joined"), [
    ("zh-hans", "Ali和Abu"), ("ms", "Ali dan Abu"), ("ta", "Ali மற்றும் Abu"), ("en", "Ali and Abu")])
def test_two_childrens_names_are_joined_in_the_parents_language(db, language, joined):
    booking = TourBookingFactory(contact=ContactFactory(language=language), child_name="Ali and Abu")
    booking.school.languages = ["en", "zh-hans", "ms", "ta"]
    booking.school.save()
    assert joined in str(event_of(calendar_file(booking))["summary"])
    result = {"booking_id": booking.reference, "confirmation_details": {
        "date": "2026-12-03", "weekday": "Thursday", "time": "09:00", "label": "Thu 3 Dec, 9:00am",
        "child_name": "Ali and Abu", "school": "S", "address": "A"}}
    with translation.override(language):
        assert blocks_for([("book_tour", {**result, "status": "success"})], [])[0]["child_name"] == joined


@pytest.mark.parametrize("reference", ["T-LXGKBD", "T-4AJXRJ", "T-WWGJBK", "T-EAUPJK", "T-JTKPMU", "W-MCUBNJ"])
def test_a_quoted_reference_does_not_change_the_language(reference):
    """Random letters of a reference once read as Malay (lingua): references are left out of detection."""
    assert detect(f"I want to cancel {reference}", "en") == "en"
    assert detect(f"Saya nak batalkan {reference}", "en") == "ms"


@pytest.mark.django_db(transaction=True)
def test_a_tanglish_message_is_answered_in_tamil(offline):
    school = SchoolFactory(languages=["en", "ms", "ta"])
    contact = ContactFactory(school=school, phone="", email="", name="")
    reply = _say(school, contact, "vanakkam, naalaikku school tour irukka?")
    assert Message.objects.filter(conversation__contact=contact, role="user").get().language == "ta"
    assert reply.language == "ta" and re.search("[\u0b80-\u0bff]", reply.text), reply.text


@pytest.mark.parametrize(("text", "language"), [
    ("school bus to sengkang?", "en"), ("any bus from bukit panjang", "en"), ("we live in pasir ris, far?", "en"),
    ("bas ke sengkang ada tak?", "ms"), ("assalamualaikum", "ms"),
])
def test_singapore_place_names_say_nothing_of_the_language(text, language):
    assert detect(text, "en") == language


@pytest.mark.parametrize(("text", "previous"), [("tan mei hua 9876 5432", "en"), ("wah ok tks", "en"),
                                                ("ok the later one", "ms")])
def test_a_few_words_the_statistics_call_another_language_keep_the_language_in_use(text, previous):
    assert detect(text, previous) == previous


def test_a_malay_sentence_still_switches_from_english():
    assert detect("saya mahu melawat sekolah esok", "en") == "ms"
