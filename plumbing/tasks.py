"""Celery beat's entry point: beat fires each registry job through `run_job`, which records it like the other
runners do (and skips it when another runner already ran it within its interval)."""

from celery import shared_task

from plumbing.scheduling import runner
from plumbing.scheduling.jobs import job_named


@shared_task(acks_late=True, name="plumbing.tasks.run_job")
def run_job(name: str) -> str:
    outcome = runner.run_due(names=[job_named(name).name])[0]
    return outcome.line()
