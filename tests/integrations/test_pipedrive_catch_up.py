"""The CRM keeps up by itself: a Pipedrive sync that gave up during an outage is tried again by the scheduled
catch-up, with backoff, until Pipedrive answers; a cancelled tour's activity says so and stops being busy.
Pipedrive is the fake on 127.0.0.1 (our client runs)."""

import datetime as dt

import pytest
import time_machine
from django.core.management import call_command
from django.utils import timezone

from bookings import services as bookings
from crm.models import FailedTask
from crm.tasks import catch_up, pipedrive_reconcile
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]

MONDAY_10_SG = dt.datetime(2027, 3, 1, 2, 0, tzinfo=dt.UTC)
WEDNESDAY = dt.date(2027, 3, 3)


@pytest.fixture
def clock():
    with time_machine.travel(MONDAY_10_SG, tick=False) as traveller:
        yield traveller


@pytest.fixture
def parent(clock):
    school = SchoolFactory(time_zone="Asia/Singapore")
    return ContactFactory(school=school, name="Mei Lin Tan", phone="+6591234567", email="mei@mail.example")


def book(parent):
    return bookings.book_tour(school=parent.school, contact=parent, parent_name="Mei Lin Tan",
                              parent_phone="+6591234567", child_name="Tom", child_age=5, local_date=WEDNESDAY,
                              local_time=dt.time(9))


def test_a_sync_that_gave_up_catches_up_once_pipedrive_is_back(clock, parent, pipedrive, capsys):
    pipedrive.down = True
    booking = book(parent)
    [failed] = FailedTask.objects.filter(resolved_at__isnull=True)
    assert failed.task_name == "crm.tasks.sync_contact_to_pipedrive" and not pipedrive.persons

    before = len(pipedrive.requests)
    assert catch_up() == (0, 1), "still down: it waits"
    assert len(pipedrive.requests) == before + 1, "one probe, not a burst"
    failed.refresh_from_db()
    assert (failed.auto_retries, failed.next_auto_retry_at) == (1, MONDAY_10_SG + dt.timedelta(seconds=60))
    assert failed.resolved_at is None
    assert pipedrive_reconcile() == 0, "the reconcile sweep leaves a waiting contact to the catch-up"

    clock.shift(dt.timedelta(seconds=61))
    assert catch_up() == (0, 1)
    failed.refresh_from_db()
    assert (failed.auto_retries, failed.next_auto_retry_at) == (2, timezone.now() + dt.timedelta(seconds=120))

    pipedrive.down = False
    before = len(pipedrive.requests)
    assert catch_up() == (0, 0) and len(pipedrive.requests) == before, "backing off: not due yet"
    clock.shift(dt.timedelta(seconds=121))
    call_command("run_scheduled", "--job", "pipedrive-catch-up")
    assert "1 caught up, 0 waiting for Pipedrive" in capsys.readouterr().out
    failed.refresh_from_db()
    assert failed.resolved_at is not None and failed.resolution.startswith("Caught up automatically")
    [activity] = pipedrive.activities.values()
    assert activity["subject"] == f"School tour: Tom (5) ({booking.reference})" and activity["busy"] is True
    assert len(pipedrive.persons) == len(pipedrive.deals) == 1
    assert catch_up() == (0, 0)


def test_a_refused_sync_is_left_to_staff(clock, parent, pipedrive):
    pipedrive.down = True
    book(parent)
    pipedrive.down = False
    pipedrive.fail_next = [("POST", "/api/v2/persons", 400)]
    assert catch_up() == (0, 0)
    failed = FailedTask.objects.get()
    assert (failed.reason, failed.status_code, failed.resolved_at) == ("rejected", 400, None)
    assert catch_up() == (0, 0) and not pipedrive.persons, "not retried automatically"


def test_repeated_failures_keep_one_open_dead_letter(clock, parent, pipedrive):
    pipedrive.down = True
    book(parent)
    pipedrive_reconcile()  # fails again during the outage
    assert FailedTask.objects.filter(resolved_at__isnull=True).count() == 1


def test_a_cancelled_tour_is_no_longer_a_busy_meeting(clock, parent, pipedrive):
    booking = book(parent)
    [activity_id] = pipedrive.activities
    assert pipedrive.activities[activity_id]["busy"] is True
    bookings.cancel_tour(booking=booking, reason="Chose another school")
    activity = pipedrive.activities[activity_id]
    assert activity["subject"] == f"Cancelled: School tour: Tom (5) ({booking.reference})"
    assert activity["busy"] is False and activity["done"] is True
    assert len(pipedrive.activities) == 1
