"""Details sent in a burst of short messages, and words that look like names but are not.

A burst that answers "What's your child's name?" often carries the parent's own name on a line of its own, a child
named with a word that says so ("daughter Mei 3") and a phone: the labelled child is the child, the bare name line
the parent. Every phrasing here was written for these tests; none comes from a corpus or the chat sets.
"""

from dataclasses import replace

import pytest

from chatbot.agent.offline.understanding import read_message, understand
from tests.chatbot.test_names import hints
from tests.chatbot.test_offline_policy import Concierge


def people(reading) -> dict:
    return {k: reading.facts.get(k) for k in ("parent_name", "child_name", "child_age")}


@pytest.mark.parametrize(("burst", "parent", "child", "age"), [
    (["Goh Mei Lin", "daughter Ruby 3", "8877 6655"], "Goh Mei Lin", "Ruby", 3),  # en-sg
    (["ok", "Siti Rahmah binte Osman", "my girl Alya, 4 yrs", "9001 2003"], "Siti Rahmah binte Osman", "Alya", 4),
    (["Name is Ong Kah Wai", "my son Jun Wei, 6 years old", "9333 4444"], "Ong Kah Wai", "Jun Wei", 6),
    (["Mark Chen here", "boy is Lucas, 5", "9555 6666"], "Mark Chen", "Lucas", 5),
    (["Rosli bin Yusof", "anak Irdina, 3 tahun", "9777 1212"], "Rosli bin Yusof", "Irdina", 3),  # ms
    (["王建国", "女儿王雨桐，4岁", "91112222"], "王建国", "王雨桐", 4),  # zh
    (["Kavitha Subramaniam", "மகள் Diya, 5 வயது", "8444 5555"], "Kavitha Subramaniam", "Diya", 5),  # ta
    (["我叫 Grace Tan", "儿子 Ethan 6岁", "9222 3333"], "Grace Tan", "Ethan", 6),  # mixed
])
@pytest.mark.parametrize("asked", [("child_name", "child_age"), ()])
def test_in_a_burst_the_bare_name_is_the_parents_and_the_labelled_child_the_childs(burst, parent, child, age,
                                                                                     asked):
    reading = understand(burst, hints(*asked, options=0 if asked else 4))
    assert people(reading) == {"parent_name": parent, "child_name": child, "child_age": age}
    assert reading.hour is None  # "daughter Ruby 3": her age, not 3 o'clock


@pytest.mark.parametrize("burst", [["Ruby", "3"], ["Ruby", "she is 3"]])
def test_a_bare_name_with_no_labelled_child_still_answers_the_childs_name(burst):
    reading = understand(burst, hints("child_name", "child_age"))
    assert people(reading) == {"parent_name": None, "child_name": "Ruby", "child_age": 3}


@pytest.mark.parametrize(("text", "name"), [
    ("K. Ramasamy, 8111 9999", "K. Ramasamy"),
    ("R. Devi 9123 0000", "R. Devi"),
    ("Jon, 91234567", "Jon"),
])
def test_an_initial_before_the_phone_stays_with_the_name(text, name):
    assert read_message(text, hints("parent_name", "parent_phone")).facts["parent_name"] == name


@pytest.mark.parametrize("text", [
    "可以让孩子一起上课看看吗",  # zh: "can the child sit in a class together?": 一起 (together) is no name
    "孩子需要自己带午饭吗",  # zh: "does the child bring lunch?"
])
def test_a_word_of_a_chinese_question_is_no_name(text):
    assert people(read_message(text, hints())) == {"parent_name": None, "child_name": None, "child_age": None}


def test_a_chinese_name_in_a_question_is_still_a_name():
    assert read_message("我女儿张可欣可以参加吗", hints()).facts.get("child_name", "").startswith("张可欣")


@pytest.mark.parametrize("text", [
    "jumaat boleh? lepas lunch sbb pagi sy hantar adik",  # ms: "Friday? after lunch as I do the school run"
    "sy kerja pagi, petang ok",  # ms: "I work mornings, afternoon is fine"
    "afternoon pls because i am stuck at work till 1",
])
def test_a_reason_names_no_one(text):
    assert "parent_name" not in read_message(text, hints()).facts


@pytest.mark.parametrize("asked", ["parent_name", "child_name"])
def test_a_malay_choice_phrase_is_no_name(asked):
    assert people(read_message("yg lambat sikit", hints(asked))) == {
        "parent_name": None, "child_name": None, "child_age": None}


def test_a_call_back_about_the_waiting_list_is_a_call_back_with_its_window():
    reading = read_message("pls call me tmr between 3 n 5? re the waitlist for year 3", hints())
    assert "callback" in reading.intents and "waitlist" not in reading.intents
    assert reading.call_time == "tmr between 15:00 and 17:00"  # the window as read, its day as said


