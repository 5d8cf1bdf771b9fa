"""Read-only queries for the staff console: list annotations, transcripts, the desk and the dashboard numbers.

Plain functions over database aggregates. Every function runs a fixed number of
queries whatever the number of rows (percentiles: one count and one query per
percentile, each reading at most two values).
"""

import datetime as dt
import math
import re
import zoneinfo
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import (
    Aggregate,
    Avg,
    Count,
    Exists,
    F,
    FloatField,
    IntegerField,
    Max,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Sum,
)
from django.db.models.fields.json import KT, KeyTransform
from django.db.models.functions import Coalesce, TruncDate, TruncWeek
from django.utils import timezone

from bookings.models import WEEKDAY_NAMES, CallbackRequest, School, SchoolClosure, TourBooking, WaitlistEntry
from chatbot.models import Conversation, FaqEntry, Message, ReasoningStep
from chatbot.reminders.models import SentReminder
from crm.models import Contact

FAQ_TOOL = "get_faq_answer"
NO_MATCH = "no_match"
UNANSWERED = "unanswered"  # the parts of a several-question get_faq_answer result the FAQ could not answer
# A conversation handed to staff: by its status now, or by how it ended.
HANDED_OFF = Q(status=Conversation.Status.HANDED_OFF) | Q(outcome=Conversation.Outcome.HANDED_OFF)
# A conversation where the first model failed at least once and a fallback (the offline model) answered:
# the answer's model is the chain of models tried, "gpt-4o-mini -> offline/policy".
FELL_BACK = Q(Exists(Message.objects.filter(conversation_id=OuterRef("pk"), role=Message.Role.ASSISTANT,
                                            model__contains="->")))

# --- the conversation list ------------------------------------------------------------


def with_review_stats(queryset: QuerySet[Conversation]) -> QuerySet[Conversation]:
    """Annotate `message_count` and `slowest_turn_ms` (max assistant latency) as correlated subqueries.

    Subqueries rather than JOIN + GROUP BY: the database computes them for the
    rows of the page only, and the changelist's search (an EXISTS) and count stay simple.
    """
    messages = Message.objects.filter(conversation=OuterRef("pk")).order_by().values("conversation")
    return queryset.annotate(
        message_count=Coalesce(Subquery(messages.annotate(n=Count("id")).values("n")[:1]), 0,
                               output_field=IntegerField()),
        slowest_turn_ms=Subquery(
            messages.filter(role=Message.Role.ASSISTANT).annotate(m=Max("latency_ms")).values("m")[:1],
            output_field=IntegerField(),
        ),
    )


# --- one conversation -------------------------------------------------------------------


def parent_wrote_in(conversations: QuerySet, language: str) -> QuerySet:
    """The conversations with at least one parent message in `language`."""
    return conversations.filter(Exists(Message.objects.filter(conversation=OuterRef("pk"), role=Message.Role.USER,
                                                              language=language)))


TRANSCRIPT_PAGE = 150  # messages per page of the review page (a runaway conversation must not make it crawl)


def transcript_with_steps(conversation: Conversation, page: int = 1, per_page: int | None = None) -> list[Message]:
    """The messages of one page of the conversation, oldest first, each with its reasoning steps in order
    (2 queries)."""
    per_page = per_page or TRANSCRIPT_PAGE
    steps = Prefetch("steps", queryset=ReasoningStep.objects.order_by("position"))
    start = (max(page, 1) - 1) * per_page
    return list(conversation.messages.order_by("created_at", "id").prefetch_related(steps)[start:start + per_page])


@dataclass
class Neighbours:
    newer: int | None
    older: int | None
    next_unrated: int | None


def _older_than(conversation: Conversation) -> Q:
    return Q(started_at__lt=conversation.started_at) | Q(started_at=conversation.started_at, pk__lt=conversation.pk)


def neighbours(conversation: Conversation, within: QuerySet[Conversation] | None = None) -> Neighbours:
    """The conversations either side in the list's order (newest first), and the next unrated one.

    `within`: the list's filtered queryset, so j/k/n walk what the reviewer filtered.
    """
    scope = (within if within is not None else Conversation.objects.all()).values_list("pk", flat=True)
    newer_than = Q(started_at__gt=conversation.started_at) | Q(started_at=conversation.started_at,
                                                               pk__gt=conversation.pk)
    newer = scope.filter(newer_than).order_by("started_at", "pk").first()
    older = scope.filter(_older_than(conversation)).order_by("-started_at", "-pk").first()
    return Neighbours(newer, older, next_unrated(conversation, within))


