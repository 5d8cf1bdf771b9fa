"""join_waitlist and answer_seat_offer: a full tour's waitlist and the seat it offers."""

import datetime as dt

from bookings import services as bookings
from bookings import waitlist
from bookings.services import BookingError
from chatbot.agent import confirmation
from chatbot.agent.tools.context import ToolContext, _ctx
from chatbot.agent.tools.intake import _clean_field, _intake, _keep, _record
from chatbot.agent.tools.readback import _awaiting_yes, _done
from chatbot.agent.tools.results import _booking_error, _confirmation, _error, _tour_details
from chatbot.models import Message


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
