"""A school's time zone, and what people call it: the console (adminpanel/schooltime.py) and the reminders
name the zone of every time a person reads. Times are stored in UTC."""

import datetime as dt
import zoneinfo
from functools import lru_cache

from django.utils import timezone


@lru_cache(maxsize=256)
def _zone(name: str) -> dt.tzinfo:
    return zoneinfo.ZoneInfo(name)


_PATHS_TO_SCHOOL = ("school", "conversation", "contact", "message", "booking")


def school_of(obj):
    """The school of a school, a booking, a conversation, a message, a contact, a deal...; None if it has none
    (an FAQ entry for every school)."""
    if obj is None or hasattr(obj, "time_zone"):
        return obj
    for path in _PATHS_TO_SCHOOL:
        if hasattr(obj, path):
            return school_of(getattr(obj, path))
    return None


def zone_of(where) -> dt.tzinfo:
    """The time zone of a school, of something that has a school (a booking, a conversation...), a zone name
    or a tzinfo; None (or something without a school) is the console's default zone."""
    if isinstance(where, dt.tzinfo):
        return where
    if isinstance(where, str):
        return _zone(where)
    school = school_of(where)
    return _zone(school.time_zone) if school is not None else timezone.get_default_timezone()


def zone_name(where) -> str:
    """The IANA name ("Asia/Singapore"), for headings and tooltips."""
    tz = zone_of(where)
    return getattr(tz, "key", None) or str(tz)


def zone_label(where, at: dt.datetime | None = None) -> str:
    """What people call the zone at that moment: "NZDT", "PST", "GMT", "BST"; where the zone database has
    only an offset ("+08"), the city: "Singapore time"."""
    tz = zone_of(where)
    abbreviation = (at or timezone.now()).astimezone(tz).tzname() or ""
    if abbreviation.isalpha():
        return abbreviation
    city = zone_name(tz).rsplit("/", 1)[-1].replace("_", " ")
    return f"{city} time"


def shared_zone(schools) -> dt.tzinfo:
    """The zone to read a page about several schools in: theirs when they share one, else the default.
    `schools`: School objects or their zone names."""
    names = {school if isinstance(school, str) else school.time_zone for school in schools}
    return _zone(names.pop()) if len(names) == 1 else timezone.get_default_timezone()
