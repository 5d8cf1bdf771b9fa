"""A tour booked, moved or cancelled: book_tour (a campus tour or an open day), check_open_days and
manage_tour_booking (the parent's own tour)."""

import datetime as dt

from bookings import selectors as booking_selectors
from bookings import services as bookings
from bookings.intake import Intake
from bookings.models import WEEKDAY_NAMES
from bookings.services import BookingError, describe_date
from chatbot.agent import confirmation
from chatbot.agent.datetimes import parse_date, parse_time, time_of_day
from chatbot.agent.tools.context import ToolContext, _ctx
from chatbot.agent.tools.intake import _change_verb, _child_details, _clean_field, _intake, _keep, _record
from chatbot.agent.tools.readback import _awaiting_yes, _described, _done
from chatbot.agent.tools.results import (
    MAX_SLOTS_SHOWN,
    _booking_error,
    _booking_summary,
    _confirmation,
    _error,
    _slot_dicts,
    _tour_details,
    _your_bookings,
)


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


def _check_open(ctx: ToolContext, day: dt.date, start_time: dt.time) -> None:
    """BookingError unless that tour can be booked now (every rule, and a free seat)."""
    bookings.check_slot(ctx.school, day, start_time, now=ctx.now)
    if not bookings.available_slots(ctx.school, day, day, [f"{start_time:%H:%M}"], now=ctx.now):
        raise BookingError("slot_full", f"The {start_time:%H:%M} tour on {describe_date(day)} is full.",
                           field="preferred_time", waitlist=True,
                           alternatives=bookings.available_slots(ctx.school, day, day, now=ctx.now))


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


def _no_tours(message: str) -> dict:
    """manage_tour_booking for a parent with no upcoming tour: nothing to move or cancel; a new one is book_tour."""
    return _error(message, code="no_upcoming_tours", your_bookings=[], suggest="book_tour")


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
    if (day, start_time) == (local.date(), local.time().replace(second=0, microsecond=0)):
        return {"status": "no_change", "booking_id": booking.reference,
                "message": f"Tour {booking.reference} is already on {describe_date(day)} at {start_time:%H:%M}; "
                           "nothing was changed.", "confirmation_details": _confirmation(booking)}
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