def next_unrated(after: Conversation | None = None, within: QuerySet[Conversation] | None = None) -> int | None:
    """The next unrated conversation older than `after`; from the newest again when there is none."""
    unrated = (within if within is not None else Conversation.objects.all()).filter(rating="")
    unrated = unrated.values_list("pk", flat=True)
    if after is None:
        return unrated.order_by("-started_at", "-pk").first()
    found = unrated.filter(_older_than(after)).order_by("-started_at", "-pk").first()
    if found is None:
        found = unrated.exclude(pk=after.pk).order_by("-started_at", "-pk").first()
    return found


# --- the desk -----------------------------------------------------------------------------


@dataclass
class DeskDay:
    date: dt.date
    is_today: bool
    tours: list[TourBooking] = field(default_factory=list)
    closed: str = ""  # why the school gives no tours that day ("Christmas Day", "No tours on Saturdays")


@dataclass
class DeskSchool:
    school: School
    today: dt.date
    days: list[DeskDay]
    callbacks_due: list[CallbackRequest]
    callbacks_upcoming: list[CallbackRequest]


def _closed_reason(school: School, day: dt.date, closures: dict[tuple[int, dt.date], str]) -> str:
    if (school.pk, day) in closures:
        return closures[school.pk, day] or "Closed"
    if day.weekday() in school.closed_weekdays:
        return f"No tours on {WEEKDAY_NAMES[day.weekday()]}s"
    return ""


def desk(schools: list[School], start: dt.date | None, days: int) -> list[DeskSchool]:
    """Per school: its tours day by day from `start` (default: the school's today), each day marked when the
    school is closed (a closure, a weekly closed day), the open callbacks due by today (overdue included) and
    those due later in the window.

    Three queries for any number of schools and days.
    """
    if not schools:
        return []
    windows = {}
    for school in schools:
        today = timezone.localtime(timezone.now(), school.tz).date()
        first = start or today
        windows[school.pk] = (today, [first + dt.timedelta(days=i) for i in range(days)])
    earliest = min(dt.datetime.combine(windows[s.pk][1][0], dt.time.min, s.tz) for s in schools)
    latest = max(dt.datetime.combine(windows[s.pk][1][-1] + dt.timedelta(days=1), dt.time.min, s.tz)
                 for s in schools)
    waiting = (WaitlistEntry.objects.filter(slot=OuterRef("slot"), status__in=[WaitlistEntry.Status.WAITING,
                                                                               WaitlistEntry.Status.OFFERED])
               .order_by().values("slot").annotate(n=Count("id")).values("n"))
    tours = (
        TourBooking.objects.filter(school__in=schools, starts_at__gte=earliest, starts_at__lt=latest)
        .exclude(status=TourBooking.Status.RESCHEDULED)
        .select_related("school", "contact", "slot")
        .prefetch_related("children", "moves",
                          Prefetch("reminders", to_attr="failed_reminders",
                                   queryset=SentReminder.objects.filter(status=SentReminder.Status.FAILED)))
        .annotate(waitlisted=Coalesce(Subquery(waiting), 0))  # families waiting for a seat on the same tour
        .order_by("starts_at", "reference")
    )
    by_day: dict[tuple[int, dt.date], list[TourBooking]] = {}
    for tour in tours:
        by_day.setdefault((tour.school_id, tour.local_start.date()), []).append(tour)
    closed_days = SchoolClosure.objects.filter(
        school__in=schools, date__gte=min(windows[s.pk][1][0] for s in schools),
        date__lte=max(windows[s.pk][1][-1] for s in schools),
    ).values_list("school_id", "date", "reason")
    closures = {(school_id, day): reason for school_id, day, reason in closed_days}
    last_day = max(max(windows[s.pk][0], windows[s.pk][1][-1]) for s in schools)
    callbacks = (
        CallbackRequest.objects.filter(school__in=schools, status=CallbackRequest.Status.OPEN, due_date__lte=last_day)
        .select_related("school", "assigned_to")
        .order_by("due_date", "created_at")
    )
    due: dict[int, list[CallbackRequest]] = {}
    upcoming: dict[int, list[CallbackRequest]] = {}
    for callback in callbacks:
        today, dates = windows[callback.school_id]
        if callback.due_date <= today:
            due.setdefault(callback.school_id, []).append(callback)
        elif callback.due_date <= dates[-1]:
            upcoming.setdefault(callback.school_id, []).append(callback)
    return [
        DeskSchool(
            school, windows[school.pk][0],
            [DeskDay(day, day == windows[school.pk][0], by_day.get((school.pk, day), []),
                     _closed_reason(school, day, closures))
             for day in windows[school.pk][1]],
            due.get(school.pk, []), upcoming.get(school.pk, []),
        )
        for school in schools
    ]


