"""Every admin page opens with data in it; the booking actions go through the booking service."""

import datetime as dt
import itertools

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from bookings.callbacks import request_callback
from bookings.models import CallbackRequest, TourBooking, TourBookingMove, TourSlot
from bookings.services import book_tour
from chatbot.channels.inbound import dead_letter
from crm.models import Activity
from plumbing.logging import mask_phone
from tests.factories import (
    ActivityFactory,
    CallbackRequestFactory,
    ChildFactory,
    ContactFactory,
    ConversationFactory,
    DealFactory,
    ExternalCallFactory,
    FailedTaskFactory,
    FaqEntryFactory,
    JobRunFactory,
    MessageFactory,
    OpenDayFactory,
    ReasoningStepFactory,
    ReminderSettingsFactory,
    ReviewScenarioFactory,
    ReviewScenarioResultFactory,
    SchoolClosureFactory,
    SchoolFactory,
    SentReminderFactory,
    TourBookingFactory,
    TourSlotFactory,
    UserFactory,
    WaitlistEntryFactory,
)

_DEAD = itertools.count()  # dead letters are kept once per item: each made one differs
MAKERS = {
    "bookings.school": SchoolFactory,
    "bookings.schoolclosure": SchoolClosureFactory,
    "bookings.tourslot": TourSlotFactory,
    "bookings.tourbooking": TourBookingFactory,
    "bookings.bookingchild": lambda: TourBookingFactory().children.get(),
    "bookings.tourbookingmove": lambda: TourBookingMove.objects.create(
        booking=(b := TourBookingFactory()), from_starts_at=b.starts_at - dt.timedelta(days=1),
        to_starts_at=b.starts_at),
    "bookings.openday": OpenDayFactory,
    "bookings.waitlistentry": WaitlistEntryFactory,
    "bookings.callbackrequest": lambda: CallbackRequestFactory(assigned_to=UserFactory()),
    "crm.contact": ContactFactory,
    "crm.child": ChildFactory,
    "crm.deal": DealFactory,
    "crm.activity": ActivityFactory,
    "crm.externalcall": ExternalCallFactory,
    "crm.failedtask": FailedTaskFactory,
    "chatbot.conversation": ConversationFactory,
    "chatbot.message": MessageFactory,
    "chatbot.reasoningstep": lambda: ReasoningStepFactory(tool_name="check_availability",
                                                          tool_arguments={"date": "2026-11-25"},
                                                          tool_result={"slots": []}),
    "chatbot.faqentry": FaqEntryFactory,
    "chatbot.reviewscenario": ReviewScenarioFactory,
    "chatbot.reviewscenarioresult": ReviewScenarioResultFactory,
    "chatbot.remindersettings": ReminderSettingsFactory,
    "chatbot.sentreminder": SentReminderFactory,
    "chatbot.rejectedinbound": lambda: dead_letter("whatsapp", "text is not an object",
                                                   {"id": f"wamid.X{next(_DEAD)}", "text": "plain string"}),
    "plumbing.jobrun": JobRunFactory,
}
# WhiteNoise warns when STATIC_ROOT has not been collected yet: irrelevant to these pages.
pytestmark = pytest.mark.filterwarnings("ignore:No directory at:UserWarning")

ADDABLE = {"bookings.school", "bookings.schoolclosure", "bookings.openday", "crm.contact", "crm.child", "crm.deal",
           "chatbot.faqentry", "chatbot.remindersettings"}


def admin_url(label: str, view: str, *args) -> str:
    app_label, model_name = label.split(".")
    return reverse(f"admin:{app_label}_{model_name}_{view}", args=args)


@pytest.fixture
def superuser(db):
    return UserFactory(username="head", is_superuser=True)


@pytest.fixture
def staff_client(client, superuser):
    client.force_login(superuser)
    return client


@pytest.fixture
def tuesday(school, next_weekday):
    return next_weekday(school, 1)


