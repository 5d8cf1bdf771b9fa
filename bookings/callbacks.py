"""Call backs: when admissions call a parent, and the only functions that request, move, cancel, assign and
complete one.

A call is due on a local day the school is open (not one of its closed weekdays, not a closure) within a window
of its calling hours (`School.calling_hours_start`-`calling_hours_end`, local times). What the parent asked for
("tomorrow after 5pm", "Saturday morning", "3pm") is a `CallTime`; `place_call` turns it into the window staff
work to. A closed day is never accepted: the call moves to the next open day, a window outside the calling hours
to the nearest one inside them, and the stored call back keeps what was asked and why it moved (`asked_for`), so
whatever tells the parent reads it from the database.
"""

import datetime as dt
from dataclasses import dataclass, replace

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from bookings.models import WEEKDAY_NAMES, CallbackRequest, School, SchoolClosure
from bookings.services import BookingError, describe_date, local_now
from crm import services as crm
from crm.identity import InvalidContactDetail, normalise_phone

BestTime = CallbackRequest.BestTime
# The parts of the day as windows, before they are cut to the school's calling hours.
PART_WINDOWS = {
    BestTime.MORNING: (dt.time(0), dt.time(12)),
    BestTime.AFTERNOON: (dt.time(12), dt.time(17)),
    BestTime.EVENING: (dt.time(17), dt.time(23, 59)),
}
SPECIFIC_MINUTES = 30  # "call me at 3pm": 15:00-15:30
NEAREST_WINDOW_MINUTES = 60  # a window outside the calling hours moves to the first or last hour of them
SAME_DAY_NOTICE = dt.timedelta(hours=3)  # no day said: today only while the window has 3 hours to go
SEARCH_DAYS = 60  # how far the next open day is looked for

CLOSED_WEEKDAY = gettext_noop("The school is closed on %(weekday)s.")
CLOSED_DAY = gettext_noop("The school is closed on %(date)s.")
CLOSED_DAY_WITH_REASON = gettext_noop("The school is closed on %(date)s (%(reason)s).")
OUTSIDE_CALLING_HOURS = gettext_noop("We make calls between %(opens)s and %(closes)s.")
ALREADY_PASSED = gettext_noop("That time has already passed today.")
NOW_DUE = gettext_noop("The call is now due on %(date)s between %(start)s and %(end)s.")


@dataclass(frozen=True)
class CallTime:
    """When the parent asked to be called: how they put it (`best_time`), the day if they named one, and the
    times they named ("after 5pm": start; "before 11am": end; "between 2 and 4pm": both; "at 3pm": start)."""

    best_time: str = BestTime.ANYTIME
    day: dt.date | None = None
    start: dt.time | None = None
    end: dt.time | None = None


@dataclass(frozen=True)
class Reason:
    """Why a call moved: a catalogue message id (`template`) and its params (dates ISO, times HH:MM)."""

    code: str
    template: str
    params: dict

    @property
    def message(self) -> str:
        return self.template % {key: _in_english(key, value) for key, value in self.params.items()}

    def as_dict(self) -> dict:
        return {"code": self.code, "template": self.template, "params": self.params, "message": self.message}


@dataclass(frozen=True)
class CallPlan:
    """Where a call lands: its local day and window, and, when that is not what was asked, what was asked and
    why it moved."""

    day: dt.date
    start: dt.time
    end: dt.time
    asked_day: dt.date | None
    asked_start: dt.time
    asked_end: dt.time
    reasons: tuple[Reason, ...] = ()

    @property
    def asked_for(self) -> dict:
        """The `CallbackRequest.asked_for` of this plan: empty unless the call moved."""
        if not self.reasons:
            return {}
        due = Reason("now_due", NOW_DUE, {"date": self.day.isoformat(), "start": f"{self.start:%H:%M}",
                                          "end": f"{self.end:%H:%M}"})
        reasons = [*self.reasons, due]
        return {
            **({"date": self.asked_day.isoformat(), "weekday": WEEKDAY_NAMES[self.asked_day.weekday()]}
               if self.asked_day else {}),
            "window_start": f"{self.asked_start:%H:%M}", "window_end": f"{self.asked_end:%H:%M}",
            "reasons": [reason.as_dict() for reason in reasons],
            "message": " ".join(reason.message for reason in reasons),
        }


