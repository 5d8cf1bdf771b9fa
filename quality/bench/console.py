"""console: how fast the staff console renders, before and after seeding a conversation load.

Uses `adminpanel.bench.measure_console(user, runs=..., conversation=...)` (owned by the staff console; it
renders the conversation list and one conversation's page through Django's test client and returns p50 /
p95 ms and query counts). The bench logs in a temporary superuser, measures once with the database as it
is (the baseline), then seeds `--console-conversations` conversations of 20 messages each (10 parent, 10
concierge answers with act / observe / answer steps) under its own bench school, and measures again.
Everything it created is deleted afterwards. On PostgreSQL the tables are ANALYZEd before each measurement,
so neither runs on planner statistics from before a bulk insert or delete.

Hook: if `adminpanel.bench.measure_console` is missing, the benchmark is skipped with that message; the
call is in `_measure()` below.
"""

import datetime as dt
import random
import secrets
from decimal import Decimal

from django.conf import settings
from django.test import Client, override_settings
from django.utils import timezone

from adminpanel.management.commands.seed_load import own_timestamps
from quality.bench.common import Context, Result, Row, Skip, bench_school, fmt_ratio, ratio

NAME = "console"
TITLE = "Staff console render times with a seeded load"
MESSAGES_PER_CONVERSATION = 20
BATCH = 500


def _measure_function():
    try:
        from adminpanel.bench import measure_console
    except ImportError as exc:
        raise Skip(f"adminpanel.bench.measure_console is not available ({exc}); "
                   "wire it in quality/bench/console.py") from None
    return measure_console


def _seed(ctx: Context, school, conversations: int, rng: random.Random, first: int = 0) -> int:
    from chatbot.models import Channel, Conversation, Message, ReasoningStep
    from crm.models import Contact

    now = timezone.now()
    made = 0
    with own_timestamps():
        for start in range(0, conversations, BATCH):
            size = min(BATCH, conversations - start)
            contacts = Contact.objects.bulk_create([
                Contact(school=school, name=f"Load Parent {first + start + i}",
                        web_visitor_id=f"bench-load-{first + start + i}")
                for i in range(size)])
            rows = []
            for contact in contacts:
                begun = now - dt.timedelta(seconds=rng.uniform(0, 90 * 86_400))
                rows.append(Conversation(
                    school=school, contact=contact, channel=rng.choice([Channel.WEB, Channel.WHATSAPP]),
                    status=Conversation.Status.ENDED, outcome=rng.choice(["booked", "faq_only", "abandoned"]),
                    started_at=begun, last_message_at=begun + dt.timedelta(minutes=10), ended_at=begun
                    + dt.timedelta(minutes=10), total_tokens=20_000, total_cost=Decimal("0.004")))
            Conversation.objects.bulk_create(rows)
            messages = []
            for conversation in rows:
                at = conversation.started_at
                for index in range(MESSAGES_PER_CONVERSATION):
                    at += dt.timedelta(seconds=rng.uniform(2, 40))
                    parent = index % 2 == 0
                    messages.append(Message(
                        conversation=conversation, channel=conversation.channel, created_at=at,
                        role=Message.Role.USER if parent else Message.Role.ASSISTANT,
                        text="Could we book a tour next week?" if parent else "Here are the open tour slots.",
                        processed_at=at if parent else None, model="" if parent else "offline/policy",
                        latency_ms=None if parent else 900, prompt_tokens=0 if parent else 1800,
                        completion_tokens=0 if parent else 60))
            Message.objects.bulk_create(messages, batch_size=2000)
            steps = []
            for message in messages:
                if message.role != Message.Role.ASSISTANT:
                    continue
                call = f"call_{rng.getrandbits(48):012x}"
                steps += [
                    ReasoningStep(message=message, cycle=1, position=0, kind="act", tool_name="check_availability",
                                  tool_call_id=call, tool_arguments={"date_range_start": "next week"},
                                  created_at=message.created_at),
                    ReasoningStep(message=message, cycle=1, position=1, kind="observe", content="success",
                                  tool_name="check_availability", tool_call_id=call, created_at=message.created_at,
                                  tool_result={"status": "success", "available_slots": []}, latency_ms=12),
                    ReasoningStep(message=message, cycle=1, position=2, kind="answer", content=message.text,
                                  model="offline/policy", created_at=message.created_at, latency_ms=900),
                ]
            ReasoningStep.objects.bulk_create(steps, batch_size=3000)
            made += size
            ctx.progress.count("conversations seeded", made, conversations)
    return made


