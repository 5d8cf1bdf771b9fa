"""The isolated world of one evaluation run: a fresh school, its parents, its dates, and the cleanup.

Every run gets its own school (built from a fixture config: the demo school's
rules and FAQ, never its bookings), its own contacts and therefore its own
Redis keys, so runs cannot see each other and a run leaves nothing behind.

Dates are named, never written: `mon` ... `fri` are the days of the first full
Monday-Friday week that starts at least three days from today in the school's
time zone, `mon2` ... `fri2` the week after, `sat`/`sun` the weekend between,
`far` a Wednesday at least 40 days away (beyond the advance-booking window).
So a scenario says "{tue} at 9am" and works whatever day it runs.

Every day of the next DATED_DAYS_AHEAD is also named by its ISO date ("2026-11-24"): a scenario saved from a
reviewed conversation (quality/evaluation/reviewed.py) runs with the clock at its conversation's own moment, so
it names the conversation's days as they were.
"""

import datetime as dt
import uuid
from dataclasses import dataclass, field
from types import SimpleNamespace

from django.db import transaction
from django.utils import timezone

from adminpanel import demo_data
from bookings import services as booking_services
from bookings.models import (
    WEEKDAY_NAMES,
    CallbackRequest,
    OpenDay,
    School,
    SchoolClosure,
    TourBooking,
    TourSlot,
)
from chatbot import faq
from chatbot.agent import memory
from chatbot.models import Conversation, FaqEntry
from chatbot.services import save_faq_translations
from crm.identity import normalise_phone
from crm.models import Contact
from crm.services import find_or_create_contact
from plumbing.redis import get_redis

SLUG_PREFIX = "eval-"
MIN_DAYS_AHEAD = 3
FAR_DAYS_AHEAD = 40
DATED_DAYS_AHEAD = 400  # days also named by ISO date, from today
WEEKDAY_KEYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


@dataclass(frozen=True)
class Fixture:
    """A school's rules and FAQ knowledge, copied into each run's fresh school."""

    school: dict
    faqs: list[dict]


FIXTURES = {spec["school"]["slug"]: Fixture(spec["school"], spec["faqs"]) for spec in demo_data.schools()}


@dataclass(frozen=True)
class Day:
    """A named scenario date; formats as a parent writes it ("Tuesday 1 December")."""

    date: dt.date

    def __format__(self, spec: str) -> str:
        return format(self.spoken, spec)

    def __str__(self) -> str:
        return self.spoken

    @property
    def spoken(self) -> str:
        return f"{self.weekday} {self.date.day} {self.date:%B}"

    @property
    def weekday(self) -> str:
        return WEEKDAY_NAMES[self.date.weekday()]

    @property
    def short(self) -> str:
        """"Tue 1 Dec"."""
        return f"{self.date:%a} {self.date.day} {self.date:%b}"

    @property
    def dm(self) -> str:
        """"1 December" (no weekday)."""
        return f"{self.date.day} {self.date:%B}"

    @property
    def numeric(self) -> str:
        """"1/12" (day/month, as written in Singapore and the UK)."""
        return f"{self.date.day}/{self.date.month}"

    @property
    def iso(self) -> str:
        return self.date.isoformat()


def scenario_days(today: dt.date) -> dict[str, Day]:
    """mon..sun of the first week whose Monday is at least MIN_DAYS_AHEAD away, and mon2..sun2 after it."""
    monday = today + dt.timedelta(days=MIN_DAYS_AHEAD)
    while monday.weekday() != 0:
        monday += dt.timedelta(days=1)
    days = {}
    for offset, key in enumerate(WEEKDAY_KEYS):
        days[key] = Day(monday + dt.timedelta(days=offset))
        days[f"{key}2"] = Day(monday + dt.timedelta(days=7 + offset))
    far = today + dt.timedelta(days=FAR_DAYS_AHEAD)
    while far.weekday() != 2:
        far += dt.timedelta(days=1)
    days["far"] = Day(far)  # a Wednesday beyond every fixture's advance-booking window
    for offset in range(DATED_DAYS_AHEAD + 1):
        date = today + dt.timedelta(days=offset)
        days[date.isoformat()] = Day(date)
    return days


# --- what exists before the parent says anything -------------------------------------------------------------------


@dataclass(frozen=True)
class Booking:
    """An upcoming tour booked before the conversation: the parent's own (`owner="me"`) or another family's."""

    key: str
    day: str
    time: str
    child_name: str = "Mia"
    child_age: int = 5
    owner: str = "me"


@dataclass(frozen=True)
class FullSlot:
    """A tour whose seats are all taken already."""

    day: str
    time: str


@dataclass(frozen=True)
class OpenDayEvent:
    """An open day the school has published (its own time, length and places)."""

    day: str
    time: str
    title: str = "Spring Open Morning"
    capacity: int = 40
    duration_minutes: int = 150


@dataclass(frozen=True)
class Closed:
    """Days the school is closed (a holiday, a term break)."""

    days: tuple[str, ...]
    reason: str = "Term break"


@dataclass(frozen=True)
class OtherFamilyCancels:
    """A script step, between the parent's messages: another family cancels their setup tour `key`, freeing a
    seat (what a waitlist offer in the chat comes from)."""

    key: str

    def apply(self, world: "World") -> None:
        booking = TourBooking.objects.get(reference=world.refs[self.key])
        booking_services.cancel_tour(booking=booking, reason="Another family cancelled")

    def __str__(self) -> str:
        return f"(another family cancels {self.key})"


OTHER_PARENT = {"name": "Grace Lim", "phone": "+6598765432", "child": "Noah"}


