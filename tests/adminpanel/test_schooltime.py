"""One rule for time: every date and time staff read is the school's, with the zone named.

The school here is in Auckland (NZDT, UTC+13 in November): a 14:00 tour is 01:00 UTC, so a page that shows
the stored UTC value (or converts to the server's zone) says 01:00 and fails.
"""

import csv
import datetime as dt
import io
import json
import re

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse
from django.utils import dateformat, timezone

from adminpanel import schooltime, selectors
from bookings.models import CallbackRequest, TourBooking
from tests.adminpanel.conftest import LIST_URL, book, conversation_url, make_conversation
from tests.adminpanel.test_exports import body
from tests.factories import CallbackRequestFactory, ContactFactory, SchoolClosureFactory, SchoolFactory

pytestmark = pytest.mark.filterwarnings("ignore:No directory at:UserWarning")
AUCKLAND = "Pacific/Auckland"


@pytest.fixture
def auckland(db):
    return SchoolFactory(name="Harbourside College", time_zone=AUCKLAND, closed_weekdays=[6],
                         default_phone_region="NZ")


@pytest.fixture
def tour(auckland, next_weekday):
    """A 14:00 tour (school time) on the next Tuesday at least three days away, with the parent's conversation."""
    booking = book(auckland, next_weekday(auckland, 1), dt.time(14), contact=ContactFactory(school=auckland))
    assert booking.starts_at.astimezone(dt.UTC).hour == 1  # what a page in UTC would show
    return booking


def text_of(content: str, role: str) -> list[str]:
    """The text of every element with data-role=<role> (tags stripped)."""
    found = re.findall(rf'data-role="{role}"[^>]*>(.*?)</(?:time|span|dd|p|td|div)>', content, re.S)
    return [re.sub(r"<[^>]+>", "", item).strip() for item in found]


# --- the helper ----------------------------------------------------------------------------------


def test_show_converts_to_the_school_zone_and_names_it(auckland):
    instant = dt.datetime(2026, 11, 24, 1, 0, tzinfo=dt.UTC)
    assert schooltime.show(instant, auckland) == "Tue 24 Nov 2026, 14:00 NZDT"
    assert schooltime.show(instant, auckland, "H:i", zone=False) == "14:00"
    singapore = SchoolFactory(time_zone="Asia/Singapore")
    assert schooltime.show(instant, singapore, "H:i") == "09:00 Singapore time"  # tzdata has only "+08"
    assert schooltime.iso(instant, auckland) == "2026-11-24T14:00:00+13:00"
    assert schooltime.zone_label(auckland, dt.datetime(2026, 6, 1, tzinfo=dt.UTC)) == "NZST"
    assert schooltime.show(None, auckland) == "-"


# --- the desk and its forms -----------------------------------------------------------------------------


def test_the_desk_lists_the_tour_at_the_school_time(admissions_client, auckland, tour):
    content = admissions_client.get("/admin/desk/", {"school": auckland.pk, "days": 14}).content.decode()
    assert text_of(content, "tour-time") == ["14:00"]
    assert "times in Pacific/Auckland (NZDT)" in content
    assert "UTC" not in content


def test_the_cancel_form_says_14_00_in_its_title_and_its_body(admissions_client, tour):
    content = admissions_client.get(reverse("admin:desk_tour_cancel", args=[tour.pk])).content.decode()
    title = re.search(r"<title>(.*?)</title>", content, re.S).group(1)
    assert "at 14:00 NZDT" in title
    assert text_of(content, "tour-time") == [f"{tour.local_start:%A} {tour.local_start.day} "
                                             f"{tour.local_start:%B %Y} at 14:00 NZDT"]
    assert "01:00" not in content and "1 a.m." not in content and "UTC" not in content


def test_the_reschedule_form_reads_times_as_the_schools(admissions_client, tour, next_weekday, auckland):
    url = reverse("admin:desk_tour_reschedule", args=[tour.pk])
    content = admissions_client.get(url).content.decode()
    assert "In the school&#x27;s time zone (Pacific/Auckland)" in content and "UTC" not in content
    thursday = next_weekday(auckland, 3)
    response = admissions_client.post(url, {"new_date": thursday.isoformat(), "new_time": "11:00"})
    assert response.status_code == 302
    moved = TourBooking.objects.get(pk=tour.pk)
    assert moved.local_start.time() == dt.time(11) and moved.reference == tour.reference
    messages = [str(m) for m in response.wsgi_request._messages]
    assert "at 11:00 NZDT; the reference stays" in messages[0]


