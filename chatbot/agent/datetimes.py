"""Reading the dates and times people write ("next Tuesday", "15 Sept", "3pm") with dateparser.

Everything is resolved against the school's local "now", never the server's.
"""

import datetime as dt
import re
from functools import lru_cache

import dateparser

TIMES_OF_DAY = ("morning", "afternoon", "evening")
_HAS_DIGIT_OR_WORD_TIME = re.compile(r"\d|noon|midday", re.IGNORECASE)
_WEEKDAY_PREFIX = re.compile(r"^(mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+(?=\d)", re.IGNORECASE)


@lru_cache(maxsize=4)
def _settings(base_iso: str) -> dict:
    return {
        "RELATIVE_BASE": dt.datetime.fromisoformat(base_iso),
        "PREFER_DATES_FROM": "future",
        "DATE_ORDER": "DMY",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }


def parse_date(text: str | None, today: dt.date) -> dt.date | None:
    """An ISO date, or a phrase like "next Tuesday", "tomorrow", "15 Sept", "the 25th"; None if unreadable."""
    if not text or not str(text).strip():
        return None
    text = str(text).strip()
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        pass
    cleaned = _WEEKDAY_PREFIX.sub("", re.sub(r"\b(the|on|of)\b", " ", text, flags=re.IGNORECASE)).strip()
    for phrase in (text, cleaned):
        parsed = dateparser.parse(
            phrase, languages=["en"], settings=_settings(dt.datetime.combine(today, dt.time(12)).isoformat())
        )
        if parsed:
            return parsed.date()
    return None


def parse_time(text: str | None) -> dt.time | None:
    """"15:00", "3pm", "3 pm", "2:30pm", "noon" -> a time; None if unreadable or only a time of day."""
    if not text or not _HAS_DIGIT_OR_WORD_TIME.search(str(text)):
        return None
    text = str(text).strip().lower().replace(".", ":")
    if text in ("noon", "midday"):
        return dt.time(12)
    try:
        return dt.time.fromisoformat(text)
    except ValueError:
        pass
    match = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?\s*(am|pm|h)?", text)
    if match:
        hour, minute, suffix = int(match.group(1)), int(match.group(2) or 0), match.group(3)
        if suffix == "pm" and hour < 12:
            hour += 12
        elif suffix == "am" and hour == 12:
            hour = 0
        elif suffix is None and 1 <= hour <= 6:
            hour += 12  # "at 3" for a school tour means the afternoon
        if 0 <= hour < 24 and 0 <= minute < 60:
            return dt.time(hour, minute)
    parsed = dateparser.parse(text, languages=["en"], settings={"RETURN_AS_TIMEZONE_AWARE": False})
    return parsed.time() if parsed else None


def time_of_day(text: str | None) -> str | None:
    """"tomorrow morning" -> "morning"."""
    lowered = (text or "").lower()
    return next((word for word in TIMES_OF_DAY if word in lowered), None)
