"""The booking intake: what a parent has told us so far about the tour they want, and what is still missing.

It holds the details (parent, phone, e-mail, special requirements), the
children coming (one family may bring several: each with a name, an age or a
date of birth, and a year group if given) and the parent's constraints on
*when*: an exact day or a range of days, a part of the day, an exact start time.
Later words refine earlier ones instead of
replacing the whole picture: "Thursday" then "in the afternoon" is Thursday
afternoon; "11:30" after "the 12th" is the 12th at 11:30; "actually the 14th"
keeps the time already chosen. The constraints survive questions in between,
"yes please" and corrections, and every slot offer is made from them
(`search_args`, `fits`), so nothing the parent said is offered against.

The intake is plain data (`as_dict` / `from_dict`): the agent keeps it in the
active conversation state, the tools write it through `record_details` and
`record_when`, and both the offline policy and a hosted model's prompt read the
same dict. Booking rules (open days, tour times, seats) stay in services.py.
"""

import datetime as dt
import re
from dataclasses import dataclass, field, fields
from difflib import SequenceMatcher
from functools import cache
from typing import Any

DETAILS = ("parent_name", "parent_phone", "parent_email", "children", "special_requirements")
CHILD_KEYS = ("name", "age", "date_of_birth", "year_group")
SIMILAR_NAME = 0.75  # "Miah" for "Mia" (0.86) respells it; "Max" for "Mia" (0.67) is another child
REQUIRED = ("child_name", "child_age", "parent_name", "parent_phone", "preferred_date", "preferred_time")
PARTS_OF_DAY = {"morning": (0, 12), "afternoon": (12, 17), "evening": (17, 24)}
AFTERNOON_ENDS = "16:59"  # the last minute of the afternoon (PARTS_OF_DAY)
_CLOCK = r"(?:[01]\d|2[0-3]):[0-5]\d"
# a window of the day as search_args writes it in preferred_times: "after 10:00", "before 12:00", "10:00-12:00"
WINDOW_FORM = re.compile(rf"^\s*(?:after\s+(?P<after>{_CLOCK})|before\s+(?P<before>{_CLOCK})"
                         rf"|(?P<start>{_CLOCK})\s*-\s*(?P<end>{_CLOCK}))\s*$", re.IGNORECASE)


def part_of_day(time: str) -> str:
    """The part of the day a "HH:MM" start time falls in."""
    hour = int(time[:2])
    return next(name for name, (first, last) in PARTS_OF_DAY.items() if first <= hour < last)


def window_text(after: str | None, before: str | None) -> str:
    """A window as preferred_times takes it: "after 10:00", "before 12:00", "10:00-12:00"."""
    if after and before:
        return f"{after}-{before}"
    return f"after {after}" if after else f"before {before}"


def read_window(text: str) -> tuple[str | None, str | None] | None:
    """(after, before) of a window written as `window_text` writes it; None for anything else."""
    match = WINDOW_FORM.match(str(text))
    if not match:
        return None
    return match.group("after") or match.group("start"), match.group("before") or match.group("end")


def window_part(after: str | None, before: str | None) -> str | None:
    """The part of the day a window lies in ("after 5": evening; "before 10", "between 10 and 12": morning;
    "after lunch": afternoon); None when it spans two ("after 10", "between 11 and 1"). A window open at its end
    runs to the end of the school's afternoon, or to its own start when that is later."""
    last = _minute_before(before) if before and before != "00:00" else max(after or "00:00", AFTERNOON_ENDS)
    parts = {part_of_day(t) for t in (after, last) if t}
    return parts.pop() if len(parts) == 1 else None


def _minute_before(time: str) -> str:
    minutes = int(time[:2]) * 60 + int(time[3:]) - 1
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def in_window(time: str, after: str | None, before: str | None) -> bool:
    """Whether a start time ("14:00") lies in the window (from `after`, until before `before`)."""
    return (after or "00:00") <= time < (before or "24:00")


