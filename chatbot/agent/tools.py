"""The tools (seed 000's seven names and shapes, the waitlist's two, open days): thin adapters from a model's strings
to typed services.

Each tool is a plain function whose typed signature and docstring become the
schema the model sees (langchain-core), so the contract is written once. The
conversation a call belongs to comes from `current_context`, set by the loop.
Tools validate everything and answer with a JSON-able dict; they never raise.
"""

import asyncio
import contextvars
import datetime as dt
import inspect
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from bookings import callbacks, waitlist
from bookings import selectors as booking_selectors
from bookings import services as bookings
from bookings.intake import DETAILS, Intake, read_window
from bookings.models import WEEKDAY_NAMES, CallbackRequest, School, TourBooking, join_names
from bookings.services import BookingError, SlotView, describe_date
from chatbot import faq
from chatbot.agent import confirmation, memory
from chatbot.agent.datetimes import parse_date, parse_time, read_call_time, time_of_day
from chatbot.models import Conversation, Message
from chatbot.text import without_nul
from crm import services as crm
from crm.identity import InvalidContactDetail, normalise_email, normalise_phone
from crm.models import Contact
from plumbing.hops import database_hop

logger = logging.getLogger(__name__)

MAX_SLOTS_SHOWN = 6
TOOL_TIMEOUT_SECONDS = 20


@dataclass
class ToolContext:
    """Who the tools act for, during one turn."""

    school: School
    contact: Contact
    conversation: Conversation
    active: memory.ActiveContext
    history: list[str] = field(default_factory=list)
    turn_message_ids: set[int] = field(default_factory=set)
    now: dt.datetime | None = None
    # The turn's claim: the `processed_at` it set on each message it took. Its reply is stored only while every
    # one still holds (`chatbot.hotpath.finish_turn`): a turn taken over after its lease lapsed stores nothing.
    claims: dict[int, dt.datetime] = field(default_factory=dict)

    @property
    def today(self) -> dt.date:
        return bookings.local_now(self.school, self.now).date()


current_context: contextvars.ContextVar[ToolContext] = contextvars.ContextVar("tool_context")


def _ctx() -> ToolContext:
    return current_context.get()


def _slot_dicts(slots: list[SlotView]) -> list[dict]:
    return [slot.as_dict() for slot in slots[:MAX_SLOTS_SHOWN]]


def _error(message: str, **extra) -> dict:
    return {"status": "error", "message": message, **extra}


def _alternatives(ctx: "ToolContext", slots: list[SlotView]) -> list[dict]:
    """Other slots to offer, keeping to the part of the day or the time the parent asked for when any do."""
    intake = _intake(ctx)
    fitting = [s for s in slots if intake.fits_time(f"{s.local_time:%H:%M}")]
    return _slot_dicts(fitting or slots)


def _rule(exc: BookingError) -> dict:
    """What a rule said: its English message, and its template and params for a reply in another language."""
    return {"message": exc.message, **({"template": exc.template, "params": exc.neutral_params} if exc.params else {})}


# Details a yes may add without changing what was read back: recorded with the booking, no new read-back needed.
ADDED_WITH_A_YES = ("parent_email", "special_requirements")


def _described(details: dict) -> str:
    """A booking as the read-back awaits the parent's yes to it (and the prompt shows it), in one line:
    "2026-11-27, 09:00, Sarah Tan, +6591234567, Mia (5) and Leo (3, Year 1)". An e-mail or a special requirement
    given with the yes does not change it (ADDED_WITH_A_YES)."""
    def child(c: dict) -> str:  # every detail given, so a change to any of them needs a new yes
        known = [str(c[k]) for k in ("age", "date_of_birth", "year_group") if c.get(k) not in (None, "")]
        return f"{c.get('name') or ''} ({', '.join(known)})" if known else str(c.get("name") or "")

    def said(key: str) -> str:
        return join_names([child(c) for c in details[key]]) if key == "children" else str(details[key])
    return ", ".join(said(k) for k in ("date", "time", *DETAILS) if k in details and k not in ADDED_WITH_A_YES)


def _booking_error(exc: BookingError, full: tuple[dt.date, dt.time] | None = None) -> dict:
    """A rule's refusal for the model; `full`, the tour that was full: remembered, so join_waitlist can use it."""
    result = {"status": "error", **_rule(exc), "field": exc.field, "code": exc.code}
    if exc.waitlist and full:
        _ctx().active.full_slot = {"date": full[0].isoformat(), "time": f"{full[1]:%H:%M}"}
        result["waitlist"] = {"date": full[0].isoformat(), "time": f"{full[1]:%H:%M}",
                              "label": f"{describe_date(full[0])}, {full[1]:%H:%M}"}
    if exc.alternatives:
        result["alternatives"] = _alternatives(_ctx(), exc.alternatives)
        _ctx().active.slots_shown = result["alternatives"]
    return result


def _booking_summary(booking) -> dict:
    local = booking.local_start
    return {
        "booking_id": booking.reference,
        "date": local.date().isoformat(),
        "weekday": local.strftime("%A"),
        "time": local.strftime("%H:%M"),
        "child_name": booking.child_name,  # every child's name: "Leo and Mia"
    }


def _your_bookings(contact: Contact) -> list[dict]:
    return [_booking_summary(b) for b in booking_selectors.upcoming_bookings(contact)[:5]]


def _no_tours(message: str) -> dict:
    """manage_tour_booking for a parent with no upcoming tour: nothing to move or cancel; a new one is book_tour."""
    return _error(message, code="no_upcoming_tours", your_bookings=[], suggest="book_tour")


def _normalise_times(preferred_times: list[str] | str | None) -> list[str]:
    if isinstance(preferred_times, str):
        preferred_times = [preferred_times]
    result = []
    for item in preferred_times or []:
        if read_window(item):  # "after 10:00", "10:00-12:00": a window, kept as written
            result.append(str(item).strip().lower())
            continue
        exact = parse_time(item)
        result.append(exact.strftime("%H:%M") if exact else (time_of_day(item) or str(item).strip().lower()))
    return [item for item in result if item]


