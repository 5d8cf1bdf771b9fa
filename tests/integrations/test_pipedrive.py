"""Pipedrive sync: exact v2/v1 calls against a fake Pipedrive on 127.0.0.1, retries, outages, crashes."""

import datetime as dt
import time

import httpx
import pytest

from bookings import callbacks
from bookings import services as bookings
from crm.external.http import PermanentError, TransientError
from crm.models import Activity, Contact, Deal, FailedTask
from crm.pipedrive import PipedriveClient
from crm.tasks import pipedrive_reconcile, sync_contact_to_pipedrive
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]

TUESDAY, THURSDAY = 1, 3


@pytest.fixture
def school():
    return SchoolFactory(time_zone="Asia/Singapore")


@pytest.fixture
def parent(school):
    return ContactFactory(school=school, name="Mei Lin Tan", phone="+6591234567", email="mei@mail.example")


def book(school, parent, day, hour=9):
    return bookings.book_tour(school=school, contact=parent, parent_name="Mei Lin Tan", parent_phone="+6591234567",
                              parent_email="mei@mail.example", child_name="Tom", child_age=5, local_date=day,
                              local_time=dt.time(hour), special_requirements="Wheelchair access please")


# --- the client at the HTTP boundary ----------------------------------------------------------------------------
def test_the_client_speaks_v2_with_the_token_in_a_header(pipedrive):
    with PipedriveClient() as client:
        person = client.create_person(name="Mei Lin Tan", phone="+6591234567", email="mei@mail.example")
        assert client.search_person("+6591234567", "phone") == person
        deal = client.create_deal(title="Admission enquiry: Tom", person_id=person)
        activity = client.create_activity({"subject": "School tour", "type": "meeting", "deal_id": deal,
                                           "participants": [{"person_id": person, "primary": True}]})
        client.update_activity(activity, {"done": True})
        client.add_note(content="<p>hi</p>", deal_id=deal)
    calls = [(c.method, c.path) for c in pipedrive.requests]
    assert calls == [("POST", "/api/v2/persons"), ("GET", "/api/v2/persons/search"), ("POST", "/api/v2/deals"),
                     ("POST", "/api/v2/activities"), ("PATCH", f"/api/v2/activities/{activity}"),
                     ("POST", "/v1/notes")]
    assert all(c.headers["x-api-token"] == "pd-token" and "api_token" not in c.query for c in pipedrive.requests)
    assert pipedrive.requests[0].json == {"name": "Mei Lin Tan",
                                          "phones": [{"value": "+6591234567", "primary": True, "label": "mobile"}],
                                          "emails": [{"value": "mei@mail.example", "primary": True, "label": "home"}]}
    assert pipedrive.requests[1].query == {"term": "+6591234567", "fields": "phone", "exact_match": "true",
                                           "limit": "5"}


def test_errors_are_sorted_into_retry_and_do_not_retry(pipedrive):
    with PipedriveClient() as client:
        pipedrive.fail_next = [("POST", "/api/v2/persons", 503)]
        with pytest.raises(TransientError):
            client.create_person(name="A")
        pipedrive.fail_next = [("POST", "/api/v2/persons", 400)]
        with pytest.raises(PermanentError) as refused:
            client.create_person(name="A")
        assert refused.value.status_code == 400
    with PipedriveClient(token="wrong") as client, pytest.raises(PermanentError) as unauthorised:
        client.create_person(name="A")
    assert unauthorised.value.status_code == 401


def test_429_honours_retry_after(http, pipedrive):
    http.expect_oneshot_request("/pipedrive/api/v2/deals", method="POST").respond_with_json(
        {"success": False, "error": "Rate limit exceeded"}, status=429, headers={"Retry-After": "7"})
    with PipedriveClient() as client, pytest.raises(TransientError) as limited:
        client.create_deal(title="x", person_id=1)
    assert limited.value.retry_after == 7


def test_timeouts_are_transient_and_flag_a_possibly_applied_write(settings):
    settings.EXTERNAL_HTTP_TIMEOUT_SECONDS = 0.2
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepts the connection, never answers
    try:
        with (PipedriveClient(base_url=f"http://127.0.0.1:{listener.getsockname()[1]}") as client,
              pytest.raises(TransientError) as lost):
            client.create_person(name="A")
    finally:
        listener.close()
    assert lost.value.maybe_delivered and isinstance(lost.value.__cause__, httpx.ReadTimeout)


