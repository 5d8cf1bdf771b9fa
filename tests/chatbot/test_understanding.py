"""How the offline reader understands a parent's own words: names, ages, intents, and what is (not) a date.

Every phrasing here was written for these tests; none comes from a corpus. Each
group is one failure class seen in real conversations, stated as the behaviour
a parent would expect.
"""

import dataclasses
import datetime as dt

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from chatbot.agent.offline import lexicon
from chatbot.agent.offline.understanding import Hints, read_message
from quality.evaluation import scenarios as suite
from quality.evaluation.runner import run_scenario

TODAY = dt.date(2026, 11, 25)  # a Wednesday
HINTS = Hints(today=TODAY, now=dt.time(9), tour_times=("09:00", "11:00", "14:00", "16:00"))


def read(text: str):
    return read_message(text, HINTS)


@pytest.mark.parametrize(("text", "name"), [
    ("I'm Grace Ong btw", "Grace Ong"),
    ("im Grace Ong lah", "Grace Ong"),
    ("Mrs Ong here", "Ong"),
    ("this is Dr Raj Kumar", "Raj Kumar"),
    ("my name's Hannah, fyi", "Hannah"),
])
def test_a_name_keeps_no_filler_or_title(text, name):
    assert read(text).facts.get("parent_name") == name


@pytest.mark.parametrize(("text", "child", "parent"), [
    ("shes 5, name is Aisha", "Aisha", None),
    ("name: Ravi, he turned 6 last month", "Ravi", None),
    ("my name is Farah, she's 5", None, "Farah"),
    ("this is Mrs Tan, her name is Mei", "Mei", "Tan"),
])
def test_a_bare_name_answers_the_question_just_asked(text, child, parent):
    """After "What's your daughter's name, and how old is she?" a name without "my" is the child's."""
    facts = read_message(text, Hints(**{**HINTS.__dict__, "asked": frozenset({"child_name", "child_age"})})).facts

    assert (facts.get("child_name"), facts.get("parent_name")) == (child, parent)


def test_a_bare_name_is_the_parents_when_their_name_was_asked():
    facts = read_message("name is Aisha Rahman", Hints(**{**HINTS.__dict__, "asked": frozenset({"parent_name"})}))

    assert facts.facts.get("parent_name") == "Aisha Rahman" and "child_name" not in facts.facts


@pytest.mark.parametrize("text", ["I am meeting my husband there", "I'm looking for a school", "im writing to ask"])
def test_a_verb_after_i_am_is_no_name(text):
    assert "parent_name" not in read(text).facts


@pytest.mark.parametrize(("text", "child", "age"), [
    ("hes Lucas, turning 5 in july", "Lucas", 4),
    ("she's Zara and she is four", "Zara", 4),
    ("our daughter Nadia, born 3 June 2021", "Nadia", 5),
    ("my boy Kai is seven", "Kai", 7),
    ("Lily's DOB is 14/02/2022", None, 4),
])
def test_a_child_and_age_in_everyday_words(text, child, age):
    facts = read(text).facts
    assert facts.get("child_age") == age
    if child:
        assert facts.get("child_name") == child


@pytest.mark.parametrize("text", ["morning 10 works", "It should have 2 bedrooms, 1 bath", "Hi, one of us will come",
                                  "it's my mum's birthday on the 28th"])
def test_a_time_or_a_count_is_never_an_age(text):
    assert "child_age" not in read(text).facts


def test_a_date_of_birth_is_not_the_tour_date():
    reading = read("tour for Nadia, born 3 June 2021, on Friday at 2pm")
    assert reading.when.date == dt.date(2026, 11, 27) and reading.when.time == "14:00"


@pytest.mark.parametrize("text", ["we'd love to come and see the campus", "can we visit next week?",
                                  "could we pop by on friday", "I'd like to make an appointment to look around",
                                  "is there a tour on thursday morning?", "Morning! Could we book a tour"])
def test_ways_of_asking_for_a_visit_are_booking_requests(text):
    intents = read(text).intents
    assert intents & {"book", "availability"}
    assert not read(text).questions  # never sent to the FAQ as a question