def check_availability(
    date_range_start: str | None = None,
    date_range_end: str | None = None,
    preferred_times: list[str] | None = None,
) -> dict:
    """Open campus tour slots in a date range (default: the next 7 bookable days), optionally at preferred times.

    Args:
        date_range_start: ISO date or phrase.
        preferred_times: e.g. ["morning"], ["14:00"], or a window ["after 10:00"], ["10:00-12:00"].
    """
    ctx = _ctx()
    start = parse_date(date_range_start, ctx.today) if date_range_start else None
    if date_range_start and start is None:
        return _error(f"I couldn't read the date “{date_range_start}”. Try a date like 25 November or next Tuesday.")
    end = parse_date(date_range_end, ctx.today) if date_range_end else None
    if date_range_end and end is None:
        return _error(f"I couldn't read the date “{date_range_end}”.")
    if start and end and end < start:
        start, end = end, start
    intake = _intake(ctx)
    intake.record_when(date_from=start, date_to=end or start)
    for item in _normalise_times(preferred_times):
        _record(intake, "preferred_time", item)
    _keep(ctx, intake)
    wanted = intake.search_args()  # what the parent asked for so far, not only in this call
    start = dt.date.fromisoformat(wanted["date_range_start"]) if "date_range_start" in wanted else ctx.today
    end = dt.date.fromisoformat(wanted["date_range_end"]) if "date_range_end" in wanted else None
    end = end or start + dt.timedelta(days=6)
    times = wanted.get("preferred_times") or []
    slots = bookings.available_slots(ctx.school, start, end, times, now=ctx.now)
    ctx.active.task_type = ctx.active.task_type or "tour_booking"
    if slots:
        shown = _slot_dicts(slots)
        ctx.active.slots_shown = shown
        result = {"status": "success", "date_range": {"start": start.isoformat(), "end": end.isoformat()},
                  "available_slots": shown}
        if len(slots) > len(shown):
            result["more_available"] = len(slots) - len(shown)
        return result
    alternatives = _alternatives(ctx, bookings.next_open_slots(ctx.school, after=start, now=ctx.now))
    exact = [t for t in times if ":" in t]
    asked = f" at {', '.join(exact)}" if exact else f" in the {', '.join(times)}" if times else ""
    span = describe_date(start) if start == end else f"{describe_date(start)} to {describe_date(end)}"
    said = {"message": f"No open tour slots{asked} from {span}."}
    if start == end:
        try:
            bookings.check_day(ctx.school, start, now=ctx.now)
        except BookingError as exc:  # the day itself can't be booked: say why
            said = _rule(exc)
            alternatives = _alternatives(ctx, exc.alternatives) or alternatives
    elif start > bookings.local_now(ctx.school, ctx.now).date() + dt.timedelta(days=ctx.school.max_advance_days):
        said = _rule(BookingError("beyond_window", gettext_noop(
            "Tours can be booked up to %(days)s days ahead, so the dates you asked about are too far away."),
            params={"days": ctx.school.max_advance_days}))
    ctx.active.slots_shown = alternatives
    return {"status": "no_match", **said, "alternatives": alternatives}


def _intake(ctx: ToolContext) -> Intake:
    return Intake.from_dict(ctx.active.collected)


def _record(intake: Intake, name: str, value) -> None:
    """Put one cleaned field into the intake: a detail, or what it says about when."""
    if name == "preferred_date":
        intake.record_when(date=value)
    elif name == "preferred_time" and (window := read_window(value)) is not None:
        intake.record_when(window=window)
    elif name == "preferred_time":
        intake.record_when(**({"time": value} if ":" in str(value) else {"part": value}))
    else:
        intake.record_details(**{name: value})


def _keep(ctx: ToolContext, intake: Intake) -> dict:
    """Store the intake in the active context (where the prompt shows it); returns its stored form."""
    ctx.active.collected = intake.as_dict()
    return ctx.active.collected


def _clean_children(children, ctx: ToolContext) -> list[dict]:
    """book_tour's `children` in the intake's form; ValueError (for the parent) on an age or a date of birth
    that can't be read. A name alone ("Leo") is a child too."""
    if isinstance(children, dict | str):
        children = [children]
    if not isinstance(children, list):
        raise ValueError("children is a list like [{\"name\": \"Leo\", \"age\": 5}].")
    cleaned = []
    for given in children:
        given = {"name": given} if isinstance(given, str) else given
        if not isinstance(given, dict):
            continue
        child = {"name": str(given.get("name") or "").strip(), "year_group": str(given.get("year_group") or "").strip()}
        if given.get("age") not in (None, ""):
            child["age"] = _clean_field("child_age", given["age"], ctx)
        if given.get("date_of_birth") not in (None, ""):
            try:
                child["date_of_birth"] = dt.date.fromisoformat(str(given["date_of_birth"]).strip()).isoformat()
            except ValueError:
                raise ValueError(f"I couldn't read the date of birth “{given['date_of_birth']}”.") from None
        cleaned.append({k: v for k, v in child.items() if v not in (None, "")})
    return cleaned


def _clean_field(name: str, value, ctx: ToolContext):
    """A collected value in its stored form, or raise ValueError with a message for the parent."""
    if name == "children":
        return _clean_children(value, ctx)
    text = str(value).strip()
    if name == "child_age":
        try:
            return int(float(text.split()[0]))
        except (ValueError, IndexError):
            raise ValueError(f"I couldn't read “{text}” as an age in years.") from None
    if name == "preferred_date":
        day = parse_date(text, ctx.today)
        if day is None:
            raise ValueError(f"I couldn't read the date “{text}”.")
        return day.isoformat()
    if name == "preferred_time":
        exact = parse_time(text)
        if exact:
            return exact.strftime("%H:%M")
        if time_of_day(text):
            return time_of_day(text)
        raise ValueError(f"I couldn't read the time “{text}”.")
    try:
        if name == "parent_phone":
            return normalise_phone(text, ctx.school.default_phone_region)
        if name == "parent_email":
            return normalise_email(text)
    except InvalidContactDetail as exc:
        raise ValueError(exc.message) from None
    return text