@dataclass
class Intake:
    """One booking being collected. `preferred_date` / `preferred_time` are the exact day and start time."""

    details: dict[str, Any] = field(default_factory=dict)
    children: list[dict] = field(default_factory=list)  # [{"name": "Leo", "age": 5}, {"name": "Mia"}]
    preferred_date: str | None = None  # ISO day
    date_from: str | None = None  # a range of days ("next week", "between Tuesday and Thursday")
    date_to: str | None = None
    part_of_day: str | None = None  # "morning", "afternoon", "evening"
    preferred_time: str | None = None  # "HH:MM"
    time_after: str | None = None  # a window of the day ("after 10", "between 10 and 12"): "HH:MM"
    time_before: str | None = None

    # --- reading and writing the stored form --------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: dict | None) -> "Intake":
        """The intake of a stored dict (the details and the when-fields side by side, as `as_dict` writes)."""
        data = data or {}
        when = {name: data.get(name) if _valid(name, data.get(name)) else None for name in _when_fields()}
        details = {k: v for k, v in data.items() if k in DETAILS and k != "children" and v not in (None, "")}
        intake = cls(details=details, **when)
        stored = data.get("children")
        if isinstance(stored, list):
            intake.record_children(stored)
        intake.record_child(name=data.get("child_name"), age=data.get("child_age"))  # a state kept before children
        return intake

    def as_dict(self) -> dict:
        """The fields that say something, flat: {"children": [{"name": "Ethan", "age": 5}], "preferred_date": ...}."""
        when = {name: getattr(self, name) for name in _when_fields()}
        children = {"children": [dict(c) for c in self.children]} if self.children else {}
        return {**self.details, **children, **{k: v for k, v in when.items() if v}}

    # --- what the parent said ------------------------------------------------------------------------------

    def record_details(self, **values: Any) -> list[str]:
        """Keep the details given (empty values are ignored); returns the fields whose value changed.

        `children` is the whole list of children; `child_name` / `child_age` speak of one child (`record_child`)."""
        changed = []
        if isinstance(values.get("children"), list) and values["children"]:
            changed += ["children"] if self.record_children(values["children"]) else []
        if self.record_child(name=values.get("child_name"), age=values.get("child_age")):
            changed.append("children")
        for name, value in values.items():
            if name not in DETAILS or name == "children" or value in (None, ""):
                continue
            if self.details.get(name) != value:
                changed.append(name)
            self.details[name] = value
        return changed

    def record_children(self, children: list) -> bool:
        """The children coming, as the whole list: a child already known keeps what was said of them unless
        it is said again ("Leo and Mia" after "Leo, 5" keeps Leo's age). Returns whether anything changed."""
        before = self.children
        known = {str(c.get("name") or "").lower(): c for c in before if c.get("name")}
        merged = []
        for given in children:
            child = _child(given)
            if child is None:
                continue
            earlier = known.get(str(child.get("name") or "").lower(), {})
            merged.append({**earlier, **child})
        self.children = merged
        return merged != before

    def record_child(self, *, name: Any = None, age: Any = None) -> bool:
        """One child's name and/or age, from a caller that speaks of one child at a time: the child of that
        name; else the first one still unnamed; else, with one child, that child (a correction); else a child
        more (or, among several, the one whose name it respells). An age alone goes to the first child without
        one (or the only child). Returns whether it changed."""
        name = str(name).strip() if name not in (None, "") else ""
        if not name and age in (None, ""):
            return False
        before = [dict(c) for c in self.children]
        if name:
            target = next((c for c in self.children if str(c.get("name") or "").lower() == name.lower()), None)
            target = target or next((c for c in self.children if not c.get("name")), None)
            if target is None and len(self.children) == 1:
                target = self.children[0]
            if target is None:  # "Khloe" among Aiden and Chloe: a respelling, not a third child
                target = next((c for c in self.children if _respelt(str(c.get("name") or ""), name)), None)
            if target is None:
                target = {}
                self.children.append(target)
            target["name"] = name
        else:
            ageless = [c for c in self.children if c.get("age") in (None, "") and not c.get("date_of_birth")]
            target = ageless[0] if ageless else self.children[0] if len(self.children) == 1 else None
            if target is None and not self.children:
                target = {}
                self.children.append(target)
        if target is not None and age not in (None, ""):
            target["age"] = age
        return self.children != before

    def children_without(self, key: str) -> list[dict]:
        """The children still missing a name ("name") or an age ("age": neither age nor date of birth)."""
        if key == "age":
            return [c for c in self.children if c.get("age") in (None, "") and not c.get("date_of_birth")]
        return [c for c in self.children if not c.get("name")]

    def record_when(
        self,
        *,
        date: dt.date | str | None = None,
        date_from: dt.date | str | None = None,
        date_to: dt.date | str | None = None,
        part: str | None = None,
        time: str | None = None,
        window: tuple[str | None, str | None] = (None, None),
    ) -> None:
        """Refine when the parent wants to come with what they just said; unsaid constraints stay.

        A day replaces a range and a range replaces a day; a start time replaces
        the part of the day and the window; a window ("after 10", with the part of the day it lies in, if one)
        replaces both and drops a start time outside it; a part of the day said alone replaces the window and
        drops a start time outside it."""
        if date:
            self.preferred_date, self.date_from, self.date_to = _iso(date), None, None
        elif date_from:
            start, end = _iso(date_from), _iso(date_to or date_from)
            if start == end:
                self.preferred_date, self.date_from, self.date_to = start, None, None
            else:
                self.preferred_date, self.date_from, self.date_to = None, start, end
        if time:
            self.preferred_time, self.part_of_day, self.time_after, self.time_before = time, None, None, None
        elif any(window):
            self.time_after, self.time_before = window
            self.part_of_day = part if part in PARTS_OF_DAY else window_part(*window)
        elif part in PARTS_OF_DAY:
            self.part_of_day, self.time_after, self.time_before = part, None, None
        elif part == "any":
            self.part_of_day = self.time_after = self.time_before = None
        if self.preferred_time and not self.fits_time(self.preferred_time):
            self.preferred_time = None

    def day_in_range(self, weekday: int) -> str | None:
        """The day that falls on `weekday` in the range asked for ("next week" then "Thursday") or, when one day
        was asked for, in that day's week, Monday to Sunday ("next Tuesday" then "Wednesday instead")."""
        if self.date_from:
            day, last = dt.date.fromisoformat(self.date_from), dt.date.fromisoformat(self.date_to or self.date_from)
        elif self.preferred_date:
            held = dt.date.fromisoformat(self.preferred_date)
            day = held - dt.timedelta(days=held.weekday())
            last = day + dt.timedelta(days=6)
        else:
            return None
        while day <= last:
            if day.weekday() == weekday:
                return day.isoformat()
            day += dt.timedelta(days=1)
        return None

    def forget(self, name: str | None) -> None:
        """Drop one field (a detail, the day or the time), e.g. the one a booking rule refused."""
        if name in ("preferred_date", "preferred_time"):
            setattr(self, name, None)
        elif name == "child_age":
            for child in self.children:
                child.pop("age", None)
        elif name == "child_name":
            self.children = []
        elif name:
            self.details.pop(name, None)

    def forget_when(self) -> None:
        self.preferred_date = self.date_from = self.date_to = self.part_of_day = self.preferred_time = None
        self.time_after = self.time_before = None

    # --- what follows from it ------------------------------------------------------------------------------

    def missing(self) -> list[str]:
        """The required fields still missing; "child_name" / "child_age" while any child lacks a name / an age."""
        values = {**self.details, "preferred_date": self.preferred_date, "preferred_time": self.preferred_time,
                  "child_name": bool(self.children) and not self.children_without("name"),
                  "child_age": bool(self.children) and not self.children_without("age")}
        return [name for name in REQUIRED if values.get(name) in (None, "", False)]

    def search_args(self) -> dict:
        """check_availability arguments that respect every constraint (empty: the parent said nothing of when)."""
        args: dict = {}
        if self.preferred_date:
            args = {"date_range_start": self.preferred_date, "date_range_end": self.preferred_date}
        elif self.date_from:
            args = {"date_range_start": self.date_from, "date_range_end": self.date_to or self.date_from}
        if self.preferred_time:
            args["preferred_times"] = [self.preferred_time]
        elif self.time_after or self.time_before:
            args["preferred_times"] = [window_text(self.time_after, self.time_before)]
        elif self.part_of_day:
            args["preferred_times"] = [self.part_of_day]
        return args

    def fits(self, date: str, time: str) -> bool:
        """Whether an open slot ("2026-11-26", "14:00") respects what the parent asked for."""
        if self.preferred_date and date != self.preferred_date:
            return False
        if self.date_from and not (self.date_from <= date <= (self.date_to or self.date_from)):
            return False
        return self.fits_time(time)

    def fits_time(self, time: str) -> bool:
        """Whether a start time ("14:00") is the time, or in the window and part of the day, the parent asked for."""
        if self.preferred_time and time != self.preferred_time:
            return False
        if not in_window(time, self.time_after, self.time_before):
            return False
        return not (self.part_of_day and part_of_day(time) != self.part_of_day)


