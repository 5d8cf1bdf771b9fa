"""scale_out: two web processes and two Celery workers sharing one PostgreSQL and one Redis.

100 contacts each open two sockets with the same visitor token (so the same contact and conversation),
one to each daphne, and send 5 messages alternating between them (each after the previous one's `ack`).
Half the pauses are shorter than the model's 1 s, so the message arrives while a turn runs (possibly in the
other process) and is queued or taken in; half are longer, so the other process runs the next turn itself.
The model (`benchslow/1s`) echoes the parent messages of each turn and records its span (start, end, pid)
in a Redis list. Then:

- exactly once: every message appears in exactly one stored reply. The echo answers what the prompt presents
  as new (the user messages after the last assistant message), so a message that a later turn's prompt
  shows again as unanswered is counted as answered again;
- order: per contact, the replies answer the messages in the order they were sent;
- no overlap: per contact, no two model calls' spans overlap (one turn at a time across both processes);
- delivery: every socket of a contact received every reply, whichever process ran the turn.

Web chat turns run in the daphne processes; the Celery workers take the project's background tasks
(CRM sync, outbound sends) from the same Redis broker and answer a ping at the end.
Violations of each kind must be 0. Needs PostgreSQL and Redis (skipped otherwise).
"""

import asyncio
import json
import random
import re
import time
from collections import Counter, defaultdict

from asgiref.sync import async_to_sync

from quality.bench.clients import ChatClient, close_all, open_many
from quality.bench.common import (
    CeleryWorker,
    Context,
    Daphne,
    Result,
    Row,
    Skip,
    bench_school,
    has_real_redis,
    is_postgres,
    raise_open_files_limit,
    server_env,
    servers,
)
from quality.bench.models import SPANS_KEY_VARIABLE

NAME = "scale_out"
TITLE = "Two web processes + two Celery workers, one contact across both"
TAG = re.compile(r"\bc(\d+)-m(\d+)\b")
ACK_TIMEOUT = 30.0
REPLY_GRACE_SECONDS = 120.0


def _tag(contact: int, message: int) -> str:
    return f"c{contact}-m{message}"


def _tags(text: str) -> list[tuple[int, int]]:
    return [(int(c), int(m)) for c, m in TAG.findall(text or "")]


async def _contact(ctx: Context, index: int, pair: tuple[ChatClient, ChatClient], messages: int, delay: float,
                   rng: random.Random) -> dict:
    """Send the contact's messages alternately on its two sockets; wait until both saw every answer."""
    outcome = {"sent": 0, "ack_timeouts": 0, "refused": 0}
    for k in range(messages):
        client = pair[(k + index) % 2]  # half the contacts start on each server
        client_id = f"b{index}m{k}"
        await client.send({"type": "message", "text": f"{_tag(index, k)} hello", "client_id": client_id})
        outcome["sent"] += 1
        acked = await client.wait_for(
            lambda frames, cid=client_id: any(f.get("client_id") == cid and f.get("type") in ("ack", "error")
                                              for _, f in frames), ACK_TIMEOUT)
        if not acked:
            outcome["ack_timeouts"] += 1
        # Half the pauses are shorter than a turn (the message joins or queues behind the running turn, maybe on
        # the other process), half longer (the other process starts a fresh turn).
        await asyncio.sleep(rng.uniform(0, 0.6 * delay) if rng.random() < 0.5 else rng.uniform(1.2 * delay, 2 * delay))
    expected = {(index, k) for k in range(messages)}

    def covered(client: ChatClient):
        seen = {tag for _, frame in client.replies() for tag in _tags(frame.get("text", ""))}
        return expected <= seen

    deadline = delay * messages * 2 + REPLY_GRACE_SECONDS
    for client in pair:
        await client.wait_for(lambda frames, c=client: covered(c), deadline)
    outcome["refused"] = sum(len(c.errors()) for c in pair)
    outcome["covered"] = lambda: all(covered(c) for c in pair)  # checked again once every contact is done
    return outcome


