"""Template side of adminpanel.schooltime: `{% load schooltime %}`.

    {% school_time tour.starts_at tour.school "H:i" zone=False %}   -> 14:00
    {% school_time conversation.started_at conversation %}          -> Sat 16 Nov 2024, 14:00 NZDT
    {{ school|zone_label }}  -> NZDT / Singapore time        {{ school|zone_name }}  -> Asia/Singapore
"""

from django import template

from adminpanel import schooltime

register = template.Library()


@register.simple_tag
def school_time(value, where, fmt: str = schooltime.DATETIME, zone: bool = True) -> str:
    return schooltime.show(value, where, fmt, zone=zone, empty="")


@register.filter
def zone_label(where) -> str:
    return schooltime.zone_label(where)


@register.filter
def zone_name(where) -> str:
    return schooltime.zone_name(where)