def callbacks_due_count(now: dt.datetime | None = None) -> int:
    """Open callbacks due by today, each school's today in its own zone (two queries)."""
    now = now or timezone.now()
    by_day: dict[dt.date, list[str]] = {}
    for name in School.objects.order_by().values_list("time_zone", flat=True).distinct():
        by_day.setdefault(timezone.localtime(now, zoneinfo.ZoneInfo(name)).date(), []).append(name)
    due = Q(pk__in=[])
    for today, zones in by_day.items():
        due |= Q(school__time_zone__in=zones, due_date__lte=today)
    return CallbackRequest.objects.filter(due, status=CallbackRequest.Status.OPEN).count()


# --- the dashboard ------------------------------------------------------------------------


@dataclass(frozen=True)
class Period:
    """A range of local days [first, last], read in `tz`, optionally for one school."""

    first: dt.date
    last: dt.date
    tz: zoneinfo.ZoneInfo
    school_id: int | None = None

    @classmethod
    def last_days(cls, days: int, *, school: School | None = None, today: dt.date | None = None,
                  tz: dt.tzinfo | None = None) -> "Period":
        """The last `days` local days up to today, read in the school's zone (else `tz`, else the current one)."""
        tz = school.tz if school else (tz or timezone.get_current_timezone())
        today = today or timezone.localtime(timezone.now(), tz).date()
        return cls(today - dt.timedelta(days=days - 1), today, tz, school.pk if school else None)

    @property
    def start(self) -> dt.datetime:
        return dt.datetime.combine(self.first, dt.time.min, self.tz)

    @property
    def end(self) -> dt.datetime:
        return dt.datetime.combine(self.last + dt.timedelta(days=1), dt.time.min, self.tz)

    @property
    def dates(self) -> list[dt.date]:
        return [self.first + dt.timedelta(days=i) for i in range((self.last - self.first).days + 1)]

    def conversations(self) -> QuerySet[Conversation]:
        queryset = Conversation.objects.filter(started_at__gte=self.start, started_at__lt=self.end)
        return queryset.filter(school_id=self.school_id) if self.school_id else queryset


def _per_day(queryset: QuerySet, field_name: str, period: Period) -> list[tuple[dt.date, int]]:
    counted = dict(
        queryset.annotate(day=TruncDate(field_name, tzinfo=period.tz)).order_by()
        .values("day").annotate(n=Count("id")).values_list("day", "n")
    )
    return [(day, counted.get(day, 0)) for day in period.dates]


def conversations_per_day(period: Period) -> list[tuple[dt.date, int]]:
    return _per_day(period.conversations(), "started_at", period)


def bookings_per_day(period: Period) -> list[tuple[dt.date, int]]:
    """Tours booked per day (when the booking was made); a reschedule is not a new booking."""
    bookings = TourBooking.objects.filter(created_at__gte=period.start, created_at__lt=period.end,
                                          replaces__isnull=True)
    if period.school_id:
        bookings = bookings.filter(school_id=period.school_id)
    return _per_day(bookings, "created_at", period)


def outcomes(period: Period) -> list[tuple[str, str, int]]:
    """(value, label, count) for every outcome, in the model's order."""
    counted = dict(period.conversations().order_by().values("outcome").annotate(n=Count("id"))
                   .values_list("outcome", "n"))
    return [(value, label, counted.get(value, 0)) for value, label in Conversation.Outcome.choices]


def conversation_totals(period: Period) -> dict:
    """Counts, rating share, handoff rate and usage per conversation, in one aggregate query."""
    numbers = period.conversations().aggregate(
        total=Count("id"),
        good=Count("id", filter=Q(rating=Conversation.Rating.GOOD)),
        bad=Count("id", filter=Q(rating=Conversation.Rating.BAD)),
        handed_off=Count("id", filter=HANDED_OFF),
        tokens=Sum("total_tokens"),
        cost=Sum("total_cost"),
        avg_tokens=Avg("total_tokens"),
        avg_cost=Avg("total_cost"),
    )
    total = numbers["total"]
    rated = numbers["good"] + numbers["bad"]
    numbers["unrated"] = total - rated
    numbers["rated"] = rated
    numbers["good_share"] = numbers["good"] / rated if rated else None
    numbers["rated_share"] = rated / total if total else None
    numbers["handoff_rate"] = numbers["handed_off"] / total if total else None
    numbers["tokens"] = numbers["tokens"] or 0
    numbers["cost"] = numbers["cost"] or 0
    return numbers


