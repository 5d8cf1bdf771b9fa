"""Streaming exports of conversations: JSONL with every message and reasoning step (an evaluation data set),
and CSV with one row per conversation; both list the tours booked in it with every child.

The rows are read in chunks of ids, each chunk a fixed number of queries, so an
export of any size streams in constant memory. Under ASGI the chunks are produced
in a worker thread, one at a time, through an async iterator.

Times are ISO 8601 in the conversation's school's zone, with the offset
("2026-11-25T14:00:00+08:00": the same instant, readable as the school's clock),
and every row names the zone (`time_zone`).
"""

import csv
import datetime as dt
import json
from collections.abc import AsyncIterator, Iterable, Iterator
from decimal import Decimal

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.db.models import Prefetch, QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone

from adminpanel import schooltime
from adminpanel.selectors import with_review_stats
from bookings.models import TourBooking
from chatbot.models import Conversation, Message, ReasoningStep
from plumbing.logging import mask_contact_details, mask_phone

CHUNK = 200
CSV_COLUMNS = ("id", "started_at", "time_zone", "school", "channel", "contact_id", "contact", "phone", "status",
               "outcome", "messages", "total_tokens", "total_cost", "slowest_turn_ms", "rating", "rating_note",
               "rated_by", "rated_at", "ended_at", "tours")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _iso(value: dt.datetime | None, school) -> str | None:
    return schooltime.iso(value, school)


def _number(value: Decimal | None) -> float | None:
    return float(value) if value is not None else None


def conversation_ids(queryset: QuerySet[Conversation]) -> list[int]:
    """The ids in the queryset's order (one query; the annotations are not computed unless ordered by)."""
    return list(queryset.values_list("pk", flat=True))


def _chunks(ids: list[int], *, with_messages: bool) -> Iterator[list[Conversation]]:
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start:start + CHUNK]
        queryset = with_review_stats(Conversation.objects.filter(pk__in=chunk)).select_related(
            "school", "contact", "rated_by")
        queryset = queryset.prefetch_related(Prefetch(
            "contact__tour_bookings", queryset=TourBooking.objects.prefetch_related("children").order_by("created_at")))
        if with_messages:
            steps = Prefetch("steps", queryset=ReasoningStep.objects.order_by("position"))
            queryset = queryset.prefetch_related(
                Prefetch("messages", queryset=Message.objects.order_by("created_at", "id").prefetch_related(steps))
            )
        found = {conversation.pk: conversation for conversation in queryset}
        yield [found[pk] for pk in chunk if pk in found]


def _tours(conversation: Conversation) -> list[TourBooking]:
    """The tours the contact booked while this conversation ran (contact__tour_bookings must be prefetched)."""
    until = conversation.ended_at or timezone.now()
    return [b for b in conversation.contact.tour_bookings.all() if conversation.started_at <= b.created_at <= until]


def _tour_record(booking: TourBooking, school) -> dict:
    return {"reference": booking.reference, "starts_at": _iso(booking.starts_at, school), "status": booking.status,
            "adults": booking.adults,
            "children": [{"name": c.name, "age": c.age, "year_group": c.year_group} for c in booking.children.all()]}


def _tours_cell(conversation: Conversation) -> str:
    """"T-ABC123 2026-12-02T11:00:00+08:00 scheduled: Leo (5) and Mia (5)", one per tour, "; " between."""
    school = conversation.school
    return "; ".join(f"{b.reference} {_iso(b.starts_at, school)} {b.status}: {b.children_label}"
                     for b in _tours(conversation))


