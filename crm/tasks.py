"""Pipedrive sync on Celery: retried with backoff, idempotent, one contact at a time.

`sync_contact_to_pipedrive` is queued (on commit) whenever the booking flow
changes a contact's CRM rows; `pipedrive_reconcile` (scheduled) re-queues any
contact whose rows Pipedrive has not seen, so a broker hiccup or a dead-lettered
task never loses a sync: it only delays it; `pipedrive_catch_up` (scheduled)
runs the syncs that gave up during an outage again, with backoff, until
Pipedrive answers.
"""

import datetime as dt
import logging

from celery import shared_task
from django.conf import settings
from django.db.models import F, Q
from django.dispatch import receiver
from django.utils import timezone

from crm import pipedrive_sync
from crm.external.http import PermanentError, TransientError
from crm.external.tasks import ExternalTask
from crm.models import FailedTask
from crm.pipedrive import SYSTEM, PipedriveClient
from crm.signals import crm_rows_changed
from plumbing.redis import get_redis

logger = logging.getLogger(__name__)

RECONCILE_WINDOW_DAYS = 30
CATCH_UP_REASONS = (FailedTask.Reason.EXHAUSTED, FailedTask.Reason.ERROR)
CATCH_UP_FIRST_DELAY_SECONDS = 60
CATCH_UP_MAX_DELAY_SECONDS = 3600


@shared_task(base=ExternalTask, bind=True, name="crm.tasks.sync_contact_to_pipedrive")
def sync_contact_to_pipedrive(self, contact_id: int) -> dict:
    """Person -> deal -> activities for one contact. One run per contact at a time (a Redis lock)."""
    if not settings.PIPEDRIVE_API_TOKEN:
        return {"skipped": "PIPEDRIVE_API_TOKEN is not set"}
    return sync_now(contact_id, lock_seconds=self.time_limit + 30)


def sync_now(contact_id: int, *, lock_seconds: int) -> dict:
    """The sync itself, here and now (TransientError while another worker syncs the same contact)."""
    lock = get_redis().lock(f"pipedrive:sync:{contact_id}", timeout=lock_seconds, blocking=False)
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
    now = timezone.now()
    # Contacts whose sync gave up and waits for Pipedrive are the catch-up's: not hammered here meanwhile.
    waiting = {int(args[0]) for args in FailedTask.objects.filter(
        task_name=sync_contact_to_pipedrive.name, resolved_at__isnull=True, next_auto_retry_at__gt=now,
    ).values_list("args", flat=True) if args}
    since = now - dt.timedelta(days=RECONCILE_WINDOW_DAYS)
    contacts = [c for c in pipedrive_sync.out_of_date_contacts(since) if c not in waiting]
    for contact_id in contacts:
        sync_contact_to_pipedrive.delay(contact_id)
    if contacts:
        logger.info("pipedrive reconcile queued %d contact(s)", len(contacts))
    return len(contacts)


@shared_task(acks_late=True, name="crm.tasks.pipedrive_catch_up")
def pipedrive_catch_up() -> str:
    """Scheduled: the Pipedrive syncs that gave up during an outage, tried again with backoff (see catch_up)."""
    if not settings.PIPEDRIVE_API_TOKEN:
        return "skipped: PIPEDRIVE_API_TOKEN is not set"
    caught_up, waiting = catch_up()
    return f"{caught_up} caught up, {waiting} waiting for Pipedrive"


def catch_up(now: dt.datetime | None = None, limit: int = 50) -> tuple[int, int]:
    """Run again, once each, the dead-lettered Pipedrive syncs that are due; returns (caught up, still waiting).

    While Pipedrive is down the first one fails and every due one waits longer (1, 2, 4 ... 60 minutes), so
    an outage costs one request per run, not one per contact. Once it answers, each sync runs and its dead
    letters are resolved: nobody has to press Retry. A sync Pipedrive refuses (4xx) is left to staff.
    """
    now = now or timezone.now()
    due = list(FailedTask.objects.filter(task_name=sync_contact_to_pipedrive.name, resolved_at__isnull=True,
                                         reason__in=CATCH_UP_REASONS)
               .filter(Q(next_auto_retry_at__isnull=True) | Q(next_auto_retry_at__lte=now))
               .order_by("created_at")[:limit])
    caught_up, done = 0, set()
    for index, failed in enumerate(due):
        contact_id = int(failed.args[0])
        if contact_id not in done:
            try:
                sync_now(contact_id, lock_seconds=sync_contact_to_pipedrive.time_limit + 30)
            except TransientError as exc:
                for waiting in due[index:]:
                    delay = min(CATCH_UP_MAX_DELAY_SECONDS, CATCH_UP_FIRST_DELAY_SECONDS * 2 ** waiting.auto_retries)
                    FailedTask.objects.filter(pk=waiting.pk).update(
                        auto_retries=F("auto_retries") + 1, next_auto_retry_at=now + dt.timedelta(seconds=delay),
                        error=f"catch-up: {exc}"[:4000])
                logger.info("pipedrive catch-up: Pipedrive still unavailable (%s); %d sync(s) wait", exc,
                            len(due) - index)
                return caught_up, len(due) - index
            except PermanentError as exc:
                FailedTask.objects.filter(pk=failed.pk).update(reason=FailedTask.Reason.REJECTED,
                                                               status_code=exc.status_code, error=str(exc)[:4000])
                continue
            done.add(contact_id)
            caught_up += 1
        FailedTask.objects.filter(pk=failed.pk, resolved_at__isnull=True).update(
            resolved_at=timezone.now(), resolution="Caught up automatically once Pipedrive answered.")
    if caught_up:
        logger.info("pipedrive catch-up: %d contact(s) synced after an outage", caught_up)
    return caught_up, 0


@receiver(crm_rows_changed)
def queue_sync(sender: type, *, contact_id: int, **kwargs: object) -> None:
    """Queue the contact's sync when its CRM rows changed; a broker outage is logged, and the reconcile sweep
    catches up later."""
    try:
        sync_contact_to_pipedrive.delay(contact_id)
    except Exception:  # the booking is committed; never fail it because the queue is down
        logger.exception("could not queue the Pipedrive sync of contact %s; the reconcile sweep will", contact_id)
