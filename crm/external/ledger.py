"""Claim-before-call idempotency for side effects that cannot be undone (posting a message).

    attempt = ledger.begin("chatwoot:message:42:0", "chatwoot")
    if attempt.done: skip                     # already happened
    if attempt.ambiguous: check the other side first (reconcile), or give up
    ... call ...
    ledger.finish(attempt, external_id)       # or ledger.release(attempt, error) if it surely did not happen

The claim is a row lock + state change in one short transaction, so two workers
running the same task (a redelivery) cannot both get "go". A claim left
`in_flight` by a worker that died is only treated as abandoned once it is older
than the task time limit, and then it is *ambiguous*: the call may have landed.
"""

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from crm.external.http import TransientError
from crm.models import ExternalCall

State = ExternalCall.State


@dataclass
class Attempt:
    row: ExternalCall
    go: bool = False
    done: bool = False
    ambiguous: bool = False
    given_up: bool = False

    @property
    def external_id(self) -> str:
        return self.row.external_id


def _stale_before() -> dt.datetime:
    return timezone.now() - dt.timedelta(seconds=settings.EXTERNAL_CALL_CLAIM_TIMEOUT_SECONDS)


def _row(key: str, system: str) -> ExternalCall:
    try:
        with transaction.atomic():
            return ExternalCall.objects.get_or_create(key=key, defaults={"system": system})[0]
    except IntegrityError:  # created concurrently
        return ExternalCall.objects.get(key=key)


def begin(key: str, system: str) -> Attempt:
    """Claim the side effect `key`; raises TransientError while another worker holds a fresh claim."""
    _row(key, system)
    with transaction.atomic():
        row = ExternalCall.objects.select_for_update().get(key=key)
        if row.state == State.DONE:
            return Attempt(row, done=True)
        if row.state in (State.UNKNOWN, State.FAILED):
            return Attempt(row, given_up=True)
        if row.state == State.IN_FLIGHT and row.claimed_at and row.claimed_at > _stale_before():
            raise TransientError(system, f"{key} is being sent by another worker")
        ambiguous = row.state in (State.IN_FLIGHT, State.AMBIGUOUS)
        row.state = State.IN_FLIGHT
        row.claimed_at = timezone.now()
        row.attempts += 1
        row.save(update_fields=["state", "claimed_at", "attempts", "updated_at"])
    return Attempt(row, go=not ambiguous, ambiguous=ambiguous)


def _set(attempt: Attempt, **fields) -> None:
    for name, value in fields.items():
        setattr(attempt.row, name, value)
    ExternalCall.objects.filter(pk=attempt.row.pk).update(updated_at=timezone.now(), **fields)


def finish(attempt: Attempt, external_id: str = "", fingerprint: str = "") -> None:
    """The side effect happened."""
    _set(attempt, state=State.DONE, external_id=str(external_id or "")[:128], done_at=timezone.now(),
         last_error="", **({"fingerprint": fingerprint} if fingerprint else {}))
    attempt.done, attempt.go = True, False


def release(attempt: Attempt, error: str) -> None:
    """The call surely did not happen (no connection, an error status): it may be tried again."""
    _set(attempt, state=State.PENDING, last_error=error[:2000])


def ambiguous(attempt: Attempt, error: str) -> None:
    """The call may have happened (response lost): check before trying again."""
    _set(attempt, state=State.AMBIGUOUS, last_error=error[:2000])


def refused(attempt: Attempt, error: str) -> None:
    """The other side refused it (4xx): never retried automatically."""
    _set(attempt, state=State.FAILED, last_error=error[:2000])


def give_up(attempt: Attempt, error: str) -> None:
    """It may or may not have happened and there is no way to check: never repeated automatically."""
    _set(attempt, state=State.UNKNOWN, last_error=error[:2000])


def reopen(key: str) -> None:
    """Staff asked to try again a call that was given up or refused (admin "retry")."""
    ExternalCall.objects.filter(key=key, state__in=[State.UNKNOWN, State.FAILED, State.AMBIGUOUS]).update(
        state=State.PENDING, updated_at=timezone.now())