def conversation_record(conversation: Conversation) -> dict:
    """One conversation with its messages and their reasoning steps (messages and steps must be prefetched)."""
    school = conversation.school
    return {
        "id": conversation.pk,
        "school": {"id": conversation.school_id, "slug": school.slug, "name": school.name,
                   "time_zone": school.time_zone},
        "time_zone": school.time_zone,
        "channel": conversation.channel,
        "status": conversation.status,
        "outcome": conversation.outcome,
        "started_at": _iso(conversation.started_at, school),
        "last_message_at": _iso(conversation.last_message_at, school),
        "ended_at": _iso(conversation.ended_at, school),
        "contact": {"id": conversation.contact_id, "phone": mask_phone(conversation.contact.phone)},
        "total_tokens": conversation.total_tokens,
        "total_cost": _number(conversation.total_cost),
        "message_count": conversation.message_count,
        "slowest_turn_ms": conversation.slowest_turn_ms,
        "rating": conversation.rating,
        "rating_note": conversation.rating_note,
        "rated_by": conversation.rated_by.get_username() if conversation.rated_by else None,
        "rated_at": _iso(conversation.rated_at, school),
        "summary": conversation.summary,
        "tours": [_tour_record(b, school) for b in _tours(conversation)],
        "messages": [
            {
                "id": message.pk,
                "role": message.role,
                "text": message.text,
                "payload": message.payload,
                "created_at": _iso(message.created_at, school),
                "reply_to": message.reply_to_id,
                "model": message.model,
                "latency_ms": message.latency_ms,
                "prompt_tokens": message.prompt_tokens,
                "completion_tokens": message.completion_tokens,
                "cost": _number(message.cost),
                "steps": [
                    {
                        "cycle": step.cycle,
                        "position": step.position,
                        "kind": step.kind,
                        "content": step.content,
                        "tool_name": step.tool_name,
                        "tool_call_id": step.tool_call_id,
                        "tool_arguments": step.tool_arguments,
                        "tool_result": step.tool_result,
                        "model": step.model,
                        "created_at": _iso(step.created_at, school),
                        "latency_ms": step.latency_ms,
                        "prompt_tokens": step.prompt_tokens,
                        "completion_tokens": step.completion_tokens,
                    }
                    for step in message.steps.all()
                ],
            }
            for message in conversation.messages.all()
        ],
    }


def jsonl_chunks(ids: list[int]) -> Iterator[str]:
    """One JSON object per line and per conversation."""
    for conversations in _chunks(ids, with_messages=True):
        # Phones and e-mails masked wherever they appear, as in the CSV and the console (issue 12).
        yield "".join(json.dumps(mask_contact_details(conversation_record(c), c.school.default_phone_region),
                                 ensure_ascii=False, default=str) + "\n" for c in conversations)


class _Line:
    """A file-like object for csv.writer that hands back what it is given."""

    def write(self, value: str) -> str:
        return value


def _safe_cell(value):
    """Free text a parent or staff typed must not run as a spreadsheet formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_row(conversation: Conversation) -> list:
    school = conversation.school
    return [
        conversation.pk, _iso(conversation.started_at, school), school.time_zone, school.slug, conversation.channel,
        conversation.contact_id, _safe_cell(conversation.contact.display_name), mask_phone(conversation.contact.phone),
        conversation.status, conversation.outcome, conversation.message_count, conversation.total_tokens,
        conversation.total_cost, conversation.slowest_turn_ms if conversation.slowest_turn_ms is not None else "",
        conversation.rating, _safe_cell(conversation.rating_note),
        conversation.rated_by.get_username() if conversation.rated_by else "",
        _iso(conversation.rated_at, school) or "", _iso(conversation.ended_at, school) or "",
        _safe_cell(_tours_cell(conversation)),
    ]


def csv_chunks(ids: list[int]) -> Iterator[str]:
    writer = csv.writer(_Line())
    yield writer.writerow(CSV_COLUMNS)
    for conversations in _chunks(ids, with_messages=False):
        yield "".join(writer.writerow(mask_contact_details(csv_row(c), c.school.default_phone_region))
                      for c in conversations)


async def _in_thread(chunks: Iterable[str]) -> AsyncIterator[str]:
    iterator = iter(chunks)
    done = object()
    while True:
        chunk = await sync_to_async(next, thread_sensitive=True)(iterator, done)
        if chunk is done:
            return
        yield chunk


def streaming_response(request, chunks: Iterable[str], *, kind: str) -> StreamingHttpResponse:
    content_type = {"jsonl": "application/x-ndjson; charset=utf-8", "csv": "text/csv; charset=utf-8"}[kind]
    content = _in_thread(chunks) if isinstance(request, ASGIRequest) else chunks
    response = StreamingHttpResponse(content, content_type=content_type)
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    response["Content-Disposition"] = f'attachment; filename="conversations-{stamp}.{kind}"'
    response["Cache-Control"] = "no-store"
    return response
