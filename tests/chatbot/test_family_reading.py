"""The offline reader on families: several children however they are said (our own phrasing, not the scenarios')."""

import datetime as dt

import pytest

from chatbot.agent.offline.understanding import Hints, merge_children, read_message, understand
from tests.chatbot.test_offline_policy import Concierge

HINTS = Hints(today=dt.date(2026, 11, 24), now=dt.time(10), tour_times=("09:00", "11:00", "14:00", "16:00"))


def read(text: str, **hints):
    return read_message(text, Hints(**{**HINTS.__dict__, **hints}))


@pytest.mark.parametrize(("text", "children"), [
    ("Could my twins Noor and Adam come along?", [{"name": "Noor"}, {"name": "Adam"}]),
    ("hello! tour please for Ravi (8), Priya (5) and Dev (2)",
     [{"name": "Ravi", "age": 8}, {"name": "Priya", "age": 5}, {"name": "Dev", "age": 2}]),
    ("Lucas is six and Emma is three", [{"name": "Lucas", "age": 6}, {"name": "Emma", "age": 3}]),
    ("it's for Hana and Kenji, aged 7 and 9", [{"name": "Hana", "age": 7}, {"name": "Kenji", "age": 9}]),
    ("my kids olivia and tom", [{"name": "Olivia"}, {"name": "Tom"}]),
    ("triplets, they're all 2 - Ada, Bea and Cy", [{"name": "Ada", "age": 2}, {"name": "Bea", "age": 2},
                                                   {"name": "Cy", "age": 2}]),
    # "and" as it is texted
    ("twins tbh, Ines n Omar, theyre 4", [{"name": "Ines", "age": 4}, {"name": "Omar", "age": 4}]),
    ("the boys are Jude + Remy, 6 n 3", [{"name": "Jude", "age": 6}, {"name": "Remy", "age": 3}]),
])
def test_several_children_in_one_message(text, children):
    reading = read(text)
    assert reading.children == children
    assert "child_name" not in reading.facts and "child_age" not in reading.facts


def test_a_count_without_names_asks_for_them():
    reading = read("we're hoping to bring our three girls to look around")
    assert (reading.child_count, reading.children) == (3, [])


def test_one_more_child_said_on_its_own():
    reading = read("Oh, and his baby sister Isla, who's 1")
    assert reading.adds_child and reading.children == [{"name": "Isla", "age": 1}]


def test_one_child_is_still_the_one_child_facts():
    reading = read("A tour for my son Arjun, 6, please")
    assert reading.children == [] and (reading.facts["child_name"], reading.facts["child_age"]) == ("Arjun", 6)


def test_ages_answer_the_children_asked_about_in_order():
    asked = ("Noor", "Adam")  # the dialogue state of "Lovely. How old are Noor and Adam?"
    assert asked == ("Noor", "Adam")
    reading = read("7 and 5", asked=frozenset({"child_age"}), asked_ages_of=asked)
    assert reading.children == [{"name": "Noor", "age": 7}, {"name": "Adam", "age": 5}]
    assert read("she turned 4 last month", asked=frozenset({"child_age"}), asked_ages_of=("Noor",)).children == [
        {"name": "Noor", "age": 4}]


def test_a_returning_family_answers_the_offer_of_its_children():
    known = ({"name": "Noor", "age": 7}, {"name": "Adam", "age": 5})
    both = read("yes, the two of them", asked=frozenset({"family_again"}), known_children=known)
    assert both.children == list(known)
    one = read("only adam this time", asked=frozenset({"family_again"}), known_children=known)
    assert one.children == [{"name": "Adam", "age": 5}]


def test_times_and_parents_are_not_children():
    assert read("Thursday between 9 and 11 would suit us").children == []
    assert read("I'm Jon and my wife is Ana, we'd like a tour").children == []


def test_merging_fills_unnamed_children_then_adds():
    merged = merge_children([{"age": 6}, {"age": 4}], [{"name": "Sam"}, {"name": "Ben"}, {"name": "Zoe", "age": 1}])
    assert merged == [{"age": 6, "name": "Sam"}, {"age": 4, "name": "Ben"}, {"name": "Zoe", "age": 1}]


# --- of several children named, only one is coming: that one is the child of the tour -------------------------

@pytest.mark.parametrize(("text", "child"), [
    ("we've got 2, Oscar 8 and Ivy 4, only Ivy needs a place", ("Ivy", 4)),  # en, by name
    ("two kids - Ruben 9 and Tess 5, but just Tess for the visit", ("Tess", 5)),
    ("3 kids but only the youngest one, Pia 3", ("Pia", 3)),  # by age, one named
    ("Kai 7 and Lola 2, only the little one", ("Lola", 2)),  # by age, both named
    ("anak 2 orang, Imran 8 dan Safiya 4, Safiya je nak masuk", ("Safiya", 4)),  # ms: "only Safiya is joining"
    ("anak dua, Umar 9 dan Aira 3, yg bongsu je", ("Aira", 3)),  # ms: "only the youngest"
    ("两个孩子，Jayden 8岁，Chloe 4岁，只有小的报名", ("Chloe", 4)),  # zh: "only the small one is enrolling"
    ("ரெண்டு பசங்க, Arun 9 வயது, Nila 4 வயது, Nila மட்டும் வருவா", ("Nila", 4)),  # ta: "only Nila will come"
])
def test_only_the_child_said_to_be_coming_is_the_child(text, child):
    reading = read(text)
    assert (reading.facts.get("child_name"), reading.facts.get("child_age")) == child
    assert reading.children == [] and reading.child_count <= 1


def test_a_restriction_in_a_later_message_keeps_the_one_named():
    reading = understand(["hi, 2 kids: Zane 10 and Ella 5", "only Ella is starting next year"], HINTS)
    assert [c["name"] for c in reading.children] == ["Ella"] or reading.facts.get("child_name") == "Ella"
    assert reading.child_count <= 1


@pytest.mark.parametrize("text", ["Leo 7 and Mia 4, Mia just turned 4", "Leo 7 and Mia 4, just wondering"])
def test_just_turned_or_just_wondering_keeps_both(text):
    assert [c["name"] for c in read(text).children] == ["Leo", "Mia"]


async def test_the_concierge_books_the_one_child_coming_and_does_not_ask_for_the_others_name():
    concierge = Concierge()
    first = await concierge.say("hello, I have 2 kids, only the younger one is coming, Aria 4")
    second = await concierge.say("Tom Reed, 9123 4567")
    asked = [*concierge.school.dialogue.asked]
    assert "child_name" not in asked and "names" not in second.text.lower()
    booked = [args for args in (*first.called("book_tour"), *second.called("book_tour")) if args]
    assert booked[-1].get("child_name") == "Aria" and not booked[-1].get("children")