def book(school, day, time=dt.time(9), **overrides) -> TourBooking:
    contact = ContactFactory(school=school)
    details = {"parent_name": contact.name, "parent_phone": contact.phone, "child_name": "Ana", "child_age": 4}
    details.update(overrides)
    return book_tour(school=school, contact=contact, local_date=day, local_time=time, **details)


@pytest.fixture
def populated(school, tuesday):
    """A bit of everything, made the way the application makes it."""
    SchoolClosureFactory(school=school, date=tuesday + dt.timedelta(days=7), reason="Founders' day")
    booking = book(school, tuesday, special_requirements="Pram")
    ChildFactory(contact=booking.contact, name="Ben")
    request_callback(school=school, contact=booking.contact, parent_name="Mei", parent_phone=booking.parent_phone,
                     topic="Fees")
    message = MessageFactory(conversation=ConversationFactory(school=school, contact=booking.contact),
                             text="Can I book a tour?")
    MessageFactory(conversation=message.conversation, role="assistant", text="Of course!")
    ReasoningStepFactory(message=message, kind="act", tool_name="book_tour", tool_arguments={"time": "09:00"},
                         tool_result={"ok": True})
    FaqEntryFactory(school=school)
    return booking


def test_every_model_is_registered():
    registered = {model._meta.label_lower for model in admin.site._registry}
    ours = {model._meta.label_lower for app in ("bookings", "crm", "chatbot", "plumbing")
            for model in apps.get_app_config(app).get_models()}
    assert ours == set(MAKERS)
    assert ours <= registered


@pytest.mark.parametrize("label", sorted(MAKERS))
def test_changelist_and_change_page_open_with_data(staff_client, populated, label):
    model = apps.get_model(label)
    if not model.objects.exists():
        MAKERS[label]()
    response = staff_client.get(admin_url(label, "changelist"))
    assert response.status_code == 200
    assert response.context["cl"].result_count >= 1

    response = staff_client.get(admin_url(label, "changelist"), {"q": "a"})
    assert response.status_code == 200

    for obj in model.objects.all()[:3]:
        response = staff_client.get(admin_url(label, "change", obj.pk))
        assert response.status_code == 200, (label, obj.pk)

    response = staff_client.get(admin_url(label, "add"))
    assert response.status_code == (200 if label in ADDABLE else 403)


@pytest.mark.parametrize("label", sorted(MAKERS))
def test_changelist_queries_do_not_grow_with_rows(staff_client, populated, label):
    MAKERS[label]()
    url = admin_url(label, "changelist")
    staff_client.get(url)  # warm caches (content types, sessions)
    with CaptureQueriesContext(connection) as few:
        assert staff_client.get(url).status_code == 200
    for _ in range(4):
        MAKERS[label]()
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(url)
    assert response.context["cl"].result_count >= 5
    assert len(many) == len(few), [q["sql"] for q in many.captured_queries]


@pytest.mark.parametrize("label", sorted(MAKERS))
def test_anonymous_is_sent_to_login(client, db, label):
    url = admin_url(label, "changelist")
    response = client.get(url)
    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))
    assert "next=" in response.url


def test_admin_index(staff_client, populated):
    response = staff_client.get(reverse("admin:index"))
    assert response.status_code == 200
    for name in (b"Tour bookings", b"Contacts", b"Conversations", b"FAQ entries"):
        assert name in response.content


def test_phone_numbers_are_masked_in_lists(staff_client, populated):
    phone = populated.parent_phone
    for label in ("bookings.tourbooking", "crm.contact"):
        content = staff_client.get(admin_url(label, "changelist")).content.decode()
        assert mask_phone(phone) in content, label
        assert phone not in content, label


