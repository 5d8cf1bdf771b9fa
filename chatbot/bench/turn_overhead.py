"""turn_overhead: what one full turn costs when the model itself costs nothing.

A turn is `chatbot.services.receive()` on the web channel, exactly as the websocket consumer calls it:
store the message, take the session lock, build the prompt, call the model (`benchzero/scripted`: one
check_availability call, then a text answer, no waiting), run the tool, store every reasoning step, store
and "send" the reply (channel-layer group sends). Each contact has a conversation of TURNS_PER_CONTACT turns.

The floor is the same number of database and Redis round trips done bare: the SQL statements and Redis
commands of a turn are counted (every thread: the tools run in a thread pool), then that many `SELECT 1`
and `PING` are timed on open connections. overhead / floor says how much the code around the round trips
(ORM, litellm, JSON, asyncio, new database connections) adds. Every database_sync_to_async call closes
its connection when it returns; on PostgreSQL the settings give that connection back to a pool. The same
turns are also timed with the pool switched off (a new PostgreSQL connection per hop), beside the
configured figure, so the pool's effect is measured in the same run.
"""

import statistics
import time

from asgiref.sync import async_to_sync
from django.db import connection
from django.test import override_settings

from chatbot.bench.common import (
    Context,
    Result,
    RoundTrips,
    Row,
    bench_school,
    database_pool,
    fmt_ratio,
    make_contact,
    percentile,
    ratio,
)
from chatbot.bench.models import ZERO_MODEL, register_zero

NAME = "turn_overhead"
TITLE = "Turn overhead, zero-latency model"
TURNS_PER_CONTACT = 10
WARMUP_TURNS = 5
EXPECTED_REPLY = "Here are the open tour slots. Which one suits you?"


async def _turn(school, contact, text: str) -> float:
    from chatbot.services import receive

    started = time.perf_counter()
    await receive(school=school, contact=contact, channel="web", text=text)
    return (time.perf_counter() - started) * 1000