# --- the booking flow ----------------------------------------------------------------------------------------------
def test_a_booking_creates_person_deal_tour_activity_and_note(school, parent, pipedrive, next_weekday):
    day = next_weekday(school, TUESDAY)
    booking = book(school, parent, day)
    calls = [(c.method, c.path) for c in pipedrive.requests]
    assert calls == [("GET", "/api/v2/persons/search"), ("GET", "/api/v2/persons/search"),
                     ("POST", "/api/v2/persons"), ("GET", "/api/v2/deals"), ("POST", "/api/v2/deals"),
                     ("GET", "/api/v2/activities"), ("POST", "/api/v2/activities"), ("POST", "/v1/notes")]
    [person] = pipedrive.persons.values()
    [deal] = pipedrive.deals.values()
    [activity] = pipedrive.activities.values()
    [note] = pipedrive.notes.values()
    assert person["name"] == "Mei Lin Tan" and person["phones"][0]["value"] == "+6591234567"
    assert deal == {"id": deal["id"], "title": "Admission enquiry: Tom (Mei Lin Tan)", "person_id": person["id"]}
    utc = booking.starts_at.astimezone(dt.UTC)
    assert activity == {
        "id": activity["id"], "subject": f"School tour: Tom (5) ({booking.reference})", "type": "meeting",
        "deal_id": deal["id"], "participants": [{"person_id": person["id"], "primary": True}],
        "note": "Wheelchair access please", "done": False, "busy": True,
        "due_date": utc.date().isoformat(), "due_time": "01:00:00", "duration": "01:00:00",
    }, "09:00 in Singapore is 01:00 UTC"
    assert "person_id" not in activity, "v2 takes the person through participants"
    assert note["deal_id"] == deal["id"] and booking.reference in note["content"]
    parent.refresh_from_db()
    assert parent.pipedrive_person_id == person["id"]
    assert Deal.objects.get().pipedrive_deal_id == deal["id"]
    assert Activity.objects.get().pipedrive_activity_id == activity["id"]
    assert parent.context["pipedrive_person_id"] == person["id"]
    assert parent.context["tour_activity_id"] == activity["id"]


def test_an_existing_person_is_found_not_duplicated(school, parent, pipedrive, next_weekday):
    pipedrive.persons[7] = {"id": 7, "name": "Mei Lin", "phones": [{"value": "+6591234567"}]}
    book(school, parent, next_weekday(school, TUESDAY))
    assert not pipedrive.calls("POST", "/api/v2/persons")
    assert Contact.objects.get(pk=parent.pk).pipedrive_person_id == 7


def test_reschedule_and_cancel_update_the_same_activity(school, parent, pipedrive, next_weekday):
    booking = book(school, parent, next_weekday(school, TUESDAY))
    [activity_id] = pipedrive.activities
    was = booking.local_start
    moved = bookings.reschedule_tour(booking=booking, new_date=next_weekday(school, THURSDAY),
                                     new_time=dt.time(14))
    patch = pipedrive.calls("PATCH", f"/api/v2/activities/{activity_id}")[-1].json
    utc = moved.starts_at.astimezone(dt.UTC)
    assert patch["subject"] == f"School tour: Tom (5) ({booking.reference})" and moved.reference == booking.reference
    assert (patch["due_date"], patch["due_time"]) == (utc.date().isoformat(), "06:00:00")
    assert f"Moved from {was:%a %d %b %Y %H:%M}." in patch["note"]

    bookings.cancel_tour(booking=moved, reason="Chose another school")
    patch = pipedrive.calls("PATCH", f"/api/v2/activities/{activity_id}")[-1].json
    assert patch["done"] is True and "Cancelled: Chose another school." in patch["note"]
    assert len(pipedrive.activities) == 1 and len(pipedrive.deals) == 1 and len(pipedrive.persons) == 1
    assert len(pipedrive.notes) == 1


def test_a_callback_becomes_a_call_activity(school, parent, pipedrive):
    callback = callbacks.request_callback(school=school, contact=parent, parent_name="Mei Lin Tan",
                                          parent_phone="+6591234567", best_time="specific",
                                          specific_time=dt.time(15, 30), topic="Fees")
    [activity] = pipedrive.activities.values()
    local = dt.datetime.combine(callback.due_date, dt.time(15, 30), school.tz).astimezone(dt.UTC)
    assert activity["type"] == "call" and activity["subject"].startswith("Call back Mei Lin Tan")
    assert (activity["due_date"], activity["due_time"]) == (local.date().isoformat(), "07:30:00")
    assert activity["note"] == "Fees" and activity["busy"] is False
    assert not pipedrive.notes


