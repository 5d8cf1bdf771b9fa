"""`evaluate --chat`: the chat-style conversation measure (quality/evaluation/chat_conversations.py).

The scorer is tested on observed runs built by hand (each check once right, once wrong), the stand-in on dialogue
states, and the whole path once through the offline policy: a conversation that goes right and one whose
expectation it cannot meet.
"""

import json
from io import StringIO
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.test import override_settings

from chatbot.agent.dialogue import DialogueState, Option
from quality.evaluation.chat_conversations import (
    ChatRun,
    Open,
    Scored,
    Situation,
    Step,
    load_cases,
    parse_case,
    run_case,
    score,
    stand_in,
    summary,
    worded_state,
)
from quality.evaluation.checks import Snapshot

BOOKING = {"id": "en-t", "language": "en",
           "turns": ["tour next tues afternoon pls", ["I'm Jon Tan", "son Leo, 5", "9123 4567"], "ok go ahead"],
           "facts": {"parent_name": "Jon Tan", "phone": "+65 9123 4567", "child_name": "Leo", "child_age": 5},
           "expect": {"booked": [{"date": "2026-12-08", "time": "14:00|16:00", "child_name": "Leo", "child_age": 5}],
                      "parent_name": "Jon Tan", "callback": None, "cancelled": 0, "reply_mentions": []}}
CALLBACK = {"id": "en-c", "language": "en", "turns": ["call me tmrw after 5", "Jon Tan 9123 4567"],
            "facts": {"parent_name": "Jon Tan", "phone": "+65 9123 4567"},
            "expect": {"booked": [], "parent_name": "Jon Tan", "callback": {"date": "2026-12-04", "after": "17:00",
                                                                            "before": None},
                       "cancelled": 0, "reply_mentions": [["call"]]}}


def tour(ref: str, date: str, time: str, *children: tuple[str, int | None], status: str = "scheduled",
         parent: str = "Jon Tan", owner: str = "me") -> dict:
    return {"reference": ref, "status": status, "date": date, "time": time, "owner": owner, "parent_name": parent,
            "child_name": " and ".join(n for n, _a in children), "child_details": tuple(children)}


def call(ref: str, day: str, start: str, end: str, parent: str = "Jon Tan") -> dict:
    return {"reference": ref, "status": "open", "due_date": day, "window_start": start, "window_end": end,
            "parent_name": parent, "owner": "me"}


def state(bookings=(), callbacks=(), name: str = "", children: dict | None = None) -> Snapshot:
    return Snapshot({b["reference"]: b for b in bookings}, {c["reference"]: c for c in callbacks}, {},
                    {"name": name, "preferred_name": "", "children": sorted(children or {}),
                     "child_ages": children or {}, "context": {}}, {})


def observed(data: dict, *steps: tuple[Snapshot, dict], replies=("Hello!", "Done."), gave=()) -> ChatRun:
    """A run of `data` whose messages left these (state, collected) pairs, with these replies."""
    case = parse_case(data)
    transcript = []
    for message, reply in zip([m for t in case.turns for m in t], replies, strict=False):
        transcript += [{"role": "parent", "text": message}, {"role": "concierge", "text": reply}]
    return ChatRun(case, state(), [Step(f"message {n}", s, c) for n, (s, c) in enumerate(steps, 1)], transcript,
                   set(gave))


BOOKED_RIGHT = state([tour("T-1", "2026-12-08", "16:00", ("Leo", 5))], name="Jon Tan", children={"Leo": 5})


def test_a_booking_at_one_of_the_right_times_with_the_right_names_is_right():
    run = observed(BOOKING, (state(), {"children": [{"name": "Leo", "age": 5}], "preferred_time": "16:00"}),
                   (BOOKED_RIGHT, {}))
    assert score(run) == []


def test_a_booking_at_another_time_is_wrong_and_says_what_was_booked():
    wrong = state([tour("T-1", "2026-12-08", "11:00", ("Leo", 5))], name="Jon Tan", children={"Leo": 5})
    reasons = score(observed(BOOKING, (wrong, {})))
    assert any(r.startswith("tours: ['2026-12-08 11:00 Leo (5)']; wanted ['2026-12-08 14:00|16:00 Leo (5)']")
               for r in reasons)
    assert any("wrong time stored" in r and "2026-12-08 11:00" in r for r in reasons)


