"""The offline reader in Malay, Chinese and Tamil, and in messages that mix them with English.

Every phrase here was written for these tests (none is a scenario's or a word list's own example), in the
ways parents in Singapore write: names, children and ages, days and times, the four requests and FAQ
questions, a yes to a read-back.
"""

import datetime as dt
from dataclasses import replace

import dateparser
import pytest

from chatbot.agent.datetimes import parse_date, parse_time
from chatbot.agent.offline import gloss as gloss_module
from chatbot.agent.offline.gloss import gloss
from chatbot.agent.offline.understanding import Hints, read_message, says_yes, understand

TODAY = dt.date(2026, 11, 25)  # a Wednesday
HINTS = Hints(today=TODAY, now=dt.time(9), tour_times=("09:00", "11:00", "14:00", "16:00"))
THU, FRI, MON = dt.date(2026, 11, 26), dt.date(2026, 11, 27), dt.date(2026, 11, 30)


def read(text: str):
    return read_message(text, HINTS)


# --- names, phones, children and ages --------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "name"), [
    ("Nama saya Farah binti Ahmad", "Farah binti Ahmad"),
    ("Assalamualaikum, saya Kamal. Nak tanya sikit", "Kamal"),
    ("我叫林晓燕", "林晓燕"),
    ("您好，我是张伟", "张伟"),
    ("வணக்கம், என் பெயர் லக்ஷ்மி", "லக்ஷ்மி"),
    ("நான் செல்வம்", "செல்வம்"),
    ("hi, my name Ravi Kumar, saya nak tanya", "Ravi Kumar"),
])
def test_the_parents_name(text, name):
    assert read(text).facts.get("parent_name") == name


@pytest.mark.parametrize("text", ["Nombor telefon saya 9123 4567", "no hp saya 9123 4567", "手机号码 9123 4567",
                                  "என் கைபேசி எண் 9123 4567"])
def test_the_words_for_phone_number_are_no_name(text):
    facts = read(text).facts
    assert facts.get("parent_phone") == "+6591234567"
    assert "parent_name" not in facts


@pytest.mark.parametrize(("text", "child", "age"), [
    ("anak saya Hakim berumur tiga tahun", "Hakim", 3),
    ("nama anak saya Sofea, 4 tahun", "Sofea", 4),
    ("anak perempuan saya 6 tahun", None, 6),
    ("我女儿叫欣怡，五岁", "欣怡", 5),
    ("我儿子今年三岁", None, 3),
    ("孩子两岁半", None, 2),
    ("என் மகன் பெயர் கார்த்திக், அவனுக்கு மூன்று வயது", "கார்த்திக்", 3),
    ("மகள் 4 வயது", None, 4),
    ("my girl Meena 6 tahun", "Meena", 6),
    ("saya ibu kepada Hana, 4 tahun", "Hana", 4),
    ("他叫子轩，六岁", "子轩", 6),
])
def test_a_child_and_age(text, child, age):
    facts = read(text).facts
    assert facts.get("child_age") == age
    assert facts.get("child_name") == child


# --- days and times --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "day", "time"), [
    ("hari Jumaat pukul 3 petang", FRI, "15:00"),
    ("esok pukul 9 pagi", THU, "09:00"),
    ("lusa", FRI, None),
    ("Isnin minggu depan", MON, None),
    ("10 Disember, pukul 11 pagi", dt.date(2026, 12, 10), "11:00"),
    ("明天下午三点", THU, "15:00"),
    ("下星期一上午十点半", MON, "10:30"),
    ("星期五早上九点", FRI, "09:00"),
    ("12月10日下午四点", dt.date(2026, 12, 10), "16:00"),
    ("后天中午十二点", FRI, "12:00"),
    ("நாளை காலை 9 மணிக்கு", THU, "09:00"),
    ("வெள்ளிக்கிழமை மதியம் 2 மணிக்கு", FRI, "14:00"),
    ("அடுத்த வாரம் திங்கட்கிழமை", MON, None),
    ("வியாழக்கிழமை", THU, None),
    ("can book tour hari Khamis?", THU, None),
    ("明天 11am can?", THU, "11:00"),
    ("Monday காலை 9 மணிக்கு ok?", MON, "09:00"),
    ("3/12 (Thursday) at 2pm", dt.date(2026, 12, 3), "14:00"),  # the weekday only agrees with the date
    ("vyazhan kizhamai 4 mani irukka?", THU, "16:00"),  # Tanglish weekdays
    ("velli kizhamai kaalai 9 mani", FRI, "09:00"),
])
def test_a_day_and_time(text, day, time):
    when = read(text).when
    assert (when.date or when.start) == day
    assert when.time == time


