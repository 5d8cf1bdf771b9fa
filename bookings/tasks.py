"""Time-based booking work, run by the scheduled-job registry (plumbing/scheduling/jobs.py)."""

from celery import shared_task

from bookings import waitlist


@shared_task(name="bookings.tasks.expire_seat_offers")
def expire_seat_offers() -> int:
    """End waitlist holds past their time; each seat goes to the next family waiting."""
    return waitlist.expire_offers()