def _client(user) -> Client:
    hosts = settings.ALLOWED_HOSTS
    host = "127.0.0.1" if "*" in hosts or "127.0.0.1" in hosts else next((h.lstrip(".") for h in hosts if h),
                                                                           "localhost")
    client = Client(HTTP_HOST=host)
    client.force_login(user)
    return client


def _analyze() -> None:
    """Fresh planner statistics (PostgreSQL), so both measurements run on plans for the data they see."""
    from django.db import connection

    from chatbot.models import Conversation, Message, ReasoningStep
    from crm.models import Contact

    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for model in (Conversation, Message, ReasoningStep, Contact):
            cursor.execute(f'ANALYZE "{model._meta.db_table}"')


def _measure(measure_console, client: Client, runs: int, conversation) -> dict:
    """The hook: the staff console's own measurement (adminpanel.bench)."""
    _analyze()
    return measure_console(client, runs=runs, conversation=conversation)


def run(ctx: Context) -> Result:
    from django.contrib.auth import get_user_model

    from chatbot.models import Conversation

    measure_console = _measure_function()
    options = ctx.options
    runs = 3 if options.quick else 10
    conversations = max(1, options.console_messages // MESSAGES_PER_CONVERSATION)
    result = Result(NAME, TITLE)
    user_model = get_user_model()
    user = user_model.objects.create_superuser(username=f"bench-staff-{ctx.run_id}",
                                               email="bench@bench.example", password=secrets.token_urlsafe(16))
    client = _client(user)
    try:
        with override_settings(DEBUG=False), bench_school(ctx, NAME) as school:
            rng = random.Random(options.seed)
            _seed(ctx, school, 1, rng)
            sample = Conversation.objects.filter(school=school).first()
            ctx.progress.say(f"console: baseline ({runs} renders per page)")
            baseline = _measure(measure_console, client, runs, sample)
            ctx.progress.say(f"console: seeding {conversations} conversations x {MESSAGES_PER_CONVERSATION} messages")
            _seed(ctx, school, conversations, rng, first=1)
            ctx.progress.say(f"console: with the load ({runs} renders per page)")
            loaded = _measure(measure_console, client, runs, sample)
    finally:
        client.logout()  # deletes the session row
        user_model.objects.filter(pk=user.pk).delete()
    result.figures = {"seeded_conversations": conversations,
                      "seeded_messages": conversations * MESSAGES_PER_CONVERSATION,
                      "baseline": baseline, "loaded": loaded}
    for page in ("list", "detail"):
        before, after = baseline.get(page), loaded.get(page)
        if not before or not after:
            continue
        result.figures[f"{page}_p50_ms"] = after["p50_ms"]
        result.figures[f"{page}_p95_ms"] = after["p95_ms"]
        result.figures[f"{page}_ratio"] = ratio(after["p50_ms"], before["p50_ms"])
        result.rows.append(Row(
            f"{page} page p50", f"{after['p50_ms']:.0f} ms", f"{before['p50_ms']:.0f} ms",
            fmt_ratio(ratio(after["p50_ms"], before["p50_ms"])),
            f"p95 {after['p95_ms']:.0f} ms, {after['queries']} queries (baseline {before['queries']}); "
            f"{loaded['conversations']} conversations, {loaded['messages']} messages in the database"))
    return result
