"""Dashboard numbers (adminpanel.selectors) against seeded data, the page, and the FAQ to-do list."""

import datetime as dt
from decimal import Decimal
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from adminpanel import selectors
from adminpanel.charts import daily_bars, horizontal_bars
from bookings.services import reschedule_tour
from chatbot.models import FaqEntry, Message
from tests.adminpanel.conftest import book, make_conversation
from tests.factories import FaqEntryFactory, SchoolFactory, UserFactory

pytestmark = pytest.mark.filterwarnings("ignore:No directory at:UserWarning")
DASHBOARD = "/admin/dashboard/"


@pytest.fixture
def seeded(school, tuesday, next_weekday):
    """Two schools, conversations over three days, ratings, handoffs, latencies, bookings and FAQ misses."""
    other = SchoolFactory()
    now = timezone.now()
    today = timezone.localdate()
    noon = dt.datetime.combine(today, dt.time(12), dt.UTC)
    conversations = [
        make_conversation(school, started_at=noon, turns=2, latencies=[100, 300], rating="good", outcome="booked",
                          total_tokens=1000, total_cost=Decimal("0.010000")),
        make_conversation(school, started_at=noon - dt.timedelta(days=1), turns=1, latencies=[200], rating="bad",
                          outcome="faq_only", no_match=True, question="Do you have a swimming pool?",
                          total_tokens=500, total_cost=Decimal("0.005000")),
        make_conversation(school, started_at=noon - dt.timedelta(days=1), turns=1, latencies=[5000],
                          status="handed_off", outcome="handed_off", no_match=True,
                          question="do you have a swimming pool", total_tokens=1500,
                          total_cost=Decimal("0.015000")),
        make_conversation(other, started_at=noon - dt.timedelta(days=2), turns=3, latencies=[400, 500, 600],
                          no_match=True, question="Is there a discount for twins?"),
        make_conversation(school, started_at=noon - dt.timedelta(days=30), turns=1, latencies=[99999],
                          no_match=True, question="Too old to count?"),
    ]
    first = book(school, tuesday)
    book(school, tuesday, dt.time(11))
    reschedule_tour(booking=first, new_date=next_weekday(school, 3), new_time=dt.time(9))  # not a new booking
    return {"school": school, "other": other, "conversations": conversations, "now": now, "today": today}


def period(days=7, school=None):
    return selectors.Period.last_days(days, school=school)


def test_conversations_and_bookings_per_day(seeded):
    today = seeded["today"]
    per_day = dict(selectors.conversations_per_day(period()))
    assert len(per_day) == 7
    assert per_day[today] == 1
    assert per_day[today - dt.timedelta(days=1)] == 2
    assert per_day[today - dt.timedelta(days=2)] == 1
    assert sum(per_day.values()) == 4  # the 30-day-old one is outside the period
    assert dict(selectors.bookings_per_day(period()))[today] == 2
    assert sum(dict(selectors.bookings_per_day(period(school=seeded["other"]))).values()) == 0


def test_outcomes_ratings_handoffs_and_usage(seeded):
    outcomes = {value: count for value, _label, count in selectors.outcomes(period())}
    assert outcomes == {"": 1, "booked": 1, "rescheduled": 0, "cancelled": 0, "callback": 0, "faq_only": 1,
                        "handed_off": 1, "abandoned": 0}
    totals = selectors.conversation_totals(period())
    assert (totals["total"], totals["good"], totals["bad"], totals["unrated"]) == (4, 1, 1, 2)
    assert totals["good_share"] == 0.5 and totals["rated_share"] == 0.5
    assert totals["handed_off"] == 1 and totals["handoff_rate"] == 0.25
    assert totals["tokens"] == 3000 and totals["avg_tokens"] == 750
    assert Decimal(str(totals["cost"])) == Decimal("0.03")
    school_only = selectors.conversation_totals(period(school=seeded["school"]))
    assert school_only["total"] == 3


def test_turn_latency_median_and_p95(seeded):
    latency = selectors.turn_latency(period())
    values = [100, 300, 200, 5000, 400, 500, 600]
    assert latency["turns"] == 7
    assert latency["median"] == pytest.approx(np.percentile(values, 50))
    assert latency["p95"] == pytest.approx(np.percentile(values, 95))
    assert selectors.turn_latency(period(school=seeded["other"]))["median"] == 500


def test_latency_of_an_empty_period(db):
    assert not Message.objects.exists()
    assert selectors.turn_latency(selectors.Period.last_days(7)) == {"turns": 0, "median": None, "p95": None}


