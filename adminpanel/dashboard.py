"""The dashboard: conversations and bookings per day, outcomes, ratings, handoffs, latency, usage, and what
the FAQ could not answer (a to-do list: each question links to a prefilled FAQ entry form).

Numbers come from adminpanel.selectors; the charts are inline SVG (adminpanel.charts).
Needs `chatbot.view_conversation`.
"""

from urllib.parse import urlencode

from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.urls import reverse

from adminpanel import charts, schooltime, selectors
from bookings.models import School

PERIODS = (7, 14, 30, 90)
DEFAULT_PERIOD = 30
QUESTION_MAX = 300  # FaqEntry.question


def faq_add_url(item: selectors.NoMatch) -> str:
    params = {"question": item.question[:QUESTION_MAX], "from": "dashboard"}
    if item.school_id:
        params["school"] = item.school_id
    return reverse("admin:chatbot_faqentry_add") + "?" + urlencode(params)


def dashboard_view(request, site):
    if not request.user.has_perm("chatbot.view_conversation"):
        raise PermissionDenied
    schools = list(School.objects.order_by("name"))
    chosen = next((s for s in schools if str(s.pk) == request.GET.get("school", "")), None)
    try:
        days = int(request.GET.get("days", DEFAULT_PERIOD))
    except ValueError:
        days = DEFAULT_PERIOD
    days = days if days in PERIODS else DEFAULT_PERIOD
    period = selectors.Period.last_days(days, school=chosen, tz=schooltime.shared_zone(schools))
    numbers = selectors.dashboard(period)
    can_add_faq = request.user.has_perm("chatbot.add_faqentry")
    by_id = {school.pk: school for school in schools}
    for item in numbers["no_match"]:
        item.add_url = faq_add_url(item) if can_add_faq else ""
        item.last_asked_label = schooltime.show(item.last_asked, by_id.get(item.school_id, period.tz), schooltime.SHORT)
    outcome_rows = [(label, count) for _value, label, count in numbers["outcomes"]]
    totals = numbers["totals"]
    context = {
        **site.each_context(request),
        "title": "Dashboard",
        "subtitle": f"{chosen.name if chosen else 'All schools'} · last {days} days "
                    f"({period.first:%d %b} – {period.last:%d %b %Y}, days in {schooltime.zone_name(period.tz)})",
        "period": period,
        "periods": PERIODS,
        "days": days,
        "schools": schools,
        "chosen": chosen,
        "totals": totals,
        "latency": numbers["latency"],
        "no_match": numbers["no_match"],
        "can_add_faq": can_add_faq,
        "conversations_chart": charts.daily_bars(numbers["conversations_per_day"], label="Conversations"),
        "bookings_chart": charts.daily_bars(numbers["bookings_per_day"], label="Tours booked", css_class="bar alt"),
        "outcomes_chart": charts.horizontal_bars(outcome_rows, label="Conversations"),
        "ratings_chart": charts.horizontal_bars(
            [("Good", totals["good"]), ("Bad", totals["bad"]), ("Unrated", totals["unrated"])],
            label="Conversations", css_classes=["bar good", "bar bad", "bar muted"],
        ),
        "conversation_list_url": reverse("admin:chatbot_conversation_changelist"),
        "funnel_steps": selectors.FUNNEL_STEPS,
        "funnel_rows": [(week.monday, [week.counts[key] for key, _ in selectors.FUNNEL_STEPS])
                        for week in numbers["funnel"]],
    }
    request.current_app = site.name
    return schooltime.render_in(TemplateResponse(request, "adminpanel/dashboard.html", context), period.tz)
