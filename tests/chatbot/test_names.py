"""Names and the other personal values the offline reader stores: only words that are that kind of value, said
where a parent would say it; otherwise nothing, or one short question.

Every phrasing here was written for these tests; none comes from a corpus. Each group is one failure class,
in English (Singapore English too), Malay, Chinese and Tamil.
"""

import datetime as dt

import pytest
from django.utils import translation

from chatbot.agent.offline import replies
from chatbot.agent.offline.understanding import Hints, read_message
from tests.chatbot.test_offline_policy import Concierge

TODAY = dt.date(2026, 11, 25)  # a Wednesday
HINTS = Hints(today=TODAY, now=dt.time(9), tour_times=("09:00", "11:00", "14:00", "16:00"))


def hints(*asked: str, options: int = 0) -> Hints:
    return Hints(**{**HINTS.__dict__, "asked": frozenset(asked), "options": options})


def read(text: str, *asked: str):
    return read_message(text, hints(*asked))


def names(reading) -> dict:
    found = {k: v for k, v in reading.facts.items() if k in ("parent_name", "child_name")}
    return {**found, **({"children": [c.get("name") for c in reading.children]} if reading.children else {})}


# --- fillers, fragments, yes-words and dates are no names, even as the answer to "What's your name?" ------------

@pytest.mark.parametrize("text", [
    "maybe next week",  # en: a hedge and a date
    "whatever works",
    "probably after lunch",
    "as i said",
    "same as before lah",  # Singapore English
    "ok lor",
    "mungkin minggu depan",  # ms: "maybe next week"
    "macam tadi",  # ms: "like before"
    "penuh ke?",  # ms: "is it full?"
    "可能下周",  # zh: "maybe next week"
    "随便",  # zh: "whatever"
    "我说过了",  # zh: "I said already"
    "சொன்னேனே",  # ta: "I told you"
    "அப்புறம்",  # ta: "later"
])
@pytest.mark.parametrize("asked", ["parent_name", "child_name"])
def test_a_filler_or_fragment_is_no_name(text, asked):
    assert names(read(text, asked)) == {}


@pytest.mark.parametrize("text", [
    "Find me a school nearby",  # en: a sentence that starts like a name
    "I think so",
    "Try the other one",
    "Nope",
    "Cuba yang lain dulu",  # ms: "try another one first"
    "先看看别的",  # zh: "let me look at others first"
    "வேற பாருங்க",  # ta: "look at another"
])
@pytest.mark.parametrize("asked", ["parent_name", "child_name"])
def test_a_sentence_is_no_name_even_when_it_starts_like_one(text, asked):
    assert names(read(text, asked)) == {}


@pytest.mark.parametrize("text", [
    "的那个",  # zh: "the one (of)": a particle, not a surname, comes first
    "就那个吧",  # zh: "that one then"
    "哎呀 sorry, 我说错了",  # zh: an interjection
    "ஐயோ sorry, தப்பா சொல்லிட்டேன்",  # ta: "oh no, sorry, I said it wrong"
    "அடடா, மறந்துட்டேன்",  # ta: "oh dear, I forgot"
])
@pytest.mark.parametrize("asked", ["parent_name", "child_name"])
def test_a_particle_or_an_interjection_is_no_name(text, asked):
    assert names(read(text, asked)) == {}


@pytest.mark.parametrize("text", [
    "大的9岁小的6岁",  # zh: "the older one is 9, the younger one 6" (a browser parent's words)
    "老大7岁，老二4岁",  # zh: "the eldest is 7, the second 4"
])
def test_the_older_or_younger_one_is_no_childs_name(text):
    """Which child, said by age order, is no name: the children are asked for by name instead (their ages are
    kept, in that order: tests/chatbot/test_asian_languages_classes.py)."""
    found = names(read(text, "child_name"))
    assert "parent_name" not in found and "child_name" not in found and not any(found.get("children", []))


# --- school years, numbers and single letters are no child ------------------------------------------------------