# --- admin lists and forms ----------------------------------------------------------------------------


def test_the_booking_page_shows_the_school_time_and_names_the_zone(admissions_client, tour):
    content = admissions_client.get(reverse("admin:bookings_tourbooking_change", args=[tour.pk])).content.decode()
    assert "14:00 NZDT" in content
    assert "Times on this page are the school's: Pacific/Auckland (NZDT)." in content
    assert "1 a.m." not in content and " 01:00" not in content and "UTC" not in content
    listing = admissions_client.get(reverse("admin:bookings_tourbooking_changelist")).content.decode()
    assert "14:00 NZDT" in listing and " 01:00" not in listing


def test_readonly_times_on_a_change_page_are_the_schools(admissions_client, auckland):
    callback = CallbackRequestFactory(school=auckland, contact=ContactFactory(school=auckland))
    CallbackRequest.objects.filter(pk=callback.pk).update(
        created_at=dt.datetime(2026, 11, 24, 1, 5, tzinfo=dt.UTC),
        handled_at=dt.datetime(2026, 11, 24, 2, 30, tzinfo=dt.UTC))
    content = admissions_client.get(reverse("admin:bookings_callbackrequest_change",
                                            args=[callback.pk])).content.decode()
    assert "Tue 24 Nov 2026, 14:05 NZDT" in content and "Tue 24 Nov 2026, 15:30 NZDT" in content
    assert "UTC" not in content


def test_the_slot_and_the_booking_are_named_in_school_time(tour):
    assert str(tour).endswith("14:00 (Pacific/Auckland)")
    assert " 14:00 Pacific/Auckland " in str(tour.slot)


# --- the review page, the list and the exports ------------------------------------------------------------


@pytest.fixture
def conversation(auckland, tour):
    started = dt.datetime(2026, 11, 23, 20, 30, tzinfo=dt.UTC)  # 09:30 on Tuesday 24 November in Auckland
    return make_conversation(auckland, contact=tour.contact, started_at=started, turns=1, rating="good")


def test_the_review_page_is_in_the_school_zone(head_client, conversation, tour):
    content = head_client.get(conversation_url(conversation)).content.decode()
    assert text_of(content, "zone") == ["Pacific/Auckland (NZDT)"]
    assert text_of(content, "started") == ["Tue 24 Nov 2026, 09:30 NZDT"]
    assert any(", 14:00 NZDT" in line for line in text_of(content, "tour-time"))
    assert re.search(r'<time datetime="2026-11-24T09:30:00\+13:00">24 Nov 09:30:00</time>', content)
    assert "UTC" not in content


def test_the_conversation_list_shows_when_it_started_in_its_school_time(head_client, conversation):
    content = head_client.get(LIST_URL).content.decode()
    assert "24 Nov 26, 09:30<br><span class='cr-zone'>NZDT</span>" in content


def test_exports_are_in_the_school_zone_and_name_it(reviewer_client, conversation):
    rows = list(csv.DictReader(io.StringIO(body(reviewer_client.get(f"{LIST_URL}export.csv")))))
    assert rows[0]["started_at"] == "2026-11-24T09:30:00+13:00" and rows[0]["time_zone"] == AUCKLAND
    record = json.loads(body(reviewer_client.get(f"{LIST_URL}export.jsonl")).splitlines()[0])
    assert record["time_zone"] == AUCKLAND and record["started_at"] == "2026-11-24T09:30:00+13:00"
    assert record["messages"][0]["created_at"].endswith("+13:00")


def test_the_dashboard_reads_days_and_times_in_the_school_zone(head_client, auckland):
    asked = timezone.now() - dt.timedelta(hours=2)
    make_conversation(auckland, started_at=asked, no_match=True, question="Is there a rowing club?")
    response = head_client.get("/admin/dashboard/", {"school": auckland.pk})
    content = response.content.decode()
    assert response.context["period"].tz.key == AUCKLAND
    assert "days in Pacific/Auckland" in content
    item = next(i for i in response.context["no_match"] if "rowing" in i.question)
    assert item.last_asked_label == schooltime.show(item.last_asked, auckland, schooltime.SHORT)
    assert item.last_asked_label.endswith("NZDT") and item.last_asked_label in content


def test_the_dashboard_of_schools_sharing_a_zone_is_read_in_it(head_client, auckland):
    response = head_client.get("/admin/dashboard/")
    assert response.context["period"].tz.key == AUCKLAND  # the only school: its zone, not the server's UTC