# --- what the parent asks for ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "intent"), [
    ("Saya nak buat tempahan untuk lawatan sekolah", "book"),
    ("tolong batalkan tempahan saya", "cancel"),
    ("boleh anjakkan lawatan saya ke minggu depan?", "reschedule"),
    ("minta pihak sekolah hubungi saya semula", "callback"),
    ("我想带孩子来参观学校", "book"),
    ("帮我取消这个预约", "cancel"),
    ("能不能改个时间？", "reschedule"),
    ("请找人打电话给我", "callback"),
    ("பள்ளியை பார்வையிட விரும்புகிறேன்", "book"),
    ("என் முன்பதிவை ரத்து செய்ய வேண்டும்", "cancel"),
    ("என் சுற்றுலா நேரத்தை மாற்ற வேண்டும்", "reschedule"),
    ("தயவு செய்து என்னை அழைக்கவும்", "callback"),
    ("can book tour hari Khamis?", "book"),
    ("pls cancel my tour, tak dapat datang", "cancel"),
    ("can visit sekolah on Friday morning?", "book"),
    ("Boleh datang tengok sekolah hari Isnin?", "book"),
    ("周三下午打给我好吗", "callback"),
    ("பிறகு யாராவது call பண்ண முடியுமா", "callback"),
    ("我想请招生老师给我回个电话", "callback"),  # a measure word inside the verb: 回(个)电话
    ("可以回一个电话给我吗", "callback"),
])
def test_the_request(text, intent):
    assert intent in read(text).intents


@pytest.mark.parametrize(("text", "topic"), [
    ("请给我回个电话，问一下转学的事情", "转学的事情"),
    ("pls call me back about the waiting list", "waiting list"),
])
def test_what_a_call_back_is_about(text, topic):
    assert read(text).topic == topic


@pytest.mark.parametrize("text", ["校车，有到榜鹅吗", "关于校车，有到榜鹅吗", "the bus, is there one to punggol?"])
def test_a_topic_said_first_stays_with_its_question(text):
    """Chinese puts the topic first ("the bus, does one go to Punggol?"): the question keeps it."""
    assert read(text).questions == [gloss(text).text]


@pytest.mark.parametrize("text", ["Berapa yuran untuk tadika?", "学校有校服吗？", "சீருடை எங்கே வாங்குவது?"])
def test_a_question_goes_to_the_faq_in_the_parents_own_words(text):
    reading = read(text)
    assert reading.questions
    assert [reading.said[q] for q in reading.questions] == [text]


@pytest.mark.parametrize("text", [
    "午餐在哪里吃",  # no question mark: the question word is inside the sentence
    "一个班大概有多少个学生",
    "sekolah ada bas yang mana satu lalu rumah sy",
    "உங்க school ல bus வசதி இருக்கா",  # a Tamil verb asking by its ending
    "wat time the sch bus come",
    "一个班多少个学生",  # a question word that a phrase of the word list takes in ("一个班多少": class size)
    "几岁可以入学",
    "mesti pakai uniform ke",  # Malay asks by its last word
    "tadika ada bas ke",
    "wah ok. got instalment or must pay one shot",  # Singapore English asks by "got ... or ..."
    "canteen got halal food anot",  # "anot": or not
])
def test_a_question_without_a_question_mark_still_goes_to_the_faq(text):
    assert read(text).questions


