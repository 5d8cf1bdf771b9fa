"""The one registry of scheduled jobs: Celery beat, the embedded scheduler and `run_scheduled` all read it.

Plain data with no Django imports, so config/celery.py can build beat's schedule from it before Django is set
up. A job is a registered Celery task with no arguments and an interval; every job is idempotent (running it
twice, or late, changes nothing more), so an extra run by an operator or a second process is harmless.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    name: str
    task: str  # the registered Celery task name
    every_seconds: int
    what: str


JOBS: tuple[Job, ...] = (
    Job("end-idle-conversations", "chatbot.tasks.end_idle_conversations_task", 300,
        "end conversations idle past ACTIVE_CONTEXT_TTL_SECONDS"),
    Job("redispatch-stale-inbound", "chatbot.tasks.redispatch_stale_inbound", 60,
        "answer parent messages stored but never answered (web chat, Chatwoot, WhatsApp); resend lost replies"),
    Job("pipedrive-reconcile", "crm.tasks.pipedrive_reconcile", 900,
        "queue a Pipedrive sync for every contact Pipedrive has not seen as it is now"),
    Job("pipedrive-catch-up", "crm.tasks.pipedrive_catch_up", 60,
        "retry, with backoff, the Pipedrive syncs that gave up during an outage"),
    Job("tour-reminders", "chatbot.tasks.send_due_reminders", 60,
        "send the tour reminders that are due (the school's hours before each tour)"),
    Job("expire-seat-offers", "bookings.tasks.expire_seat_offers", 60,
        "end waitlist holds past their time; each seat is offered to the next family waiting"),
)


def job_named(name: str) -> Job:
    for job in JOBS:
        if job.name == name:
            return job
    raise KeyError(f"no scheduled job named {name!r}; known: {', '.join(j.name for j in JOBS)}")


def beat_schedule() -> dict:
    """Beat's schedule: each job through `plumbing.tasks.run_job`, which records its run like the others."""
    return {job.name: {"task": "plumbing.tasks.run_job", "schedule": float(job.every_seconds), "args": (job.name,)}
            for job in JOBS}