def test_without_a_token_nothing_is_called(school, parent, pipedrive, settings, next_weekday):
    settings.PIPEDRIVE_API_TOKEN = ""
    book(school, parent, next_weekday(school, TUESDAY))
    assert not pipedrive.requests
    assert pipedrive_reconcile.apply().get() == 0


# --- faults -------------------------------------------------------------------------------------------------------
def test_pipedrive_down_delays_the_sync_but_never_the_booking(school, parent, pipedrive, next_weekday):
    pipedrive.down = True
    started = time.monotonic()
    booking = book(school, parent, next_weekday(school, TUESDAY))
    assert time.monotonic() - started < 10
    assert booking.pk and booking.status == "scheduled", "the booking is committed regardless"
    [failed] = FailedTask.objects.all()
    assert (failed.task_name, failed.reason, failed.args) == ("crm.tasks.sync_contact_to_pipedrive", "exhausted",
                                                              [parent.pk])
    assert not pipedrive.persons

    pipedrive.down = False  # recovery: the beat's reconcile sweep finds what Pipedrive has not seen
    assert pipedrive_reconcile.apply().get() == 1
    assert len(pipedrive.persons) == len(pipedrive.deals) == len(pipedrive.activities) == 1
    failed.refresh_from_db()
    assert failed.resolved_at is not None, "the later success resolves the dead letter"
    assert pipedrive_reconcile.apply().get() == 0, "nothing left to sync"
    requests_before = len(pipedrive.requests)
    sync_contact_to_pipedrive.apply(args=[parent.pk])
    assert len(pipedrive.requests) == requests_before, "a rerun with nothing new makes no calls"


def test_a_short_outage_is_bridged_by_retries(school, parent, pipedrive, next_weekday):
    pipedrive.fail_next = [("POST", "/api/v2/deals", 503), ("POST", "/api/v2/deals", 502)]
    book(school, parent, next_weekday(school, TUESDAY))
    assert len(pipedrive.deals) == 1 and len(pipedrive.activities) == 1 and len(pipedrive.persons) == 1
    assert not FailedTask.objects.exists()


def test_a_rejected_write_is_not_retried(school, parent, pipedrive, next_weekday):
    pipedrive.fail_next = [("POST", "/api/v2/activities", 400)]
    book(school, parent, next_weekday(school, TUESDAY))
    assert len(pipedrive.calls("POST", "/api/v2/activities")) == 1
    assert FailedTask.objects.get().reason == "rejected"


class Crash(BaseException):
    """The worker dies right after Pipedrive answered, before our database heard about it."""


@pytest.mark.parametrize("step", ["create_person", "create_deal", "create_activity"])
def test_a_sync_that_dies_mid_way_is_rerun_without_duplicates(school, parent, pipedrive, next_weekday, monkeypatch,
                                                             settings, step):
    settings.PIPEDRIVE_API_TOKEN = ""  # book without the on-commit sync; we run the task by hand
    book(school, parent, next_weekday(school, TUESDAY))
    settings.PIPEDRIVE_API_TOKEN = pipedrive.token
    real = getattr(PipedriveClient, step)

    def create_then_die(self, *args, **kwargs):
        real(self, *args, **kwargs)  # Pipedrive has it now...
        raise Crash  # ...and the worker is gone before storing the id

    monkeypatch.setattr(PipedriveClient, step, create_then_die)
    with pytest.raises(Crash):
        sync_contact_to_pipedrive.apply(args=[parent.pk])
    monkeypatch.setattr(PipedriveClient, step, real)
    from plumbing.redis import get_redis

    get_redis().delete(f"pipedrive:sync:{parent.pk}")  # the dead worker's lock, expired
    sync_contact_to_pipedrive.apply(args=[parent.pk])
    assert len(pipedrive.persons) == len(pipedrive.deals) == len(pipedrive.activities) == 1
    assert len(pipedrive.notes) == 1
    assert Activity.objects.get().pipedrive_activity_id in pipedrive.activities


def test_two_syncs_of_one_contact_never_run_at_once(school, parent, pipedrive, next_weekday, settings):
    settings.PIPEDRIVE_API_TOKEN = ""
    book(school, parent, next_weekday(school, TUESDAY))
    settings.PIPEDRIVE_API_TOKEN = pipedrive.token
    from plumbing.redis import get_redis

    lock = get_redis().lock(f"pipedrive:sync:{parent.pk}", timeout=60)
    assert lock.acquire(blocking=False)
    sync_contact_to_pipedrive.apply(args=[parent.pk])
    assert not pipedrive.requests, "it waits (retries) while another worker holds the contact"
    lock.release()
    sync_contact_to_pipedrive.apply(args=[parent.pk])
    assert len(pipedrive.activities) == 1