def _percentile(values: QuerySet, count: int, fraction: float) -> float | None:
    """The `fraction` percentile (linear interpolation, as numpy's default) of an ordered values_list."""
    if not count:
        return None
    position = (count - 1) * fraction
    low = math.floor(position)
    pair = list(values[low:low + 2])
    if len(pair) == 1 or position == low:
        return float(pair[0])
    return pair[0] + (pair[1] - pair[0]) * (position - low)


class PercentileCont(Aggregate):
    """PostgreSQL's ordered-set aggregate: the same linear interpolation as `_percentile`, in one pass."""

    function = "PERCENTILE_CONT"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression, fraction: float):
        super().__init__(expression, fraction=float(fraction))


def turn_latency(period: Period) -> dict:
    """Median and p95 of the concierge's turn latency (assistant Message.latency_ms), in milliseconds."""
    answers = Message.objects.filter(role=Message.Role.ASSISTANT, latency_ms__isnull=False,
                                     created_at__gte=period.start, created_at__lt=period.end)
    if period.school_id:
        answers = answers.filter(conversation__school_id=period.school_id)
    if connection.vendor == "postgresql":
        found = answers.aggregate(turns=Count("id"), median=PercentileCont("latency_ms", 0.5),
                                  p95=PercentileCont("latency_ms", 0.95))
        return {"turns": found["turns"], "median": found["median"], "p95": found["p95"]}
    count = answers.count()
    ordered = answers.order_by("latency_ms").values_list("latency_ms", flat=True)
    return {"turns": count, "median": _percentile(ordered, count, 0.5), "p95": _percentile(ordered, count, 0.95)}


_SPACES = re.compile(r"\s+")


def normalise_question(text: str) -> str:
    return _SPACES.sub(" ", (text or "").casefold()).strip().rstrip("?!. ")


@dataclass
class NoMatch:
    question: str
    school_id: int | None
    school_name: str
    times: int
    last_asked: dt.datetime
    conversation_id: int
    conversation_ids: list[int] = field(default_factory=list)


def no_match_questions(period: Period, *, limit: int = 30, scan: int = 2000) -> list[NoMatch]:
    """What parents asked that the FAQ could not answer: the staff's to-do list.

    The `get_faq_answer` observations with status no_match (nothing found, or nothing
    found with confidence) or with `unanswered` parts (the latest `scan` of the period),
    each with the question from its act step's arguments, or the `unanswered` parts of a
    message that asked several things (none for a greeting or a wish to book), grouped by
    school and question, most asked first. A question that now has an FAQ entry (same
    wording, for the school or every school) is done and left out.
    """
    observed = ReasoningStep.objects.filter(
        Q(tool_result__status=NO_MATCH) | Q(tool_result__has_key=UNANSWERED),
        kind=ReasoningStep.Kind.OBSERVE, tool_name=FAQ_TOOL,
        message__created_at__gte=period.start, message__created_at__lt=period.end,
    )
    if period.school_id:
        observed = observed.filter(message__conversation__school_id=period.school_id)
    asked = ReasoningStep.objects.filter(
        message_id=OuterRef("message_id"), kind=ReasoningStep.Kind.ACT, tool_name=FAQ_TOOL,
        tool_call_id=OuterRef("tool_call_id"),
    ).annotate(question=KT("tool_arguments__question")).values("question")[:1]
    rows = (
        observed.annotate(asked=Subquery(asked), standalone=KT("tool_result__standalone_question"),
                          unanswered=KeyTransform(UNANSWERED, "tool_result"),
                          school_id=F("message__conversation__school_id"),
                          school_name=F("message__conversation__school__name"),
                          conversation_id=F("message__conversation_id"), at=F("message__created_at"))
        .order_by("-message__created_at", "-id")
        .values("asked", "standalone", "unanswered", "school_id", "school_name", "conversation_id", "at")[:scan]
    )
    grouped: dict[tuple[int, str], NoMatch] = {}
    wordings: dict[tuple[int, str], dict[str, int]] = {}
    asked_questions = (
        (str(question).strip(), row)
        for row in rows
        for question in (row["unanswered"] if isinstance(row["unanswered"], list)
                         else [row["asked"] or row["standalone"] or ""])
    )
    for question, row in asked_questions:
        key = (row["school_id"], normalise_question(question))
        if not key[1]:
            continue
        counted = wordings.setdefault(key, {})
        counted[question] = counted.get(question, 0) + 1
        item = grouped.get(key)
        if item is None:
            grouped[key] = NoMatch(question, row["school_id"], row["school_name"], 1, row["at"],
                                   row["conversation_id"], [row["conversation_id"]])
        else:
            item.times += 1
            if len(item.conversation_ids) < 5 and row["conversation_id"] not in item.conversation_ids:
                item.conversation_ids.append(row["conversation_id"])
    for key, item in grouped.items():  # show the most used wording, preferring a written-out question
        item.question = max(wordings[key].items(),
                            key=lambda pair: (pair[1], pair[0][:1].isupper(), pair[0].endswith("?")))[0]
    if not grouped:
        return []
    school_ids = {school_id for school_id, _ in grouped}
    answered = {(school_id, normalise_question(question)) for school_id, question in
                FaqEntry.objects.filter(Q(school_id__in=school_ids) | Q(school__isnull=True))
                .values_list("school_id", "question")}
    todo = [item for key, item in grouped.items() if key not in answered and (None, key[1]) not in answered]
    todo.sort(key=lambda item: (-item.times, -item.last_asked.timestamp()))
    return todo[:limit]


