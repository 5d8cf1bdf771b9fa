"""turn_overhead: what one full turn costs when the model itself costs nothing.

A turn is `chatbot.services.receive()` on the web channel, exactly as the websocket consumer calls it, with
the web channel loaded (its observer registered) and one open chat socket per contact in this process and in
the visitor's channel-layer group, as the consumer that received the message is: store the message, take the
session lock, build the prompt, call the model (`benchzero/scripted`: one check_availability call, then a
text answer, no waiting), run the tool, store every reasoning step, store the reply and send typing, steps
and the reply to the visitor's sockets (written to the socket directly; the group's members are looked up
for sockets of other processes). Each contact has a conversation of TURNS_PER_CONTACT turns. Every frame
sent must reach its socket (else: errors).
LONG_CONVERSATIONS more conversations of LONG_CONVERSATION_TURNS turns give the turn time by position in a
conversation: a turn should cost the same at turn 40 as at turn 1 (the prompt's history is bounded).

A few turns are counted (`quality.bench.counting`: every database round trip at psycopg's level, by kind,
the commits, Redis commands, thread hops, frames). The floor is the same round trips done bare on one open
connection in one thread: as many autocommit one-row UPDATEs as the turn has commits (so the floor pays
the same durable commits), `SELECT 1` for the rest, and a `PING` per Redis command. overhead / floor says
how much the code around the round trips (ORM, litellm, JSON, asyncio, thread hops) adds. On PostgreSQL
the same turns are also timed with the pool switched off (a new PostgreSQL connection per hop).
"""

import asyncio
import json
import statistics
import subprocess
import time

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import connection
from django.test import override_settings

from quality.bench.common import (
    Context,
    Result,
    Row,
    Skip,
    bench_school,
    database_pool,
    database_url,
    fmt_ratio,
    make_contact,
    percentile,
    ratio,
    server_env,
)
from quality.bench.counting import Counts, RoundTrips
from quality.bench.models import ZERO_MODEL, register_zero

NAME = "turn_overhead"
TITLE = "Turn overhead, zero-latency model"
TURNS_PER_CONTACT = 10
LONG_CONVERSATION_TURNS = 40  # "flat from turn 1 to 40": the same turn at each position of a long conversation
LONG_CONVERSATIONS = 10
WARMUP_TURNS = 5
EXPECTED_REPLY = "Here are the open tour slots. Which one suits you?"
PEER_TIMEOUT_SECONDS = 1800
PEER_ROUNDS = 4  # with --peer: ours and the peer's turns alternate in this many rounds (see _ours_and_peer)


class _Socket:
    """Stands in for a parent's open chat socket in this process (what `chatbot.channels.web.consumer.WebChatConsumer`
    registers): the turn's frames are written to it directly, as to the consumer that received the message."""

    def __init__(self, sockets: "Sockets", name: str) -> None:
        self.sockets, self.channel_name = sockets, name
        self.loop = asyncio.get_running_loop()

    async def chat_event(self, event: dict) -> None:
        self.sockets.received += 1


class Sockets:
    """One open chat socket per contact, in this process and in its visitor group (as the consumer that
    received the message is); counts the frames sent to the visitors and those the sockets received."""

    def __init__(self, school) -> None:
        self.school = school
        self.sent = 0
        self.received = 0
        self._open: dict[int, tuple[str, str]] = {}
        self._layer = None
        self._web = None
        self._send_to_visitor = None

    async def __aenter__(self) -> "Sockets":
        from channels.layers import get_channel_layer

        from chatbot.channels.web import consumer as web

        self._layer, self._web = get_channel_layer(), web
        original = self._send_to_visitor = web.send_to_visitor

        async def counted(school_id, visitor, payload, *args):
            self.sent += 1
            return await original(school_id, visitor, payload, *args)

        web.send_to_visitor = counted
        return self

    async def open(self, contact) -> None:
        if contact.pk in self._open:
            return
        group = self._web.visitor_group(self.school.pk, contact.web_visitor_id)
        name = await self._layer.new_channel()
        self._web._local_sockets.setdefault(group, {})[name] = _Socket(self, name)
        await self._layer.group_add(group, name)
        self._open[contact.pk] = (group, name)

    async def __aexit__(self, *exc) -> None:
        self._web.send_to_visitor = self._send_to_visitor
        for group, name in self._open.values():
            self._web._local_sockets.pop(group, None)
            await self._layer.group_discard(group, name)