def _respelt(old: str, new: str) -> bool:
    """Whether `new` is `old` spelt another way ("Khloe" for "Chloe", "Miah" for "Mia")."""
    return bool(old) and SequenceMatcher(None, old.lower(), new.lower()).ratio() >= SIMILAR_NAME


def _child(given: Any) -> dict | None:
    """One child of a `children` list in its stored form ({"name", "age", "date_of_birth", "year_group"}, only
    what is given), or None if it says nothing; a bare string is a name."""
    if isinstance(given, str):
        given = {"name": given}
    if not isinstance(given, dict):
        return None
    child = {k: str(given[k]).strip() if k == "name" else given[k] for k in CHILD_KEYS
             if given.get(k) not in (None, "")}
    return {k: v for k, v in child.items() if v != ""} or None


def _valid(name: str, value: Any) -> bool:
    """Whether a stored when-field holds what it should (anything else, e.g. a model's "Jon", is dropped)."""
    if not isinstance(value, str) or not value:
        return False
    if name == "part_of_day":
        return value in PARTS_OF_DAY
    if name in ("preferred_time", "time_after", "time_before"):
        return bool(re.fullmatch(_CLOCK, value))
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _iso(day: dt.date | str) -> str:
    return day.isoformat() if isinstance(day, dt.date) else str(day)


@cache
def _when_fields() -> tuple[str, ...]:
    """The intake's fields about when (all but the details and the children)."""
    return tuple(f.name for f in fields(Intake) if f.name not in ("details", "children"))