def test_a_wrong_age_or_a_missing_tour_is_wrong():
    aged = state([tour("T-1", "2026-12-08", "14:00", ("Leo", 4))], name="Jon Tan", children={"Leo": 4})
    assert any("Leo aged 4" in r for r in score(observed(BOOKING, (aged, {}))))
    assert any(r.startswith("tours: none") for r in score(observed(BOOKING, (state(name="Jon Tan"), {}))))


def test_a_filler_stored_as_a_name_on_the_way_is_wrong_even_when_the_end_is_right():
    run = observed(BOOKING, (state(), {"parent_name": "Maybe"}), (state(), {"children": [{"name": "Whatever"}]}),
                   (BOOKED_RIGHT, {}))
    reasons = score(run)
    assert reasons == ["wrong parent name stored after 'message 1': name being collected 'Maybe'",
                       "wrong child stored after 'message 2': child being collected 'Whatever'"]


def test_a_name_cut_short_at_the_end_is_wrong():
    cut = state([tour("T-1", "2026-12-08", "14:00", ("Leo", 5), parent="Jon")], name="Jon", children={"Leo": 5})
    reasons = score(observed(BOOKING, (cut, {})))
    assert "parent name at the end 'Jon'; wanted 'Jon Tan'" in reasons


def test_the_facts_name_counts_only_once_the_stand_in_gave_it():
    data = {**BOOKING, "facts": {**BOOKING["facts"], "parent_name": "Jon Tan Wei"}}
    full = state([tour("T-1", "2026-12-08", "14:00", ("Leo", 5), parent="Jon Tan Wei")], name="Jon Tan Wei",
                 children={"Leo": 5})
    assert any("parent name at the end" in r for r in score(observed(data, (full, {}))))
    assert score(observed(data, (full, {}), gave={"parent_name"})) == []


def test_a_collected_time_the_parent_never_said_is_wrong_one_they_wrote_is_not():
    data = {**BOOKING, "expect": {**BOOKING["expect"], "booked": [{"date": "2026-12-08", "time": "14:00",
                                                                   "child_name": "Leo", "child_age": 5}]}}
    right = state([tour("T-1", "2026-12-08", "14:00", ("Leo", 5))], name="Jon Tan", children={"Leo": 5})
    assert any("tour time 10:00 being collected" in r
               for r in score(observed(data, (state(), {"preferred_time": "10:00"}), (right, {}))))
    said = {**data, "turns": ["tour next tues at 9? no wait, 2pm", *data["turns"][1:]]}
    assert score(observed(said, (state(), {"preferred_time": "09:00"}), (right, {}))) == []


def test_a_call_back_inside_the_window_is_right_outside_it_wrong():
    inside = state(callbacks=[call("C-1", "2026-12-04", "17:00", "18:00")], name="Jon Tan")
    assert score(observed(CALLBACK, (inside, {}), replies=("ok", "I'll ask them to call you"))) == []
    anytime = state(callbacks=[call("C-1", "2026-12-04", "09:00", "18:00")], name="Jon Tan")
    reasons = score(observed(CALLBACK, (anytime, {}), replies=("ok", "I'll ask them to call you")))
    assert reasons[0].startswith("call back: ['2026-12-04 09:00-18:00 (open)']; wanted one on 2026-12-04, after 17:00")
    assert any("wrong time stored" in r for r in reasons)


def test_a_missing_mention_and_a_repeated_reply_are_wrong():
    run = observed(CALLBACK, (state(callbacks=[call("C-1", "2026-12-04", "17:00", "18:00")], name="Jon Tan"), {}),
                   replies=("Your name?", "Your name?"))
    assert score(run) == ["no reply mentions any of ['call']", "the same reply twice in a row: 'Your name?'"]


