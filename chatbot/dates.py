"""Dates and times as a parent reads them, in the active language, and read back again.

The shape of a date is itself translatable (a Django date format in the
catalogue): "Thursday 26 November" in English, "11月26日（星期四）" in Chinese,
"Khamis, 26 November" in Malay. The weekday and month names are Django's own
translations. `read_slot` is the inverse of `human_slot` in every language, so the
offline policy can read back the numbered options it offered in an earlier reply.
"""

import datetime as dt
import re
from functools import cache

from django.conf import settings
from django.utils import dates, formats, translation
from django.utils.translation import pgettext

TIME = re.compile(r"\b(\d{2}:\d{2})\b")


def _date_format(with_year: bool) -> str:
    if with_year:
        return pgettext("a tour date with its year (Django date format)", "l j F Y")
    return pgettext("a tour date (Django date format)", "l j F")


def human_date(value: str | dt.date, today: dt.date | None = None) -> str:
    """'Wednesday 25 November' (with the year when it is not this year's), in the active language."""
    try:
        day = value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))
    except ValueError:
        return str(value)
    return formats.date_format(day, _date_format(bool(today and day.year != today.year)))


def human_slot(date: str, time: str | None, today: dt.date | None = None) -> str:
    """'Wednesday 25 November at 09:00', in the active language."""
    if not time:
        return human_date(date, today)
    return pgettext("a tour's date and start time", "%(date)s at %(time)s") % {
        "date": human_date(date, today), "time": time}


def _names(table: dict) -> str:
    return "|".join(sorted((re.escape(str(name)) for name in table.values()), key=len, reverse=True))


@cache
def _date_pattern(language: str, with_year: bool) -> tuple[re.Pattern, dict[str, int]]:
    """The regex that reads what human_date writes in `language`, and the month numbers by name."""
    with translation.override(language):
        shape = _date_format(with_year)
        months = {str(name).lower(): number for number, name in dates.MONTHS.items()}
        pieces = {"l": rf"(?:{_names(dates.WEEKDAYS)})", "j": r"(?P<day>\d{1,2})", "n": r"(?P<number>\d{1,2})",
                  "F": rf"(?P<month>{_names(dates.MONTHS)})", "Y": r"(?P<year>\d{4})"}
    regex = "".join(pieces.get(char, re.escape(char)) for char in shape)
    return re.compile(regex, re.IGNORECASE), months


def read_slot(text: str, today: dt.date) -> tuple[str, str | None] | None:
    """(ISO date, 'HH:MM' or None) of the first date human_slot wrote in `text`, in any language."""
    for language, _ in settings.LANGUAGES:
        for with_year in (True, False):
            pattern, months = _date_pattern(language, with_year)
            found = pattern.search(text)
            if not found:
                continue
            parts = found.groupdict()
            month = int(parts["number"]) if parts.get("number") else months.get((parts.get("month") or "").lower())
            year = int(parts["year"]) if parts.get("year") else today.year
            try:
                day = dt.date(year, month or 0, int(parts["day"]))
            except ValueError:
                continue
            if not parts.get("year") and day < today:
                day = day.replace(year=day.year + 1)
            time = TIME.search(text, found.end())
            return day.isoformat(), time.group(1) if time else None
    return None