def _in_english(key: str, value: str) -> str:
    """A param in the English message (as BookingError writes them: "weekday" holds a date whose weekday is
    meant)."""
    if key == "weekday":
        return f"{WEEKDAY_NAMES[dt.date.fromisoformat(value).weekday()]}s"
    if key == "date":
        return describe_date(dt.date.fromisoformat(value))
    return str(value)


def _plus(time: dt.time, minutes: int) -> dt.time:
    moved = dt.datetime.combine(dt.date.min, time) + dt.timedelta(minutes=minutes)
    return moved.time() if moved.date() == dt.date.min else dt.time(23, 59)


def _minus(time: dt.time, minutes: int) -> dt.time:
    moved = dt.datetime.combine(dt.date.min + dt.timedelta(days=1), time) - dt.timedelta(minutes=minutes)
    return moved.time() if moved.date() > dt.date.min else dt.time(0)


def asked_window(school: School, call_time: CallTime) -> tuple[dt.time, dt.time]:
    """The window the parent's words mean, before it is fitted into the calling hours."""
    return window_asked(call_time, school.calling_hours_start, school.calling_hours_end)


def window_asked(call_time: CallTime, opens: dt.time, closes: dt.time) -> tuple[dt.time, dt.time]:
    """The window a call time means, with the calling hours (`opens`-`closes`) for what it leaves open."""
    if call_time.best_time == BestTime.SPECIFIC and call_time.start:
        return call_time.start, _plus(call_time.start, SPECIFIC_MINUTES)
    if call_time.best_time == BestTime.WINDOW and (call_time.start or call_time.end):
        return call_time.start or opens, call_time.end or closes
    return PART_WINDOWS.get(call_time.best_time, (opens, closes))


def outside_hours(start: dt.time, end: dt.time, opens: dt.time, closes: dt.time) -> bool:
    """Whether none of the window from `start` to `end` lies within the calling hours ("8pm" where calls are made
    09:00-18:00)."""
    return max(start, opens) >= min(end, closes)


def _fit_window(school: School, start: dt.time, end: dt.time) -> tuple[dt.time, dt.time, Reason | None]:
    """The window inside the calling hours: cut to them, or, when none of it is inside, their nearest hour."""
    opens, closes = school.calling_hours_start, school.calling_hours_end
    if not outside_hours(start, end, opens, closes):
        return max(start, opens), min(end, closes), None
    reason = Reason("outside_calling_hours", OUTSIDE_CALLING_HOURS, {"opens": f"{opens:%H:%M}",
                                                                     "closes": f"{closes:%H:%M}"})
    if start >= closes:
        return max(opens, _minus(closes, NEAREST_WINDOW_MINUTES)), closes, reason
    return opens, min(closes, _plus(opens, NEAREST_WINDOW_MINUTES)), reason


def _closed_days(school: School, start: dt.date) -> dict[dt.date, str]:
    closures = SchoolClosure.objects.filter(school=school, date__gte=start,
                                            date__lte=start + dt.timedelta(days=SEARCH_DAYS))
    return dict(closures.values_list("date", "reason"))


def _closed_reason(school: School, day: dt.date, closures: dict[dt.date, str]) -> Reason | None:
    if day.weekday() in school.closed_weekdays:
        return Reason("closed_weekday", CLOSED_WEEKDAY, {"weekday": day.isoformat()})  # the day, said as its weekday
    if day in closures:
        if closures[day]:
            return Reason("closed_day", CLOSED_DAY_WITH_REASON, {"date": day.isoformat(), "reason": closures[day]})
        return Reason("closed_day", CLOSED_DAY, {"date": day.isoformat()})
    return None


