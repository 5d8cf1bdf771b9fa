"""Scheduled conversation housekeeping."""

from celery import shared_task

from chatbot.services import end_idle_conversations


@shared_task(acks_late=True)
def end_idle_conversations_task() -> int:
    """Session end for conversations idle past the active-context TTL."""
    return end_idle_conversations()
