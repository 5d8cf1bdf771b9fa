"""Issue 28 classes in Malay, Chinese, Tamil (script and romanised) and mixed messages, each tested as a class.

- A call back: "lunch time" is 12:00-14:00 in every language; a window after a day or a part of it ("tmr 12 to 2");
  a name with a patronymic and the phone in one message are both taken (the call back moved to the new window, and
  a yes after a corrected move, are in test_asian_languages_conversations.py).
- Words for "name", "said", quoting particles ("-nu", "-னு", "nu sonnen", "nama dia") are never names: the name is
  the word they mark.
- A name said with a word for a child (மகள், பொண்ணு, anak, 女儿, son...) is the child's, in either order.
- Ages said by the children's place (the older / the younger, 大的 / 小的, abang / adik, பெரியவன் / சின்னவள், the big
  one / the small one) go to the children in that order, before or after their names.
- Relative days, parts of the day and everyday yes and no.

Every phrase was written for these tests; none comes from a corpus or the chat sets.
"""

import datetime as dt

import pytest

from bookings.models import CallbackRequest
from chatbot.agent.datetimes import read_call_time
from chatbot.agent.offline.gloss import gloss
from chatbot.agent.offline.understanding import read_message, says_yes, understand
from chatbot.agent.offline.when import find_when
from tests.chatbot.test_names import TODAY, hints
from tests.chatbot.test_offline_policy import Concierge, FakeSchool

TOMORROW = TODAY + dt.timedelta(days=1)  # a Thursday


def when(text: str):
    return find_when(gloss(text).text, TODAY, dt.time(9), ("09:00", "11:00", "14:00", "16:00"))


def people(reading) -> dict:
    return {k: reading.facts.get(k) for k in ("parent_name", "child_name", "child_age")}


# --- 1. call backs: lunch time, windows, a name with its phone, a new window after the one refused ------------------

@pytest.mark.parametrize("text", [
    "tmr lunch time", "tomorrow at lunchtime pls",  # en
    "esok waktu lunch", "esok masa makan tengah hari", "esok tengah hari",  # ms
    "明天午饭时间", "明天中午",  # zh
    "நாளை மதிய உணவு நேரம்",  # ta
    "naalaikku lunch neram",  # romanised Tamil
])
def test_lunch_time_is_noon_to_two(text):
    found = when(text)
    assert (found.date, found.after, found.before) == (TOMORROW, "12:00", "14:00"), text
    assert found.part_of_day == "afternoon"


@pytest.mark.parametrize(("text", "time"), [("lunch time tmr, 12.30 can?", "12:30"), ("明天中午12点半", "12:30")])
def test_a_time_said_with_lunch_time_is_that_time(text, time):
    assert (when(text).time, when(text).after) == (time, None)


@pytest.mark.parametrize(("text", "start", "end"), [
    ("tmr lunch time, 12 to 2", "12:00", "14:00"),
    ("tmr 12 to 2 can?", "12:00", "14:00"),
    ("esok 2 hingga 4", "14:00", "16:00"),  # ms
    ("esok tengah hari, 12 sampai 2", "12:00", "14:00"),
    ("明天12点到2点", "12:00", "14:00"),  # zh
    ("நாளை காலை 9 to 11", "09:00", "11:00"),  # ta
    ("friday 2-4 ok", "14:00", "16:00"),
])
def test_a_window_after_a_day_or_a_part_of_it_is_a_call_window(text, start, end):
    wish = read_call_time(text, TODAY)
    assert wish.best_time == CallbackRequest.BestTime.WINDOW, text
    assert (f"{wish.start:%H:%M}", f"{wish.end:%H:%M}") == (start, end), text


@pytest.mark.parametrize("text", ["i have 2 to 3 kids", "ages 3 to 6", "change it from 11 to 2"])
def test_other_ranges_are_no_lunch_window(text):
    found = when(text)
    assert (found.after, found.before) != ("12:00", "14:00")