@pytest.mark.parametrize("text", ["我想看看学校", "sy nak lawat sekolah", "பள்ளியைப் பார்க்க வேண்டும்", "没什么问题了",
                                  "sy nak pergi ke sekolah"])
def test_a_wish_without_a_question_word_is_no_faq_question(text):
    assert not read(text).questions


@pytest.mark.parametrize("text", ["ya betul", "boleh", "ok boleh, teruskan", "好的", "没问题", "对", "சரி", "ஆமாம்",
                                  "can"])
def test_a_yes_to_a_read_back(text):
    assert says_yes(text)
    assert "yes" in read(text).intents


@pytest.mark.parametrize("text", ["tak nak", "不要", "இல்லை", "ya, tapi hari Jumaat", "好的，不过改成下午三点"])
def test_no_or_a_change_is_no_yes(text):
    assert not says_yes(text)


# --- the word lists' mechanics ---------------------------------------------------------------------------------------

def test_chinese_numerals_before_a_counter_become_digits():
    assert gloss("十二点").text == "12:00"
    assert gloss("二十号").text == "the 20th"
    assert "3:30" in gloss("三点半").text


def test_a_chinese_weekday_number_is_not_a_count():
    assert gloss("星期三").text == "wednesday"
    assert gloss("下星期三").text == "next week wednesday"


def test_a_tamil_word_is_read_with_its_case_ending():
    assert gloss("நாளைக்கு").text == "tomorrow"
    assert gloss("வியாழனன்று").text == "thursday"


def test_a_name_that_is_also_a_malay_word_stays_a_name():
    assert gloss("my daughter Ada is 5").text == "my daughter Ada is 5"
    assert gloss("ada bas sekolah?").text.startswith("is there")


def test_english_is_left_as_written():
    text = "Hi, could we visit on Thursday at 2pm? Mia is 4, I'm Jon 91234567"
    glossed = gloss(text)
    assert glossed.text == text
    assert not glossed.languages


def test_the_original_words_of_a_glossed_part():
    glossed = gloss("学费多少？")
    assert glossed.text == "fees how much?"
    assert glossed.original("fees how much?") == "学费多少？"


def test_a_word_list_may_not_repeat_a_meaning():
    with pytest.raises(ValueError, match="repeats"):
        gloss_module._unique_keys([("tomorrow", ["esok"]), ("tomorrow", ["besok"])])


@pytest.mark.parametrize(("language", "word", "english"), [
    ("ms", "Khamis", "thursday"), ("ms", "Jumaat", "friday"), ("ms", "esok", "tomorrow"),
    ("zh", "星期四", "thursday"), ("zh", "明天", "tomorrow"), ("zh", "后天", "day after tomorrow"),
    ("ta", "வெள்ளி", "friday"), ("ta", "நாளை", "tomorrow"),
])
def test_the_word_lists_agree_with_dateparser(language, word, english):
    """Where dateparser knows a language's date word, it reads it as the same day as the word list's English."""
    base = {"RELATIVE_BASE": dt.datetime(2026, 11, 25, 9), "PREFER_DATES_FROM": "future"}
    theirs = dateparser.parse(word, languages=[language], settings=base)
    ours = dateparser.parse(gloss(word).text, languages=["en"], settings=base)
    assert theirs is not None and ours is not None
    assert theirs.date() == ours.date()


@pytest.mark.parametrize(("text", "day"), [("esok", THU), ("下星期一", MON), ("வெள்ளிக்கிழமை", FRI)])
def test_a_tool_reads_a_date_in_another_language(text, day):
    assert parse_date(text, TODAY) == day


@pytest.mark.parametrize(("text", "time"), [("pukul 3 petang", dt.time(15)), ("十点半", dt.time(10, 30)),
                                            ("காலை 9 மணி", dt.time(9))])
def test_a_tool_reads_a_time_in_another_language(text, time):
    assert parse_time(text) == time


