"""request_callback and manage_callback: a call back from admissions, asked for, moved or cancelled."""

import datetime as dt

from bookings import callbacks
from bookings import selectors as booking_selectors
from bookings.models import WEEKDAY_NAMES, CallbackRequest
from bookings.services import BookingError, describe_date
from chatbot.agent.datetimes import read_call_time
from chatbot.agent.tools.context import _ctx
from chatbot.agent.tools.intake import _change_verb
from chatbot.agent.tools.results import _booking_error, _error


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
