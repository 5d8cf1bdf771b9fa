"""Small inline SVG charts for the dashboard: no JavaScript, no CDN, readable without colour.

Each chart is an <svg role="img"> with an aria-label, a <title> tooltip per bar and
the numbers printed on the bars, followed by the same data as a folded table.
"""

import datetime as dt

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

WIDTH = 640
HEIGHT = 180
PAD_TOP = 18
PAD_BOTTOM = 22
PAD_X = 16  # room for the first and last day labels
BAR_HEIGHT = 22


def _n(value: float) -> str:
    return f"{value:.1f}"


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000):
        if value <= step:
            return step
    return value


def _table(rows: list[tuple[str, str]], heading: tuple[str, str]) -> SafeString:
    body = format_html_join("", "<tr><td>{}</td><td class='num'>{}</td></tr>", rows)
    return format_html(
        "<details class='chart-table'><summary>Show as a table</summary>"
        "<table><thead><tr><th>{}</th><th class='num'>{}</th></tr></thead><tbody>{}</tbody></table></details>",
        heading[0], heading[1], body,
    )


def daily_bars(points: list[tuple[dt.date, int]], *, label: str, css_class: str = "bar") -> SafeString:
    """Vertical bars, one per day, with the count above each bar and a weekday/day label below."""
    if not points:
        return mark_safe("<p class='chart-empty'>No data.</p>")  # noqa: S308 - a constant
    top = _nice_max(max(value for _, value in points))
    slot = (WIDTH - 2 * PAD_X) / len(points)
    bar = max(2.0, slot * 0.7)
    plot = HEIGHT - PAD_TOP - PAD_BOTTOM
    every = max(1, round(len(points) / 15))  # at most ~15 day labels
    parts = []
    for index, (day, value) in enumerate(points):
        height = plot * value / top
        x = PAD_X + index * slot + (slot - bar) / 2
        y = PAD_TOP + plot - height
        parts.append(format_html(
            "<g><title>{}: {}</title><rect class='{}' x='{}' y='{}' width='{}' height='{}'/>",
            day.strftime("%a %d %b"), value, css_class, _n(x), _n(y), _n(bar), _n(max(height, 0.5 if value else 0)),
        ))
        if value and len(points) <= 31:
            parts.append(format_html("<text class='value' x='{}' y='{}'>{}</text>", _n(x + bar / 2), _n(y - 3),
                                     value))
        if index % every == 0:
            parts.append(format_html("<text class='axis' x='{}' y='{}'>{}</text>", _n(x + bar / 2), HEIGHT - 6,
                                     day.strftime("%d %b")))
        parts.append(mark_safe("</g>"))  # noqa: S308 - a constant
    total = sum(value for _, value in points)
    svg = format_html(
        "<svg class='chart' viewBox='0 0 {} {}' role='img' aria-label='{}: {} in {} days'>"
        "<line class='baseline' x1='0' x2='{}' y1='{}' y2='{}'/>{}</svg>",
        WIDTH, HEIGHT, label, total, len(points), WIDTH, HEIGHT - PAD_BOTTOM, HEIGHT - PAD_BOTTOM,
        mark_safe("".join(parts)),  # noqa: S308 - every part is built with format_html
    )
    table = _table([(day.strftime("%a %d %b %Y"), value) for day, value in points], ("Day", label))
    return format_html("{}{}", svg, table)


def horizontal_bars(rows: list[tuple[str, int]], *, label: str, css_classes: list[str] | None = None) -> SafeString:
    """One labelled horizontal bar per category, with count and share printed after it."""
    if not rows:
        return mark_safe("<p class='chart-empty'>No data.</p>")  # noqa: S308 - a constant
    total = sum(value for _, value in rows) or 1
    top = max(value for _, value in rows) or 1
    label_width = 130
    plot = WIDTH - label_width - 90
    height = len(rows) * (BAR_HEIGHT + 6) + 4
    parts = []
    for index, (name, value) in enumerate(rows):
        y = 2 + index * (BAR_HEIGHT + 6)
        width = plot * value / top
        css = css_classes[index] if css_classes else "bar"
        share = f"{value / total:.0%}"
        parts.append(format_html(
            "<g><title>{}: {} ({})</title>"
            "<text class='label' x='{}' y='{}'>{}</text>"
            "<rect class='{}' x='{}' y='{}' width='{}' height='{}'/>"
            "<text class='value-left' x='{}' y='{}'>{} · {}</text></g>",
            name, value, share, label_width - 8, _n(y + BAR_HEIGHT * 0.7), name, css, label_width, y,
            _n(max(width, 0.5 if value else 0)), BAR_HEIGHT, _n(label_width + width + 6), _n(y + BAR_HEIGHT * 0.7),
            value, share,
        ))
    svg = format_html("<svg class='chart hbars' viewBox='0 0 {} {}' role='img' aria-label='{}'>{}</svg>",
                      WIDTH, height, label, mark_safe("".join(parts)))  # noqa: S308 - built with format_html
    return format_html("{}{}", svg, _table(rows, ("", label)))
