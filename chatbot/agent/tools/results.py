"""What the tools answer with: errors and a rule's refusal, slots, a tour as the parent is told it, the
parent's own bookings."""

import datetime as dt

from bookings import selectors as booking_selectors
from bookings.intake import DETAILS
from bookings.models import WEEKDAY_NAMES, School, join_names
from bookings.services import BookingError, SlotView, describe_date
from chatbot.agent.tools.context import ToolContext, _ctx
from chatbot.agent.tools.intake import _intake
from crm.models import Contact

MAX_SLOTS_SHOWN = 6


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
