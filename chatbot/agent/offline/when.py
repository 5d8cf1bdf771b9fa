"""Dates and times in a parent's words ("next Tuesday", "15 Sept", "tomorrow morning", "2:30 pm").

Small patterns only *spot* the phrases that can be a date or a time; dateparser
parses each phrase against TODAY from the prompt. Parsing only the spotted
phrases keeps a call fast and stops dateparser from reading dates into names
or ages.
"""

import datetime as dt
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from dateparser.date import DateDataParser

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
PARTS_OF_DAY = ("morning", "afternoon", "evening")
MIN_RANGE_DAYS = 3

_WEEKDAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?"
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
DATE_PHRASE = re.compile(
    rf"""\b(?:day\ after\ tomorrow|today|tonight|tomorrow|tmrw?)\b
    | \b(?:(?:this|next|coming|this\ coming)\s+)?{_WEEKDAY}\b
      (?:,?\s+(?:the\s+)?{_DAY}(?:\s+(?:of\s+)?{_MONTH})?\b(?![:.]?\d|\s*[ap]\.?m\b))?
    | \b{_DAY}\s+(?:of\s+)?{_MONTH}(?:\s+\d{{4}})?
    | \b{_MONTH}\s+{_DAY}\b(?:,?\s+\d{{4}})?
    | \b\d{{4}}-\d{{2}}-\d{{2}}\b
    | \b\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?\b
    | \b(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)\b(?!\s+(?:one|option|slot))
    | \b(?:this|next)\s+(?:week(?:end)?)\b | \b(?:the\s+)?weekend\b | \bin\s+(?:a|one|two|three|\d)\s+weeks?\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
TIME_PHRASE = re.compile(
    r"\b\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b|\b(?:noon|midday)\b|(?<=\bat\s)\d{1,2}\b(?![:/.\d])",
    re.IGNORECASE,
)
PART_OF_DAY = re.compile(r"\b(morning|afternoon|evening|lunch ?time|after school)s?\b", re.IGNORECASE)
OPEN_ENDED = re.compile(r"\b(?:after|before|from|around|anytime after)\s+(?:at\s+)?$", re.IGNORECASE)
RANGE_JOIN = re.compile(r"\s*(?:and|to|till|until|through|-|–)\s*", re.IGNORECASE)
OLD_VALUE = re.compile(r"\b(?:not|instead of|from|rather than)\s+$", re.IGNORECASE)
BARE_WEEKDAY = re.compile(rf"^(?:coming\s+|this\s+coming\s+)?{_WEEKDAY}$", re.IGNORECASE)
BARE_DAY = re.compile(r"^(?:the\s+)?\d{1,2}(?:st|nd|rd|th)$", re.IGNORECASE)


@dataclass(frozen=True)
class When:
    """What a message says about when: a date (or a range), a time, a part of the day."""

    date: dt.date | None = None
    kind: str = ""  # "exact", "weekday" (a bare "Thursday") or "day" (a bare "the 25th")
    start: dt.date | None = None
    end: dt.date | None = None
    time: str | None = None  # "HH:MM"
    part_of_day: str | None = None
    date_phrase: str = ""
    time_phrase: str = ""

    @property
    def has_date(self) -> bool:
        return self.date is not None or self.start is not None

    @property
    def is_empty(self) -> bool:
        return not (self.has_date or self.time or self.part_of_day)

    @property
    def phrase(self) -> str:
        """The parent's own words, for tools that take loose input ("tomorrow morning")."""
        return " ".join(p for p in (self.date_phrase, self.time_phrase or self.part_of_day or "") if p)


@lru_cache(maxsize=16)
def _parser(base: dt.datetime) -> DateDataParser:
    settings = {
        "RELATIVE_BASE": base,
        "PREFER_DATES_FROM": "future",
        "DATE_ORDER": "DMY",
        "RETURN_TIME_AS_PERIOD": True,
    }
    return DateDataParser(languages=["en"], settings=settings)


def _parse(phrase: str, base: dt.datetime):
    try:
        return _parser(base).get_date_data(phrase)
    except (ValueError, OverflowError, TypeError):
        return None


def _normalise(phrase: str) -> str:
    phrase = re.sub(r"\btmrw?\b", "tomorrow", phrase, flags=re.IGNORECASE)
    phrase = re.sub(r"\btonight\b", "today", phrase, flags=re.IGNORECASE)
    phrase = re.sub(r"^(?:this\s+)?coming\s+", "", phrase, flags=re.IGNORECASE)
    return re.sub(r"(?<=[a-z])s$", "", phrase) if BARE_WEEKDAY.match(phrase) else phrase


def _week(day: dt.date) -> tuple[dt.date, dt.date]:
    monday = day - dt.timedelta(days=day.weekday())
    return monday, monday + dt.timedelta(days=6)


def _date_of(phrase: str, today: dt.date, base: dt.datetime) -> When | None:
    lowered = phrase.lower()
    if "weekend" in lowered:
        saturday = today + dt.timedelta(days=(5 - today.weekday()) % 7)
        if "next" in lowered:
            saturday += dt.timedelta(days=7)
        return When(start=saturday, end=saturday + dt.timedelta(days=1), date_phrase=phrase)
    data = _parse(_normalise(phrase), base)
    if data is None or data.date_obj is None:
        return None
    day = data.date_obj.date()
    if data.period == "week":
        start, end = _week(day)
        start = max(start, today)
        end = max(end, start + dt.timedelta(days=MIN_RANGE_DAYS))  # "this week" said on a Sunday
        return When(start=start, end=end, date_phrase=phrase)
    kind = "exact"
    if BARE_WEEKDAY.match(phrase.strip()):
        kind = "weekday"
    elif BARE_DAY.match(phrase.strip()):
        kind = "day"
        if day < today:  # "the 3rd" late in a month means next month's
            day = (day.replace(day=1) + dt.timedelta(days=32)).replace(day=day.day)
    return When(date=day, kind=kind, date_phrase=phrase)


def _time_of(phrase: str, base: dt.datetime, tour_times: tuple[str, ...]) -> str | None:
    if phrase.isdigit():  # "at 9": the tour start time with that hour, else the afternoon for 1-7
        hour = int(phrase)
        for candidate in (hour, hour + 12):
            if f"{candidate:02d}:00" in tour_times:
                return f"{candidate:02d}:00"
        if not 0 < hour <= 12:
            return None
        return f"{hour + 12 if hour < 8 else hour:02d}:00"
    data = _parse(phrase.replace(".", ":") if re.search(r"\d\.\d", phrase) else phrase, base)
    if data is None or data.date_obj is None or data.period != "time":
        return None
    return data.date_obj.strftime("%H:%M")


def _preferred(matches: list[re.Match], text: str) -> list[re.Match]:
    """Drop the values a correction names as wrong ("Thursday, not Wednesday")."""
    kept = [m for m in matches if not OLD_VALUE.search(text[max(0, m.start() - 15) : m.start()])]
    return kept or matches


def spans(text: str) -> list[tuple[int, int]]:
    """Where the date and time phrases are, so other extractors can skip them."""
    found = [m.span() for pattern in (DATE_PHRASE, TIME_PHRASE) for m in pattern.finditer(text)]
    return found


@lru_cache(maxsize=2048)
def find_when(text: str, today: dt.date, now: dt.time, tour_times: tuple[str, ...] = ()) -> When:
    """The date/range, time and part of day that `text` asks for; later mentions win.

    Cached: every model call of a turn re-reads the same earlier messages."""
    base = dt.datetime.combine(today, now)
    when = When()
    dates = _preferred(list(DATE_PHRASE.finditer(text)), text)
    for match in dates:
        parsed = _date_of(match.group(0).strip(), today, base)
        if parsed is not None:
            when = replace(parsed, time=when.time, part_of_day=when.part_of_day)
    if len(dates) >= 2 and RANGE_JOIN.fullmatch(text[dates[-2].end() : dates[-1].start()]):
        first = _date_of(dates[-2].group(0).strip(), today, base)
        if first and first.date and when.date and first.date < when.date:  # "between Tuesday and Wednesday"
            phrase = text[dates[-2].start() : dates[-1].end()]
            when = When(start=first.date, end=when.date, date_phrase=phrase)
    for match in _preferred(list(TIME_PHRASE.finditer(text)), text):
        parsed_time = _time_of(match.group(0).strip().lower(), base, tour_times)
        if parsed_time and OPEN_ENDED.search(text[max(0, match.start() - 12) : match.start()]):
            when = replace(when, time=None, part_of_day=part_of(parsed_time))  # "after 3pm": not an exact time
        elif parsed_time:
            when = replace(when, time=parsed_time, time_phrase=match.group(0).strip())
    parts = PART_OF_DAY.findall(text)
    if parts:
        part = parts[-1].lower()
        part = "afternoon" if part in ("after school", "lunchtime", "lunch time") else part
        when = replace(when, part_of_day=part)
    return when


def part_of(time: str) -> str:
    """The part of the day a 'HH:MM' time falls in."""
    hour = int(time[:2])
    return "morning" if hour < 12 else "afternoon" if hour < 17 else "evening"


def weekday_name(day: dt.date) -> str:
    return WEEKDAYS[day.weekday()].capitalize()


def human_date(iso: str | dt.date, today: dt.date | None = None) -> str:
    """'Wednesday 25 November' (with the year when it is not this year's)."""
    try:
        day = iso if isinstance(iso, dt.date) else dt.date.fromisoformat(str(iso))
    except ValueError:
        return str(iso)
    text = f"{weekday_name(day)} {day.day} {day.strftime('%B')}"
    return f"{text} {day.year}" if today and day.year != today.year else text


def human_slot(date: str, time: str | None, today: dt.date | None = None) -> str:
    """'Wednesday 25 November at 09:00'."""
    return f"{human_date(date, today)} at {time}" if time else human_date(date, today)


def warm_up() -> None:
    """dateparser loads its language data on first use (~0.1 s); pay that at start-up, not in a turn."""
    find_when("tomorrow at 9am", dt.date.today(), dt.time(9, 0))