async def _drive(ctx: Context, server_a: Daphne, server_b: Daphne, slug: str, contacts: int, messages: int,
                 delay: float, seed: int) -> dict:
    firsts = [ChatClient(f"{server_a.ws_base}/ws/chat/{slug}/", server_a.origin) for _ in range(contacts)]
    seconds: list[ChatClient] = []
    try:
        errors = await open_many(firsts, ctx.progress, "first sockets (server A)")
        seconds = [ChatClient(f"{server_b.ws_base}/ws/chat/{slug}/?visitor={c.session.get('visitor_token', '')}",
                              server_b.origin) for c in firsts]
        errors += await open_many(seconds, ctx.progress, "second sockets (server B)")
        same_conversation = sum(1 for a, b in zip(firsts, seconds, strict=True)
                                if a.session and b.session and a.session["conversation_id"] ==
                                b.session["conversation_id"])
        ctx.progress.say(f"  {contacts} contacts x {messages} messages across both servers")
        started = time.monotonic()
        rng = random.Random(seed)
        outcomes = await asyncio.gather(*(
            _contact(ctx, i, (a, b), messages, delay, random.Random(rng.random()))
            for i, (a, b) in enumerate(zip(firsts, seconds, strict=True)) if not a.error and not b.error))
        wall = time.monotonic() - started
        for outcome in outcomes:  # a reply that came after its contact stopped waiting still counts
            outcome["delivered_everywhere"] = outcome.pop("covered")()
        dropped = sum(1 for c in firsts + seconds if c.error)
        return {"connect_errors": len(errors), "same_conversation": same_conversation, "outcomes": outcomes,
                "wall_seconds": round(wall, 2), "dropped": dropped,
                "error_samples": [c.error for c in firsts + seconds if c.error][:3]}
    finally:
        await close_all(firsts + seconds)


def _stored(school) -> dict[int, list[tuple[int, int]]]:
    """Per contact (bench index), the message tags answered by each stored reply, in reply order."""
    from chatbot.models import Message

    answered: dict[int, list[tuple[int, int]]] = defaultdict(list)
    replies = (Message.objects.filter(conversation__school=school, role=Message.Role.ASSISTANT)
               .order_by("created_at", "id").values_list("text", flat=True))
    for text in replies:
        for contact, message in _tags(text):
            answered[contact].append((contact, message))
    return answered


def _spans(key: str) -> list[dict]:
    from plumbing.redis import get_redis

    client = get_redis()
    spans = [json.loads(raw) for raw in client.lrange(key, 0, -1)]
    client.delete(key)
    return spans


def _overlaps(spans: list[dict]) -> tuple[int, Counter]:
    by_contact: dict[int, list[tuple[float, float]]] = defaultdict(list)
    by_pid: Counter = Counter()
    for span in spans:
        by_pid[span["pid"]] += 1
        contacts = {c for text in span["texts"] for c, _ in _tags(text)}
        for contact in contacts:
            by_contact[contact].append((span["start"], span["end"]))
    overlaps = 0
    for items in by_contact.values():
        items.sort()
        overlaps += sum(1 for (_, end), (start, _) in zip(items, items[1:], strict=False) if start < end)
    return overlaps, by_pid


def _celery_ping() -> int:
    from config.celery import app

    try:
        return len(app.control.ping(timeout=3.0) or [])
    except Exception:  # the broker refused: no worker answered
        return 0