def test_callbacks_show_the_number_to_call_to_those_who_call(staff_client, client, populated):
    """Whoever handles callbacks sees the number with a tel: link; whoever may only read them sees it masked."""
    phone = populated.parent_phone
    content = staff_client.get(admin_url("bookings.callbackrequest", "changelist")).content.decode()
    assert f'href="tel:{phone}"' in content and mask_phone(phone) not in content
    reader = UserFactory(username="reader")
    reader.user_permissions.add(Permission.objects.get(codename="view_callbackrequest"))
    client.force_login(reader)
    content = client.get(admin_url("bookings.callbackrequest", "changelist")).content.decode()
    assert mask_phone(phone) in content and phone not in content
    callback = CallbackRequest.objects.get(contact=populated.contact)
    content = client.get(admin_url("bookings.callbackrequest", "change", callback.pk)).content.decode()
    assert mask_phone(phone) in content and phone not in content


def test_change_pages_show_the_record(staff_client, populated):
    content = staff_client.get(admin_url("bookings.tourbooking", "change", populated.pk)).content.decode()
    assert populated.reference in content and "Pram" in content
    content = staff_client.get(admin_url("crm.contact", "change", populated.contact_id)).content.decode()
    assert "tour_booking_id" in content and populated.reference in content  # the persistent context
    assert "Ben" in content  # child inline
    conversation = populated.contact.conversations.get()
    content = staff_client.get(admin_url("chatbot.conversation", "change", conversation.pk)).content.decode()
    assert "Can I book a tour?" in content and "Of course!" in content
    message = conversation.messages.get(role="user")
    content = staff_client.get(admin_url("chatbot.message", "change", message.pk)).content.decode()
    assert "book_tour" in content


# --- actions go through the service ---------------------------------------------------


def run_action(client, label: str, action: str, objects) -> list[str]:
    response = client.post(
        admin_url(label, "changelist"),
        {"action": action, "_selected_action": [obj.pk for obj in objects]},
        follow=True,
    )
    assert response.status_code == 200
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_cancel_action_releases_the_seat_through_the_service(staff_client, school, tuesday):
    booking = book(school, tuesday)
    other = book(school, tuesday)
    slot = TourSlot.objects.get(pk=booking.slot_id)
    assert slot.seats_taken == 2

    notes = run_action(staff_client, "bookings.tourbooking", "cancel_bookings", [booking])

    assert notes == ["1 tour booking cancelled."]
    booking.refresh_from_db()
    assert booking.status == TourBooking.Status.CANCELLED
    assert booking.cancellation_reason == "Cancelled by head in the admin"
    assert booking.cancelled_at is not None
    slot.refresh_from_db()
    assert slot.seats_taken == 1
    activity = Activity.objects.get(tour_booking=booking)
    assert activity.done and "Cancelled: Cancelled by head in the admin." in activity.note
    assert booking.contact.__class__.objects.get(pk=booking.contact_id).context["tour_status"] == "cancelled"
    other.refresh_from_db()
    assert other.status == TourBooking.Status.SCHEDULED


def test_cancel_action_reports_refusals(staff_client, school, tuesday):
    good = book(school, tuesday)
    gone = book(school, tuesday)
    run_action(staff_client, "bookings.tourbooking", "cancel_bookings", [gone])

    notes = run_action(staff_client, "bookings.tourbooking", "cancel_bookings", [good, gone])

    assert f"{gone.reference}: Booking {gone.reference} is cancelled, not scheduled." in notes
    assert "1 tour booking cancelled." in notes
    assert TourSlot.objects.get(pk=good.slot_id).seats_taken == 0  # no seat released twice


def test_cancel_action_refuses_a_tour_that_has_taken_place(staff_client, school):
    past = TourBookingFactory(school=school, slot=TourSlotFactory(
        school=school, starts_at=timezone.now() - dt.timedelta(days=1), seats_taken=1))
    notes = run_action(staff_client, "bookings.tourbooking", "cancel_bookings", [past])
    assert notes == [f"{past.reference}: The tour {past.reference} has already taken place."]
    past.refresh_from_db()
    assert past.status == TourBooking.Status.SCHEDULED
    assert past.slot.seats_taken == 1