def test_joining_the_waitlist_is_still_joining_it():
    assert "waitlist" in read_message("please put me on the waiting list for Friday", hints()).intents


def test_a_question_said_by_its_ending_is_a_question_not_a_time():
    reading = read_message("bus service from tampines got or not", hints())
    assert reading.questions and reading.when.is_empty


async def test_a_booking_burst_books_under_the_parents_name():
    concierge = Concierge()
    await concierge.say("can book a tour on 2 Dec at 11?")
    reply = await concierge.say("Goh Mei Lin", "daughter Ruby 3", "8877 6655")
    args = reply.called("book_tour")[-1]
    assert (args["parent_name"], args["child_name"], args["child_age"]) == ("Goh Mei Lin", "Ruby", 3)


@pytest.mark.parametrize("asked", [("child_name", "child_age"), ()])
def test_one_message_typed_a_detail_a_line_is_read_as_a_burst(asked):
    reading = understand(["Pang Siew Mei\nmy son Hao Ran, 4\n9666 7777"], hints(*asked))
    assert people(reading) == {"parent_name": "Pang Siew Mei", "child_name": "Hao Ran", "child_age": 4}
    assert reading.facts["parent_phone"] == "+6596667777"


async def test_a_burst_typed_in_one_message_books_under_the_parents_name():
    concierge = Concierge()
    await concierge.say("can book a tour on 2 Dec at 11?")
    reply = await concierge.say("Pang Siew Mei\nmy son Hao Ran, 4\n9666 7777")
    args = reply.called("book_tour")[-1]
    assert (args["parent_name"], args["child_name"], args["child_age"]) == ("Pang Siew Mei", "Hao Ran", 4)


# --- a name typed in two goes: the later, fuller (or respelt) form replaces the first -----------------------------

@pytest.mark.parametrize(("burst", "name"), [
    (["Dana", "Dana Whitfield oops pressed send"], "Dana Whitfield"),  # en: the surname comes in a second message
    (["Kumar", "Kumar Rajan, sorry typo"], "Kumar Rajan"),
    (["Farid", "Farid bin Hassan, tertekan hantar"], "Farid bin Hassan"),  # ms: "pressed send"
    (["Wong", "我叫 Wong Kai Lun 打错了"], "Wong Kai Lun"),  # zh: "typed it wrong": no Chinese words in the name
    (["Priya", "Priya Venkatesh தான் முழு பெயர்"], "Priya Venkatesh"),  # ta: "is the full name"
])
def test_a_name_typed_again_fuller_replaces_the_half(burst, name):
    reading = understand(burst, hints("parent_name"))
    assert reading.facts["parent_name"] == name and "parent_name" in reading.corrections


def known(**facts) -> object:
    return replace(hints(), known=facts)


@pytest.mark.parametrize(("before", "text", "fixed"), [
    ("R. Ganes", "oops, R. Ganesh", "R. Ganesh"),  # a letter left off
    ("Jonathon Lee", "sorry typo, Jonathan Lee", "Jonathan Lee"),
    ("Nurul Ain", "eh silap, Nurul Aini", "Nurul Aini"),  # ms: "oops, wrong"
])
def test_a_respelt_name_in_a_correction_replaces_the_old_one(before, text, fixed):
    assert read_message(text, known(parent_name=before)).facts["parent_name"] == fixed


def test_a_shorter_or_unrelated_name_does_not_replace_a_known_one():
    assert "parent_name" not in read_message("Dana", known(parent_name="Dana Whitfield")).corrections
    assert "parent_name" not in read_message("Marcus Webb is coming too", known(parent_name="Dana Whitfield")).facts


@pytest.mark.parametrize(("text", "name"), [
    ("yes go ahead, Harriet Vance", "Harriet Vance"),  # en: the name signs the yes
    ("can book, Lim Siew Hoon", "Lim Siew Hoon"),  # Singapore English
    ("ok boleh, Nor Azizah", "Nor Azizah"),  # ms
    ("好的，陈美玲", "陈美玲"),  # zh
    ("சரி, Revathi Mohan", "Revathi Mohan"),  # ta
])
def test_a_name_signing_a_yes_answers_the_name_asked_for(text, name):
    assert read_message(text, hints("parent_name")).facts.get("parent_name") == name


@pytest.mark.parametrize("text", ["ok, Sounds Good", "yes book it, Tuesday", "sure, Thanks", "好的，可以",
                                  "yes, book it"])
def test_words_after_a_comma_that_are_no_name_sign_nothing(text):
    assert "parent_name" not in read_message(text, hints("parent_name")).facts