def run(ctx: Context) -> Result:
    if not (is_postgres() and has_real_redis()):
        raise Skip("needs PostgreSQL (DATABASE_URL) and Redis (REDIS_URL): several processes share them")
    options = ctx.options
    contacts, messages, delay = options.contacts, options.messages_per_contact, options.slow_model_seconds
    result = Result(NAME, TITLE)
    raise_open_files_limit(4 * contacts + 512)
    spans_key = f"bench:spans:{ctx.run_id}"
    with bench_school(ctx, NAME) as school:
        env = server_env(BENCH_SLOW_MODEL="1", LLM_MODEL=f"benchslow/{delay:g}s", CHAT_BURST_WINDOW_SECONDS="0",
                         **{SPANS_KEY_VARIABLE: spans_key})
        processes = (Daphne(env, "daphne-a"), Daphne(env, "daphne-b"),
                     CeleryWorker(env, f"bench-{ctx.run_id}-1"), CeleryWorker(env, f"bench-{ctx.run_id}-2"))
        ctx.progress.say(f"scale_out: 2 daphne + 2 Celery workers; {contacts} contacts x {messages} messages")
        with servers(*processes) as (server_a, server_b, *workers):
            driven = async_to_sync(_drive)(ctx, server_a, server_b, school.slug, contacts, messages, delay,
                                           options.seed)
            celery_answers = _celery_ping()
            alive = sum(1 for p in processes if p.alive())
            time.sleep(0.5)  # a last span being written
            spans = _spans(spans_key)
            answered = _stored(school)
            problems = driven["connect_errors"] + driven["dropped"] or alive < len(processes)
            if problems:
                for process in processes:
                    process.keep_log = True
    expected = {i: [(i, k) for k in range(messages)] for i in range(contacts)}
    flat = Counter(tag for tags in answered.values() for tag in tags)
    missing = sum(1 for tags in expected.values() for tag in tags if flat[tag] == 0)
    duplicates = sum(count - 1 for count in flat.values() if count > 1)
    first_answers = {i: list(dict.fromkeys(tags)) for i, tags in answered.items()}
    out_of_order = sum(1 for tags in first_answers.values() if tags != sorted(tags))
    overlaps, by_pid = _overlaps(spans)
    outcomes = driven["outcomes"]
    undelivered = sum(1 for o in outcomes if not o["delivered_everywhere"])
    ack_timeouts = sum(o["ack_timeouts"] for o in outcomes)
    refused = sum(o["refused"] for o in outcomes)
    replies_total = sum(len(set(tags)) for tags in answered.values())
    violations = missing + duplicates + out_of_order + overlaps + undelivered
    errors = driven["connect_errors"] + driven["dropped"] + ack_timeouts + refused
    result.figures = {
        "contacts": contacts,
        "messages_per_contact": messages,
        "messages_sent": sum(o["sent"] for o in outcomes),
        "messages_answered": replies_total,
        "missing": missing,
        "answered_again": duplicates,
        "out_of_order_contacts": out_of_order,
        "overlapping_turns": overlaps,
        "contacts_not_delivered_on_both_sockets": undelivered,
        "violations": violations,
        "errors": errors,
        "connect_errors": driven["connect_errors"],
        "dropped_sockets": driven["dropped"],
        "ack_timeouts": ack_timeouts,
        "refused": refused,
        "model_calls": len(spans),
        "model_calls_per_process": sorted(by_pid.values(), reverse=True),
        "same_conversation_on_both_servers": driven["same_conversation"],
        "celery_workers_answering": celery_answers,
        "processes_alive_at_end": alive,
        "wall_seconds": driven["wall_seconds"],
        "error_samples": driven["error_samples"],
    }
    if problems:
        result.figures["server_logs"] = [p.log.name for p in processes]
    result.rows = [
        Row("violations", str(violations), "0", "",
            f"missing {missing}, answered again {duplicates}, out of order {out_of_order}, overlapping turns "
            f"{overlaps}, contacts with a socket missing a reply {undelivered}"),
        Row("messages answered", f"{replies_total} / {contacts * messages}", "", "",
            f"{len(spans)} model calls, per process {sorted(by_pid.values(), reverse=True)}; "
            f"wall {driven['wall_seconds']:.1f} s"),
        Row("errors", str(errors), "0", "",
            f"connect {driven['connect_errors']}, dropped {driven['dropped']}, ack timeouts {ack_timeouts}, "
            f"refused {refused}; Celery workers answering {celery_answers}/2"),
    ]
    if violations or errors:
        result.status = "failed"
        result.reason = f"{violations} violation(s), {errors} error(s)"
    return result