@pytest.mark.parametrize(("text", "name"), [
    ("Mohd Faizal bin Ahmad, 9333 4455", "Mohd Faizal bin Ahmad"),
    ("Nurul Ain binti Hassan 9555 1212", "Nurul Ain binti Hassan"),
    ("siti aminah binti yusof 9000 1111", "Siti Aminah binti Yusof"),
    ("Muthu s/o Ramasamy, hp 9111 7788", "Muthu s/o Ramasamy"),
    ("Ravi a/l Kumar 8123 0000", "Ravi a/l Kumar"),
    ("Ali bin Abu, my number 9876 5432", "Ali bin Abu"),
])
@pytest.mark.parametrize("asked", [(), ("parent_name", "parent_phone")])
def test_a_name_with_a_patronymic_and_the_phone_in_one_message(text, name, asked):
    facts = read_message(text, hints(*asked)).facts
    assert facts.get("parent_name") == name and facts.get("parent_phone", "").startswith("+65"), facts


# --- 3. words for "name" and "said" and quoting particles are never names -----------------------------------------

@pytest.mark.parametrize(("text", "name"), [
    ("Arjun nu sonnen", "Arjun"),  # romanised Tamil: "I said Arjun"
    ("Arjun-னு சொன்னேன்", "Arjun"),
    ("Arjun-னு தான் சொன்னேன்", "Arjun"),
    ("Arjun னு சொன்னேனே", "Arjun"),
    ("Meera nu peru", "Meera"),  # "Meera is the name"
    ("Meera-ன்னு பேரு", "Meera"),
    ("peru Meera", "Meera"),
    ("பேரு Meera", "Meera"),
])
def test_a_quoting_particle_or_a_word_for_name_marks_the_name(text, name):
    assert people(read_message(text, hints("child_name")))["child_name"] == name


@pytest.mark.parametrize("text", ["பேரு", "peru", "nu", "னு", "sonnen", "nama dia", "叫"])
@pytest.mark.parametrize("asked", ["parent_name", "child_name"])
def test_a_word_for_name_or_said_alone_is_no_name(text, asked):
    assert people(read_message(text, hints(asked))) == {"parent_name": None, "child_name": None, "child_age": None}


# --- 4. a name said with a word for a child is the child's, in either order -----------------------------------------

@pytest.mark.parametrize(("text", "child", "age"), [
    ("பொண்ணு பேரு Divya, 5 வயசு", "Divya", 5),  # ta: "daughter name Divya"
    ("என் மகள் பேரு Divya", "Divya", None),
    ("என் மகளோட பேரு Divya", "Divya", None),
    ("Divya என் மகள், 4 வயது", "Divya", 4),  # ta: "Divya my daughter"
    ("Divya மகள், 4 வயது", "Divya", 4),
    ("en ponnu peru Divya", "Divya", None),  # romanised Tamil
    ("Aisyah anak sy, 5 tahun", "Aisyah", 5),  # ms: "Aisyah my child"
    ("anak nama Irfan", "Irfan", None),
    ("dia nama Aisyah, 4 tahun", "Aisyah", 4),
    ("林欣怡是我女儿，4岁", "林欣怡", 4),  # zh: "林欣怡 is my daughter"
    ("Ali is my son, he is 6", "Ali", 6),  # en
    ("Aisyah tu anak saya", "Aisyah", None),  # ms: "Aisyah, that's my child"
    ("Divya, my daughter, 4 yrs", "Divya", 4),
    ("Divya amma here", "Divya", None),  # romanised Tamil: "Divya's mum here"
    ("Divya அம்மா பேசுறேன்", "Divya", None),  # ta: "Divya's mum speaking"
    ("我是小美妈妈，她4岁", "小美", 4),  # zh: "I'm Xiaomei's mum, she's 4"
    ("hi this is Divya's mum", "Divya", None),
])
@pytest.mark.parametrize("asked", [(), ("parent_name",), ("child_name", "child_age")])
def test_a_name_with_a_child_word_is_the_childs(text, child, age, asked):
    found = people(read_message(text, hints(*asked)))
    assert found["child_name"] == child, (text, asked, found)
    assert found["parent_name"] is None
    assert age is None or found["child_age"] == age


