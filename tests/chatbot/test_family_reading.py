"""The offline reader on families: several children however they are said (our own phrasing, not the scenarios')."""

import datetime as dt

import pytest

from chatbot.agent.offline.understanding import Hints, merge_children, read_message

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