def book_tour(
    parent_name: str | None = None,
    parent_phone: str | None = None,
    parent_email: str | None = None,
    child_name: str | None = None,
    child_age: int | None = None,
    preferred_date: str | None = None,
    preferred_time: str | None = None,
    special_requirements: str | None = None,
    children: list[dict] | None = None,
    open_day: bool | None = None,
    confirmed: bool | None = None,
    another_tour: bool | None = None,
) -> dict:
    """Book a family's campus tour with whatever is known; it answers "missing_fields" until complete.

    Args:
        preferred_date: ISO date or phrase.
        children: Every child: [{name, age, date_of_birth, year_group}].
        open_day: An open day (check_open_days) on preferred_date.
        confirmed: True only if the parent's latest message agreed to your read-back of exactly this booking.
        another_tour: true: book it besides the child's upcoming tour (has_upcoming_tour).
    """
    ctx = _ctx()
    event = bool(open_day) or ctx.active.task_type == OPEN_DAY_TASK
    given = {"parent_name": parent_name, "parent_phone": parent_phone, "parent_email": parent_email,
             "children": children, "child_name": child_name, "child_age": child_age,
             "preferred_date": preferred_date, "preferred_time": preferred_time,
             "special_requirements": special_requirements}
    ctx.active.task_type = OPEN_DAY_TASK if event else "tour_booking"
    intake = _intake(ctx)
    problems = {}
    for name, value in given.items():
        if value is None or str(value).strip() == "":
            continue
        try:
            _record(intake, name, _clean_field(name, value, ctx))
        except ValueError as exc:
            problems[name] = str(exc)
            intake.forget(name)
    collected = _keep(ctx, intake)
    if problems:
        name, message = next(iter(problems.items()))
        return _error(message, field=name, collected=collected)
    if event:
        return _book_open_day(ctx, intake, bool(confirmed))
    missing = intake.missing()
    if missing and intake.preferred_date:
        day = dt.date.fromisoformat(intake.preferred_date)
        asked = (day, dt.time.fromisoformat(intake.preferred_time)) if intake.preferred_time else None
        try:  # say at once that a day (or the exact tour) can't work, not after every other detail was collected
            bookings.check_day(ctx.school, day, now=ctx.now)
            if asked:
                _check_open(ctx, *asked)
        except BookingError as exc:
            intake.forget(exc.field or "preferred_date")
            _keep(ctx, intake)
            return _booking_error(exc, asked)
    times = intake.search_args().get("preferred_times")  # the part of the day or the window asked for
    if times and intake.preferred_date and not intake.preferred_time:
        day = dt.date.fromisoformat(intake.preferred_date)
        options = bookings.available_slots(ctx.school, day, day, times, now=ctx.now)
        ctx.active.slots_shown = _slot_dicts(options) or ctx.active.slots_shown
        return {"status": "missing_fields", "missing": ["preferred_time"], "collected": collected,
                "message": "Please choose an exact tour start time.", "options": _slot_dicts(options)}
    if missing:
        return {"status": "missing_fields", "missing": missing, "collected": collected}
    children = _child_details(intake)
    day, start_time = dt.date.fromisoformat(intake.preferred_date), dt.time.fromisoformat(intake.preferred_time)
    details = _tour_details(ctx.school, day, start_time, children=intake.children, **intake.details)
    try:
        bookings.clean_children(ctx.school, children)  # the school's cap on people, before any read-back
        _check_open(ctx, day, start_time)
    except BookingError as exc:
        intake.forget(exc.field)
        _keep(ctx, intake)
        return _booking_error(exc, (day, start_time))
    if another_tour:
        ctx.active.another_tour, ctx.active.upcoming_tour_asked = True, ""
    coming = [] if ctx.active.another_tour else booking_selectors.upcoming_with_children(
        ctx.contact, [c.name for c in children], ctx.now)
    if coming:  # ask first: move that tour, or book another as well? (a sibling's own tour is not asked about)
        ctx.active.upcoming_tour_asked = coming[0].reference
        return _has_upcoming_tour(coming, details)
    action = "book " + _described(details)
    if _awaiting_yes(ctx, action, confirmed):
        ctx.active.slots_shown = []  # the parent chose: a "yes" now answers the read-back, not an old list
        return {"status": "confirm", "action": "book", "read_back": details, "message": confirmation.NOT_YET}
    try:
        booking = bookings.book_tour(
            school=ctx.school, contact=ctx.contact, parent_name=collected["parent_name"],
            parent_phone=collected["parent_phone"], parent_email=collected.get("parent_email", ""),
            children=children,
            local_date=dt.date.fromisoformat(collected["preferred_date"]),
            local_time=dt.time.fromisoformat(collected["preferred_time"]),
            special_requirements=collected.get("special_requirements", ""), now=ctx.now,
        )
    except BookingError as exc:
        intake.forget(exc.field)
        _keep(ctx, intake)
        return _booking_error(exc, (day, start_time))
    _done(ctx, action)
    ctx.active.collected = {}
    ctx.active.slots_shown = []
    ctx.active.task_type = ""
    ctx.active.another_tour, ctx.active.upcoming_tour_asked = False, ""
    ctx.active.last_booking_id = booking.reference
    return {"status": "success", "booking_id": booking.reference, "confirmation_details": _confirmation(booking)}


def _has_upcoming_tour(coming: list, details: dict) -> dict:
    """book_tour's question before a read-back, for a child who already has an upcoming tour: nothing is booked."""
    tour = coming[0]
    local = tour.local_start
    return {"status": "has_upcoming_tour", "your_bookings": [_booking_summary(b) for b in coming[:5]],
            "requested": {k: details[k] for k in ("date", "weekday", "time", "label", "child_name") if k in details},
            "message": f"{tour.child_name} already has tour {tour.reference} on {describe_date(local.date())} at "
                       f"{local:%H:%M}. Nothing is booked yet: ask whether to move that one to the time asked for "
                       "(manage_tour_booking) or book another tour as well (book_tour again with another_tour=true)."}


OPEN_DAY_TASK = "open_day_booking"


def _event_dict(event) -> dict:
    local = event.starts_at.astimezone(event.school.tz)
    return {"date": local.date().isoformat(), "weekday": WEEKDAY_NAMES[local.weekday()], "time": f"{local:%H:%M}",
            "label": f"{describe_date(local.date())}, {local:%H:%M}", "title": event.title,
            "duration_minutes": event.minutes, "seats_left": max(event.seats_free, 0)}


def check_open_days() -> dict:
    """The school's upcoming open days (book one with book_tour(open_day=true))."""
    ctx = _ctx()
    events = [_event_dict(e) for e in bookings.open_days(ctx.school, now=ctx.now)][:MAX_SLOTS_SHOWN]
    if not events:
        return {"status": "no_match", "message": "There are no open days planned at the moment; a campus tour "
                                                 "can be booked any time."}
    ctx.active.task_type = OPEN_DAY_TASK
    ctx.active.slots_shown = [{k: e[k] for k in ("date", "weekday", "time", "label")} for e in events]
    return {"status": "success", "open_days": events}


