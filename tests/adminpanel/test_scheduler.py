"""The scheduled work: one registry for beat, the embedded scheduler and run_scheduled; runs are due-based,
claimed once per interval in the database, and a failing job never stops the others."""

import datetime as dt
import importlib
import threading

import pytest
import time_machine
from celery import current_app
from django.conf import settings
from django.core.management import CommandError, call_command
from django.utils.module_loading import import_string

from plumbing.models import JobRun
from plumbing.scheduling import embedded, runner
from plumbing.scheduling.jobs import JOBS, Job, job_named

pytestmark = pytest.mark.django_db(transaction=True)

MOMENT = dt.datetime(2027, 3, 1, 2, 0, tzinfo=dt.UTC)
CALLS: list[str] = []


def counted() -> str:
    CALLS.append("ran")
    return f"{len(CALLS)} call(s)"


def broken() -> str:
    raise RuntimeError("the job is broken")


@pytest.fixture
def fake_jobs(monkeypatch):
    CALLS.clear()
    jobs = (Job("counted", f"{__name__}.counted", 60, "counts its calls"),
            Job("broken", f"{__name__}.broken", 60, "always fails"),
            Job("hourly", f"{__name__}.counted", 3600, "counts too, hourly"))
    monkeypatch.setattr(runner, "JOBS", jobs)
    return jobs


def test_beat_runs_exactly_the_registry_through_run_job():
    assert set(current_app.conf.beat_schedule) == {job.name for job in JOBS}
    for job in JOBS:
        entry = current_app.conf.beat_schedule[job.name]
        assert (entry["task"], entry["args"], entry["schedule"]) == ("plumbing.tasks.run_job", (job.name,),
                                                                      float(job.every_seconds))
        task = import_string(job.task)
        assert task.name == job.task == current_app.tasks[job.task].name, "the task's name is its import path"
    assert {"end-idle-conversations", "redispatch-stale-inbound", "pipedrive-reconcile", "pipedrive-catch-up",
            "tour-reminders"} <= {job.name for job in JOBS}


def test_a_job_runs_once_per_interval_whoever_asks(fake_jobs):
    with time_machine.travel(MOMENT, tick=False) as clock:
        first = runner.run_due(names=["counted"])
        assert [(o.ran, o.result) for o in first] == [(True, "1 call(s)")]
        assert runner.run_due(names=["counted"])[0].ran is False
        clock.shift(dt.timedelta(seconds=53))
        assert runner.run_due(names=["counted"])[0].ran is False, "not yet due"
        clock.shift(dt.timedelta(seconds=1))
        assert runner.run_due(names=["counted"])[0].ran is True, "due (within the 10% slack of a timer)"
    row = JobRun.objects.get(name="counted")
    assert (row.runs, row.last_result, row.last_started_at) == (2, "2 call(s)", MOMENT + dt.timedelta(seconds=54))


def test_a_failing_job_is_recorded_and_the_others_still_run(fake_jobs):
    outcomes = runner.run_due()
    assert [(o.job.name, o.ran, bool(o.error)) for o in outcomes] == [
        ("counted", True, False), ("broken", True, True), ("hourly", True, False)]
    assert JobRun.objects.get(name="broken").last_error == "RuntimeError: the job is broken"


def test_two_processes_claim_each_interval_once(fake_jobs):
    job = fake_jobs[0]
    start = threading.Barrier(6)
    claims = []

    def claim():
        from django.db import connection

        try:
            start.wait()
            claims.append(runner.claim(job, MOMENT))
        finally:
            connection.close()

    threads = [threading.Thread(target=claim) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert sorted(claims) == [False] * 5 + [True]


def test_run_scheduled_says_what_ran_and_what_was_not_due(fake_jobs, capsys):
    with pytest.raises(CommandError, match="1 scheduled job"):
        call_command("run_scheduled")
    out = capsys.readouterr().out
    assert "ran      counted" in out and "1 call(s)" in out
    assert "FAILED   broken" in out and "the job is broken" in out
    assert "3 job(s) ran, 0 not due, 1 failed." in out

    call_command("run_scheduled", "--job", "counted", "--job", "hourly")
    out = capsys.readouterr().out
    assert "not due  counted (next at" in out and "not due  hourly" in out and "0 job(s) ran, 2 not due" in out
    call_command("run_scheduled", "--job", "hourly", "--force")
    assert "ran      hourly" in capsys.readouterr().out
    with pytest.raises(CommandError, match="Unknown job"):
        call_command("run_scheduled", "--job", "nope")


def test_beat_entry_point_records_the_run(fake_jobs, monkeypatch):
    from plumbing import tasks

    monkeypatch.setattr(tasks, "job_named", lambda name: next(j for j in fake_jobs if j.name == name))
    assert tasks.run_job.apply(args=["counted"]).get().startswith("ran      counted")
    assert tasks.run_job.apply(args=["counted"]).get().startswith("not due  counted")


def test_every_registered_job_runs_on_an_empty_database():
    outcomes = runner.run_due()
    assert [o.job.name for o in outcomes] == [job.name for job in JOBS]
    assert all(o.ran and not o.error for o in outcomes), [o.line() for o in outcomes]
    assert job_named("tour-reminders").every_seconds == 60


# --- the embedded scheduler ------------------------------------------------------------------------------
def test_the_embedded_scheduler_does_not_start_in_tests():
    importlib.import_module("config.asgi")  # the ASGI app starts it where it should run
    assert settings.EMBEDDED_SCHEDULER is False
    assert not embedded.enabled() and not embedded.running()
    assert embedded.start() is False and not embedded.running()


def test_it_starts_only_with_eager_celery_and_only_once(settings, monkeypatch):
    settings.EMBEDDED_SCHEDULER = True
    settings.CELERY_TASK_ALWAYS_EAGER = False
    assert not embedded.enabled(), "with a broker, beat runs the jobs"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    assert embedded.enabled()

    stop = threading.Event()
    monkeypatch.setattr(embedded, "_loop", stop.wait)
    monkeypatch.setattr(embedded, "_thread", None)
    try:
        assert embedded.start() is True and embedded.running()
        assert embedded.start() is False, "never twice in one process"
    finally:
        stop.set()


def test_a_tick_runs_what_is_due(fake_jobs):
    assert [o.job.name for o in embedded.tick() if o.ran] == ["counted", "broken", "hourly"]
    assert not any(o.ran for o in embedded.tick())
