"""Run the registry's jobs when they are due, once per interval, whoever asks: the embedded scheduler thread,
`manage.py run_scheduled` (operators, cron, tests) or Celery beat (`plumbing.tasks.run_job`).

A run is claimed with a conditional UPDATE on the job's `JobRun` row ("last started at or before now minus
the interval"), which the database serialises: two processes (two daphnes, or beat and an operator) cannot
both claim the same interval. The job's task then runs here, in this process, so its outcome is known.
"""

import datetime as dt
import logging
import time
from dataclasses import dataclass

from django.db import IntegrityError, close_old_connections, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.module_loading import import_string

from plumbing.models import JobRun
from plumbing.scheduling.jobs import JOBS, Job

logger = logging.getLogger(__name__)

# A run counts as due a little early, so a timer that fires on the interval (beat, the embedded thread) is not
# skipped for a few milliseconds of drift.
SLACK_FRACTION = 0.1


@dataclass
class Outcome:
    job: Job
    ran: bool
    result: str = ""
    error: str = ""
    seconds: float = 0.0
    next_due: dt.datetime | None = None

    def line(self) -> str:
        if not self.ran:
            when = f"{self.next_due:%Y-%m-%d %H:%M:%S} UTC" if self.next_due else "now"
            return f"not due  {self.job.name} (next at {when})"
        if self.error:
            return f"FAILED   {self.job.name} in {self.seconds:.2f}s: {self.error}"
        return f"ran      {self.job.name} in {self.seconds:.2f}s: {self.result}"


def _row(job: Job) -> JobRun:
    try:
        with transaction.atomic():
            return JobRun.objects.get_or_create(name=job.name)[0]
    except IntegrityError:  # created by another process at the same moment
        return JobRun.objects.get(name=job.name)


def claim(job: Job, now: dt.datetime) -> bool:
    """Take this interval's run of `job`; False if it ran (or is running) within its interval."""
    _row(job)
    due_before = now - dt.timedelta(seconds=job.every_seconds * (1 - SLACK_FRACTION))
    return bool(JobRun.objects.filter(name=job.name)
                .filter(Q(last_started_at__isnull=True) | Q(last_started_at__lte=due_before))
                .update(last_started_at=now))


def execute(job: Job) -> Outcome:
    """Run the job's task in this process and record the result (an exception is recorded, never raised)."""
    started = time.monotonic()
    result, error = "", ""
    try:
        result = str(import_string(job.task)())
    except Exception as exc:  # one job's failure must not stop the others
        logger.exception("scheduled job %s failed", job.name)
        error = f"{type(exc).__name__}: {exc}"
    seconds = time.monotonic() - started
    JobRun.objects.filter(name=job.name).update(last_finished_at=timezone.now(), last_result=result[:300],
                                                last_error=error, runs=F("runs") + 1)
    return Outcome(job, True, result, error, seconds)


def run_due(now: dt.datetime | None = None, *, force: bool = False, names: list[str] | None = None) -> list[Outcome]:
    """Run every job (or the named ones) that is due now, once; `force` runs them whether due or not."""
    outcomes = []
    for job in JOBS:
        if names and job.name not in names:
            continue
        current = now or timezone.now()
        if force:
            _row(job)
            JobRun.objects.filter(name=job.name).update(last_started_at=current)
        elif not claim(job, current):
            last = JobRun.objects.filter(name=job.name).values_list("last_started_at", flat=True).first()
            outcomes.append(Outcome(job, False, next_due=last + dt.timedelta(seconds=job.every_seconds)
                                    if last else None))
            continue
        outcomes.append(execute(job))
        close_old_connections()
    return outcomes
