"""What a tool was given, read and kept: the booking details collected so far (the intake), cleaned
values, the children, the verb of a change."""

import datetime as dt

from bookings import services as bookings
from bookings.intake import Intake, read_window
from chatbot.agent.datetimes import parse_date, parse_time, time_of_day
from chatbot.agent.tools.context import ToolContext
from crm.identity import InvalidContactDetail, normalise_email, normalise_phone


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


def _child_details(intake: Intake) -> list:
    return [_child_detail(c) for c in intake.children]


def _iso_day(value: str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if value else None


def _child_detail(child: dict) -> "bookings.ChildDetails":
    return bookings.ChildDetails(child["name"], child.get("age"), _iso_day(child.get("date_of_birth")),
                                 child.get("year_group", ""))


RESCHEDULE_WORDS = {"move": "reschedule", "change": "reschedule", "rebook": "reschedule", "update": "reschedule"}


def _change_verb(action: str | None) -> str:
    """A manage tool's action as a model may say it: "reschedule" (or move, change, rebook, update) or "cancel"."""
    verb = (action or "").strip().lower()
    return RESCHEDULE_WORDS.get(verb, verb)