async def _run_turns(ctx: Context, school, contacts: list, counting_turns: int, timed_turns: int,
                     warmup_turns: int = WARMUP_TURNS) -> dict:
    """Warm up, count the round trips of a few turns, then time the rest (one event loop, like daphne)."""
    progress = ctx.progress
    n = 0

    def contact_for(index: int):
        return contacts[index // TURNS_PER_CONTACT]

    for _ in range(warmup_turns):
        await _turn(school, contact_for(n), f"warm-up turn {n}: can we book a tour?")
        n += 1
    per_turn = {"queries": [], "connections": [], "redis": []}
    with RoundTrips() as trips:
        for _ in range(counting_turns):
            trips.reset()
            await _turn(school, contact_for(n), f"counted turn {n}: can we book a tour?")
            queries, connections, redis_commands = trips.reset()
            per_turn["queries"].append(queries)
            per_turn["connections"].append(connections)
            per_turn["redis"].append(redis_commands)
            n += 1
    timings = []
    for i in range(timed_turns):
        timings.append(await _turn(school, contact_for(n), f"timed turn {n}: can we book a tour?"))
        n += 1
        progress.count("turns", i + 1, timed_turns)
    return {"timings": timings, "per_turn": per_turn, "turns": n}


def _floor(queries: int, redis_commands: int, repetitions: int) -> list[float]:
    """Time `queries` x SELECT 1 plus `redis_commands` x PING on open connections, `repetitions` times."""
    from config.redis import get_redis

    client = get_redis()
    client.ping()
    timings = []
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        for _ in range(repetitions):
            started = time.perf_counter()
            for _ in range(queries):
                cursor.execute("SELECT 1")
                cursor.fetchone()
            for _ in range(redis_commands):
                client.ping()
            timings.append((time.perf_counter() - started) * 1000)
    return timings


def _check(school, turns: int) -> dict:
    from chatbot.models import Message, ReasoningStep

    replies = Message.objects.filter(conversation__school=school, role=Message.Role.ASSISTANT)
    return {
        "replies": replies.count(),
        "unexpected_replies": replies.exclude(text=EXPECTED_REPLY).count(),
        "tool_calls": ReasoningStep.objects.filter(message__conversation__school=school,
                                                   kind=ReasoningStep.Kind.ACT).count(),
        "unanswered": Message.objects.filter(conversation__school=school, role=Message.Role.USER,
                                             processed_at__isnull=True).count(),
        "turns": turns,
    }


def run(ctx: Context) -> Result:
    options = ctx.options
    result = Result(NAME, TITLE)
    counting_turns = 3 if options.quick else 20
    warmup_turns = 2 if options.quick else WARMUP_TURNS
    total = warmup_turns + counting_turns + options.turns
    register_zero()
    with override_settings(LLM_MODEL=ZERO_MODEL, CHAT_BURST_WINDOW_SECONDS=0, DEBUG=False, PIPEDRIVE_API_TOKEN=""), \
            bench_school(ctx, NAME) as school:
        contacts = [make_contact(school, i) for i in range(-(-total // TURNS_PER_CONTACT))]
        ctx.progress.say(f"turn_overhead: {options.turns} turns with {ZERO_MODEL}")
        measured = async_to_sync(_run_turns)(ctx, school, contacts, counting_turns, options.turns, warmup_turns)
        check = _check(school, measured["turns"])
        per_turn = measured["per_turn"]
        queries = round(statistics.median(per_turn["queries"]))
        redis_commands = round(statistics.median(per_turn["redis"]))
        new_connections = statistics.median(per_turn["connections"])
        ctx.progress.say(f"turn_overhead: floor, {queries} x SELECT 1 + {redis_commands} x PING, "
                         f"{options.turns} times")
        floor = _floor(queries, redis_commands, options.turns)
        unpooled = None
        if not options.quick and connection.settings_dict["OPTIONS"].get("pool"):
            ctx.progress.say(f"turn_overhead: {options.turns} more turns without the connection pool, "
                             "for comparison")
            more = [make_contact(school, 10_000 + i)
                    for i in range(-(-(WARMUP_TURNS + options.turns) // TURNS_PER_CONTACT))]
            with database_pool(None):
                unpooled = async_to_sync(_run_turns)(ctx, school, more, 0, options.turns)["timings"]
    timings = measured["timings"]
    turn_p50, turn_p99 = percentile(timings, 0.5), percentile(timings, 0.99)
    floor_p50, floor_p99 = percentile(floor, 0.5), percentile(floor, 0.99)
    errors = (check["turns"] - check["replies"]) + check["unexpected_replies"] + check["unanswered"]
    result.figures = {
        "turns": len(timings),
        "turn_p50_ms": round(turn_p50, 2),
        "turn_p99_ms": round(turn_p99, 2),
        "turn_mean_ms": round(statistics.fmean(timings), 2) if timings else 0.0,
        "floor_p50_ms": round(floor_p50, 2),
        "floor_p99_ms": round(floor_p99, 2),
        "overhead_p50_ratio": ratio(turn_p50, floor_p50),
        "overhead_p99_ratio": ratio(turn_p99, floor_p99),
        "queries_per_turn": queries,
        "redis_commands_per_turn": redis_commands,
        "db_connections_opened_per_turn": new_connections,
        "queries_per_turn_range": [min(per_turn["queries"]), max(per_turn["queries"])],
        "tool_calls": check["tool_calls"],
        "errors": errors,
    }
    result.rows = [
        Row("turn p50", f"{turn_p50:.1f} ms", f"{floor_p50:.1f} ms", fmt_ratio(ratio(turn_p50, floor_p50)),
            f"floor = {queries} SELECT 1 + {redis_commands} PING"),
        Row("turn p99", f"{turn_p99:.1f} ms", f"{floor_p99:.1f} ms", fmt_ratio(ratio(turn_p99, floor_p99)),
            f"{len(timings)} turns"),
        Row("round trips / turn", f"{queries} SQL + {redis_commands} Redis", "", "",
            f"{new_connections:g} new DB connections per turn"),
        Row("errors", str(errors), "0", "", f"{check['replies']} replies, {check['tool_calls']} tool calls"),
    ]
    if unpooled:
        p50, p99 = percentile(unpooled, 0.5), percentile(unpooled, 0.99)
        result.figures.update({"unpooled_turn_p50_ms": round(p50, 2), "unpooled_turn_p99_ms": round(p99, 2),
                               "unpooled_overhead_p50_ratio": ratio(p50, floor_p50)})
        result.rows.insert(2, Row("turn p50 without the pool", f"{p50:.1f} ms", f"{floor_p50:.1f} ms",
                                  fmt_ratio(ratio(p50, floor_p50)),
                                  f"p99 {p99:.1f} ms; same turns, a new PostgreSQL connection per hop"))
    if errors:
        result.status = "failed"
        result.reason = f"{errors} turn(s) without the expected reply"
    return result