@pytest.mark.parametrize("text", [
    "fees for yr 2 pls",  # en
    "P1 fees?",  # Singapore English
    "how much for grade 3",
    "yuran Tahun 2 berapa",  # ms: "how much are the fees for Year 2"
    "darjah 1 ada?",  # ms: "is there a Standard 1?"
    "小一的学费多少",  # zh: "how much are the Primary 1 fees"
    "ஒன்றாம் வகுப்பு கட்டணம் என்ன",  # ta: "what are the Class 1 fees"
])
def test_a_school_year_is_no_child(text):
    assert names(read(text)) == {}


@pytest.mark.parametrize("text", ["12 as i said", "S", "K.", "it's with a k", "Im outside", "re fees, 91234567"])
def test_a_number_or_a_letter_is_no_name(text):
    assert names(read(text, "child_name")) == {}
    assert names(read(text, "parent_name")) == {}


@pytest.mark.parametrize("text", ["It has two bedrooms, 1 bathroom.", "we need 2 seats, 1 stroller",
                                  "rumah ada dua bilik, 1 bilik air"])
def test_things_counted_before_a_number_are_no_child(text):
    reading = read(text)
    assert names(reading) == {} and "child_age" not in reading.facts


# --- a name of several parts stays whole --------------------------------------------------------------------

@pytest.mark.parametrize(("text", "asked", "name"), [
    ("Tan Mei Ling", "parent_name", "Tan Mei Ling"),  # en, a Chinese name in Latin letters
    ("Lakshmi R", "parent_name", "Lakshmi R"),  # a Tamil name with its initial after it
    ("Mr. R. Kumar", "parent_name", "R. Kumar"),
    ("I'm Ravi s/o Kumar", "", "Ravi s/o Kumar"),
    ("nama saya Siti Nur Aisyah binti Abdullah", "", "Siti Nur Aisyah binti Abdullah"),  # ms
    ("我叫Lim Wei Jie", "", "Lim Wei Jie"),  # zh
    ("என் பெயர் R. Lakshmi", "", "R. Lakshmi"),  # ta, the initial first
    ("Goh Chin Seng Daniel", "parent_name", "Goh Chin Seng Daniel"),  # four parts: none is dropped
    ("this is Ong Kah Wai Melvin, thanks", "", "Ong Kah Wai Melvin"),
    ("saya Wong Siew Ling Grace", "", "Wong Siew Ling Grace"),  # ms
    ("我是Tay Boon Keat Alvin", "", "Tay Boon Keat Alvin"),  # zh, a romanised name in a Chinese sentence
])
def test_a_parents_name_keeps_all_its_parts(text, asked, name):
    assert names(read(text, *filter(None, [asked]))) == {"parent_name": name}


@pytest.mark.parametrize(("text", "asked", "name"), [
    ("Nur Alya", "child_name", "Nur Alya"),  # the given name has two words: neither is dropped
    ("her name is Mei Xin", "", "Mei Xin"),
    ("nama anak saya Siti Hajar", "", "Siti Hajar"),  # ms: "my child's name is": the child's, not the parent's
    ("我女儿叫Chloe Tan", "", "Chloe Tan"),  # zh: "my daughter is called"
    ("என் மகள் பெயர் Kavya Sri", "", "Kavya Sri"),  # ta: "my daughter's name is"
])
def test_a_childs_name_keeps_all_its_parts_and_is_the_childs(text, asked, name):
    assert names(read(text, *filter(None, [asked]))) == {"child_name": name}


def test_a_name_said_by_the_way_ends_where_its_capitals_do():
    assert names(read("my son Sam wants to see the playground")) == {"child_name": "Sam"}


# --- the right person -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["Danish, 4", "Danish, 4 years old", "Danish (4)"])
def test_a_name_given_with_an_age_is_the_childs_even_when_the_parents_name_was_asked(text):
    reading = read(text, "parent_name")
    assert names(reading) == {"child_name": "Danish"} and reading.facts["child_age"] == 4