def test_no_match_questions_are_grouped_and_attributed(seeded):
    items = selectors.no_match_questions(period())
    assert [(i.question, i.times) for i in items] == [
        ("Is there a discount for twins?", 3),  # three turns of one conversation: most asked first
        ("Do you have a swimming pool?", 2),  # the same question, however it was written
    ]
    by_question = {i.question: i for i in items}
    pool = by_question["Do you have a swimming pool?"]
    assert pool.school_id == seeded["school"].pk
    assert set(pool.conversation_ids) == {seeded["conversations"][1].pk, seeded["conversations"][2].pk}
    assert [i.question for i in selectors.no_match_questions(period(school=seeded["other"]))] == [
        "Is there a discount for twins?"]


def test_a_question_with_an_faq_entry_is_done(seeded):
    FaqEntryFactory(school=seeded["school"], question="Do you have a swimming pool?")
    FaqEntryFactory(school=None, question="Is there a discount for twins")
    assert selectors.no_match_questions(period()) == []


def test_dashboard_queries_are_bounded(head_client, seeded):
    head_client.get(DASHBOARD)
    with CaptureQueriesContext(connection) as queries:
        assert head_client.get(DASHBOARD).status_code == 200
    assert len(queries) <= 17  # the admissions funnel: five per-week counts, whatever the number of rows


def test_dashboard_page_shows_the_numbers_and_the_todo_list(admissions_client, seeded):
    response = admissions_client.get(DASHBOARD, {"days": 7})
    assert response.status_code == 200
    content = response.content.decode()
    assert response.context["totals"]["total"] == 4
    assert '<svg class="chart"' in content.replace("'", '"') and "Show as a table" in content
    assert "Do you have a swimming pool?" in content and "Is there a discount for twins?" in content
    assert "25%" in content  # handoff rate
    pool = next(i for i in response.context["no_match"] if i.question.startswith("Do you have"))
    query = parse_qs(urlparse(pool.add_url).query)
    assert urlparse(pool.add_url).path == "/admin/chatbot/faqentry/add/"
    assert query == {"question": ["Do you have a swimming pool?"], "school": [str(seeded["school"].pk)],
                     "from": ["dashboard"]}


def test_creating_the_faq_entry_in_one_step_takes_it_off_the_list(admissions_client, seeded):
    pool = next(i for i in admissions_client.get(DASHBOARD).context["no_match"] if "pool" in i.question)
    form = admissions_client.get(pool.add_url)
    assert form.status_code == 200
    initial = form.context["adminform"].form.initial
    assert initial["question"] == "Do you have a swimming pool?" and str(initial["school"]) == str(seeded["school"].pk)
    response = admissions_client.post(pool.add_url, {
        "school": seeded["school"].pk, "question": "Do you have a swimming pool?",
        "answer": "No, but we swim at the sports centre weekly.", "tags": "pool, swimming",
        "is_active": "on",
    })
    assert response.status_code == 302 and response.url == DASHBOARD
    assert FaqEntry.objects.filter(question="Do you have a swimming pool?", school=seeded["school"]).exists()
    questions = [i.question for i in admissions_client.get(DASHBOARD).context["no_match"]]
    assert "Do you have a swimming pool?" not in questions


def test_reviewer_sees_the_dashboard_without_faq_links(reviewer_client, seeded):
    response = reviewer_client.get(DASHBOARD)
    assert response.status_code == 200
    assert all(item.add_url == "" for item in response.context["no_match"])
    assert "Create FAQ entry" not in response.content.decode()


def test_staff_without_conversation_access_cannot_see_the_dashboard(client, db):
    client.force_login(UserFactory(username="plain"))
    assert client.get(DASHBOARD).status_code == 403


def test_dashboard_filters_by_school_and_period(head_client, seeded):
    response = head_client.get(DASHBOARD, {"school": seeded["other"].pk, "days": 90})
    assert response.context["totals"]["total"] == 1
    assert response.context["days"] == 90
    assert head_client.get(DASHBOARD, {"days": "banana"}).context["days"] == 30


def test_charts_escape_and_label():
    svg = daily_bars([(dt.date(2026, 1, 5), 3), (dt.date(2026, 1, 6), 0)], label="<b>x</b>")
    assert "&lt;b&gt;x&lt;/b&gt;" in svg and "<b>x</b>" not in svg
    assert "Mon 05 Jan: 3" in svg
    bars = horizontal_bars([("Good", 3), ("Bad", 1)], label="Conversations")
    assert "Good: 3 (75%)" in bars and "Bad: 1 (25%)" in bars
    assert "No data" in daily_bars([], label="x")