FUNNEL_STEPS = (  # (key, label) in the order a family moves along
    ("enquiries", "Enquiries (new families)"),
    ("booked", "Tours booked"),
    ("attended", "Attended"),
    ("no_shows", "No-shows"),
    ("reminders", "Reminders sent"),
    ("promotions", "Waitlist promotions"),
)


@dataclass
class FunnelWeek:
    monday: dt.date
    counts: dict[str, int]


def _per_week(queryset: QuerySet, field_name: str, period: Period, by: str = "", school: str = "school_id") -> dict:
    """Rows per week (weeks start on Monday, in the period's zone) within the period: {monday: n}, or with `by`
    a field, {(monday, value): n}."""
    rows = queryset.filter(**{f"{field_name}__gte": period.start, f"{field_name}__lt": period.end})
    if period.school_id:
        rows = rows.filter(**{school: period.school_id})
    counted = (rows.annotate(week=TruncWeek(field_name, tzinfo=period.tz)).order_by()
               .values("week", *filter(None, [by])).annotate(n=Count("id")))
    day = lambda week: week.date() if isinstance(week, dt.datetime) else week  # noqa: E731
    return {(day(row["week"]), row[by]) if by else day(row["week"]): row["n"] for row in counted}


def funnel_per_week(period: Period) -> list[FunnelWeek]:
    """The admissions funnel per week: families who first wrote, tours booked (moves excluded), tours attended
    and missed (by the tour's time), reminders sent, and seats offered from a waitlist."""
    outcomes = _per_week(TourBooking.objects.filter(status__in=[TourBooking.Status.COMPLETED,
                                                                TourBooking.Status.NO_SHOW]),
                         "starts_at", period, by="status")
    sources = {
        "enquiries": _per_week(Contact.objects.all(), "created_at", period),
        "booked": _per_week(TourBooking.objects.filter(replaces__isnull=True), "created_at", period),
        "attended": {week: n for (week, status), n in outcomes.items() if status == TourBooking.Status.COMPLETED},
        "no_shows": {week: n for (week, status), n in outcomes.items() if status == TourBooking.Status.NO_SHOW},
        "reminders": _per_week(SentReminder.objects.filter(status=SentReminder.Status.SENT), "sent_at", period,
                               school="booking__school_id"),
        "promotions": _per_week(WaitlistEntry.objects.all(), "offered_at", period),
    }
    first_monday = period.first - dt.timedelta(days=period.first.weekday())
    mondays = [first_monday + dt.timedelta(weeks=i) for i in range((period.last - first_monday).days // 7 + 1)]
    return [FunnelWeek(monday, {key: source.get(monday, 0) for key, source in sources.items()}) for monday in mondays]


def dashboard(period: Period) -> dict:
    return {
        "funnel": funnel_per_week(period),
        "conversations_per_day": conversations_per_day(period),
        "bookings_per_day": bookings_per_day(period),
        "outcomes": outcomes(period),
        "totals": conversation_totals(period),
        "latency": turn_latency(period),
        "no_match": no_match_questions(period),
    }
