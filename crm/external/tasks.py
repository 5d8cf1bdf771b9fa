"""The base of every Celery task that calls another system, and the dead-letter bookkeeping.

`ExternalTask` gives: late acks (a task survives its worker's death), time
limits, retries with exponential backoff and jitter on `TransientError`
(honouring Retry-After), no retry on `PermanentError` (a 4xx, logged with the
reason), and a `FailedTask` row when it gives up. A later success of the same
task and arguments resolves its open dead letters.
"""

import json
import logging
import random

from celery import Task, shared_task
from django.utils import timezone

from crm.external.http import ExternalError, PermanentError, TransientError
from crm.models import FailedTask

logger = logging.getLogger(__name__)

BACKOFF_BASE_SECONDS = 5
BACKOFF_MAX_SECONDS = 600


class GiveUp(Exception):  # noqa: N818 (a control-flow signal, not an error type)
    """Stop now without retrying and leave a dead letter (e.g. an outcome that cannot be checked)."""

    def __init__(self, message: str, *, ledger_key: str = "", system: str = "") -> None:
        super().__init__(message)
        self.ledger_key = ledger_key
        self.system = system

    def __reduce__(self):
        return GiveUp, (str(self),), dict(self.__dict__)


def signature(name: str, args, kwargs) -> str:
    arguments = json.dumps([list(args or []), kwargs or {}], sort_keys=True, default=str)
    return f"{name}:{arguments}"[:255]


def backoff(retries: int) -> float:
    """5 s, 10 s, 20 s ... capped at 10 min, with full jitter on the upper half."""
    ceiling = min(BACKOFF_MAX_SECONDS, BACKOFF_BASE_SECONDS * 2 ** retries)
    return ceiling / 2 + random.uniform(0, ceiling / 2)


class ExternalTask(Task):
    acks_late = True
    reject_on_worker_lost = True
    max_retries = 8
    time_limit = 60
    soft_time_limit = 45
    ignore_result = True

    def __call__(self, *args, **kwargs):
        try:
            return super().__call__(*args, **kwargs)
        except TransientError as exc:
            if self.request.called_directly or self.request.retries >= self.max_retries:
                raise
            countdown = exc.retry_after if exc.retry_after is not None else backoff(self.request.retries)
            logger.info("%s will retry in %.0fs: %s", self.name, countdown, exc)
            raise self.retry(exc=exc, countdown=countdown) from None

    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        if isinstance(exc, PermanentError):
            reason = FailedTask.Reason.REJECTED
        elif isinstance(exc, TransientError):
            reason = FailedTask.Reason.EXHAUSTED
        elif isinstance(exc, GiveUp):
            reason = FailedTask.Reason.UNKNOWN_OUTCOME
        else:
            reason = FailedTask.Reason.ERROR
        record_failure(self.name, task_id, args, kwargs, reason, exc, retries=self.request.retries or 0)

    def on_success(self, retval, task_id, args, kwargs) -> None:
        FailedTask.objects.filter(signature=signature(self.name, args, kwargs), resolved_at__isnull=True).update(
            resolved_at=timezone.now(), resolution="Succeeded on a later run.")


def record_failure(name: str, task_id: str, args, kwargs, reason: str, exc: BaseException, *, retries: int = 0
                   ) -> FailedTask:
    """The task's dead letter: one open letter per task and arguments (a repeat failure updates it)."""
    fields = dict(task_id=task_id or "", reason=reason, system=getattr(exc, "system", "") or "",
                  status_code=getattr(exc, "status_code", None), ledger_key=getattr(exc, "ledger_key", "") or "",
                  error=str(exc)[:4000], retries=retries)
    key = signature(name, args, kwargs)
    failed = FailedTask.objects.filter(signature=key, resolved_at__isnull=True).order_by("created_at").first()
    if failed is not None:
        FailedTask.objects.filter(pk=failed.pk).update(**fields)
    else:
        failed = FailedTask.objects.create(task_name=name, signature=key, args=list(args or []),
                                           kwargs=dict(kwargs or {}), **fields)
    log = logger.error if reason != FailedTask.Reason.REJECTED else logger.warning
    log("task %s%s gave up (%s): %s", name, list(args or []), reason, exc)
    return failed


@shared_task(acks_late=True)
def retry_failed_task(failed_task_id: int) -> str:
    """Run a dead-lettered task again (the admin's "Retry" action)."""
    from celery import current_app

    from crm.external import ledger

    failed = FailedTask.objects.get(pk=failed_task_id)
    if failed.ledger_key:
        ledger.reopen(failed.ledger_key)
    # Through the registered task (not send_task), so eager mode runs it here and now.
    current_app.tasks[failed.task_name].apply_async(args=failed.args, kwargs=failed.kwargs)
    FailedTask.objects.filter(pk=failed.pk, resolved_at__isnull=True).update(
        resolved_at=timezone.now(), resolution="Retried by staff.")
    return failed.task_name


__all__ = ["ExternalError", "ExternalTask", "GiveUp", "PermanentError", "TransientError", "backoff",
           "record_failure", "retry_failed_task"]