@pytest.mark.parametrize(("text", "children"), [
    ("two kids, Ethan is 6 and Emma is 3", ["Ethan", "Emma"]),  # en
    ("dua anak, Adam 6 tahun dan Hawa 3 tahun", ["Adam", "Hawa"]),  # ms
    ("两个孩子，大的叫Ethan 6岁，小的叫Emma 3岁", ["Ethan", "Emma"]),  # zh: "the older one is called..."
    ("两个孩子，老大叫小明，老二叫小红", ["小明", "小红"]),  # zh, without ages
])
def test_every_sibling_is_kept(text, children):
    assert names(read(text)) == {"children": children}


# --- unsure: one short question, answered against the dialogue state --------------------------------------

@pytest.mark.parametrize("text", [
    "hi, can I book a tour for Zara?",  # en
    "boleh tempah lawatan untuk Zara?",  # ms: "can I book a visit for Zara?"
])
async def test_a_name_said_without_whose_is_asked_about_and_a_yes_stores_it(text):
    concierge = Concierge()
    first = await concierge.say(text)
    assert "Is Zara your child?" in first.text
    assert "child_is" in concierge.school.dialogue.asked
    assert not any(args.get("child_name") for _, args in first.calls)
    yes = await concierge.say("yes")
    assert yes.called("book_tour")[0]["child_name"] == "Zara"


async def test_a_no_to_whose_name_it_is_stores_nothing_and_asks_for_the_childs_name():
    concierge = Concierge()
    await concierge.say("can I book a tour for Zara?")
    no = await concierge.say("no")
    assert not any(args.get("child_name") for _, args in no.calls)
    assert "child_name" in concierge.school.dialogue.asked


async def test_for_a_name_answering_the_childs_name_question_is_the_child():
    concierge = Concierge()
    await concierge.say("hi, can I book a tour for my daughter")
    reply = await concierge.say("for Zara")
    assert reply.called("book_tour")[0]["child_name"] == "Zara"


@pytest.mark.parametrize(("answer", "stored"), [("yes", "child_name"), ("no", "parent_name")])
async def test_one_name_to_both_name_questions_is_asked_about_and_the_answer_places_it(answer, stored):
    concierge = Concierge()
    await concierge.say("I want a tour for my 4 year old")
    assert {"child_name", "parent_name"} <= set(concierge.school.dialogue.asked)
    unsure = await concierge.say("Sarah")
    assert unsure.text == "Is Sarah your child?" and concierge.school.dialogue.asked == ["child_is"]
    placed = await concierge.say(answer)
    assert placed.called("book_tour")[0][stored] == "Sarah"
    assert {"child_name", "parent_name"} - {stored} <= set(concierge.school.dialogue.asked)


async def test_two_names_to_both_name_questions_are_the_childs_then_the_parents():
    concierge = Concierge()
    await concierge.say("I want a tour for my 4 year old")
    reply = await concierge.say("Mia, Sarah")
    assert {k: reply.called("book_tour")[0][k] for k in ("child_name", "parent_name")} == {
        "child_name": "Mia", "parent_name": "Sarah"}


@pytest.mark.parametrize(("language", "relation", "question"), [
    ("en", "daughter", "Is Zara your daughter?"),
    ("ms", "son", "Adakah Zara anak lelaki anda?"),
    ("zh-hans", "", "Zara是您的孩子吗？"),
    ("ta", "daughter", "Zara உங்கள் மகளா?"),
])
def test_the_question_is_in_the_parents_language_and_declared(language, relation, question):
    with translation.override(language), replies.recording() as declared:
        assert replies.is_your_child("Zara", relation) == question
    assert declared.asked == ["child_is"]


# --- a name spelt out corrects the name it is spelt like ----------------------------------------------------

@pytest.mark.parametrize("text", ["its Markus with a k", "Markus, with a k", "sorry it's Markus"])
async def test_a_name_spelt_out_corrects_the_parents_name(text):
    concierge = Concierge()
    await concierge.say("hi I'm Marcus, a tour for my son Leo, 4")
    reply = await concierge.say(text)
    assert reply.called("update_context") == [
        {"field_to_update": "parent_name", "new_value": "Markus", "reason": "user_correction"}]


