"""One rule for time in the staff console: every date and time a person reads is in the school's time zone,
and the zone is named wherever it could be doubted (the zone itself: bookings/zones.py).

Times are stored in UTC; the console never shows them so. There are two ways in and one formatter:

- A page about one school (a booking, a callback, a conversation, a desk form) is rendered with that
  school's zone active (`render_in`, and `SchoolTimeAdmin` for the admin's change and history pages), so
  Django's own date display, readonly fields, widgets and `|date` follow it; the page names the zone once.
- Lists, exports and sentences that mix schools format each value with `show(value, school)` (in templates
  `{% school_time value school "H:i" %}`), which converts to that school's zone and names it
  ("Sat 16 Nov 2024, 14:00 NZDT", or "14:00 Singapore time" where the zone has no letters abbreviation).
"""

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.contrib import admin
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html

from bookings.zones import school_of, shared_zone, zone_label, zone_name, zone_of

DATETIME = "D j M Y, H:i"  # Django date format: "Sat 16 Nov 2024, 14:00"
SHORT = "j M, H:i"
CLOCK = "H:i"


# --- formatting ------------------------------------------------------------------------------------


def localize(value: dt.datetime, where) -> dt.datetime:
    return timezone.localtime(value, zone_of(where))


def show(value: dt.datetime | None, where, fmt: str = DATETIME, *, zone: bool = True, empty: str = "-") -> str:
    """A stored datetime as the school reads it: `fmt` (Django date format) in the school's zone, then the zone."""
    if value is None:
        return empty
    local = localize(value, where)
    text = date_format(local, fmt)
    return f"{text} {zone_label(local.tzinfo, local)}" if zone else text


def iso(value: dt.datetime | None, where) -> str | None:
    """ISO 8601 in the school's zone, with its offset ("2024-11-16T14:00:00+08:00"): the same instant, readable."""
    return localize(value, where).isoformat() if value else None


# --- pages about one school ----------------------------------------------------------------------------


@contextmanager
def active(where) -> Iterator[dt.tzinfo]:
    """Make the school's zone the current one (Django's display, forms and `|date` follow it)."""
    tz = zone_of(where)
    with timezone.override(tz):
        yield tz


def render_in(response, where):
    """Render a TemplateResponse now, inside the school's zone (it would otherwise render after the view
    returned, in the default zone)."""
    if isinstance(response, TemplateResponse) and not response.is_rendered:
        with active(where):
            response.render()
    return response


def time_column(field: str, description: str, *, fmt: str = DATETIME, ordering: str | None = None) -> Callable:
    """An admin list column (or readonly field) showing `obj.<field>` in the object's school zone, named."""

    @admin.display(description=description, ordering=ordering or field)
    def column(self, obj) -> str:
        value = getattr(obj, field)
        if value is None:
            return "-"
        return format_html('<time datetime="{}" title="{}">{}</time>', value.isoformat(), zone_name(obj),
                           show(value, obj, fmt))

    column.__name__ = f"{field}_local"
    return column


def list_zone(request, parameter: str = "school__id__exact") -> dt.tzinfo:
    """The zone a list page is read in: the filtered school's, or the one all schools share, else the default.
    (Each row's own times still go through `show` in its school's zone.)"""
    from bookings.models import School

    chosen = request.GET.get(parameter, "")
    schools = School.objects.filter(pk=int(chosen)) if chosen.isdigit() else School.objects.all()
    return shared_zone(schools.order_by().values_list("time_zone", flat=True).distinct())


class SchoolTimeAdmin:
    """ModelAdmin mixin: the change form and the history page of an object render in its school's zone
    (readonly times, date widgets, what a typed time means) and say which zone that is; a list renders in the
    filtered school's zone (its date filters and hierarchy count days there)."""

    school_filter_parameter = "school__id__exact"

    def zone_for(self, obj) -> dt.tzinfo | None:
        """The object's school's zone; None (the default zone, no note) for an object of no school."""
        school = school_of(obj)
        return zone_of(school) if school is not None else None

    def _object_zone(self, request, object_id) -> dt.tzinfo | None:
        if not object_id:
            return None
        from django.contrib.admin.utils import unquote

        obj = self.get_object(request, unquote(object_id))
        return self.zone_for(obj) if obj is not None else None

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        tz = self._object_zone(request, object_id)
        if tz is None:
            return super().changeform_view(request, object_id, form_url, extra_context)
        extra_context = {**(extra_context or {}), "school_zone": f"{zone_name(tz)} ({zone_label(tz)})"}
        with active(tz):
            return render_in(super().changeform_view(request, object_id, form_url, extra_context), tz)

    def changelist_view(self, request, extra_context=None):
        tz = list_zone(request, self.school_filter_parameter)
        with active(tz):
            return render_in(super().changelist_view(request, extra_context), tz)

    def history_view(self, request, object_id, extra_context=None):
        tz = self._object_zone(request, object_id)
        if tz is None:
            return super().history_view(request, object_id, extra_context)
        extra_context = {**(extra_context or {}), "school_zone": f"{zone_name(tz)} ({zone_label(tz)})"}
        with active(tz):
            return render_in(super().history_view(request, object_id, extra_context), tz)