@dataclass
class World:
    """Everything one run needs to know about its school, parents and dates."""

    school: School
    contact: Contact
    other: Contact
    today: dt.date
    days: dict[str, Day]
    refs: dict[str, str] = field(default_factory=dict)  # setup booking key -> reference
    found: dict[str, str] = field(default_factory=dict)  # what the checks found, e.g. new_ref

    def day(self, key: str) -> dt.date:
        return self.days[key].date

    def template_values(self) -> dict:
        return {**self.days, "ref": SimpleNamespace(**self.refs), **self.found}

    def fmt(self, template: str) -> str:
        return template.format(**self.template_values())


def build_world(*, fixture: str, persona_name: str = "", persona_phone: str = "", setup=()) -> World:
    """Create a fresh school from the fixture, the parent's contact, and the scenario's starting state."""
    spec = FIXTURES[fixture]
    token = uuid.uuid4().hex[:10]
    fields = {**spec.school, "slug": f"{SLUG_PREFIX}{spec.school['slug']}-{token}",
              "name": spec.school["name"], "is_active": False, "chatwoot_inbox_ids": [],
              "whatsapp_phone_number_id": ""}
    with transaction.atomic():
        school = School(**fields)
        school.full_clean()
        school.save()
        questions = {entry["key"]: entry["question"] for entry in spec.faqs}
        created = FaqEntry.objects.bulk_create([
            FaqEntry(school=school, question=entry["question"], answer=entry["answer"], tags=entry["tags"],
                     related_topics=[questions[key] for key in entry.get("related", []) if key in questions])
            for entry in spec.faqs
        ])
        for faq_entry, entry in zip(created, spec.faqs, strict=True):
            save_faq_translations(faq_entry, entry.get("translations", {}))
        phone = normalise_phone(persona_phone, school.default_phone_region) if persona_phone else ""
        contact = find_or_create_contact(school=school, phone=phone, name=persona_name,
                                         web_visitor_id=f"eval-{token}")
        other = find_or_create_contact(school=school, phone=OTHER_PARENT["phone"], name=OTHER_PARENT["name"])
    today = booking_services.local_now(school).date()
    world = World(school=school, contact=contact, other=other, today=today, days=scenario_days(today))
    try:
        for item in setup:
            _apply(world, item, persona_name or "Jon Tan", persona_phone or "+6591234567")
    except Exception:
        destroy_world(school.pk)
        raise
    contact.refresh_from_db()
    return world


def _apply(world: World, item, parent_name: str, parent_phone: str) -> None:
    school = world.school
    if isinstance(item, Booking):
        mine = item.owner == "me"
        booking = booking_services.book_tour(
            school=school, contact=world.contact if mine else world.other,
            parent_name=parent_name if mine else OTHER_PARENT["name"],
            parent_phone=parent_phone if mine else OTHER_PARENT["phone"],
            child_name=item.child_name, child_age=item.child_age,
            local_date=world.day(item.day), local_time=dt.time.fromisoformat(item.time),
            now=_booked_when(school, world.day(item.day), item.time),
        )
        world.refs[item.key] = booking.reference
    elif isinstance(item, FullSlot):
        starts_at = dt.datetime.combine(world.day(item.day), dt.time.fromisoformat(item.time), school.tz)
        TourSlot.objects.update_or_create(school=school, starts_at=starts_at,
                                          defaults={"capacity": school.seats_per_tour,
                                                    "seats_taken": school.seats_per_tour})
    elif isinstance(item, OpenDayEvent):
        OpenDay.objects.create(school=school, title=item.title, capacity=item.capacity,
                               duration_minutes=item.duration_minutes,
                               starts_at=dt.datetime.combine(world.day(item.day), dt.time.fromisoformat(item.time),
                                                             school.tz))
    elif isinstance(item, Closed):
        for key in item.days:
            SchoolClosure.objects.create(school=school, date=world.day(key), reason=item.reason)
    else:
        raise TypeError(f"Unknown setup item {item!r}")


def _booked_when(school: School, day: dt.date, time: str) -> dt.datetime:
    """When a setup tour was booked: now, or earlier if the school's notice rule would refuse it now (a tour a
    reviewed conversation found already booked for the next morning was booked in time, days before)."""
    now = timezone.now()
    starts_at = dt.datetime.combine(day, dt.time.fromisoformat(time), school.tz)
    return min(now, starts_at - dt.timedelta(hours=school.min_notice_hours, minutes=1))


def destroy_world(school_id: int) -> None:
    """Delete the run's school and everything that hangs off it (bookings, callbacks, chats, CRM rows, Redis)."""
    contact_ids = list(Contact.objects.filter(school_id=school_id).values_list("pk", flat=True))
    client = get_redis()
    for contact_id in contact_ids:
        memory.end_session(school_id, contact_id)
        client.delete(memory.lock_key(school_id, contact_id))
    with transaction.atomic():
        TourBooking.objects.filter(school_id=school_id).update(replaces=None)
        TourBooking.objects.filter(school_id=school_id).delete()
        CallbackRequest.objects.filter(school_id=school_id).delete()
        Conversation.objects.filter(school_id=school_id).delete()
        Contact.objects.filter(school_id=school_id).delete()
        School.objects.filter(pk=school_id).delete()  # slots, closures and FAQ entries cascade
    faq._cache.pop(school_id, None)  # the school's FAQ index, kept per school id


def leftover_schools() -> list[School]:
    """Evaluation schools left by an interrupted run (or kept with --keep-failed)."""
    return list(School.objects.filter(slug__startswith=SLUG_PREFIX, is_active=False))