# --- a phone's label is no name ("mob is ...", "hp: ...", "en number ...") -------------------------------------

@pytest.mark.parametrize(("text", "parent"), [
    ("mob is 9123 4567", None),  # en / Singapore English labels
    ("Mob: 9123 4567", None),
    ("my mob 8123 4567", None),
    ("Sarah, mob 8123 4567", "Sarah"),  # the name before the label is the parent's
    ("Jon Tan mob: 9123 4567", "Jon Tan"),
    ("H/P 9123 4567", None),
    ("ph 9123 4567", None),
    ("reach me 9123 4567", None),  # a verb for how to reach the parent
    ("Aminah, nombor telefon saya 9123 4567", "Aminah"),  # ms: "my phone number"
    ("手机号码 9123 4567", None),  # zh: "mobile number"
    ("en number 9123 4567", None),  # Tamil in Latin letters: "my number"
    ("Kavitha, en number 9123 4567", "Kavitha"),
])
@pytest.mark.parametrize("asked", [(), ("parent_name",)])
def test_a_phone_label_is_no_name(text, parent, asked):
    reading = read(text, *asked)
    assert reading.facts.get("parent_name") == parent
    assert reading.facts.get("parent_phone")


# --- a full name stays whole: initials inside it, patronymics typed in lower case ---------------------------------

@pytest.mark.parametrize(("text", "found"), [
    ("James R. Whitfield, 9123 4567", {"parent_name": "James R. Whitfield"}),  # en: a middle initial before a phone
    ("Priya K. Nair 8123 4567", {"parent_name": "Priya K. Nair"}),
    ("Daniel J. Ortega here", {"parent_name": "Daniel J. Ortega"}),
    ("Kumar S/O Muthu here", {"parent_name": "Kumar S/O Muthu"}),  # Singapore: son of
    ("I am J. R. Tan", {"parent_name": "J. R. Tan"}),  # two initials
    ("my daughter nur aisyah binti ahmad, 5", {"child_name": "Nur Aisyah binti Ahmad"}),  # ms, typed in lower case
    ("anak saya muhammad irfan bin rosli, 6 tahun", {"child_name": "Muhammad Irfan bin Rosli"}),
    ("my son is ravi s/o kumar", {"child_name": "Ravi s/o Kumar"}),
])
def test_a_full_name_stays_whole(text, found):
    assert names(read(text)) == found


# --- a parent said as whose parent ("Jayden mummy", "mak Aisyah", "Kavin amma"): the name is the child's ------------

@pytest.mark.parametrize("text", [
    "this is Jayden mummy",  # Singapore English: Jayden's mother
    "Hi, I'm Jayden daddy, want to book a tour",
    "Jayden papa here",
    "this is jayden mommy",
    "ni mak Jayden",  # ms: parent word first
    "saya ibu kepada Jayden",
    "saya ayah Jayden",
    "我是Jayden妈妈",  # zh
    "naan Jayden amma",  # Tamil in Latin letters
    "Jayden appa here",
    "Jayden mummy 9123 4567",  # signed with the phone
    "Jayden amma, en number 9123 4567",
])
@pytest.mark.parametrize("asked", [(), ("parent_name",)])
def test_a_parent_said_as_whose_parent_names_the_child(text, asked):
    assert names(read(text, *asked)) == {"child_name": "Jayden"}


@pytest.mark.parametrize(("text", "parent"), [
    ("I'm Mak Wai Ling", "Mak Wai Ling"),  # Mak: a surname, not Malay "mak" (mum)
    ("this is Mama Tan", None),  # a capitalised title-like word: not said as whose parent
])
def test_a_capitalised_parent_word_is_not_read_as_whose_parent(text, parent):
    reading = read(text)
    assert reading.facts.get("parent_name") == parent and "child_name" not in reading.facts


# --- everyday and Tanglish words are no child's name; a greeting never takes a surname for the given name ---------