@pytest.mark.parametrize(("text", "day"), [
    ("tommorow at 3", dt.date(2026, 11, 26)),
    ("wensday next week please", dt.date(2026, 12, 2)),
    ("thurs afternoon", dt.date(2026, 11, 26)),
    ("nxt tuesday", dt.date(2026, 12, 1)),
    ("christmas eve?", dt.date(2026, 12, 24)),
    ("Friday week at 10am", dt.date(2026, 12, 4)),
    ("Monday 7th at 11", dt.date(2026, 12, 7)),
    ("this afternoon at 4", TODAY),
])
def test_dates_as_people_type_them(text, day):
    assert read(text).when.date == day


def test_a_time_given_as_a_reason_is_not_the_one_asked_for():
    assert read("3.45pm suits us better as my wife finishes at 2.30").when.time == "15:45"


def test_the_value_a_correction_compares_against_is_not_taken():
    assert read("the 9th would be easier than the 8th").when.date == dt.date(2026, 12, 9)


def test_a_question_about_after_school_care_sets_no_part_of_day():
    reading = read("do you have before and after school care?")
    assert reading.when.part_of_day is None and reading.questions


def test_a_yes_and_a_question_in_one_sentence_are_both_heard():
    reading = read("Yes that's right, what is the lunch menu like?")
    assert "yes" in reading.intents and reading.questions == ["what is the lunch menu like?"]


# --- the behaviours end to end: every scenario of the suite passes with the offline model --------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scenario", [s for s in suite.SCENARIOS if s.flow in ("understanding", "correction",
                                                                            "topic_switch")], ids=lambda s: s.id)
def test_understanding_scenarios_pass(scenario):
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0):
        result = async_to_sync(run_scenario)(scenario)
    assert result.passed, "\n".join(result.failures)


@pytest.mark.parametrize(("text", "name"), [
    ("lim siew ling, 9345 6703", "Lim Siew Ling"),  # "ling", "ming": syllables of names, not verbs in -ing
    ("daniel tan wei ming 9123 4501", "Daniel Tan Wei Ming"),
])
def test_a_name_typed_in_lower_case_with_the_phone_answers_the_name_asked(text, name):
    reading = read_message(text, dataclasses.replace(HINTS, asked=frozenset({"parent_name"})))
    assert reading.facts.get("parent_name") == name and reading.facts.get("parent_phone"), reading.facts


@pytest.mark.parametrize(("text", "child"), [
    ("ok. ambik yg pertama. anak sy muhammad irfan", "Muhammad Irfan"),
    ("anak sy siti hajar 3 thn. sy ahmad faizal bin ismail", "Siti Hajar"),
    ("for my daughter mia chen", "Mia Chen"),
    ("my son sam wants to come", "Sam"),  # the words go on past the name
])
def test_a_childs_name_of_two_words_in_lower_case_stays_whole_up_to_where_the_name_ends(text, child):
    assert read(text).facts.get("child_name") == child


def test_a_tamil_initial_with_its_dot_stays_with_the_name():
    assert read("என் பெயர் எஸ். பிரியா").facts.get("parent_name") == "எஸ். பிரியா"


@pytest.mark.parametrize(("name", "greeting"), [
    ("Siti Nurhaliza binti Mohd Yusof", "Siti Nurhaliza"), ("Muthukumar s/o Kandasamy", "Muthukumar"),
    ("Sarah Tan", "Sarah"), ("Tan Wei Ling", "Tan Wei Ling"), ("எஸ். பிரியா", "எஸ். பிரியா"),
])
def test_a_parent_is_greeted_by_the_given_name(name, greeting):
    assert lexicon.address(name) == greeting


def test_a_name_said_as_its_own_sentence_before_a_question_answers_the_name_asked_then_another_name_is_the_parents():
    both = dataclasses.replace(HINTS, asked=frozenset({"child_name", "parent_name"}))
    first = read_message("chloe. got any slot this wk?", both)
    assert first.unsure == {"child_name": "Chloe", "parent_name": "Chloe"} and not first.facts.get("parent_name")
    doubted = dataclasses.replace(HINTS, unsure=first.unsure)
    second = read_message("lim siew ling, 9345 6703", doubted)
    assert (second.facts["child_name"], second.facts["parent_name"]) == ("Chloe", "Lim Siew Ling")


def test_a_tanglish_case_ending_after_a_lower_case_name_is_not_part_of_it():
    assert read("en paiyan arjun ku 8 vayasu").facts.get("child_name") == "Arjun"