def is_open_for_calls(school: School, day: dt.date) -> bool:
    """Whether admissions call on that local day (not a closed weekday, not a closure)."""
    closures = dict(SchoolClosure.objects.filter(school=school, date=day).values_list("date", "reason"))
    return _closed_reason(school, day, closures) is None


def place_call(school: School, call_time: CallTime, *, now: dt.datetime | None = None) -> CallPlan:
    """The local day and window a call is due, by the school's rules; BookingError for a day that has passed or
    is beyond how far ahead calls are planned (the school's max_advance_days)."""
    current = local_now(school, now)
    today = current.date()
    asked_start, asked_end = asked_window(school, call_time)
    start, end, outside = _fit_window(school, asked_start, asked_end)
    reasons = [outside] if outside else []
    day = call_time.day
    if day is not None and day < today:
        raise BookingError("past_date", gettext_noop("%(date)s has already passed."), params={"date": day},
                           field="best_time_to_call")
    if day is not None and day > today + dt.timedelta(days=school.max_advance_days):
        raise BookingError("beyond_window", gettext_noop("We can schedule a call within the next %(days)s days."),
                           params={"days": school.max_advance_days}, field="best_time_to_call")
    if day is None:  # no day said: today while there is time to call in the window, else the next day
        day = today if current.replace(tzinfo=None) + SAME_DAY_NOTICE < dt.datetime.combine(today, end) \
            else today + dt.timedelta(days=1)
    elif day == today and current.time() >= end:
        reasons.append(Reason("passed", ALREADY_PASSED, {}))
        day = today + dt.timedelta(days=1)
    closures = _closed_days(school, day)
    closed = None
    for _ in range(SEARCH_DAYS):
        why = _closed_reason(school, day, closures)
        if why is None:
            break
        closed = closed or why
        day += dt.timedelta(days=1)
    else:
        raise BookingError("no_open_day", gettext_noop("We can schedule a call within the next %(days)s days."),
                           params={"days": school.max_advance_days}, field="best_time_to_call")
    if closed and call_time.day is not None:  # a day the parent chose (not our default) was closed
        reasons.append(closed)
    return CallPlan(day, start, end, call_time.day, asked_start, asked_end, tuple(reasons))


def _check_details(school: School, parent_name: str, parent_phone: str, best_time: str) -> str:
    """The phone in E.164, or a BookingError for a missing name, a bad phone or an unknown best time."""
    if not (parent_name or "").strip():
        raise BookingError("missing_fields", "Please tell me your name.", field="parent_name")
    try:
        phone = normalise_phone(parent_phone, school.default_phone_region)
    except InvalidContactDetail as exc:
        raise BookingError("invalid_phone", exc.message, field="parent_phone") from None
    if best_time not in BestTime.values:
        raise BookingError("invalid_best_time", gettext_noop("Say morning, afternoon, evening or a time like 3pm."),
                           field="best_time_to_call")
    return phone


def request_callback(
    *,
    school: School,
    contact,
    parent_name: str,
    parent_phone: str,
    best_time: str = BestTime.ANYTIME,
    specific_time: dt.time | None = None,
    due_date: dt.date | None = None,
    window_start: dt.time | None = None,
    window_end: dt.time | None = None,
    topic: str = "",
    now: dt.datetime | None = None,
) -> CallbackRequest:
    """Ask admissions to call a parent back: on `due_date` (default: today while there is time, else the next
    open day) within the window `best_time` means (`specific_time`, or `window_start`/`window_end` for a
    window), moved to the next open day or into the calling hours when it must be (`asked_for` says why)."""
    phone = _check_details(school, parent_name, parent_phone, best_time)
    start = specific_time if best_time == BestTime.SPECIFIC else window_start
    plan = place_call(school, CallTime(best_time, due_date, start, window_end), now=now)
    with transaction.atomic():
        callback = CallbackRequest.objects.create(
            school=school, contact=contact, parent_name=parent_name.strip(), parent_phone=phone,
            best_time=best_time, specific_time=specific_time if best_time == BestTime.SPECIFIC else None,
            due_date=plan.day, window_start=plan.start, window_end=plan.end, asked_for=plan.asked_for,
            topic=(topic or "").strip()[:500],
        )
        crm.fill_contact_details(contact, phone=phone, name=parent_name.strip())
        crm.record_callback_requested(callback)
    return callback


