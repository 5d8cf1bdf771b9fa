"""check_availability: the open tour slots in a date range, at the times asked for."""

import datetime as dt

from django.utils.translation import gettext_noop

from bookings import services as bookings
from bookings.intake import read_window
from bookings.services import BookingError, describe_date
from chatbot.agent.datetimes import parse_date, parse_time, time_of_day
from chatbot.agent.tools.context import _ctx
from chatbot.agent.tools.intake import _intake, _keep, _record
from chatbot.agent.tools.results import _alternatives, _error, _rule, _slot_dicts


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
