"""The bookings and callbacks desk: every action through bookings.services, the parent told, permissions held."""

import datetime as dt
import io

import pytest
from django.contrib.messages import get_messages
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from bookings import callbacks
from bookings.callbacks import request_callback
from bookings.models import CallbackRequest, TourBooking, TourSlot
from bookings.services import local_now
from chatbot.channels.base import TurnObserver
from chatbot.models import Channel, Message
from crm.models import Activity
from plumbing.logging import mask_phone
from tests.adminpanel.conftest import book, make_conversation
from tests.chatbot.test_calendar import event_of
from tests.factories import CallbackRequestFactory, ContactFactory

pytestmark = pytest.mark.filterwarnings("ignore:No directory at:UserWarning")
DESK = "/admin/desk/"


class RecordingObserver(TurnObserver):
    def __init__(self):
        self.replies = []

    async def reply(self, conversation, message):
        self.replies.append((conversation.pk, message.role, message.text))


@pytest.fixture
def observer(use_observer):
    recording = RecordingObserver()
    use_observer(Channel.WEB, recording)
    return recording


def notes(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def today_tour(school, hour: int = 14):
    """A tour later today (booked two days ago, when today was far enough ahead)."""
    today = local_now(school).date()
    if today.weekday() in school.closed_weekdays:
        school.closed_weekdays = []
        school.save()
    contact = ContactFactory(school=school)
    from bookings.services import book_tour

    return book_tour(school=school, contact=contact, parent_name=contact.name, parent_phone=contact.phone,
                     child_name="Lea", child_age=5, local_date=today, local_time=dt.time(hour),
                     now=timezone.now() - dt.timedelta(days=2))


# --- reading ---------------------------------------------------------------------------------------


def test_desk_lists_tours_day_by_day_and_callbacks_due(admissions_client, school, tuesday):
    school.tour_start_times = ["09:00", "11:00", "14:00", "16:00", "23:00"]
    school.save()
    today = today_tour(school, hour=23)
    later = book(school, tuesday, special_requirements="Wheelchair")
    # stored due today as it is: the service would move a call asked for on a closed day or after calling
    # hours to the next open day, and this test runs on any day at any hour
    callback = CallbackRequestFactory(school=school, due_date=local_now(school).date(), topic="Fees")
    response = admissions_client.get(DESK, {"days": 14})
    assert response.status_code == 200
    content = response.content.decode()
    assert today.reference in content and later.reference in content
    assert mask_phone(later.parent_phone) in content and later.parent_phone not in content
    assert callback.reference in content and "Fees" in content
    school_desk = response.context["desk"][0]
    days = {day.date: [t.reference for t in day.tours] for day in school_desk.days}
    assert days[local_now(school).date()] == [today.reference]
    assert days[tuesday] == [later.reference]
    assert school_desk.days[0].is_today
    assert [c.reference for c in school_desk.callbacks_due] == [callback.reference]


def test_desk_queries_do_not_grow_with_tours(admissions_client, school, tuesday):
    book(school, tuesday)
    admissions_client.get(DESK)
    with CaptureQueriesContext(connection) as few:
        admissions_client.get(DESK, {"days": 14})
    for hour in (9, 11, 14, 16):
        book(school, tuesday, dt.time(hour))
        request_callback(school=school, contact=ContactFactory(school=school), parent_name="Mei",
                         parent_phone="9123 4567", due_date=local_now(school).date())
    with CaptureQueriesContext(connection) as many:
        admissions_client.get(DESK, {"days": 14})
    assert len(many) == len(few), [q["sql"] for q in many.captured_queries]


# --- tour actions -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["completed", "no_show"])
def test_mark_a_tour_completed_or_no_show(admissions_client, school, status):
    tour = today_tour(school)
    response = admissions_client.post(reverse("admin:desk_tour_outcome", args=[tour.pk]),
                                      {"status": status, "next": f"{DESK}?days=3"})
    assert response.status_code == 302 and response.url == f"{DESK}?days=3"
    tour.refresh_from_db()
    assert tour.status == status
    assert Activity.objects.get(tour_booking=tour).done
    again = admissions_client.post(reverse("admin:desk_tour_outcome", args=[tour.pk]), {"status": status})
    assert notes(again)[-1] == f"{tour.reference}: Booking {tour.reference} is {tour.get_status_display().lower()}."


def test_cancel_asks_for_a_reason_then_cancels_and_tells_the_parent(admissions_client, school, tuesday, observer):
    tour = book(school, tuesday)
    conversation = make_conversation(school, contact=tour.contact)
    url = reverse("admin:desk_tour_cancel", args=[tour.pk])
    form = admissions_client.get(url, {"next": DESK})
    assert form.status_code == 200 and "reason" in form.context["form"].fields

    refused = admissions_client.post(url, {"reason": "", "notify": "on", "next": DESK})
    assert refused.status_code == 200 and refused.context["form"].errors["reason"]
    tour.refresh_from_db()
    assert tour.status == TourBooking.Status.SCHEDULED

    response = admissions_client.post(url, {"reason": "Staff training day", "notify": "on", "next": DESK})
    assert response.status_code == 302 and response.url == DESK
    tour.refresh_from_db()
    assert (tour.status, tour.cancellation_reason) == ("cancelled", "Staff training day")
    assert TourSlot.objects.get(pk=tour.slot_id).seats_taken == 0
    assert "Cancelled: Staff training day." in Activity.objects.get(tour_booking=tour).note
    told = Message.objects.get(conversation=conversation, role=Message.Role.STAFF)
    assert tour.reference in told.text and "Staff training day" in told.text
    assert observer.replies == [(conversation.pk, "staff", told.text)]
    assert "The parent has been told." in notes(response)[0]


def test_cancel_refusal_is_shown_with_the_rules_message(admissions_client, school):
    tour = today_tour(school)
    TourBooking.objects.filter(pk=tour.pk).update(starts_at=timezone.now() - dt.timedelta(hours=1))
    response = admissions_client.post(reverse("admin:desk_tour_cancel", args=[tour.pk]), {"reason": "x"})
    assert response.status_code == 200
    assert f"The tour {tour.reference} has already taken place." in response.content.decode()


def test_reschedule_moves_the_tour_and_tells_the_parent(admissions_client, school, tuesday, next_weekday, observer):
    tour = book(school, tuesday)
    conversation = make_conversation(school, contact=tour.contact)
    thursday = next_weekday(school, 3)
    url = reverse("admin:desk_tour_reschedule", args=[tour.pk])
    assert admissions_client.get(url).context["form"].fields["new_time"].choices[0] == ("09:00", "09:00")
    response = admissions_client.post(url, {"new_date": thursday.isoformat(), "new_time": "14:00", "notify": "on"})
    assert response.status_code == 302
    reference = tour.reference
    tour.refresh_from_db()
    assert (tour.status, tour.reference) == (TourBooking.Status.SCHEDULED, reference)  # moved, same reference
    assert tour.local_start.date() == thursday and tour.local_start.time() == dt.time(14)
    assert tour.moves.count() == 1 and TourBooking.objects.count() == 1
    told = Message.objects.get(conversation=conversation, role=Message.Role.STAFF)
    assert tour.reference in told.text and "14:00" in told.text
    assert len(observer.replies) == 1


def test_reschedule_errors_show_the_booking_error(admissions_client, school, tuesday, next_weekday):
    tour = book(school, tuesday)
    saturday = next_weekday(school, 5)
    response = admissions_client.post(reverse("admin:desk_tour_reschedule", args=[tour.pk]),
                                      {"new_date": saturday.isoformat(), "new_time": "09:00"})
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert "We don't run tours on Saturdays." in errors["new_date"][0]
    assert "Open instead:" in errors["new_date"][0]
    tour.refresh_from_db()
    assert tour.status == TourBooking.Status.SCHEDULED


def test_no_conversation_means_nobody_to_tell(admissions_client, school, tuesday):
    tour = book(school, tuesday)
    response = admissions_client.post(reverse("admin:desk_tour_cancel", args=[tour.pk]),
                                      {"reason": "Closed", "notify": "on"})
    assert "The parent has no chat to tell them in." in notes(response)[0]


def test_next_never_leaves_the_site(admissions_client, school):
    tour = today_tour(school)
    response = admissions_client.post(reverse("admin:desk_tour_outcome", args=[tour.pk]),
                                      {"status": "completed", "next": "https://evil.example/"})
    assert response.url == DESK


# --- callbacks -------------------------------------------------------------------------------------


def test_assign_a_callback_to_me_then_mark_it_done(admissions_client, admissions, school):
    callback = request_callback(school=school, contact=ContactFactory(school=school), parent_name="Mei",
                                parent_phone="9123 4567", due_date=local_now(school).date())
    admissions_client.post(reverse("admin:desk_callback_assign", args=[callback.pk]))
    callback.refresh_from_db()
    assert callback.assigned_to == admissions
    admissions_client.post(reverse("admin:desk_callback_done", args=[callback.pk]))
    callback.refresh_from_db()
    assert callback.status == CallbackRequest.Status.DONE and callback.handled_at
    assert Activity.objects.get(callback=callback).done
    again = admissions_client.post(reverse("admin:desk_callback_done", args=[callback.pk]))
    assert notes(again)[-1] == f"Callback {callback.reference} is already done."
    assert admissions_client.get(reverse("admin:desk_callback_done", args=[callback.pk])).status_code == 405


# --- permissions ---------------------------------------------------------------------------------


def test_a_reviewer_cannot_use_the_desk_or_see_bookings(reviewer_client, school, tuesday):
    tour = book(school, tuesday)
    callback = request_callback(school=school, contact=ContactFactory(school=school), parent_name="Mei",
                                parent_phone="9123 4567")
    assert reviewer_client.get(DESK).status_code == 403
    assert reviewer_client.get(reverse("admin:bookings_tourbooking_change", args=[tour.pk])).status_code == 403
    assert reviewer_client.get(reverse("admin:bookings_tourbooking_changelist")).status_code == 403
    assert reviewer_client.get(reverse("admin:desk_tour_cancel", args=[tour.pk])).status_code == 403
    assert reviewer_client.post(reverse("admin:desk_tour_cancel", args=[tour.pk]),
                                {"reason": "x"}).status_code == 403
    assert reviewer_client.post(reverse("admin:desk_tour_reschedule", args=[tour.pk]),
                                {"new_date": tuesday.isoformat(), "new_time": "11:00"}).status_code == 403
    assert reviewer_client.post(reverse("admin:desk_tour_outcome", args=[tour.pk]),
                                {"status": "completed"}).status_code == 403
    assert reviewer_client.post(reverse("admin:desk_callback_done", args=[callback.pk])).status_code == 403
    response = reviewer_client.post(reverse("admin:bookings_tourbooking_changelist"),
                                    {"action": "cancel_bookings", "_selected_action": [tour.pk]})
    assert response.status_code == 403
    tour.refresh_from_db()
    callback.refresh_from_db()
    assert tour.status == TourBooking.Status.SCHEDULED and callback.status == CallbackRequest.Status.OPEN


def test_admissions_can_cancel_in_the_booking_list_too(admissions_client, school, tuesday):
    tour = book(school, tuesday)
    admissions_client.post(reverse("admin:bookings_tourbooking_changelist"),
                           {"action": "cancel_bookings", "_selected_action": [tour.pk]})
    tour.refresh_from_db()
    assert tour.status == TourBooking.Status.CANCELLED


def test_a_tour_change_page_links_to_the_desk_forms(admissions_client, school, tuesday):
    tour = book(school, tuesday)
    content = admissions_client.get(reverse("admin:bookings_tourbooking_change", args=[tour.pk])).content.decode()
    assert reverse("admin:desk_tour_cancel", args=[tour.pk]) in content
    assert reverse("admin:desk_tour_reschedule", args=[tour.pk]) in content


# --- the demo desk ------------------------------------------------------------------------------------------


def test_the_demo_fills_the_default_week_of_the_desk(admissions_client, monkeypatch):
    """seed_demo's desk is not a wall of "No tours": every open day of the default window has tours, closed days
    say why, callbacks are due (one overdue), and a second seed the same week adds nothing."""
    from django.core.management import call_command

    from adminpanel.management.commands.seed_demo import Command as SeedDemo

    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", "a-long-test-password")
    call_command(SeedDemo(), stdout=io.StringIO())
    tours = TourBooking.objects.count()
    response = admissions_client.get(DESK)
    assert response.status_code == 200
    for school_desk in response.context["desk"]:
        open_days = [day for day in school_desk.days if not day.closed]
        assert open_days and all(day.tours for day in open_days), school_desk.school.slug
        assert all(not day.tours for day in school_desk.days if day.closed)
        assert any(c.due_date < school_desk.today for c in school_desk.callbacks_due)
        if callbacks.is_open_for_calls(school_desk.school, school_desk.today):  # no call is due on a closed day
            assert any(c.due_date == school_desk.today for c in school_desk.callbacks_due)
        assert all(callbacks.is_open_for_calls(c.school, c.due_date) for c in school_desk.callbacks_due)
    content = response.content.decode()
    assert "No tours." not in content and 'href="tel:+65' in content and 'href="tel:+44' in content
    call_command(SeedDemo(), stdout=io.StringIO())
    assert TourBooking.objects.count() == tours


# --- families and moves -------------------------------------------------------------------------------------


def test_the_desk_and_the_booking_page_show_every_child_and_every_move(admissions_client, school, tuesday,
                                                                        next_weekday):
    from bookings.services import ChildDetails, reschedule_tour
    from chatbot.calendar import calendar_file

    tour = book(school, tuesday, children=[ChildDetails("Leo", 5), ChildDetails("Mia", 3, year_group="Nursery")])
    thursday, friday = next_weekday(school, 3), next_weekday(school, 4)
    reschedule_tour(booking=tour, new_date=thursday, new_time=dt.time(14))
    reschedule_tour(booking=TourBooking.objects.get(pk=tour.pk), new_date=friday, new_time=dt.time(11))

    desk = admissions_client.get(DESK, {"days": 14}).content.decode()
    assert "Leo (5) and Mia (3)" in desk and "moved ×2" in desk
    page = admissions_client.get(reverse("admin:bookings_tourbooking_change", args=[tour.pk])).content.decode()
    assert "Nursery" in page and "Moves (the reference stayed the same)" in page
    assert page.count('class="form-row has_original"') == 4  # two children, two moves
    event = event_of(calendar_file(TourBooking.objects.get(pk=tour.pk)))
    assert "Children: Leo (5) and Mia (3)" in str(event["description"])
    assert str(event["uid"]).startswith(f"{tour.reference}@")