def _book_open_day(ctx: ToolContext, intake: Intake, confirmed: bool) -> dict:
    """book_tour for an open day: the same details, read-back and yes; the day (and time) name the event."""
    collected = _keep(ctx, intake)
    missing = [f for f in intake.missing() if f != "preferred_time"]
    if missing:
        return {"status": "missing_fields", "missing": missing, "collected": collected, "open_day": True}
    day = dt.date.fromisoformat(intake.preferred_date)
    start = dt.time.fromisoformat(intake.preferred_time) if intake.preferred_time else None
    try:
        event = bookings.find_open_day(ctx.school, day, start, now=ctx.now)
    except BookingError as exc:
        intake.forget("preferred_date")
        _keep(ctx, intake)
        return {**_booking_error(exc), "open_days": [_event_dict(e) for e in bookings.open_days(ctx.school,
                                                                                                now=ctx.now)]}
    local = event.starts_at.astimezone(ctx.school.tz)
    details = {**_tour_details(ctx.school, local.date(), local.time(), children=intake.children, **intake.details),
               "event": event.title, "duration_minutes": event.minutes}
    action = "book open day " + _described(details)
    if _awaiting_yes(ctx, action, confirmed):
        ctx.active.slots_shown = []
        return {"status": "confirm", "action": "book", "read_back": details, "message": confirmation.NOT_YET}
    try:
        booking = bookings.book_tour(
            school=ctx.school, contact=ctx.contact, parent_name=collected["parent_name"],
            parent_phone=collected["parent_phone"], parent_email=collected.get("parent_email", ""),
            children=_child_details(intake), local_date=local.date(),
            local_time=local.time(), special_requirements=collected.get("special_requirements", ""), event=event,
            now=ctx.now)
    except BookingError as exc:
        return _booking_error(exc)
    _done(ctx, action)
    ctx.active.collected, ctx.active.slots_shown, ctx.active.task_type = {}, [], ""
    ctx.active.last_booking_id = booking.reference
    return {"status": "success", "booking_id": booking.reference,
            "confirmation_details": {**_confirmation(booking), "event": event.title,
                                     "duration_minutes": event.minutes}}


def _child_details(intake: Intake) -> list:
    return [_child_detail(c) for c in intake.children]