@pytest.mark.parametrize(("action", "status", "word"), [("mark_completed", "completed", "marked completed"),
                                                        ("mark_no_show", "no_show", "marked no-show")])
def test_outcome_actions(staff_client, school, tuesday, action, status, word):
    first, second = book(school, tuesday), book(school, tuesday, dt.time(11))
    notes = run_action(staff_client, "bookings.tourbooking", action, [first, second])
    assert notes == [f"2 tour bookings {word}."]
    for booking in (first, second):
        booking.refresh_from_db()
        assert booking.status == status
        assert Activity.objects.get(tour_booking=booking).done
        assert TourSlot.objects.get(pk=booking.slot_id).seats_taken == 1  # the seat was used

    notes = run_action(staff_client, "bookings.tourbooking", action, [first])
    assert notes == [f"{first.reference}: Booking {first.reference} is {first.get_status_display().lower()}."]


def test_bookings_cannot_be_added_or_deleted_in_the_admin(staff_client, populated):
    assert staff_client.get(admin_url("bookings.tourbooking", "add")).status_code == 403
    assert staff_client.get(admin_url("bookings.tourbooking", "delete", populated.pk)).status_code == 403
    response = staff_client.get(admin_url("bookings.tourbooking", "changelist"))
    actions = [name for name, _label in response.context["action_form"].fields["action"].choices]
    assert "cancel_bookings" in actions and "delete_selected" not in actions


def test_slot_capacity_cannot_drop_below_the_seats_taken(staff_client, school, tuesday):
    booking = book(school, tuesday)
    book(school, tuesday)
    url = admin_url("bookings.tourslot", "change", booking.slot_id)
    response = staff_client.post(url, {"capacity": 1})
    assert response.status_code == 200
    assert "2 seats are already taken" in response.content.decode()
    assert TourSlot.objects.get(pk=booking.slot_id).capacity == 5

    response = staff_client.post(url, {"capacity": 8, "seats_taken": 0})
    assert response.status_code == 302
    slot = TourSlot.objects.get(pk=booking.slot_id)
    assert (slot.capacity, slot.seats_taken) == (8, 2)  # the seat count is not editable


def test_callback_actions(staff_client, school, superuser):
    callback = request_callback(school=school, contact=ContactFactory(school=school), parent_name="Mei",
                                parent_phone="9123 4567")
    assert run_action(staff_client, "bookings.callbackrequest", "assign_to_me", [callback]) == [
        "1 callback request assigned to you."
    ]
    callback.refresh_from_db()
    assert callback.assigned_to == superuser

    assert run_action(staff_client, "bookings.callbackrequest", "mark_done", [callback]) == [
        "1 callback request marked done."
    ]
    callback.refresh_from_db()
    assert callback.status == CallbackRequest.Status.DONE and callback.handled_at is not None
    assert Activity.objects.get(callback=callback).done
    assert callback.contact.__class__.objects.get(pk=callback.contact_id).context["callback_requested"] is False


def test_staff_choose_the_languages_a_school_offers(staff_client, rf, admin_user):
    import json

    from bookings.models import School
    from tests.factories import SchoolFactory

    school = SchoolFactory()
    page = staff_client.get(reverse("admin:bookings_school_change", args=[school.pk])).content.decode()
    assert page.count('type="checkbox" name="languages"') == 4 and 'value="ta"' in page
    request = rf.get("/")
    request.user = admin_user
    form_class = admin.site._registry[School].get_form(request, school)
    data = {name: json.dumps(value) if isinstance(value, list | dict) else value
            for name, value in form_class(instance=school).initial.items() if value is not None}
    form = form_class(data={**data, "languages": ["en", "ms"]}, instance=school)
    assert form.is_valid(), form.errors
    form.save()
    assert School.objects.get(pk=school.pk).languages == ["en", "ms"]
    assert not form_class(data={**data, "languages": ["fr"]}, instance=school).is_valid()