@pytest.mark.parametrize(("text", "parent", "child"), [
    ("நான் Kavitha, என் பொண்ணு Divya", "Kavitha", "Divya"),
    ("Saya Rohani, Aisyah anak sy", "Rohani", "Aisyah"),
    ("我是陈美玲，林欣怡是我女儿", "陈美玲", "林欣怡"),
    ("I'm Priya, Divya is my daughter", "Priya", "Divya"),
])
def test_the_parent_and_the_child_in_one_message(text, parent, child):
    found = people(read_message(text, hints()))
    assert (found["parent_name"], found["child_name"]) == (parent, child)


@pytest.mark.parametrize(("text", "parent"), [
    ("我是黄太太，黄丽娟", "黄丽娟"), ("我是林小姐，林美玲，电话91234567", "林美玲"), ("我是陈先生", "陈先生"),
])
def test_a_chinese_title_is_replaced_by_the_full_name_said_beside_it(text, parent):
    assert read_message(text, hints()).facts.get("parent_name") == parent


@pytest.mark.parametrize("text", ["Mdm Tan my son is 4", "Sorry my son is sick", "Thanks, my daughter is 4",
                                  "Sarah, my daughter is 4", "Mdm Tan, my son is 4"])
def test_a_title_or_a_word_before_the_child_is_no_childs_name(text):
    assert people(read_message(text, hints()))["child_name"] is None


@pytest.mark.parametrize(("text", "child", "age"), [("Arjun 6", "Arjun", 6), ("Mei Xin 4", "Mei Xin", 4),
                                                   ("Nur Aisyah, 5", "Nur Aisyah", 5), ("小美 4岁", "小美", 4)])
def test_a_name_and_an_age_answer_the_childs_name_and_age(text, child, age):
    assert people(read_message(text, hints("child_name", "child_age"))) == {
        "parent_name": None, "child_name": child, "child_age": age}


@pytest.mark.parametrize("burst", [
    ["Hafizah", "9333 7777"], ["陈美玲", "电话 9111 2222"], ["Tan Wei Ming", "hp 9123 4567"],
    ["Muthu s/o Ramasamy", "9111 7788"],
])
def test_a_burst_signed_with_a_name_and_a_phone_gives_both(burst):
    facts = understand(burst, hints()).facts
    assert facts.get("parent_name") == burst[0] and facts.get("parent_phone", "").startswith("+65")


@pytest.mark.parametrize("burst", [["Esok", "9123 4567"], ["ok", "9123 4567"], ["Terima kasih", "9123 4567"]])
def test_a_word_on_its_own_beside_a_phone_is_no_name(burst):
    assert "parent_name" not in understand(burst, hints()).facts


def test_a_burst_with_the_daughter_named_first_names_the_parent_by_her_own_line():
    reading = understand(["Divya என் மகள், 4 வயது", "நான் Kavitha Suresh, 9345 6789"], hints())
    assert people(reading) == {"parent_name": "Kavitha Suresh", "child_name": "Divya", "child_age": 4}


# --- 5. ages said by the children's place ---------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "children"), [
    ("大的9岁小的6岁", [{"age": 9}, {"age": 6}]),  # zh
    ("小的6岁，大的9岁", [{"age": 9}, {"age": 6}]),
    ("老大8岁，老二5岁", [{"age": 8}, {"age": 5}]),
    ("大的叫张明，9岁，小的叫张丽，6岁", [{"name": "张明", "age": 9}, {"name": "张丽", "age": 6}]),
    ("小的叫张丽，大的叫张明", [{"name": "张明"}, {"name": "张丽"}]),
    ("abang 8 tahun, adik 5 tahun", [{"age": 8}, {"age": 5}]),  # ms
    ("yang sulung 10 thn, yang bongsu 3 thn", [{"age": 10}, {"age": 3}]),
    ("பெரியவன் Karthik 8 வயசு, சின்னவள் Nila 4 வயசு", [{"name": "Karthik", "age": 8}, {"name": "Nila", "age": 4}]),
    ("periyavan 7 vayasu, chinnaval 3 vayasu", [{"age": 7}, {"age": 3}]),  # romanised Tamil
    ("the big one 7, small one 4", [{"age": 7}, {"age": 4}]),  # en-sg
    ("big one Ryan 7, small one Chloe 4", [{"name": "Ryan", "age": 7}, {"name": "Chloe", "age": 4}]),
    ("my older boy is 8 and the younger one 5", [{"age": 8}, {"age": 5}]),
    ("the eldest is 10, the middle one 7 and the youngest 3", [{"age": 10}, {"age": 7}, {"age": 3}]),
    ("哥哥9岁，妹妹6岁", [{"age": 9}, {"age": 6}]),
    ("kakak 7 tahun adik 4 tahun", [{"age": 7}, {"age": 4}]),
    ("அண்ணன் 9 வயது, தம்பி 5 வயது", [{"age": 9}, {"age": 5}]),
    ("youngest is 3 and the eldest is 9", [{"age": 9}, {"age": 3}]),
])
def test_ages_by_place_go_to_the_children_older_first(text, children):
    assert read_message(text, hints("child_name", "child_age")).children == children


