"""The scenario suite's machinery: the command and its report, checks that can fail, the state diff, the parent.

These test the evaluator, not the agent: a run of real scenarios with the offline
model proves the harness can pass, deliberately wrong expectations prove it can
fail, and a stray change made behind the agent's back proves the diff sees it.
"""

import dataclasses
import datetime as dt
import json
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from bookings import services as booking_services
from bookings.models import School, TourBooking
from quality.evaluation import scenarios as suite
from quality.evaluation.checks import Booked, Cancelled, Said, check_state, diff, snapshot
from quality.evaluation.parent import asks_in, parse_options
from quality.evaluation.runner import pass_hat, run_scenario
from quality.evaluation.world import SLUG_PREFIX, Booking, build_world, destroy_world, scenario_days
from tests.chatbot import scripted_model

pytestmark = [pytest.mark.django_db(transaction=True)]

RICH = suite.get("book-rich-message")  # "Jon Tan ... Mia, 5, on {tue} at 9am"


@pytest.fixture(autouse=True)
def _offline_and_fast():
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0):
        yield


def run(scenario):
    return async_to_sync(run_scenario)(scenario)


def test_command_runs_a_flow_and_writes_the_json_report(tmp_path):
    path = tmp_path / "eval.json"
    out = StringIO()
    call_command("evaluate", "--flow", "booking", "--k", "1", "--json", str(path), stdout=out)

    report = json.loads(path.read_text())
    booking_ids = [s.id for s in suite.SCENARIOS if s.flow == "booking"]
    assert report["model"] == "offline/policy" and report["k"] == 1
    assert set(report["flows"]) == {"booking"}
    assert [s["id"] for s in report["scenarios"]] == booking_ids
    overall = report["overall"]
    assert overall["scenarios"] == len(booking_ids) and overall["runs"] == len(booking_ids)
    assert overall["pass_1"] == pytest.approx(overall["passed_runs"] / overall["runs"], abs=1e-4)
    assert set(overall["pass_hat"]) == {"1"} and report["flows"]["booking"] == overall
    first = report["scenarios"][0]
    assert set(first) >= {"id", "flow", "title", "runs", "passed_runs", "pass_1", "pass_k", "results"}
    result = first["results"][0]
    assert set(result) >= {"run", "passed", "failures", "transcript", "turns", "seconds", "models"}
    assert result["transcript"][0]["role"] == "parent" and result["transcript"][1]["role"] == "concierge"
    rich = next(s for s in report["scenarios"] if s["id"] == "book-rich-message")
    assert rich["pass_k"] == 1.0  # the harness can pass: the simplest booking works end to end
    assert report["environment"]["database"] in ("sqlite", "postgresql")
    assert "booking" in out.getvalue() and "pass^1" in out.getvalue()
    assert not School.objects.filter(slug__startswith=SLUG_PREFIX).exists()  # every run cleaned up


def test_a_booking_at_a_time_the_parent_never_asked_for_is_a_failure():
    broken = dataclasses.replace(RICH, id="broken-time",
                                 expect=(Booked("tue", "16:00", "Mia", 5, "Jon Tan", "+6591234567"),),
                                 told=(Said("Thursday"),))
    result = run(broken)

    assert not result.passed
    failures = "\n".join(result.failures)
    assert "at 16:00" in failures and "time='09:00' (wanted '16:00')" in failures
    assert "unexpected new booking" in failures  # the 09:00 booking that was really made is unexplained
    assert "seats on" in failures
    assert "to mention 'Thursday'" in failures
    assert not School.objects.filter(slug__startswith=SLUG_PREFIX).exists()


def test_a_reply_that_claims_a_booking_the_turn_did_not_make_fails_the_run(truthful_replies):
    model = scripted_model.install()
    model.script = [{"content": "All set: I've booked Mia's tour for Tuesday at 9am."}]
    with override_settings(LLM_MODEL="scripted/test"):
        result = run(dataclasses.replace(RICH, id="claims-a-booking", follow_up=False, max_turns=1))
    assert not result.passed
    assert any("the reply says booked" in f and "which the turn did not do" in f for f in result.failures)
    assert [c.kind for c in truthful_replies.take()] == ["booked"]  # the tests' invariant saw it too


def test_the_command_reports_a_failing_scenario_and_fail_under_exits(monkeypatch):
    broken = dataclasses.replace(RICH, id="broken-child", expect=(Booked("tue", "09:00", "Leo"),))
    monkeypatch.setattr(suite, "SCENARIOS", [broken])
    out = StringIO()
    with pytest.raises(CommandError, match="below --fail-under"):
        call_command("evaluate", "--k", "1", "--fail-under", "0.5", stdout=out)
    printed = out.getvalue()
    assert "broken-child" in printed and "child_name='Mia' (wanted 'Leo')" in printed
    assert "Parent" in printed and "Concierge" in printed  # the failing run's transcript