@pytest.mark.parametrize("text", [
    "veg",  # en: a diet said where the name was asked
    "my son is veg",
    "vegetarian",
    "peyar",  # Tanglish: "name"
    "paiyan",  # "boy"
    "ponnu",  # "girl"
    "vayasu 5",  # "age 5"
    "enakku",  # "for me"
    "class",
    "ok",
])
def test_an_everyday_word_is_no_childs_name(text):
    assert "child_name" not in read(text, "child_name").facts


@pytest.mark.parametrize("text", ["en paiyan peyar Arun", "paiyan peyar Arun, 5 vayasu", "en ponnu peyaru Arun"])
def test_tanglish_peyar_marks_the_name(text):
    assert read(text).facts.get("child_name") == "Arun"


@pytest.mark.parametrize(("name", "greeted"), [
    ("Sarah Tan", "Sarah"),
    ("Tan Wei Ling", "Tan Wei Ling"),  # the surname first: the whole name
    ("Lim Boon Hock", "Lim Boon Hock"),
    ("陈美玲", "陈美玲"),
    ("R. Priya", "R. Priya"),
    ("Tan", ""),  # a surname alone: no name in the greeting
    ("Kumar s/o Muthu", "Kumar"),
])
def test_a_greeting_uses_the_given_name_or_the_whole_name(name, greeted):
    with translation.override("en"):
        text = replies.noted_details({"parent_name": name, "parent_phone": "+6591234567"})
    assert text.startswith(f"Thanks, {greeted}:" if greeted else "Thanks: ")


# --- two children joined by "and" in any language are two children ----------------------------------------------

@pytest.mark.parametrize("text", [
    "anak saya Ali dan Abu",  # ms: "anak" has no plural
    "anak2 saya Ali dan Abu, 5 dan 7 tahun",  # ms: "anak2", children
    "anak-anak saya Ali dan Abu",
    "my child Ali and Abu",
])
def test_two_children_joined_by_and_are_two_children(text):
    reading = read(text)
    assert [c.get("name") for c in reading.children] == ["Ali", "Abu"] and "child_name" not in reading.facts


@pytest.mark.parametrize("opening", ["hi this is Jayden mummy, want to book a tour", "hi I'm Jayden's mum, tour pls"])
async def test_the_childs_age_after_a_parent_said_as_whose_parent_reaches_the_booking(opening):
    concierge = Concierge()
    await concierge.say(opening)
    aged = await concierge.say("Jayden is 5")
    assert aged.called("book_tour")[-1]["child_age"] == 5
    booked = await concierge.say("next thursday 9am", "Sarah Lim, 91234567")
    assert {k: booked.called("book_tour")[-1][k] for k in ("parent_name", "child_name", "child_age")} == {
        "parent_name": "Sarah Lim", "child_name": "Jayden", "child_age": 5}


@pytest.mark.parametrize(("text", "name"), [
    ("Lovely\nCharlotte Ashby Reid\n*Ashby-Reid sorry, autocorrect keeps splitting it", "Charlotte Ashby-Reid"),
    ("Jon Tann\n*Tan", "Jon Tan"),
    ("great\nPriya Raman", "Priya Raman"),
])
def test_a_starred_line_respells_the_line_before(text, name):
    """Chat's "*word" corrects a word of the line before ("Ashby Reid" -> "Ashby-Reid"); an acknowledgement then a
    name on a line of its own is the name asked for."""
    assert read(text, "parent_name").facts["parent_name"] == name


@pytest.mark.parametrize("text", ["*Ashby-Reid", "Rebecca O'Connor\nta", "cheers\nok"])
def test_a_correction_mark_or_a_thanks_is_no_name(text):
    name = read(text, "parent_name").facts.get("parent_name", "")
    assert not name.startswith("*") and name.lower() not in ("ta", "cheers", "ok")


@pytest.mark.parametrize(("text", "name"), [
    ("can get someone call me explain? mon morning, before 12", ""),
    ("call me tmrw after 5", ""),
    ("just call me Jo", "Jo"),
])
def test_call_me_names_the_parent_only_as_a_name_is_written(text, name):
    assert read(text).facts.get("parent_name", "") == name