def test_one_child_said_as_the_little_one_is_one_childs_age():
    reading = read_message("my little one is 4 years old", hints("child_age"))
    assert reading.facts.get("child_age") == 4 and not reading.children


@pytest.mark.parametrize(("names", "ages", "years"), [
    ("大的叫张明，小的叫张丽", "大的9岁小的6岁", [9, 6]),
    ("Amir dan Aina", "abang 8 tahun, adik 5 tahun", [8, 5]),
    ("Ryan and Chloe", "the big one is 8, the small one 5", [8, 5]),
])
async def test_ages_by_place_in_a_later_message_complete_the_children_named(names, ages, years):
    school = FakeSchool()
    school.collected = {"parent_name": "Jon Tan", "parent_phone": "+6591234567"}
    concierge = Concierge(school)
    await concierge.say("tour for my 2 kids next tuesday 9am")
    await concierge.say(names)
    reply = await concierge.say(ages)
    booked = reply.called("book_tour")
    assert booked, (reply.text, reply.calls)
    assert [c.get("age") for c in booked[-1]["children"]] == years


async def test_ages_by_place_before_the_names():
    school = FakeSchool()
    school.collected = {"parent_name": "Jon Tan", "parent_phone": "+6591234567"}
    concierge = Concierge(school)
    await concierge.say("tour for my 2 kids next tuesday 9am", "the big one 7, small one 4")
    reply = await concierge.say("names are Ryan and Chloe")
    booked = reply.called("book_tour")
    assert booked and booked[-1]["children"] == [{"name": "Ryan", "age": 7}, {"name": "Chloe", "age": 4}]


# --- 6. relative days, parts of the day, everyday yes ---------------------------------------------------------------

@pytest.mark.parametrize(("text", "days"), [
    ("lusa", 2), ("后天", 2), ("நாளை மறுநாள்", 2), ("naalanikku", 2),
    ("minggu depan punya isnin", 5), ("isnin minggu depan", 5), ("下周一", 5), ("அடுத்த வாரம் திங்கள்", 5),
    ("下下周三", 14), ("minggu depan lagi hari rabu", 14), ("அடுத்த அடுத்த வாரம் புதன்", 14),
])
def test_relative_days(text, days):
    found = when(text)
    assert (found.date or found.start) == TODAY + dt.timedelta(days=days), (text, found)


@pytest.mark.parametrize(("text", "part"), [
    ("esok pagi", "morning"), ("esok petang", "afternoon"), ("esok malam", "evening"),
    ("明天上午", "morning"), ("明天下午", "afternoon"), ("明天中午", "afternoon"),
    ("நாளை காலை", "morning"), ("நாளை மதியம்", "afternoon"), ("நாளை மாலை", "evening"),
    ("naalaikku kaalaila", "morning"),
])
def test_parts_of_the_day(text, part):
    assert when(text).part_of_day == part


@pytest.mark.parametrize("text", ["boleh la", "ok je", "ok boleh", "行", "没问题", "可以啊", "சரி சரி", "ஓகே", "சரிங்க",
                                  "seri seri", "ok 可以 move 吧"])
def test_everyday_yes(text):
    assert says_yes(text, ("reschedule",)), text
    assert "yes" in read_message(text, hints()).intents


@pytest.mark.parametrize("text", ["tak nak", "不用了", "வேண்டாம்", "tak payah la"])
def test_everyday_no(text):
    assert not says_yes(text)