def test_the_state_diff_catches_a_stray_cancellation():
    world = build_world(fixture="tampines", persona_name="Jon Tan", persona_phone="+6591234567",
                        setup=(Booking("mine", "mon", "09:00"), Booking("theirs", "tue", "11:00", owner="other")))
    try:
        before = snapshot(world.school, world.contact.pk)
        theirs = TourBooking.objects.get(reference=world.refs["theirs"])
        booking_services.cancel_tour(booking=theirs, reason="stray")
        changes = diff(before, snapshot(world.school, world.contact.pk))

        failures = check_state(changes, world, [])
        assert any(f"unexpected change to booking {theirs.reference}" in f and "'cancelled'" in f for f in failures)
        assert any("seats on" in f and "by -1, expected +0" in f for f in failures)

        changes.claimed.clear()
        assert check_state(changes, world, [Cancelled("theirs")]) == []  # explained: no failure
        changes.claimed.clear()
        wrong = check_state(changes, world, [Cancelled("mine")])
        assert any("to be cancelled; it is scheduled" in f for f in wrong)
        assert any(f"unexpected change to booking {theirs.reference}" in f for f in wrong)
    finally:
        destroy_world(world.school.pk)
    assert not School.objects.filter(pk=world.school.pk).exists()


def test_nothing_changed_passes_only_an_empty_diff():
    world = build_world(fixture="riverside")
    try:
        before = snapshot(world.school, world.contact.pk)
        assert diff(before, snapshot(world.school, world.contact.pk)).is_empty
        assert check_state(diff(before, snapshot(world.school, world.contact.pk)), world, []) == []
    finally:
        destroy_world(world.school.pk)


def test_scenario_days_are_a_weekday_week_at_least_three_days_ahead():
    for offset in range(7):  # whatever day the suite runs
        today = dt.date(2026, 11, 16) + dt.timedelta(days=offset)
        days = scenario_days(today)
        assert days["mon"].date.weekday() == 0 and (days["mon"].date - today).days >= 3
        assert days["fri"].date - days["mon"].date == dt.timedelta(days=4)
        assert days["tue2"].date - days["tue"].date == dt.timedelta(days=7)
        assert (days["far"].date - today).days >= 40
    assert f"{days['tue']}" == days["tue"].spoken and days["tue"].weekday == "Tuesday"


def test_the_parent_reads_slots_and_questions_from_any_wording():
    today = dt.date(2026, 11, 22)
    offline = "Here are the open tour slots:\n1. Tuesday 1 December at 09:00\n2. Tuesday 1 December at 11:00\nWhich?"
    hosted = ("Sure! These times are free:\n- **Tue, December 1** – 9:00 AM\n- **Wed, December 2** – 2 PM\n"
              "Which works best? Could you also share your name and a phone number?")
    assert [(o.date, o.time) for o in parse_options(offline, today)] == [
        (dt.date(2026, 12, 1), "09:00"), (dt.date(2026, 12, 1), "11:00")]
    assert [(o.date, o.time) for o in parse_options(hosted, today)] == [
        (dt.date(2026, 12, 1), "09:00"), (dt.date(2026, 12, 2), "14:00")]
    assert {"parent_name", "parent_phone"} <= asks_in(hosted)
    assert asks_in("What's your child's name, and how old are they?") >= {"child_name", "child_age"}
    assert asks_in("Happy to help! I'll need:\n- your full name\n- a phone number\n- your child's name and age") >= {
        "parent_name", "parent_phone", "child_name", "child_age"}
    assert asks_in("You're all set! Your booking reference is T-ABC234. We'll call your phone if needed.") == set()


def test_pass_hat_is_taubench_pass_k():
    assert pass_hat(3, 3, 3) == 1.0
    assert pass_hat(2, 3, 3) == 0.0
    assert pass_hat(2, 3, 1) == pytest.approx(2 / 3)
    assert pass_hat(2, 3, 2) == pytest.approx(1 / 3)


def test_every_scenario_is_well_formed():
    ids = [s.id for s in suite.SCENARIOS]
    assert len(ids) == len(set(ids)) and len(ids) >= 40
    assert set(suite.flow_names()) >= {"booking", "faq", "correction", "reschedule", "cancel", "callback",
                                       "topic_switch", "burst", "availability", "safety"}