def _locked_open(callback: CallbackRequest) -> CallbackRequest:
    """The call back's row, locked, while it is still open; else a BookingError saying what it is."""
    locked = CallbackRequest.objects.select_for_update().select_related("school", "contact").get(pk=callback.pk)
    if locked.status != CallbackRequest.Status.OPEN:
        raise BookingError("not_open", f"Call back {locked.reference} is {locked.get_status_display().lower()}, "
                                       f"so it can no longer be changed.")
    return locked


def reschedule_callback(*, callback: CallbackRequest, call_time: CallTime, topic: str | None = None,
                        now: dt.datetime | None = None) -> CallbackRequest:
    """Move an open call back to another day and/or window (and topic, when given); it keeps its reference.
    The same rules as a new request; a time without a day keeps the call's day (while it is not past); a call
    already due exactly then is a BookingError ("same_time")."""
    if call_time.best_time not in BestTime.values:
        raise BookingError("invalid_best_time", gettext_noop("Say morning, afternoon, evening or a time like 3pm."),
                           field="new_time")
    if call_time.day is None and callback.due_date >= local_now(callback.school, now).date():
        call_time = replace(call_time, day=callback.due_date)
    plan = place_call(callback.school, call_time, now=now)
    with transaction.atomic():
        locked = _locked_open(callback)
        new_topic = (topic if topic is not None else locked.topic).strip()[:500]
        if (locked.due_date, locked.window_start, locked.window_end, locked.topic) == (
                plan.day, plan.start, plan.end, new_topic):
            raise BookingError("same_time", gettext_noop("Your call back is already due on %(date)s between "
                                                         "%(start)s and %(end)s."),
                               params={"date": plan.day, "start": plan.start, "end": plan.end}, field="new_time")
        locked.best_time = call_time.best_time
        locked.specific_time = call_time.start if call_time.best_time == BestTime.SPECIFIC else None
        locked.due_date, locked.window_start, locked.window_end = plan.day, plan.start, plan.end
        locked.asked_for, locked.topic = plan.asked_for, new_topic
        locked.save(update_fields=["best_time", "specific_time", "due_date", "window_start", "window_end",
                                   "asked_for", "topic", "updated_at"])
        crm.record_callback_moved(locked)
    return locked


def cancel_callback(*, callback: CallbackRequest) -> CallbackRequest:
    """Cancel an open call back at the parent's request; the contact's context then speaks of the call back
    still open, if any."""
    with transaction.atomic():
        locked = _locked_open(callback)
        locked.status = CallbackRequest.Status.CANCELLED
        locked.cancelled_at = timezone.now()
        locked.save(update_fields=["status", "cancelled_at", "updated_at"])
        crm.record_callback_cancelled(locked, still_open=_latest_open(locked.contact))
    return locked


def _latest_open(contact) -> CallbackRequest | None:
    return CallbackRequest.objects.filter(contact=contact, status=CallbackRequest.Status.OPEN).order_by(
        "-created_at", "-pk").first()


def assign_callback(*, callback: CallbackRequest, user) -> CallbackRequest:
    callback.assigned_to = user
    callback.save(update_fields=["assigned_to", "updated_at"])
    return callback


def complete_callback(*, callback: CallbackRequest, user) -> CallbackRequest:
    if callback.status != CallbackRequest.Status.OPEN:
        raise BookingError("not_open", f"Callback {callback.reference} is already "
                                       f"{callback.get_status_display().lower()}.")
    with transaction.atomic():
        callback.status = CallbackRequest.Status.DONE
        callback.handled_at = timezone.now()
        callback.assigned_to = callback.assigned_to or user
        callback.save(update_fields=["status", "handled_at", "assigned_to", "updated_at"])
        crm.record_callback_done(callback, still_open=_latest_open(callback.contact))
    return callback