async def _turn(school, contact, text: str) -> float:
    from chatbot.services import receive

    started = time.perf_counter()
    await receive(school=school, contact=contact, channel="web", text=text)
    return (time.perf_counter() - started) * 1000


async def _run_turns(ctx: Context, school, contacts: list, counting_turns: int, timed_turns: int,
                     warmup_turns: int = WARMUP_TURNS, turns_per_contact: int = TURNS_PER_CONTACT) -> dict:
    """Warm up, count the round trips of a few turns, then time the rest (one event loop, like daphne)."""
    progress = ctx.progress
    n = 0

    def contact_for(index: int):
        return contacts[index // turns_per_contact]

    async with Sockets(school) as sockets:
        async def turn(label: str) -> float:
            nonlocal n
            contact = contact_for(n)
            await sockets.open(contact)
            took = await _turn(school, contact, f"{label} turn {n}: can we book a tour?")
            n += 1
            return took

        for _ in range(warmup_turns):
            await turn("warm-up")
        per_turn: list[Counts] = []
        frames: list[int] = []
        with RoundTrips() as trips:
            for _ in range(counting_turns):
                await sockets.open(contact_for(n))
                trips.reset()
                sent = sockets.sent
                await turn("counted")
                per_turn.append(trips.reset())
                frames.append(sockets.sent - sent)
        timings = []
        for i in range(timed_turns):
            timings.append(await turn("timed"))
            progress.count("turns", i + 1, timed_turns)
    return {"timings": timings, "per_turn": per_turn, "frames": frames, "turns": n,
            "frames_sent": sockets.sent, "frames_received": sockets.received}


def _by_position(ctx: Context, school, conversations: int) -> list[float]:
    """The p50 turn time at each position (1..LONG_CONVERSATION_TURNS) of `conversations` long conversations."""
    contacts = [make_contact(school, 20_000 + i) for i in range(conversations)]
    timings = async_to_sync(_run_turns)(ctx, school, contacts, 0, conversations * LONG_CONVERSATION_TURNS, 0,
                                        LONG_CONVERSATION_TURNS)["timings"]
    return [statistics.median(timings[position::LONG_CONVERSATION_TURNS])
            for position in range(LONG_CONVERSATION_TURNS)]


def median_counts(per_turn: list[Counts]) -> dict[str, float]:
    """The median of each figure over the counted turns."""
    names = Counts().as_dict()
    return {name: statistics.median([getattr(c, name) for c in per_turn]) if per_turn else 0 for name in names}


def _floor(school, round_trips: int, commits: int, redis_commands: int, repetitions: int) -> list[float]:
    """Time `round_trips` database round trips (`commits` of them committed one-row UPDATEs, the rest
    `SELECT 1`) plus `redis_commands` x PING, on open connections in one thread, `repetitions` times."""
    from plumbing.redis import get_redis

    client = get_redis()
    client.ping()
    table = connection.ops.quote_name(school._meta.db_table)
    update = f"UPDATE {table} SET name = name WHERE id = %s"  # noqa: S608 (the model's own table name)
    timings = []
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        for _ in range(repetitions):
            started = time.perf_counter()
            for _ in range(commits):
                cursor.execute(update, [school.pk])
            for _ in range(max(round_trips - commits, 0)):
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


def describe(counts: dict[str, float]) -> str:
    """'44 DB (21 statements, 8 BEGIN/COMMIT, 0 savepoints, 15 health checks), 9 commits, ...' for a table."""
    return (f"{counts['round_trips']:g} DB ({counts['statements']:g} statements, "
            f"{counts['transaction_control']:g} BEGIN/COMMIT, {counts['savepoints']:g} savepoints, "
            f"{counts['health_checks']:g} health checks), {counts['commits']:g} commits, "
            f"{counts['redis']:g} Redis, "
            f"{counts['thread_hops']:g} thread hops")


def run_peer(ctx: Context, turns: int, counting_turns: int, warmup_turns: int) -> dict:
    """LangGraph's ReAct agent on the same turn and database, in its own virtualenv (quality/bench/peer)."""
    from quality.bench.peer import environment

    python = environment.ensure(settings.BASE_DIR, ctx.progress.say)
    ctx.progress.say(f"turn_overhead: {turns} turns of LangGraph's create_react_agent + AsyncPostgresSaver")
    env = server_env(PYTHONPATH=str(settings.BASE_DIR))
    completed = subprocess.run(  # noqa: S603 (our own script in the peer's interpreter)
        [str(python), "-W", "ignore", "-m", "quality.bench.peer.langgraph_turn", "--dsn", database_url(),
         "--schema", f"bench_peer_{ctx.run_id}", "--turns", str(turns), "--counting", str(counting_turns),
         "--warmup", str(warmup_turns)],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=None, text=True, check=False,
        timeout=PEER_TIMEOUT_SECONDS,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"the LangGraph peer exited with {completed.returncode} (its error is above)")
    return json.loads(completed.stdout)


def _peer_figures(result: Result, ours: dict[str, float], timings: list[float], peer: dict) -> None:
    p50, p99 = percentile(peer["timings_ms"], 0.5), percentile(peer["timings_ms"], 0.99)
    ours_p50, ours_p99 = percentile(timings, 0.5), percentile(timings, 0.99)
    counts = peer["per_turn"]
    result.figures.update({
        "peer": "langgraph create_react_agent + AsyncPostgresSaver",
        "peer_turns": len(peer["timings_ms"]),
        "peer_turn_p50_ms": round(p50, 2),
        "peer_turn_p99_ms": round(p99, 2),
        "vs_peer_p50_ratio": ratio(ours_p50, p50),
        "vs_peer_p99_ratio": ratio(ours_p99, p99),
        "peer_per_turn": counts,
    })
    result.rows += [
        Row("turn p50 vs LangGraph", f"{ours_p50:.1f} ms", f"{p50:.1f} ms", fmt_ratio(ratio(ours_p50, p50)),
            "ours / peer (create_react_agent + AsyncPostgresSaver, same turn, same PostgreSQL, this run)"),
        Row("turn p99 vs LangGraph", f"{ours_p99:.1f} ms", f"{p99:.1f} ms", fmt_ratio(ratio(ours_p99, p99)),
            f"{len(peer['timings_ms'])} peer turns"),
        Row("round trips / turn vs LangGraph", f"{ours['round_trips']:g} DB", f"{counts['round_trips']:g} DB",
            fmt_ratio(ratio(ours["round_trips"], counts["round_trips"])),
            f"peer: {counts['statements']:g} statements + {counts['pipeline_syncs']:g} pipeline syncs "
            f"({counts['pipelined_statements']:g} statements pipelined), {counts['commits']:g} commits, "
            f"{counts['thread_hops']:g} thread hops"),
    ]


def _ours_and_peer(ctx: Context, school, contacts: list, rounds: int, counting_turns: int,
                   warmup_turns: int) -> tuple[dict, dict | None]:
    """Our timed turns and (with --peer) the peer's, in `rounds` alternating rounds: this machine's speed drifts
    by tens of percent over minutes (a shared virtual machine), so the two are timed in the same stretches of
    time rather than one after the other. Round trips are counted in the first round."""
    turns = ctx.options.turns
    ours: dict = {}
    peer: dict | None = None
    used = 0
    for number in range(rounds):
        share = turns // rounds + (1 if number < turns % rounds else 0)
        counting = counting_turns if number == 0 else 0
        warmup = warmup_turns if number == 0 else 0
        needed = -(-(warmup + counting + share) // TURNS_PER_CONTACT)
        mine = async_to_sync(_run_turns)(ctx, school, contacts[used:used + needed], counting, share, warmup)
        used += needed
        for key, value in mine.items():
            ours[key] = ours.get(key, 0 if isinstance(value, int) else []) + value
        if ctx.options.peer:
            theirs = run_peer(ctx, share, counting, warmup_turns)
            peer = theirs if peer is None else {**peer, "timings_ms": peer["timings_ms"] + theirs["timings_ms"],
                                                "turns": peer["turns"] + theirs["turns"]}
    return ours, peer


def run(ctx: Context) -> Result:
    options = ctx.options
    if options.peer and connection.vendor != "postgresql":
        raise Skip("--peer needs PostgreSQL (LangGraph's AsyncPostgresSaver): set DATABASE_URL")
    result = Result(NAME, TITLE)
    counting_turns = 3 if options.quick else 20
    warmup_turns = 2 if options.quick else WARMUP_TURNS
    total = warmup_turns + counting_turns + options.turns
    register_zero()
    with override_settings(LLM_MODEL=ZERO_MODEL, CHAT_BURST_WINDOW_SECONDS=0, DEBUG=False, PIPEDRIVE_API_TOKEN=""), \
            bench_school(ctx, NAME) as school:
        rounds = PEER_ROUNDS if options.peer else 1
        contacts = [make_contact(school, i) for i in range(-(-total // TURNS_PER_CONTACT) + rounds)]
        ctx.progress.say(f"turn_overhead: {options.turns} turns with {ZERO_MODEL} on the web channel"
                         + (f", in {rounds} rounds taking turns with the peer's" if rounds > 1 else ""))
        measured, peer = _ours_and_peer(ctx, school, contacts, rounds, counting_turns, warmup_turns)
        check = _check(school, measured["turns"])
        counts = median_counts(measured["per_turn"])
        round_trips, commits, redis_commands = (round(counts[k]) for k in ("round_trips", "commits", "redis"))
        ctx.progress.say(f"turn_overhead: floor, {round_trips} database round trips ({commits} of them commits) "
                         f"+ {redis_commands} x PING, {options.turns} times")
        floor = _floor(school, round_trips, commits, redis_commands, options.turns)
        conversations = 2 if options.quick else LONG_CONVERSATIONS
        ctx.progress.say(f"turn_overhead: {conversations} conversations of {LONG_CONVERSATION_TURNS} turns "
                         "(turn time by position)")
        by_position = _by_position(ctx, school, conversations)
        unpooled = None
        if not options.quick and connection.settings_dict["OPTIONS"].get("pool"):
            ctx.progress.say(f"turn_overhead: {options.turns} more turns without the connection pool, "
                             "for comparison")
            more = [make_contact(school, 10_000 + i)
                    for i in range(-(-(WARMUP_TURNS + options.turns) // TURNS_PER_CONTACT))]
            # No pool, and hop threads keep no connection: a new PostgreSQL connection per hop.
            with database_pool(None), override_settings(DB_POOL_CHECK_IDLE_SECONDS=0):
                unpooled = async_to_sync(_run_turns)(ctx, school, more, 0, options.turns)["timings"]
    timings = measured["timings"]
    turn_p50, turn_p99 = percentile(timings, 0.5), percentile(timings, 0.99)
    floor_p50, floor_p99 = percentile(floor, 0.5), percentile(floor, 0.99)
    undelivered = measured["frames_sent"] - measured["frames_received"]
    errors = (check["turns"] - check["replies"]) + check["unexpected_replies"] + check["unanswered"] + undelivered
    frames = statistics.median(measured["frames"]) if measured["frames"] else 0
    result.figures = {
        "turns": len(timings),
        "turn_p50_ms": round(turn_p50, 2),
        "turn_p99_ms": round(turn_p99, 2),
        "turn_mean_ms": round(statistics.fmean(timings), 2) if timings else 0.0,
        "floor_p50_ms": round(floor_p50, 2),
        "floor_p99_ms": round(floor_p99, 2),
        "overhead_p50_ratio": ratio(turn_p50, floor_p50),
        "overhead_p99_ratio": ratio(turn_p99, floor_p99),
        "per_turn": counts,
        "per_turn_range": {name: [min(getattr(c, name) for c in measured["per_turn"]),
                                  max(getattr(c, name) for c in measured["per_turn"])]
                           for name in counts} if measured["per_turn"] else {},
        "db_round_trips_per_turn": counts["round_trips"],
        "queries_per_turn": counts["statements"],
        "commits_per_turn": counts["commits"],
        "redis_commands_per_turn": counts["redis"],
        "thread_hops_per_turn": counts["thread_hops"],
        "db_connections_opened_per_turn": counts["connections"],
        "channel_layer_frames_per_turn": frames,
        "frames_sent": measured["frames_sent"],
        "frames_received": measured["frames_received"],
        "tool_calls": check["tool_calls"],
        "errors": errors,
    }
    result.rows = [
        Row("turn p50", f"{turn_p50:.1f} ms", f"{floor_p50:.1f} ms", fmt_ratio(ratio(turn_p50, floor_p50)),
            f"floor = {round_trips} DB round trips ({commits} committed UPDATEs, the rest SELECT 1) "
            f"+ {redis_commands} PING"),
        Row("turn p99", f"{turn_p99:.1f} ms", f"{floor_p99:.1f} ms", fmt_ratio(ratio(turn_p99, floor_p99)),
            f"{len(timings)} turns"),
        Row("round trips / turn", f"{counts['round_trips']:g} DB + {counts['redis']:g} Redis", "", "",
            describe(counts) + f"; {frames:g} frames; {counts['connections']:g} new DB connections"),
        Row("errors", str(errors), "0", "", f"{check['replies']} replies, {check['tool_calls']} tool calls, "
            f"{measured['frames_received']}/{measured['frames_sent']} frames delivered"),
    ]
    first, last = statistics.median(by_position[:10]), statistics.median(by_position[-10:])
    result.figures.update({"turn_p50_ms_by_position": [round(t, 2) for t in by_position],
                           "turns_31_40_vs_1_10_ratio": ratio(last, first)})
    result.rows.insert(2, Row("turns 31-40 vs 1-10", f"{last:.1f} ms", f"{first:.1f} ms",
                              fmt_ratio(ratio(last, first)),
                              f"p50 by position over {conversations} conversations of {LONG_CONVERSATION_TURNS} "
                              "turns (flat: about 1.0x)"))
    if peer:
        _peer_figures(result, counts, timings, peer)
    if unpooled:
        p50, p99 = percentile(unpooled, 0.5), percentile(unpooled, 0.99)
        result.figures.update({"unpooled_turn_p50_ms": round(p50, 2), "unpooled_turn_p99_ms": round(p99, 2),
                               "unpooled_overhead_p50_ratio": ratio(p50, floor_p50)})
        result.rows.insert(2, Row("turn p50 without the pool", f"{p50:.1f} ms", f"{floor_p50:.1f} ms",
                                  fmt_ratio(ratio(p50, floor_p50)),
                                  f"p99 {p99:.1f} ms; same turns, a new PostgreSQL connection per hop"))
    if errors:
        result.status = "failed"
        result.reason = f"{errors} turn(s) without the expected reply, or frames not delivered"
    return result