def test_browsing_stores_no_name_and_books_nothing():
    data = {"id": "en-f", "language": "en", "turns": ["fees for yr 1?"], "facts": {"parent_name": "Jon Tan"},
            "expect": {"booked": [], "parent_name": None, "callback": None, "cancelled": 0,
                       "reply_mentions": [["32,400"]]}}
    assert score(observed(data, (state(), {}), replies=("S$32,400 a year",))) == []
    reasons = score(observed(data, (state(name="Jon Tan"), {"children": [{"name": "Yr", "age": 1}]}),
                             replies=("S$32,400 a year",)))
    assert reasons == ["wrong parent name stored after 'message 1': contact name 'Jon Tan'",
                       "wrong child stored after 'message 1': child being collected 'Yr'"]


def test_cancelling_counts_the_parents_cancelled_tours():
    data = {"id": "sg-x", "language": "en-sg", "turns": ["cancel my tour tues", "ya"],
            "facts": {"parent_name": "Jon Tan", "phone": "+65 9123 4567"},
            "existing": [{"date": "2026-12-08", "time": "14:00", "child_name": "Leo", "child_age": 5}],
            "expect": {"booked": [], "parent_name": "Jon Tan", "callback": None, "cancelled": 1, "reply_mentions": []}}
    cancelled = state([tour("T-1", "2026-12-08", "14:00", ("Leo", 5), status="cancelled")], name="Jon Tan")
    kept = state([tour("T-1", "2026-12-08", "14:00", ("Leo", 5))], name="Jon Tan")
    assert score(observed(data, (cancelled, {}))) == []
    assert score(observed(data, (kept, {}))) == ["tours: ['2026-12-08 14:00 Leo (5)']; wanted none",
                                                 "cancelled: 0 tour(s); wanted 1"]


def test_a_line_of_the_wrong_shape_is_refused_with_its_id():
    with pytest.raises(ValueError, match="en-t: language 'fr'"):
        parse_case({**BOOKING, "language": "fr"})
    with pytest.raises(ValueError, match=r"en-t booked: \['2pm'\] are not HH:MM"):
        parse_case({**BOOKING, "expect": {**BOOKING["expect"], "booked": [{"date": "2026-12-08", "time": "2pm"}]}})


def test_the_per_language_rows_and_the_total():
    results = [Scored("a", "en", True, [], []), Scored("b", "en", False, ["x"], []), Scored("c", "ta", True, [], [])]
    assert summary(results) == [
        {"language": "en", "conversations": 2, "right": 1, "rate": 0.5},
        {"language": "ta", "conversations": 1, "right": 1, "rate": 1.0},
        {"language": "total", "conversations": 3, "right": 2, "rate": 0.6667}]


# --- the stand-in --------------------------------------------------------------------------------------------------


def owed(case) -> Open:
    return Open(list(case.expect.booked), 0, False)


def test_the_stand_in_gives_only_details_no_turn_gives_in_the_parents_language():
    case = parse_case({**BOOKING, "language": "ms"})
    asked = DialogueState(asked=["parent_name", "parent_phone", "child_name", "child_age"])
    message, gave = stand_in(case, asked, Situation(owed(case), frozenset()))
    assert (message, gave) == (None, set())  # name, phone and the child are all in the turns
    quiet = parse_case({**BOOKING, "language": "ms", "turns": ["lawatan selasa depan petang"]})
    message, gave = stand_in(quiet, asked, Situation(owed(quiet), frozenset()))
    assert message == "Nama saya Jon Tan. Nombor saya +65 9123 4567. Nama anak saya Leo, 5 tahun"
    assert gave == {"parent_name", "parent_phone", "child_name", "child_age"}


def test_the_stand_in_says_yes_to_a_right_read_back_and_no_to_a_wrong_one_once_the_turns_are_over():
    case = parse_case(BOOKING)
    right = DialogueState(asked=["read_back"], awaiting=[{"tool": "book_tour", "action": "book",
                                                          "read_back": {"date": "2026-12-08", "time": "16:00"}}])
    wrong = DialogueState(asked=["read_back"], awaiting=[{"tool": "book_tour", "action": "book",
                                                          "read_back": {"date": "2026-12-08", "time": "09:00"}}])
    over = Situation(owed(case), frozenset(), last_turn_faced=DialogueState())
    assert stand_in(case, right, over)[0] == "Yes"
    assert stand_in(case, wrong, over)[0] == "No"
    assert stand_in(case, right, Situation(owed(case), frozenset()))[0] is None  # turns remain: theirs to answer