# --- how parents really type it: abbreviations, fillers, twins, "the second one" -------------------------------------

@pytest.mark.parametrize(("text", "ages"), [
    ("twins, Hana n Harith, 4 thn", {"Hana": 4, "Harith": 4}),
    ("anak kembar sy Irfan dan Iman, 7 tahun", {"Irfan": 7, "Iman": 7}),
    ("my twins Zac n Zoe, 3", {"Zac": 3, "Zoe": 3}),
])
def test_twins_share_the_one_age_given(text, ages):
    children = read_message(text, replace(HINTS, asked=frozenset({"child_name", "child_age"}))).children
    assert {c["name"]: c.get("age") for c in children} == ages


@pytest.mark.parametrize(("text", "choice"), [("yang kedua", 1), ("yg pertama je", 0), ("ok yang ketiga", 2)])
def test_a_malay_ordinal_picks_from_the_list(text, choice):
    assert read_message(text, replace(HINTS, options=4)).choice == choice


@pytest.mark.parametrize("text", ["eh tak jadi, jumaat la petang", "aiyo no, friday afternoon better",
                                  "alamak, tak jadi. isnin pagi", "nvm make it monday morning",
                                  "never mind, friday afternoon then"])
def test_a_change_of_mind_after_a_filler_is_a_correction_and_the_filler_no_name(text):
    reading = read_message(text, replace(HINTS, asked=frozenset({"parent_name", "child_name"})))
    assert reading.correcting and reading.when.date in (FRI, MON)
    assert not {"parent_name", "child_name"} & set(reading.facts)


def test_texting_abbreviations_keep_the_message_malay():
    from chatbot.language import detect

    assert detect("twins, Hana n Harith, 4 thn", "ms") == "ms"
    assert detect("yg kedua", "ms") == "ms"


@pytest.mark.parametrize(("text", "ages"), [
    ("两个孩子，哥哥叫Ethan 7岁，妹妹Chloe 4岁", {"Ethan": 7, "Chloe": 4}),
    ("双胞胎，Noah和Nora，6岁", {"Noah": 6, "Nora": 6}),
])
def test_chinese_siblings_and_twins(text, ages):
    children = read_message(text, replace(HINTS, asked=frozenset({"child_name", "child_age"}))).children
    assert {c["name"]: c.get("age") for c in children} == ages


@pytest.mark.parametrize(("text", "choice"), [("第一个", 0), ("第二个吧", 1), ("最后一个", -1)])
def test_a_chinese_ordinal_picks_from_the_list(text, choice):
    assert read_message(text, replace(HINTS, options=4)).choice == choice  # -1: the last one listed


def test_never_mind_in_chinese_is_a_change_of_mind_and_no_name():
    reading = read_message("算了，改周三下午吧", replace(HINTS, asked=frozenset({"parent_name", "child_name"})))
    assert reading.correcting and reading.when.date == dt.date(2026, 12, 2) and reading.when.part_of_day == "afternoon"
    assert not {"parent_name", "child_name"} & set(reading.facts)


@pytest.mark.parametrize(("text", "choice"), [("இரண்டாவது", 1), ("முதலாவது வேண்டும்", 0), ("மூணாவது", 2)])
def test_a_tamil_ordinal_picks_from_the_list(text, choice):
    assert read_message(text, replace(HINTS, options=4, asked=frozenset({"parent_name"}))).choice == choice


@pytest.mark.parametrize("text", ["வணக்கம், என் மகனை பள்ளியைப் பார்க்க கூட்டி வரலாமா?", "நாங்கள் பார்வையிட வரலாமா?"])
def test_may_we_come_to_see_the_school_in_tamil_is_a_booking(text):
    assert "book" in read_message(text, HINTS).intents


