"""How fast the staff console renders: `measure_console(client_or_user)` for the `bench` command and the tests.

Renders the conversation list and one conversation's page several times through
Django's test client (the full stack: middleware, session, admin, templates) and
returns p50 / p95 in milliseconds and the number of queries of each page.
"""

import statistics
import time

from django.conf import settings
from django.db import connection
from django.db.models import Count
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from chatbot.models import Conversation, Message

DEFAULT_RUNS = 10


def _host() -> str:
    allowed = settings.ALLOWED_HOSTS
    if "*" in allowed or "127.0.0.1" in allowed:
        return "127.0.0.1"
    return next((host.lstrip(".") for host in allowed if host), "localhost")


def _client(client_or_user) -> Client:
    if isinstance(client_or_user, Client):
        return client_or_user
    client = Client(HTTP_HOST=_host())
    client.force_login(client_or_user)
    return client


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _measure(client: Client, url: str, runs: int) -> dict:
    response = client.get(url)  # warm: templates, content types, the session
    if response.status_code != 200:
        raise RuntimeError(f"GET {url} answered {response.status_code}")
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(url)
        _ = response.content
        timings.append((time.perf_counter() - started) * 1000)
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    return {
        "url": url,
        "runs": runs,
        "p50_ms": round(statistics.median(timings), 1),
        "p95_ms": round(_percentile(timings, 0.95), 1),
        "max_ms": round(max(timings), 1),
        "queries": len(queries),
        "bytes": len(response.content),
    }


def typical_conversation() -> Conversation | None:
    """A recent conversation with a typical (median-ish) number of messages, for the detail page."""
    average = Message.objects.count() // max(Conversation.objects.count(), 1)
    recent = (Conversation.objects.order_by("-started_at").annotate(n=Count("messages"))
              .values_list("pk", "n")[:200])
    candidates = sorted(recent, key=lambda row: abs(row[1] - average))
    return Conversation.objects.get(pk=candidates[0][0]) if candidates else None


def measure_console(client_or_user, *, runs: int = DEFAULT_RUNS, conversation: Conversation | None = None) -> dict:
    """{"list": {...}, "detail": {...}, "conversations": n, "messages": n}, each page with p50_ms, p95_ms, queries.

    `client_or_user`: a logged-in django.test.Client, or a staff user to log in.
    """
    client = _client(client_or_user)
    conversation = conversation or typical_conversation()
    result = {
        "conversations": Conversation.objects.count(),
        "messages": Message.objects.count(),
        "list": _measure(client, reverse("admin:chatbot_conversation_changelist"), runs),
    }
    if conversation is not None:
        result["detail"] = _measure(client, reverse("admin:chatbot_conversation_change", args=[conversation.pk]),
                                    runs)
        result["detail"]["conversation"] = conversation.pk
        result["detail"]["messages"] = conversation.messages.count()
    return result