def test_a_yes_the_last_turn_already_gave_is_not_given_again():
    case = parse_case(BOOKING)
    asking = DialogueState(asked=["read_back"], awaiting=[{"tool": "book_tour", "action": "book",
                                                           "read_back": {"date": "2026-12-08", "time": "16:00"}}])
    assert stand_in(case, asking, Situation(owed(case), frozenset(), last_turn_faced=asking))[0] is None


def test_the_stand_in_picks_from_a_list_only_where_the_expectation_leaves_the_time_open():
    options = [Option(1, "Tue 8 Dec 09:00", "2026-12-08", "09:00"), Option(2, "Tue 8 Dec 16:00", "2026-12-08", "16:00")]
    listed = DialogueState(asked=["choice"], options=options)
    case = parse_case(BOOKING)
    over = Situation(owed(case), frozenset(), last_turn_faced=DialogueState())
    assert stand_in(case, listed, over)[0] == "Tue 8 Dec 16:00"
    named = parse_case({**BOOKING, "expect": {**BOOKING["expect"], "booked": [
        {"date": "2026-12-08", "time": "16:00", "child_name": "Leo", "child_age": 5}]}})
    assert stand_in(named, listed, Situation(owed(named), frozenset(), last_turn_faced=DialogueState()))[0] is None


def test_a_reply_that_declares_nothing_is_read_from_its_words():
    reply = "These are open:\n1. Tuesday 8 December at 14:00\n2. Tuesday 8 December at 16:00\nWhich one? And your name?"
    read = worded_state(reply)
    assert {"choice", "parent_name"} <= set(read.asked)
    assert [(o.date, o.time) for o in read.options] == [("2026-12-08", "14:00"), ("2026-12-08", "16:00")]


@pytest.mark.django_db(transaction=True)
def test_a_setup_the_school_refuses_is_a_wrong_conversation_not_a_crash():
    past = {**BOOKING, "existing": [{"date": "2026-11-02", "time": "14:00", "child_name": "Leo", "child_age": 5}]}
    run = async_to_sync(run_case)(parse_case(past))
    assert run.error.startswith("setup failed") and score(run)[0].startswith("error: setup failed")


# --- the whole path --------------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_command_runs_each_conversation_and_scores_it(tmp_path: Path):
    direct = {"id": "en-direct", "language": "en",
              "turns": ["Hi, I'd like to book a tour on Tuesday 8 December at 11am for my son Leo, he is 4. "
                        "I'm Jon Tan, 91234567"],
              "facts": {"parent_name": "Jon Tan", "phone": "+65 9123 4567", "child_name": "Leo", "child_age": 4},
              "expect": {"booked": [{"date": "2026-12-08", "time": "11:00", "child_name": "Leo", "child_age": 4}],
                         "parent_name": "Jon Tan", "callback": None, "cancelled": 0, "reply_mentions": []}}
    elsewhere = {**direct, "id": "en-elsewhere", "expect": {**direct["expect"], "booked": [
        {"date": "2026-12-09", "time": "11:00", "child_name": "Leo", "child_age": 4}]}}
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(d) for d in (direct, elsewhere)) + "\n",
                                         encoding="utf-8")
    assert [c.id for c in load_cases(tmp_path)] == ["en-direct", "en-elsewhere"]
    report, out = tmp_path / "report.json", StringIO()
    with override_settings(LLM_MODEL="offline/policy"):
        call_command("evaluate", "--chat", str(tmp_path), "--show-failures", "1", "--json", str(report), stdout=out)
    text = out.getvalue()
    assert "50.0% (1/2)" in text and "en-elsewhere" in text and "WRONG" in text
    assert "Concierge" in text and "Stand-in" in text  # the miss's transcript, with the stand-in's yes
    results = {r["id"]: r for r in json.loads(report.read_text(encoding="utf-8"))["results"]}
    assert results["en-direct"]["right"] and results["en-direct"]["reasons"] == []
    miss = results["en-elsewhere"]["reasons"][0]  # the read-back of Tuesday got a no: nothing was booked
    assert miss.startswith("tours: ") and miss.endswith("wanted ['2026-12-09 11:00 Leo (4)']")
