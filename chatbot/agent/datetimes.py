"""Reading the dates and times the model passes to the tools ("next Tuesday", "15 Sept", "3pm", "half past 2").

The same reader as the offline policy's (chatbot.agent.offline.when), so a phrase
means the same whichever path it comes by; dateparser alone is the fallback for
whatever date phrase that reader does not spot. Everything is resolved against the
school's local "now", never the server's.
"""

import datetime as dt
import re
from functools import lru_cache

import dateparser

from bookings.callbacks import CallTime
from bookings.models import CallbackRequest
from chatbot.agent.offline.gloss import gloss
from chatbot.agent.offline.when import find_when, read_time

TIMES_OF_DAY = ("morning", "afternoon", "evening")
_CLOCK = r"(?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)?|noon|midday)"
# "between 2 and 4pm", "from 9 to 11am", "2-4pm": a window with both ends
CALL_BETWEEN = re.compile(rf"\b(?:(?:between|from)\s+(?P<a>{_CLOCK})\s*(?:and|to|till|until|-|–)\s*(?P<b>{_CLOCK})"
                          rf"|(?P<c>\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm)?)\s*[-–]\s*(?P<d>\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm)))",
                          re.IGNORECASE)
CALL_AFTER = re.compile(rf"\b(?:any\s?time\s+after|after|from|not before|later than)\s+(?:at\s+)?(?P<t>{_CLOCK})",
                        re.IGNORECASE)
CALL_BEFORE = re.compile(rf"\b(?:before|until|till|no later than)\s+(?:at\s+)?(?P<t>{_CLOCK})", re.IGNORECASE)
CALL_AT = re.compile(r"\b(?:at\s+|around\s+|about\s+)?(?P<t>\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)|\d{1,2}:\d{2}"
                     r"|noon|midday|(?<=at\s)\d{1,2})\b", re.IGNORECASE)
_NOT_A_DAY = re.compile(r"\b(?:morning|afternoon|evening|any\s?time|in the|at|on|please|pls|call|me|back)\b",
                        re.IGNORECASE)
_WEEKDAY_PREFIX = re.compile(r"^(mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+(?=\d)", re.IGNORECASE)
_NOON = dt.time(12)


@lru_cache(maxsize=4)
def _settings(base_iso: str) -> dict:
    return {
        "RELATIVE_BASE": dt.datetime.fromisoformat(base_iso),
        "PREFER_DATES_FROM": "future",
        "DATE_ORDER": "DMY",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }


def parse_date(text: str | None, today: dt.date) -> dt.date | None:
    """An ISO date, or a phrase like "next Tuesday", "tomorrow", "15 Sept", "the 25th"; None if unreadable.

    A range ("next week") gives its first day. Malay, Chinese and Tamil date words are read too ("esok",
    "下星期三")."""
    if not text or not str(text).strip():
        return None
    text = str(text).strip()
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        pass
    text = gloss(text).text
    when = find_when(text, today, _NOON)
    if when.date or when.start:
        return when.date or when.start
    cleaned = _WEEKDAY_PREFIX.sub("", re.sub(r"\b(the|on|of)\b", " ", text, flags=re.IGNORECASE)).strip()
    for phrase in (text, cleaned):
        parsed = dateparser.parse(
            phrase, languages=["en"], settings=_settings(dt.datetime.combine(today, _NOON).isoformat())
        )
        if parsed:
            return parsed.date()
    return None


def parse_time(text: str | None) -> dt.time | None:
    """"15:00", "3pm", "2:30pm", "noon", "half past 2", "four pm", "3" (15:00) -> a time.

    None if unreadable or only a time of day ("morning")."""
    if not text or not str(text).strip():
        return None
    time = read_time(gloss(str(text)).text)
    return dt.time.fromisoformat(time) if time else None


def time_of_day(text: str | None) -> str | None:
    """"tomorrow morning" -> "morning" ("esok pagi" too)."""
    lowered = gloss(text or "").text.lower()
    return next((word for word in TIMES_OF_DAY if word in lowered), None)


def read_call_time(text: str | None, today: dt.date) -> CallTime:
    """When a parent asked to be called, in their words: "tomorrow after 5pm" (a window from 17:00), "before
    11am", "between 2 and 4pm", "Saturday morning", "3pm" (a specific time), "anytime"; the day when one is
    named. Words it cannot place are the school's whole calling day (anytime)."""
    said = gloss(str(text or "")).text.strip()
    best, start, end, span = CallbackRequest.BestTime.ANYTIME, None, None, None
    between, after, before = CALL_BETWEEN.search(said), CALL_AFTER.search(said), CALL_BEFORE.search(said)
    if between:
        first, last = between.group("a") or between.group("c"), between.group("b") or between.group("d")
        start, end, span = parse_time(_with_half(first, last)), parse_time(last), between.span()
        best = CallbackRequest.BestTime.WINDOW
    elif after or before:
        start = parse_time(after.group("t")) if after else None
        end = parse_time(before.group("t")) if before else None
        best = CallbackRequest.BestTime.WINDOW
        spans = [m.span() for m in (after, before) if m]
        span = (min(s for s, _ in spans), max(e for _, e in spans))
    else:
        exact = CALL_AT.search(said)
        start = parse_time(exact.group("t")) if exact else None
        if start:
            best, span = CallbackRequest.BestTime.SPECIFIC, exact.span()
    if start is None and end is None:
        best = time_of_day(said) or CallbackRequest.BestTime.ANYTIME
        span = None
    elif start and end and end <= start:  # "between 4 and 2": not a window
        best, start, end = CallbackRequest.BestTime.ANYTIME, None, None
    rest = said[: span[0]] + " " + said[span[1]:] if span else said
    rest = _NOT_A_DAY.sub(" ", rest).strip(" ,.")
    return CallTime(best, parse_date(rest, today) if rest else None, start, end)


def _with_half(first: str, last: str) -> str:
    """"2" of "between 2 and 4pm" takes the half of the day of its end ("2pm")."""
    half = re.search(r"[ap]m", last, re.IGNORECASE)
    if half is None or re.search(r"[ap]m|:|noon|midday", first, re.IGNORECASE):
        return first
    return f"{first}{half.group(0)}"
