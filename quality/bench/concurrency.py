"""concurrency: N parents chatting at the same time against the web server, with a model that takes 1 s.

For N = 50, 200, 500: a fresh web server as the Procfile runs it (uvicorn with `--web-processes` workers,
default WEB_CONCURRENCY or 2, serving `quality.bench.asgi`, LLM_MODEL=benchslow/1s,
CHAT_BURST_WINDOW_SECONDS=0) on a free 127.0.0.1 port; N real websocket clients connect (each a new
visitor, so a contact of its own; the kernel spreads them over the workers), then all send one message at
the same instant. The figure is the wall
time until the last reply arrived, divided by the model's own 1 s: 1.0 would mean the process adds nothing
and runs every turn in parallel. Errors (refused, dropped, wrong or missing replies) must be 0.
"""

import asyncio
import time

from asgiref.sync import async_to_sync

from quality.bench.clients import ChatClient, close_all, open_many
from quality.bench.common import (
    Context,
    Result,
    Row,
    Uvicorn,
    bench_school,
    percentile,
    raise_open_files_limit,
    server_env,
    servers,
)

NAME = "concurrency"
TITLE = "Concurrent web chats, 1 s model, the Procfile's web server"
WARM_UP_SOCKETS_PER_PROCESS = 4


def reply_timeout(sockets: int, delay: float) -> float:
    return delay + 30 + sockets * 0.25


async def warm_up(server: Uvicorn, slug: str, delay: float) -> None:
    """Whole turns first, several at once so every worker gets some (the kernel hands each new connection to
    whichever accepts first): no round pays a process's cold start (imports, tokenizer, first queries)."""
    clients = [ChatClient(f"{server.ws_base}/ws/chat/{slug}/", server.origin)
               for _ in range(WARM_UP_SOCKETS_PER_PROCESS * server.workers)]
    try:
        await asyncio.gather(*(client.open() for client in clients))
        await asyncio.gather(*(client.send({"type": "message", "text": "warming up", "client_id": f"warm-up-{i}"})
                               for i, client in enumerate(clients)))
        for client in clients:
            if not await client.wait_for(lambda frames, client=client: client.replies(), delay + 60):
                raise RuntimeError(f"a warm-up turn got no reply: {client.error or client.frames[-3:]}")
    finally:
        await close_all(clients)


async def _round(ctx: Context, server: Uvicorn, slug: str, sockets: int, delay: float) -> dict:
    url = f"{server.ws_base}/ws/chat/{slug}/"
    await warm_up(server, slug, delay)
    clients = [ChatClient(url, server.origin) for _ in range(sockets)]
    try:
        connect_started = time.monotonic()
        connect_errors = await open_many(clients, ctx.progress)
        connect_seconds = time.monotonic() - connect_started
        live = [(i, c) for i, c in enumerate(clients) if not c.error]
        ctx.progress.say(f"  {len(live)} sockets open in {connect_seconds:.1f} s; sending {len(live)} messages")
        started = time.monotonic()
        await asyncio.gather(*(c.send({"type": "message", "text": f"hello from socket {i}", "client_id": f"s{i}"})
                               for i, c in live))

        async def reply_of(i: int, client: ChatClient):
            found = await client.wait_for(lambda frames: client.replies(), reply_timeout(sockets, delay))
            return found[0] if found else None

        replies = await asyncio.gather(*(reply_of(i, c) for i, c in live))
        latencies, wrong, missing = [], 0, 0
        for (i, _), reply in zip(live, replies, strict=True):
            if reply is None:
                missing += 1
                continue
            at, frame = reply
            latencies.append(at - started)
            if frame.get("text") != f"Answered: hello from socket {i}":
                wrong += 1
        refused = sum(len(c.errors()) for _, c in live)
        dropped = sum(1 for _, c in live if c.error)
        return {
            "sockets": sockets,
            "connect_seconds": round(connect_seconds, 2),
            "wall_seconds": round(max(latencies), 3) if latencies else None,
            "p50_seconds": round(percentile(latencies, 0.5), 3),
            "p99_seconds": round(percentile(latencies, 0.99), 3),
            "replies": len(latencies),
            "errors": len(connect_errors) + missing + wrong + refused + dropped,
            "error_detail": {"connect": len(connect_errors), "missing": missing, "wrong": wrong,
                             "refused": refused, "dropped": dropped},
            "error_samples": (connect_errors + [c.error for _, c in live if c.error])[:3],
        }
    finally:
        await close_all(clients)


def run(ctx: Context) -> Result:
    options = ctx.options
    delay = options.slow_model_seconds
    result = Result(NAME, TITLE)
    raise_open_files_limit(4 * max(options.sockets) + 512)
    rounds = []
    for sockets in options.sockets:
        with bench_school(ctx, f"{NAME}-{sockets}") as school:
            env = server_env(BENCH_SLOW_MODEL="1", LLM_MODEL=f"benchslow/{delay:g}s", CHAT_BURST_WINDOW_SECONDS="0")
            ctx.progress.say(f"concurrency: {sockets} sockets, model {delay:g} s")
            with servers(Uvicorn(env, options.web_processes)) as (server,):
                measured = async_to_sync(_round)(ctx, server, school.slug, sockets, delay)
                measured["server_alive"] = server.alive()
                if measured["errors"] or not measured["server_alive"]:
                    server.keep_log = True
            # Counted once it has stopped: a socket that failed to close cleanly is an error no client sees.
            measured["server_tracebacks"] = server.tracebacks
            measured["errors"] += server.tracebacks
            if server.keep_log:
                measured["server_log"] = server.log.name
            rounds.append(measured)
            ctx.progress.say(f"  wall {measured['wall_seconds']} s, errors {measured['errors']}")
    result.figures = {"model_seconds": delay, "web_processes": options.web_processes, "rounds": rounds,
                      "errors": sum(r["errors"] for r in rounds)}
    for measured in rounds:
        wall = measured["wall_seconds"]
        result.figures[f"wall_ratio_{measured['sockets']}"] = round(wall / delay, 2) if wall else None
        result.rows.append(Row(
            f"{measured['sockets']} sockets: all replies", f"{wall:.2f} s" if wall else "none",
            f"{delay:g} s", f"{wall / delay:.2f}x" if wall else "n/a",
            f"p50 {measured['p50_seconds']:.2f} s, p99 {measured['p99_seconds']:.2f} s; errors {measured['errors']}; "
            f"connect {measured['connect_seconds']:.1f} s; {options.web_processes} web process(es)",
        ))
    if result.figures["errors"]:
        result.status = "failed"
        result.reason = f"{result.figures['errors']} error(s)"
    return result