# --- the admin history of desk actions ------------------------------------------------------------------


def test_desk_actions_are_in_the_admin_history(admissions_client, admissions, tour):
    admissions_client.post(reverse("admin:desk_tour_cancel", args=[tour.pk]), {"reason": "Staff training day."})
    entry = LogEntry.objects.get(object_id=str(tour.pk), content_type__model="tourbooking")
    assert entry.user == admissions and entry.is_change()
    assert entry.get_change_message() == (f"Cancelled on the desk (tour {tour.local_start:%A} {tour.local_start.day} "
                                          f"{tour.local_start:%B %Y} at 14:00 NZDT): Staff training day.")
    # On the hour, which the admin writes "7 a.m." (Django's "P"; "7:05 a.m." otherwise): the same every run.
    on_the_hour = entry.action_time.replace(minute=0, second=0, microsecond=0)
    LogEntry.objects.filter(pk=entry.pk).update(action_time=on_the_hour)
    history = admissions_client.get(reverse("admin:bookings_tourbooking_history", args=[tour.pk])).content.decode()
    assert "Cancelled on the desk" in history and "adam" in history
    assert "Times on this page are the school's: Pacific/Auckland" in history
    local = timezone.localtime(on_the_hour, timezone=dt.timezone(dt.timedelta(hours=13)))
    assert f"{local:%H:%M}" in history or dateformat.format(local, "P") in history


def test_every_desk_action_writes_who_did_what(admissions_client, admissions, auckland, next_weekday):
    from bookings.callbacks import request_callback

    today = book(auckland, next_weekday(auckland, 2), dt.time(9))
    admissions_client.post(reverse("admin:desk_tour_reschedule", args=[today.pk]),
                           {"new_date": next_weekday(auckland, 3).isoformat(), "new_time": "16:00"})
    callback = request_callback(school=auckland, contact=ContactFactory(school=auckland), parent_name="Aroha",
                                parent_phone="+64211234567")
    admissions_client.post(reverse("admin:desk_callback_assign", args=[callback.pk]))
    admissions_client.post(reverse("admin:desk_callback_done", args=[callback.pk]))
    entries = list(LogEntry.objects.filter(user=admissions).order_by("id")
                   .values_list("content_type__model", "action_flag", "change_message"))
    assert [(model, flag) for model, flag, _ in entries] == [  # a move changes the booking; it adds none
        ("tourbooking", 2), ("callbackrequest", 2), ("callbackrequest", 2)]
    assert "to " in entries[0][2] and "16:00 NZDT" in entries[0][2]
    assert entries[1][2] == "Assigned to adam on the desk."
    assert entries[2][2] == "Marked done (parent called back) on the desk."


def test_list_actions_are_in_the_admin_history_too(admissions_client, admissions, tour):
    admissions_client.post(reverse("admin:bookings_tourbooking_changelist"),
                           {"action": "cancel_bookings", "_selected_action": [tour.pk]})
    assert LogEntry.objects.get(user=admissions, object_id=str(tour.pk)).change_message == "Cancelled (list action)."


# --- the index counts each school's today --------------------------------------------------------------


def test_callbacks_due_are_counted_by_each_schools_today(auckland):
    london = SchoolFactory(time_zone="Europe/London")
    now = dt.datetime(2026, 11, 24, 20, 0, tzinfo=dt.UTC)  # Wednesday 09:00 in Auckland, Tuesday 20:00 in London
    wednesday = dt.date(2026, 11, 25)
    CallbackRequestFactory(school=auckland, contact=ContactFactory(school=auckland), due_date=wednesday)
    CallbackRequestFactory(school=london, contact=ContactFactory(school=london), due_date=wednesday)
    assert selectors.callbacks_due_count(now) == 1


# --- closures on the desk ----------------------------------------------------------------------------------


def test_the_desk_marks_closures_and_closed_days(admissions_client, auckland, next_weekday):
    monday, sunday = next_weekday(auckland, 0), next_weekday(auckland, 6)
    SchoolClosureFactory(school=auckland, date=monday, reason="Staff only day")
    response = admissions_client.get("/admin/desk/", {"school": auckland.pk, "days": 14})
    days = {day.date: day.closed for day in response.context["desk"][0].days}
    assert days[monday] == "Staff only day" and days[sunday] == "No tours on Sundays"
    assert not days[next_weekday(auckland, 2)]
    closed = text_of(response.content.decode(), "closed")
    assert "Closed: Staff only day" in closed and "Closed: No tours on Sundays" in closed
