"""factory-boy factories for every model."""

import datetime as dt

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

from bookings.models import (
    BookingChild,
    CallbackRequest,
    OpenDay,
    School,
    SchoolClosure,
    TourBooking,
    TourSlot,
    WaitlistEntry,
)
from chatbot.models import (
    Channel,
    Conversation,
    FaqEntry,
    Message,
    ReasoningStep,
    ReviewScenario,
    ReviewScenarioResult,
)
from chatbot.reminders.models import ReminderSettings, SentReminder
from crm.models import Activity, Child, Contact, Deal, ExternalCall, FailedTask
from plumbing.models import JobRun


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"staff{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@school.example")
    is_staff = True
    password = factory.django.Password("correct-horse-battery")


class SchoolFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = School
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"school-{n}")
    name = factory.Sequence(lambda n: f"Test School {n}")
    time_zone = "Asia/Singapore"
    address = "1 Test Road, Singapore 123456"
    contact_email = "admissions@school.example"
    tour_start_times = ["09:00", "11:00", "14:00", "16:00"]
    tour_duration_minutes = 60
    seats_per_tour = 5
    max_advance_days = 30
    min_notice_hours = 24
    closed_weekdays = [5, 6]
    default_phone_region = "SG"


class SchoolClosureFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SchoolClosure

    school = factory.SubFactory(SchoolFactory)
    date = factory.LazyFunction(lambda: timezone.localdate() + dt.timedelta(days=10))
    reason = "Public holiday"


class ContactFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Contact

    school = factory.SubFactory(SchoolFactory)
    name = factory.Faker("name")
    phone = factory.Sequence(lambda n: f"+65912{n:05d}")
    email = factory.LazyAttribute(lambda c: f"parent{c.phone[-5:]}@mail.example")
    phone_verified = factory.LazyAttribute(lambda c: bool(c.phone))  # a known parent: the number WhatsApp gave


class ChildFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Child

    contact = factory.SubFactory(ContactFactory)
    name = factory.Faker("first_name")
    age = 5


class TourSlotFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TourSlot

    school = factory.SubFactory(SchoolFactory)
    starts_at = factory.LazyFunction(lambda: timezone.now().replace(minute=0, second=0, microsecond=0)
                                     + dt.timedelta(days=7))
    capacity = 5


class OpenDayFactory(TourSlotFactory):
    class Meta:
        model = OpenDay

    title = "Spring Open Morning"
    duration_minutes = 120
    capacity = 40


class WaitlistEntryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WaitlistEntry

    slot = factory.SubFactory(TourSlotFactory)
    school = factory.SelfAttribute("slot.school")
    contact = factory.SubFactory("tests.factories.ContactFactory", school=factory.SelfAttribute("..school"))
    position = factory.Sequence(lambda n: n + 1)
    parent_name = "Jon Tan"
    parent_phone = "+6591234567"
    child_name = "Mia"
    child_age = 5


class TourBookingFactory(factory.django.DjangoModelFactory):
    """A booking row as stored; for the rules, book through bookings.services.book_tour."""

    class Meta:
        model = TourBooking

    school = factory.SubFactory(SchoolFactory)
    contact = factory.SubFactory(ContactFactory, school=factory.SelfAttribute("..school"))
    slot = factory.SubFactory(TourSlotFactory, school=factory.SelfAttribute("..school"))
    starts_at = factory.SelfAttribute("slot.starts_at")
    parent_name = factory.SelfAttribute("contact.name")
    parent_phone = factory.SelfAttribute("contact.phone")
    child_name = factory.Faker("first_name")

    @factory.post_generation
    def child(booking, create, extracted, **kwargs):  # noqa: N805 - factory-boy passes the object first
        """The booking's one child, as the booking service writes it (a BookingChild linked to the CRM child)."""
        if create:
            record, _ = Child.objects.get_or_create(contact=booking.contact, name=booking.child_name)
            BookingChild.objects.create(booking=booking, child=record, name=booking.child_name, age=5)


class CallbackRequestFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CallbackRequest

    school = factory.SubFactory(SchoolFactory)
    contact = factory.SubFactory(ContactFactory, school=factory.SelfAttribute("..school"))
    parent_name = factory.SelfAttribute("contact.name")
    parent_phone = factory.SelfAttribute("contact.phone")
    best_time = CallbackRequest.BestTime.MORNING
    due_date = factory.LazyFunction(lambda: timezone.localdate() + dt.timedelta(days=1))


class DealFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Deal

    contact = factory.SubFactory(ContactFactory)
    title = factory.LazyAttribute(lambda d: f"Admission enquiry: {d.contact.name}")


class ActivityFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Activity

    deal = factory.SubFactory(DealFactory)
    contact = factory.SelfAttribute("deal.contact")
    kind = Activity.Kind.TOUR
    subject = "School tour"


class ConversationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Conversation

    school = factory.SubFactory(SchoolFactory)
    contact = factory.SubFactory(ContactFactory, school=factory.SelfAttribute("..school"))
    channel = Channel.WEB


class MessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Message

    conversation = factory.SubFactory(ConversationFactory)
    role = Message.Role.USER
    text = factory.Faker("sentence")
    channel = factory.SelfAttribute("conversation.channel")


class ReasoningStepFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ReasoningStep

    message = factory.SubFactory(MessageFactory, role=Message.Role.ASSISTANT)
    cycle = 1
    position = factory.Sequence(lambda n: n)
    kind = ReasoningStep.Kind.THINK
    content = "Thinking"
    created_at = factory.LazyFunction(timezone.now)


class FaqEntryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = FaqEntry

    school = factory.SubFactory(SchoolFactory)
    question = factory.Sequence(lambda n: f"Question {n}?")
    answer = factory.Faker("paragraph")
    tags = factory.LazyFunction(list)


class ExternalCallFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ExternalCall

    key = factory.Sequence(lambda n: f"chatwoot:message:{n}")
    system = ExternalCall.System.CHATWOOT


class FailedTaskFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = FailedTask

    task_name = "chatbot.tasks.deliver_chatwoot_message"
    signature = factory.Sequence(lambda n: f"chatbot.tasks.deliver_chatwoot_message({n})")
    args = factory.Sequence(lambda n: [n])
    reason = FailedTask.Reason.EXHAUSTED
    error = "HTTP 503 from Chatwoot"


class ReviewScenarioFactory(factory.django.DjangoModelFactory):
    """A regression scenario as the review page saves one: a parent's question, nothing expected to change."""

    class Meta:
        model = ReviewScenario

    school = factory.SubFactory(SchoolFactory)
    title = factory.Sequence(lambda n: f"Reviewed conversation {n}")
    starts_at = factory.LazyFunction(timezone.now)
    fixture = factory.LazyAttribute(lambda o: {"school": {
        "name": o.school.name, "slug": o.school.slug, "time_zone": o.school.time_zone,
        "tour_start_times": o.school.tour_start_times, "seats_per_tour": o.school.seats_per_tour,
        "max_advance_days": o.school.max_advance_days, "min_notice_hours": o.school.min_notice_hours,
        "closed_weekdays": o.school.closed_weekdays}, "faqs": []})
    parent = factory.LazyFunction(lambda: {"name": "", "phone": "", "email": "", "known": False})
    script = factory.LazyFunction(lambda: [{"text": "How long is a tour?", "at": 0.0, "burst": 0}])


class ReviewScenarioResultFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ReviewScenarioResult

    scenario = factory.SubFactory(ReviewScenarioFactory)
    run_at = factory.LazyFunction(timezone.now)
    model = "offline/policy"
    k = 3
    runs = 3
    passed_runs = 2
    pass_k = 0.0
    failures = "run 3: expected a new scheduled booking on 2026-12-01 at 09:00; no such booking was made"


class ReminderSettingsFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ReminderSettings

    school = factory.SubFactory(SchoolFactory)
    hours_before = [24, 2]
    whatsapp_template = "tour_reminder"


class SentReminderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SentReminder

    booking = factory.SubFactory(TourBookingFactory)
    kind = "24h"
    tour_starts_at = factory.SelfAttribute("booking.starts_at")
    status = SentReminder.Status.FAILED
    staff_note = "The 24h reminder could not be sent: no e-mail address. Please call the parent."


class JobRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = JobRun

    name = factory.Sequence(lambda n: f"job-{n}")
    last_result = "2 sent"
