"""Pipedrive sync on Celery: retried with backoff, idempotent, one contact at a time.

`sync_contact_to_pipedrive` is queued (on commit) whenever the booking flow
changes a contact's CRM rows; `pipedrive_reconcile` (beat) re-queues any contact
whose rows Pipedrive has not seen, so a broker hiccup or a dead-lettered task
never loses a sync: it only delays it.
"""

import datetime as dt
import logging

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from config.redis import get_redis
from crm import pipedrive_sync
from crm.external.http import TransientError
from crm.external.tasks import ExternalTask
from crm.pipedrive import SYSTEM, PipedriveClient

logger = logging.getLogger(__name__)

RECONCILE_WINDOW_DAYS = 30


@shared_task(base=ExternalTask, bind=True, name="crm.tasks.sync_contact_to_pipedrive")
def sync_contact_to_pipedrive(self, contact_id: int) -> dict:
    """Person -> deal -> activities for one contact. One run per contact at a time (a Redis lock)."""
    if not settings.PIPEDRIVE_API_TOKEN:
        return {"skipped": "PIPEDRIVE_API_TOKEN is not set"}
    lock = get_redis().lock(f"pipedrive:sync:{contact_id}", timeout=self.time_limit + 30, blocking=False)
    if not lock.acquire():
        raise TransientError(SYSTEM, f"contact {contact_id} is being synced by another worker")
    try:
        with PipedriveClient() as client:
            return pipedrive_sync.sync_contact(contact_id, client)
    finally:
        try:
            lock.release()
        except Exception:  # expired: nothing to release
            logger.warning("pipedrive sync lock for contact %s had expired", contact_id)


@shared_task(acks_late=True, name="crm.tasks.pipedrive_reconcile")
def pipedrive_reconcile() -> int:
    """Queue a sync for every contact whose activities Pipedrive has not seen as they are now."""
    if not settings.PIPEDRIVE_API_TOKEN:
        return 0
    since = timezone.now() - dt.timedelta(days=RECONCILE_WINDOW_DAYS)
    contacts = pipedrive_sync.out_of_date_contacts(since)
    for contact_id in contacts:
        sync_contact_to_pipedrive.delay(contact_id)
    if contacts:
        logger.info("pipedrive reconcile queued %d contact(s)", len(contacts))
    return len(contacts)


def queue_sync(contact_id: int) -> None:
    """Queue the contact's sync; a broker outage is logged, and the reconcile sweep catches up later."""
    try:
        sync_contact_to_pipedrive.delay(contact_id)
    except Exception:  # the booking is committed; never fail it because the queue is down
        logger.exception("could not queue the Pipedrive sync of contact %s; the reconcile sweep will", contact_id)
