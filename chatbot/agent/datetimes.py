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
    11am", "between 2 and 4pm", "after lunch", "Saturday morning", "3pm" (a specific time), "anytime"; the day
    when one is named. Read as the offline policy reads a time (chatbot.agent.offline.when), in any of its
    languages ("明天下午5点以后" is a window too). Words it cannot place are the school's whole calling day."""
    when = find_when(gloss(str(text or "")).text.strip(), today, _NOON)
    day = when.date or when.start
    if when.after or when.before:
        start, end = (dt.time.fromisoformat(t) if t else None for t in (when.after, when.before))
        return CallTime(CallbackRequest.BestTime.WINDOW, day, start, end)
    if when.time:
        return CallTime(CallbackRequest.BestTime.SPECIFIC, day, dt.time.fromisoformat(when.time))
    return CallTime(when.part_of_day or CallbackRequest.BestTime.ANYTIME, day)