def _iso_day(value: str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if value else None


def _tour_details(school: School, day: dt.date, start_time: dt.time, children: list[dict] | None = None,
                  **people) -> dict:
    """A tour as the parent is told it: when (in the school's zone), where, who comes (every child; `child_name`
    is their names on one line) and how we reach them."""
    if children:
        people = {**people, "children": [dict(c) for c in children],
                  "child_name": join_names([str(c.get("name") or "") for c in children])}
    return {
        "date": day.isoformat(),
        "weekday": WEEKDAY_NAMES[day.weekday()],
        "time": start_time.strftime("%H:%M"),
        "label": f"{describe_date(day)}, {start_time:%H:%M}",
        "duration_minutes": school.tour_duration_minutes,
        **{k: v for k, v in people.items() if k in (*DETAILS, "child_name") and v not in (None, "")},
        "school": school.name,
        "address": school.address,
    }


def _confirmation(booking) -> dict:
    local = booking.local_start
    children = [{k: v for k, v in (("name", c.name), ("age", c.age), ("year_group", c.year_group))
                 if v not in (None, "")} for c in booking.children.all()]
    return _tour_details(booking.school, local.date(), local.time().replace(second=0, microsecond=0),
                         children=children, parent_name=booking.parent_name, parent_phone=booking.parent_phone,
                         parent_email=booking.parent_email)


def _check_open(ctx: ToolContext, day: dt.date, start_time: dt.time) -> None:
    """BookingError unless that tour can be booked now (every rule, and a free seat)."""
    bookings.check_slot(ctx.school, day, start_time, now=ctx.now)
    if not bookings.available_slots(ctx.school, day, day, [f"{start_time:%H:%M}"], now=ctx.now):
        raise BookingError("slot_full", f"The {start_time:%H:%M} tour on {describe_date(day)} is full.",
                           field="preferred_time", waitlist=True,
                           alternatives=bookings.available_slots(ctx.school, day, day, now=ctx.now))


def _awaiting_yes(ctx: ToolContext, action: str, confirmed: bool | None) -> bool:
    """True, with the read-back noted, unless this action was read back earlier and the model says the parent
    agreed since (`confirmed`).

    One reply may read back several actions ("cancel Mia's tour and book Sam's"): one yes confirms them all."""
    latest = max(ctx.turn_message_ids, default=0)
    pending = ctx.active.read_back
    if confirmation.confirmed(pending, action, latest, confirmed is True):
        return False  # the yes stands until the action is done (a failed commit may be tried again)
    earlier = pending.get("actions") or [] if pending.get("after") == latest else []
    ctx.active.read_back = {"actions": [*earlier, action], "after": latest}
    return True


def _done(ctx: ToolContext, action: str) -> None:
    """The confirmed action is committed: its yes is used up."""
    left = [a for a in ctx.active.read_back.get("actions") or [] if a != action]
    ctx.active.read_back = {**ctx.active.read_back, "actions": left} if left else {}


RESCHEDULE_WORDS = {"move": "reschedule", "change": "reschedule", "rebook": "reschedule", "update": "reschedule"}


def _change_verb(action: str | None) -> str:
    """A manage tool's action as a model may say it: "reschedule" (or move, change, rebook, update) or "cancel"."""
    verb = (action or "").strip().lower()
    return RESCHEDULE_WORDS.get(verb, verb)


def manage_tour_booking(
    booking_id: str,
    action: str,
    new_date: str | None = None,
    new_time: str | None = None,
    cancellation_reason: str | None = None,
    confirmed: bool | None = None,
) -> dict:
    """Reschedule or cancel the parent's own tour booking.

    Args:
        booking_id: e.g. "T-7KQ3XM".
        action: "reschedule" or "cancel".
        new_date: ISO date or phrase.
        confirmed: True only if the parent's latest message agreed to your read-back of exactly this change.
    """
    ctx = _ctx()
    verb = _change_verb(action)
    if verb not in ("reschedule", "cancel"):
        return _error(f"Unknown action “{action}”: use \"reschedule\" or \"cancel\".")
    if not (booking_id or "").strip():
        yours = _your_bookings(ctx.contact)
        if not yours:
            return _no_tours("This parent has no upcoming tours to move or cancel.")
        return {"status": "missing_fields", "missing": ["booking_id"], "your_bookings": yours}
    booking = booking_selectors.contact_booking(ctx.contact, booking_id)
    if booking is None:
        reference = booking_selectors.normalise_reference(booking_id)
        yours = _your_bookings(ctx.contact)
        if not yours:
            return _no_tours(f"No booking {reference} found for you, and you have no upcoming tours.")
        return _error(f"No booking {reference} found for you.", your_bookings=yours)
    try:
        if verb == "cancel":
            action = f"cancel {booking.reference}"
            if _awaiting_yes(ctx, action, confirmed):
                return {"status": "confirm", "action": "cancel", "booking_id": booking.reference,
                        "tour": _confirmation(booking), "cancellation_reason": cancellation_reason or "",
                        "message": confirmation.NOT_YET}
            cancelled = bookings.cancel_tour(booking=booking, reason=cancellation_reason or "", now=ctx.now)
            _done(ctx, action)
            local = cancelled.local_start
            return {"status": "success", "action": "cancelled", "booking_id": cancelled.reference,
                    "message": f"The tour on {describe_date(local.date())} at {local:%H:%M} is cancelled."}
        return _reschedule(ctx, booking, new_date, new_time, confirmed)
    except BookingError as exc:
        return _booking_error(exc)


def _reschedule(ctx: ToolContext, booking, new_date: str | None, new_time: str | None,
                confirmed: bool | None) -> dict:
    if not new_date and not new_time:
        return {"status": "missing_fields", "missing": ["new_date", "new_time"],
                "your_bookings": [_booking_summary(booking)]}
    local = booking.local_start
    day = parse_date(new_date, ctx.today) if new_date else local.date()
    if day is None:
        return _error(f"I couldn't read the date “{new_date}”.", field="new_date")
    start_time = parse_time(new_time) if new_time else local.time()
    if start_time is None:
        options = bookings.available_slots(ctx.school, day, day, [time_of_day(new_time) or "any"], now=ctx.now)
        ctx.active.slots_shown = _slot_dicts(options)
        return {"status": "missing_fields", "missing": ["new_time"], "options": _slot_dicts(options),
                "message": "Please choose an exact tour start time."}
    start_time = start_time.replace(second=0, microsecond=0)
    _check_open(ctx, day, start_time)
    action = f"reschedule {booking.reference} to {day.isoformat()} {start_time:%H:%M}"
    if _awaiting_yes(ctx, action, confirmed):
        intake = _intake(ctx)  # the new day and time, for the parent's "yes"
        intake.record_when(date=day, time=f"{start_time:%H:%M}")
        _keep(ctx, intake)
        ctx.active.slots_shown = []
        return {"status": "confirm", "action": "reschedule", "booking_id": booking.reference,
                "from": _confirmation(booking), "to": _tour_details(ctx.school, day, start_time),
                "message": confirmation.NOT_YET}
    if ctx.active.upcoming_tour_asked == booking.reference:  # the parent chose to move it (not to book another)
        ctx.active.upcoming_tour_asked = ""
    moved = bookings.reschedule_tour(booking=booking, new_date=day, new_time=start_time, now=ctx.now)
    _done(ctx, action)
    ctx.active.last_booking_id = moved.reference
    ctx.active.slots_shown = []  # the offer is used, as after book_tour
    intake = _intake(ctx)
    intake.forget_when()
    _keep(ctx, intake)
    new_local = moved.local_start
    return {"status": "success", "action": "rescheduled", "booking_id": moved.reference,
            "message": f"Moved from {describe_date(local.date())} at {local:%H:%M} to "
                       f"{describe_date(new_local.date())} at {new_local:%H:%M}; the reference stays "
                       f"{moved.reference}.",
            "confirmation_details": _confirmation(moved)}


def _callback_details(callback) -> dict:
    """A call back exactly as stored: its local day (with the weekday) and window, in the school's zone."""
    best = (f"{callback.specific_time:%H:%M}" if callback.best_time == CallbackRequest.BestTime.SPECIFIC
            and callback.specific_time else str(callback.best_time))
    return {"parent_name": callback.parent_name, "parent_phone": callback.parent_phone,
            "best_time_to_call": best, "due_date": callback.due_date.isoformat(),
            "weekday": WEEKDAY_NAMES[callback.due_date.weekday()], "window_start": f"{callback.window_start:%H:%M}",
            "window_end": f"{callback.window_end:%H:%M}",
            "window": f"{callback.window_start:%H:%M}-{callback.window_end:%H:%M}",
            "time_zone": callback.school.time_zone, "topic": callback.topic}


def _callback_moved(callback) -> dict:
    """When the stored call back is not when the parent asked: what they asked for, and why (empty otherwise)."""
    asked = callback.asked_for or {}
    if not asked:
        return {}
    moved_from = {k: asked[k] for k in ("date", "weekday", "window_start", "window_end") if asked.get(k)}
    reasons = [{"code": r["code"], "template": r["template"], "params": r["params"]} for r in asked["reasons"]]
    return {"moved_from": {**moved_from, "reasons": reasons}, "message": asked["message"]}


def _your_callbacks(contact) -> list[dict]:
    return [{"callback_id": c.reference, "due_date": c.due_date.isoformat(),
             "weekday": WEEKDAY_NAMES[c.due_date.weekday()], "window": f"{c.window_start:%H:%M}-{c.window_end:%H:%M}",
             "topic": c.topic} for c in booking_selectors.open_callbacks(contact).select_related("school")[:5]]


def request_callback(parent_name: str, parent_phone: str, best_time_to_call: str, topic: str | None = None) -> dict:
    """Ask admissions to phone the parent back, on a day the school is open within its calling hours.

    Args:
        best_time_to_call: The parent's words: "morning", "afternoon", "evening", "anytime", "3pm",
            "after 5pm", "before 11am", "between 2 and 4pm", with a day if they said one ("tomorrow after 5pm").
    """
    ctx = _ctx()
    name = (parent_name or "").strip() or ctx.active.collected.get("parent_name") or ctx.contact.name
    phone = (parent_phone or "").strip() or ctx.active.collected.get("parent_phone") or ctx.contact.phone
    missing = [f for f, v in (("parent_name", name), ("parent_phone", phone),
                              ("best_time_to_call", (best_time_to_call or "").strip())) if not v]
    if missing:
        return {"status": "missing_fields", "missing": missing}
    wish = read_call_time(best_time_to_call, ctx.today)
    try:
        callback = callbacks.request_callback(
            school=ctx.school, contact=ctx.contact, parent_name=name, parent_phone=phone, best_time=wish.best_time,
            specific_time=wish.start if wish.best_time == CallbackRequest.BestTime.SPECIFIC else None,
            due_date=wish.day, window_start=wish.start, window_end=wish.end, topic=topic or "", now=ctx.now)
    except BookingError as exc:
        return _booking_error(exc)
    ctx.active.task_type = ""
    return {"status": "success", "callback_id": callback.reference, "details": _callback_details(callback),
            **_callback_moved(callback)}


def manage_callback(callback_id: str, action: str, new_time: str | None = None) -> dict:
    """Change the day or time of the parent's own call back, or cancel it (never request a second one to move it).

    Args:
        callback_id: e.g. "C-WUC3X6" (CONTACT.context.callback_requested shows the open one).
        action: "reschedule" or "cancel".
        new_time: For "reschedule": the parent's words, as for request_callback ("tomorrow evening",
            "Monday after 5pm"); without a day the call keeps its day.
    """
    ctx = _ctx()
    verb = _change_verb(action)
    if verb not in ("reschedule", "cancel"):
        return _error(f"Unknown action “{action}”: use \"reschedule\" or \"cancel\".")
    if not (callback_id or "").strip():
        return {"status": "missing_fields", "missing": ["callback_id"], "action": verb,
                "your_callbacks": _your_callbacks(ctx.contact)}
    callback = booking_selectors.contact_callback(ctx.contact, callback_id)
    if callback is None:
        reference = booking_selectors.normalise_reference(callback_id, "C")
        return _error(f"No call back {reference} found for you.", action=verb,
                      your_callbacks=_your_callbacks(ctx.contact))
    if verb == "reschedule" and not (new_time or "").strip():
        return {"status": "missing_fields", "missing": ["new_time"], "action": verb, "callback_id": callback.reference,
                "details": _callback_details(callback)}
    before = _callback_details(callback)
    try:
        if verb == "cancel":
            cancelled = callbacks.cancel_callback(callback=callback)
            ctx.active.task_type = ""
            return {"status": "success", "action": "cancelled", "callback_id": cancelled.reference,
                    "details": _callback_details(cancelled),
                    "message": f"The call back due on {describe_date(cancelled.due_date)} between "
                               f"{before['window_start']} and {before['window_end']} is cancelled: nobody will call."}
        moved = callbacks.reschedule_callback(callback=callback, call_time=read_call_time(new_time, ctx.today),
                                              now=ctx.now)
    except BookingError as exc:
        return {**_booking_error(exc), "action": verb, "callback_id": callback.reference,
                "your_callbacks": _your_callbacks(ctx.contact)}
    ctx.active.task_type = ""
    details, moved_from = _callback_details(moved), _callback_moved(moved)
    summary = (f"Moved from {describe_date(dt.date.fromisoformat(before['due_date']))}, {before['window']}, to "
               f"{describe_date(moved.due_date)}, {details['window']}; the reference stays {moved.reference}.")
    return {"status": "success", "action": "rescheduled", "callback_id": moved.reference, "previous": before,
            "details": details, **moved_from, "message": " ".join(filter(None, [summary, moved_from.get("message")]))}


def get_faq_answer(question: str) -> dict:
    """The school's FAQ answer to a parent's question.

    Args:
        question: In the parent's words.
    """
    ctx = _ctx()
    return faq.answer_question(ctx.school, question, history=ctx.history)


def update_context(
    field_to_update: str, new_value: str, reason: str | None = None, booking_id: str | None = None
) -> dict:
    """Record a correction or new detail (with booking_id: on that booked tour only). Never moves a tour.

    Args:
        field_to_update: A book_tour argument or preferred_name.
        new_value: For children: the children coming, e.g. '[{"name": "Nur", "age": 3}]' (a sibling joins the tour).
    """
    ctx = _ctx()
    name = (field_to_update or "").strip()
    if name not in memory.ACTIVE_FIELDS:
        return _error(f"“{name}” is not a field I keep. Use one of: {', '.join(memory.ACTIVE_FIELDS)}.")
    try:
        value = _clean_field(name, _children_said(new_value) if name == "children" else new_value, ctx)
    except ValueError as exc:
        return _error(str(exc), field=name)
    booking_id = (booking_id or "").strip()
    reference = booking_id or ctx.active.last_booking_id
    booked = booking_selectors.contact_booking(ctx.contact, reference) if reference else None
    if booking_id and booked is None:
        return _error(f"No booking {booking_selectors.normalise_reference(booking_id)} found for you.",
                      your_bookings=_your_bookings(ctx.contact))
    if name == "preferred_name":
        old = ctx.contact.preferred_name
        if str(old or "") == str(value):
            return _not_changed(name, value, f"The parent's preferred name is already {value}.")
        crm.set_preferred_name(ctx.contact, value)
        return _updated(name, old, value, ["contact"])
    collecting = bool(ctx.active.collected)  # a booking's details are being collected (not only a booked tour's)
    upcoming = booked is not None and booked.status == TourBooking.Status.SCHEDULED
    if upcoming and name in ("preferred_date", "preferred_time") and (booking_id or not collecting):
        local = booked.local_start
        return _not_changed(
            name, value, f"Tour {booked.reference} stays booked for {describe_date(local.date())} at {local:%H:%M}: "
            "update_context never moves a booked tour. Nothing was changed.",
            use="manage_tour_booking", booking_id=booked.reference)
    if booking_id and name not in bookings.CORRECTABLE_FIELDS:
        return _not_changed(name, value, f"{name} can't be changed on booked tour {booked.reference}.",
                            booking_id=booked.reference)
    old, saved_to = None, []
    if not booking_id:  # an earlier tour's correction is not a detail of the booking being collected
        old = ctx.active.collected.get(name)
        intake = _intake(ctx)
        before = intake.as_dict()
        _record(intake, name, value)
        if _keep(ctx, intake) != before:
            saved_to.append("collected")
        if name == "parent_name" and not booked and old and str(old) != str(value):
            known_as = ctx.contact.name
            crm.correct_parent_name(ctx.contact, str(old), str(value))
            if ctx.contact.name != known_as:
                saved_to.append("contact")
    result = {"field": name, "old_value": old, "new_value": value}
    # the tour booked in this chat, while it is still coming up; a tour named by reference in any case (a tour that
    # took place or was cancelled is refused: an error, with nothing changed)
    if booked and name in bookings.CORRECTABLE_FIELDS and (upcoming or booking_id):
        was = _booking_details(booked)
        if result["old_value"] is None:
            result["old_value"] = ([{"name": c.name, "age": c.age} for c in booked.children.all()]
                                   if name == "children" else getattr(booked, name))
        correction = {name: [_child_detail(c) for c in value] if name == "children" else value}
        bookings.correct_booking_details(booking=booked, now=ctx.now, **correction)
        if _booking_details(booked) != was:
            saved_to.append(f"booking {booked.reference}")
            result["booking_updated"] = booked.reference
    if not saved_to:
        where = f" (and on tour {booked.reference})" if upcoming and name in bookings.CORRECTABLE_FIELDS else ""
        return _not_changed(name, value, f"{name} is already {value}{where}.")
    if upcoming and name in ("preferred_date", "preferred_time"):  # a detail of the booking being collected
        result["note"] = f"Only the booking being collected changed; tour {booked.reference} is not moved."
    return {"status": "updated", **result, "saved_to": saved_to}


CHILD_AND_AGE = re.compile(r"^\s*(?P<name>[^\d,()]+?)\s*(?:,|\(|\s)\s*(?P<age>\d{1,2})\s*\)?\s*$")


def _children_said(value):
    """update_context's children as a model may send them: a JSON list (or object) in the string, else one child
    written "Nur Aisyah, 3" / "Nur Aisyah (3)" / "Nur Aisyah"."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        said = CHILD_AND_AGE.match(value)
        return [{"name": said["name"], "age": int(said["age"])}] if said else [{"name": value.strip()}]


def _child_detail(child: dict) -> "bookings.ChildDetails":
    return bookings.ChildDetails(child["name"], child.get("age"), _iso_day(child.get("date_of_birth")),
                                 child.get("year_group", ""))


def _updated(name: str, old, value, saved_to: list[str]) -> dict:
    return {"status": "updated", "field": name, "old_value": old, "new_value": value, "saved_to": saved_to}


def _not_changed(name: str, value, reason: str, **extra) -> dict:
    """update_context changed nothing: why, and what to use instead when something else can."""
    return {"status": "not_changed", "field": name, "new_value": value, "reason": reason, **extra}


def _booking_details(booking) -> tuple:
    """What update_context can change on a booking, to tell whether a correction changed it."""
    return (booking.parent_name, booking.parent_phone, booking.parent_email, booking.special_requirements,
            tuple((c.name, c.age) for c in booking.children.all()))


def join_waitlist(
    preferred_date: str | None = None,
    preferred_time: str | None = None,
    parent_name: str | None = None,
    parent_phone: str | None = None,
    child_name: str | None = None,
    child_age: int | None = None,
) -> dict:
    """Join the waitlist of the full tour book_tour reported (or the one given)."""
    ctx = _ctx()
    intake = _intake(ctx)
    given = {"parent_name": parent_name, "parent_phone": parent_phone, "child_name": child_name,
             "child_age": child_age}
    for name, value in given.items():
        if value is not None and str(value).strip():
            try:
                _record(intake, name, _clean_field(name, value, ctx))
            except ValueError as exc:
                return _error(str(exc), field=name)
    collected = _keep(ctx, intake)
    full = ctx.active.full_slot
    try:
        day = (dt.date.fromisoformat(_clean_field("preferred_date", preferred_date, ctx)) if preferred_date
               else dt.date.fromisoformat(full["date"]) if full else None)
        start = (dt.time.fromisoformat(_clean_field("preferred_time", preferred_time, ctx)) if preferred_time
                 else dt.time.fromisoformat(full["time"]) if full else None)
    except ValueError as exc:
        return _error(str(exc))
    child = intake.children[0] if intake.children else {}
    missing = [k for k in ("parent_name", "parent_phone") if not collected.get(k)] + ([] if child else ["child_name"])
    missing += [k for k, v in (("preferred_date", day), ("preferred_time", start)) if v is None]
    if missing:
        return {"status": "missing_fields", "missing": missing, "collected": collected}
    try:
        starts_at = bookings.check_slot(ctx.school, day, start, now=ctx.now)
        entry = waitlist.join(
            school=ctx.school, contact=ctx.contact, slot=bookings.tour_slot(ctx.school, starts_at),
            parent_name=collected["parent_name"], parent_phone=collected["parent_phone"],
            parent_email=collected.get("parent_email", ""), child_name=child["name"], child_age=child.get("age"),
            now=ctx.now)
    except BookingError as exc:
        return _booking_error(exc)
    ctx.active.full_slot, ctx.active.collected, ctx.active.task_type = {}, {}, ""
    return {"status": "success", "waitlist_id": entry.reference, "place_in_line": waitlist.place_in_line(entry),
            "tour": _tour_details(ctx.school, day, start, child_name=entry.child_name, child_age=entry.child_age),
            "hold_minutes": ctx.school.waitlist_hold_minutes}


def _wrote_since(ctx: ToolContext, moment: dt.datetime) -> bool:
    """Whether the parent's latest message of this turn was sent after `moment` (the offer, its own read-back)."""
    latest = Message.objects.filter(pk=max(ctx.turn_message_ids, default=0)).values_list("created_at", flat=True)
    return any(sent > moment for sent in latest)


def answer_seat_offer(answer: str, confirmed: bool | None = None) -> dict:
    """The parent's answer to CONTACT.seat_offer: "accept" books it (the offer is its read-back), "decline" passes
    it on.

    Args:
        confirmed: True only if the parent's latest message agreed to the offer (or to your read-back of it).
    """
    ctx = _ctx()
    offer = waitlist.live_offer(ctx.contact)
    if offer is None:
        return _error("There is no seat being held for you right now.", your_waitlists=[
            _booking_summary_of_entry(e) for e in waitlist.live_entries(ctx.contact)])
    verb = (answer or "").strip().lower()
    if verb not in ("accept", "decline"):
        return _error(f"Unknown answer “{answer}”: use \"accept\" or \"decline\".")
    if verb == "decline":
        waitlist.decline(offer, now=ctx.now)
        return {"status": "success", "action": "declined", "waitlist_id": offer.reference}
    action = f"accept {offer.reference}"
    agreed_to_offer = confirmed is True and _wrote_since(ctx, offer.offered_at)
    if not agreed_to_offer and _awaiting_yes(ctx, action, confirmed):
        local = offer.slot.starts_at.astimezone(ctx.school.tz)
        details = _tour_details(ctx.school, local.date(), local.time(), child_name=offer.child_name,
                                child_age=offer.child_age, parent_name=offer.parent_name,
                                parent_phone=offer.parent_phone, parent_email=offer.parent_email)
        return {"status": "confirm", "action": "book", "read_back": details, "message": confirmation.NOT_YET}
    booking = waitlist.accept(offer, now=ctx.now)
    _done(ctx, action)
    ctx.active.last_booking_id = booking.reference
    return {"status": "success", "booking_id": booking.reference, "confirmation_details": _confirmation(booking)}


def _booking_summary_of_entry(entry) -> dict:
    local = entry.slot.starts_at.astimezone(entry.school.tz)
    return {"waitlist_id": entry.reference, "date": local.date().isoformat(), "time": f"{local:%H:%M}",
            "child_name": entry.child_name, "status": entry.status}


def take_unread(ctx: ToolContext) -> list[Message]:
    """The parent's messages that arrived during this turn, taken into it (marked processed), in order."""
    memory.drain_queue(ctx.school.pk, ctx.contact.pk)
    with transaction.atomic():
        pending = list(
            Message.objects.select_for_update()
            .filter(conversation__contact=ctx.contact, role=Message.Role.USER, processed_at__isnull=True)
            .exclude(pk__in=ctx.turn_message_ids)
            .order_by("created_at", "id")
        )
        taken_at = timezone.now()
        Message.objects.filter(pk__in=[m.pk for m in pending]).update(processed_at=taken_at)
    ctx.turn_message_ids.update(m.pk for m in pending)
    ctx.claims.update((m.pk, taken_at) for m in pending)
    return pending


def check_unread_messages() -> dict:
    """Take in the messages the parent sent meanwhile."""
    pending = take_unread(_ctx())
    return {"has_unread": bool(pending),
            "messages": [{"message": m.text, "timestamp": m.created_at.isoformat()} for m in pending]}


TOOLS: dict[str, Callable[..., dict]] = {
    fn.__name__: fn
    for fn in (check_availability, book_tour, manage_tour_booking, request_callback, manage_callback, get_faq_answer,
               update_context, check_unread_messages, join_waitlist, answer_seat_offer, check_open_days)
}


def all_schemas() -> list[dict]:
    """`TOOL_SCHEMAS`: every tool, in TOOLS' order, offered on every model call of every conversation (a tool that
    cannot apply says why when called; one stable list lets a provider cache the prompt's prefix). Built on first
    use: it needs langchain-core, which takes about a second to import
    (a serving process builds them at start-up: `chatbot.warmup`)."""
    if "TOOL_SCHEMAS" not in globals():
        from langchain_core.utils.function_calling import convert_to_openai_tool

        globals()["TOOL_SCHEMAS"] = [convert_to_openai_tool(fn) for fn in TOOLS.values()]
    return globals()["TOOL_SCHEMAS"]


def __getattr__(name: str):
    if name == "TOOL_SCHEMAS":
        return all_schemas()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Tools that only read: the active task they change (the slots shown) is saved with the turn's end. After any
# other tool it is saved at once: a turn that fails after booking is tried again knowing what was booked.
READ_ONLY_TOOLS = frozenset({"check_availability", "check_open_days", "get_faq_answer"})


class _Then:
    """What runs in a tool's hop right after it (`execute(then=...)`), and the hand-shake with a timeout: a tool
    past TOOL_TIMEOUT_SECONDS goes on in its thread, so either `then` never runs (the caller gave up first and
    answers with a timeout error), or the caller waits for it and takes the tool's own result: never both."""

    def __init__(self, then: Callable[[dict, int], None]) -> None:
        self.then = then
        self.lock = threading.Lock()
        self.state = "waiting"  # -> "running" (in the hop) or "abandoned" (by the caller)
        self.done = threading.Event()
        self.result: dict | None = None

    def __call__(self, result: dict, latency_ms: int) -> None:
        with self.lock:
            if self.state == "abandoned":
                return
            self.state = "running"
        try:
            self.then(result, latency_ms)
            self.result = result
        finally:
            self.done.set()

    def abandon(self) -> bool:
        """Give up on the tool: True if `then` will never run; False if it has begun (wait for `done`)."""
        with self.lock:
            if self.state == "waiting":
                self.state = "abandoned"
            return self.state == "abandoned"


def _run_tool(name: str, arguments: dict, then: _Then | None = None) -> dict:
    started = time.perf_counter()
    try:
        result = TOOLS[name](**arguments)
    except BookingError as exc:
        result = _booking_error(exc)
    except Exception:  # a tool must answer, never crash the turn
        logger.exception("tool %s failed", name)
        result = _error("Something went wrong on our side while doing that. Please try again in a moment.")
    if name not in READ_ONLY_TOOLS:
        _ctx().active.save()
    if then is not None:
        then(result, int((time.perf_counter() - started) * 1000))
    return result


def parse_arguments(name: str, raw: str | dict | None) -> tuple[dict | None, dict | None]:
    """(arguments, None) when the call can run, else (None, an error result for the model)."""
    if name not in TOOLS:
        return None, _error(f"There is no tool called “{name}”. Available: {', '.join(TOOLS)}.")
    try:
        arguments = raw if isinstance(raw, dict) else json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        return None, _error(f"The arguments for {name} were not valid JSON ({exc.msg}). Send a JSON object.")
    if not isinstance(arguments, dict):
        return None, _error(f"The arguments for {name} must be a JSON object.")
    arguments = without_nul(arguments)
    params = inspect.signature(TOOLS[name]).parameters
    unknown = sorted(set(arguments) - set(params))
    if unknown:
        return None, _error(f"{name} has no argument(s) {', '.join(unknown)}. It takes: {', '.join(params)}.")
    missing = [p.name for p in params.values() if p.default is inspect.Parameter.empty and p.name not in arguments]
    if missing:
        return None, {"status": "missing_fields", "missing": missing,
                      "message": f"{name} needs {', '.join(missing)}."}
    return arguments, None


async def execute(name: str, raw_arguments: str | dict | None, ctx: ToolContext,
                  then: Callable[[dict, int], None] | None = None) -> tuple[dict | None, dict]:
    """Run one tool call for the model: (parsed arguments, result). Never raises, except what `then` raises.

    `then(result, milliseconds)` runs in the tool's own database hop, right after it (e.g. to store the
    result), only if the tool ran and its result is the one returned here: past TOOL_TIMEOUT_SECONDS the
    tool is given up (a timeout error) unless `then` has begun, in which case its end is waited for."""
    arguments, problem = parse_arguments(name, raw_arguments)
    if problem:
        return arguments, problem
    current_context.set(ctx)
    after = _Then(then) if then is not None else None
    try:
        result = await asyncio.wait_for(
            database_hop(_run_tool)(name, arguments, after), TOOL_TIMEOUT_SECONDS
        )
    except TimeoutError:
        result = _error(f"{name} took too long to answer. Please try again.")
        if after is not None and not after.abandon():  # `then` is under way in the tool's thread
            await asyncio.get_running_loop().run_in_executor(None, after.done.wait)
            if after.result is None:
                raise RuntimeError(f"storing what {name} did failed in its thread (see the log)") from None
            result = after.result
    return arguments, result
