"""update_context: a correction or a new detail, on the booking being collected or on a booked tour."""

import json
import re

from bookings import selectors as booking_selectors
from bookings import services as bookings
from bookings.models import TourBooking
from bookings.services import describe_date
from chatbot.agent import memory
from chatbot.agent.tools.context import _ctx
from chatbot.agent.tools.intake import _child_detail, _clean_field, _intake, _keep, _record
from chatbot.agent.tools.results import _error, _your_bookings
from crm import services as crm


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


def _updated(name: str, old, value, saved_to: list[str]) -> dict:
    return {"status": "updated", "field": name, "old_value": old, "new_value": value, "saved_to": saved_to}


def _not_changed(name: str, value, reason: str, **extra) -> dict:
    """update_context changed nothing: why, and what to use instead when something else can."""
    return {"status": "not_changed", "field": name, "new_value": value, "reason": reason, **extra}


def _booking_details(booking) -> tuple:
    """What update_context can change on a booking, to tell whether a correction changed it."""
    return (booking.parent_name, booking.parent_phone, booking.parent_email, booking.special_requirements,
            tuple((c.name, c.age) for c in booking.children.all()))