@pytest.mark.parametrize(("text", "name"), [
    ("陈太太，电话 9123 4567", "陈太太"),
    ("Jon Tan, phone 9123 4567", "Jon Tan"),
    ("Mei Ling Ong, 8123 4567", "Mei Ling Ong"),
    ("Siti Nur Aisyah hp 9876 5432", "Siti Nur Aisyah"),
    ("Priya, hp 9123 4567", "Priya"),
    ("Nurul Huda, no tel 9876 5432", "Nurul Huda"),
    ("ராதா, போன் 9123 4567", "ராதா"),
])
def test_a_name_then_a_labelled_number(text, name):
    facts = read_message(text, replace(HINTS, asked=frozenset({"parent_name", "parent_phone"}))).facts
    assert (facts.get("parent_name"), facts.get("parent_phone")) == (name, "+65" + text[-9:].replace(" ", ""))


@pytest.mark.parametrize(("text", "choice"), [("2nd one", 1), ("3rd one pls", 2)])
def test_a_numbered_pick_asked_with_a_name_is_no_name(text, choice):
    reading = read_message(text, replace(HINTS, options=4, asked=frozenset({"parent_name", "parent_phone"})))
    assert reading.choice == choice and "parent_name" not in reading.facts


@pytest.mark.parametrize(("text", "phone"), [
    ("nombor telefon sy 017-882 4410", "+60178824410"),  # a Malaysian mobile at a Singapore school
    ("hp saya 6017 8824410", "+60178824410"),  # its country code without "+", not a long Singapore number
    ("我的电话是 +60 17-882 4410", "+60178824410"),
    ("என் நம்பர் 9876 5432", "+6598765432"),
])
def test_a_phone_number_of_the_region_or_a_neighbour_is_read_whole(text, phone):
    assert read(text).facts["parent_phone"] == phone


BOOKED = replace(HINTS, booked_children=("Nadia",))


@pytest.mark.parametrize("text", [
    "hi, we have a tour on friday for Nadia. can change or not?",
    "sy dah tempah lawatan hari jumaat. boleh ubah tak?",
    "我们约了星期五的参观，可以改一下吗",
    "வெள்ளிக்கிழமை tour இருக்கு, அதை மாத்த முடியுமா",
])
def test_a_parent_with_a_tour_who_asks_to_change_it_moves_it_and_books_nothing_new(text):
    intents = read_message(text, BOOKED).intents
    assert "reschedule" in intents
    assert "book" not in intents


def test_without_a_tour_a_bare_change_is_no_move():
    assert "reschedule" not in read_message("can change or not?", HINTS).intents


@pytest.mark.parametrize("text", ["no need to reschedule, just cancel", "tak payah tukar, batalkan je",
                                  "不用改期，取消吧"])
def test_a_move_turned_down_is_no_move(text):
    intents = read_message(text, BOOKED).intents
    assert "reschedule" not in intents
    assert "cancel" in intents


def test_a_tamil_day_of_the_month_is_a_date_not_a_yes():
    reading = read_message("இல்ல, 18ஆம் தேதி வரலாமா", HINTS)
    assert reading.when.date == dt.date(TODAY.year, TODAY.month, 18) or reading.when.date.day == 18
    assert "yes" not in reading.intents


@pytest.mark.parametrize("burst", [
    ["thursday the 3rd around 2", "sorry no, 11am works better"],
    ["khamis 3hb dalam pukul 2", "eh silap, pukul 11 pagi"],
    ["12月3号下午两点", "不对，改成上午11点"],
    ["டிசம்பர் 3ஆம் தேதி மதியம் 2 மணி", "இல்ல, காலை 11 மணி"],
])
def test_a_time_corrected_later_in_the_burst_keeps_the_day_said_before(burst):
    when = understand(burst, HINTS).when
    assert (when.date, when.time) == (dt.date(2026, 12, 3), "11:00")


@pytest.mark.parametrize("text", ["晚一点的那个吧", "早一点的那个", "晚一点可以吗"])
def test_a_bit_later_is_no_one_oclock(text):
    """"晚一点" is "a bit later": the 一 after a comparative is "a bit", not the hour one."""
    assert read(text).when.time is None
