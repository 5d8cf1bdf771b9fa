"""memory: what idle web chat sockets cost one daphne process.

A fresh daphne (`quality.bench.asgi`, the configured settings) serves one warm-up socket (connect, then
close), so the imports and first queries are paid; then VmRSS is read from /proc/<pid>/status, 500 sockets
connect (each a new visitor: contact, conversation, history frame) and stay idle, and VmRSS is read again
after a settling pause. Reported: the process's RSS with the sockets open, the growth, and the growth per
socket. The sockets are then held idle for 30 s and each is pinged: sockets the server closed meanwhile (or
that do not answer) are reported as dropped, and must be 0.
"""

import asyncio
import time

from asgiref.sync import async_to_sync

from quality.bench.clients import ChatClient, close_all, open_many
from quality.bench.common import (
    Context,
    Daphne,
    Result,
    Row,
    bench_school,
    raise_open_files_limit,
    server_env,
    servers,
)

NAME = "memory"
TITLE = "Memory of one daphne holding idle sockets"
SETTLE_SECONDS = 3.0
HOLD_SECONDS = 30.0
QUICK_HOLD_SECONDS = 2.0
PONG_TIMEOUT = 15.0


async def _measure(ctx: Context, server: Daphne, slug: str, sockets: int, hold: float) -> dict:
    url = f"{server.ws_base}/ws/chat/{slug}/"
    warm = ChatClient(url, server.origin)
    await warm.open()
    await warm.close()
    await asyncio.sleep(SETTLE_SECONDS)
    before_kb = server.rss_kb()
    clients = [ChatClient(url, server.origin) for _ in range(sockets)]
    try:
        started = time.monotonic()
        errors = await open_many(clients, ctx.progress, "idle sockets")
        connect_seconds = time.monotonic() - started
        await asyncio.sleep(SETTLE_SECONDS)
        after_kb = server.rss_kb()
        ctx.progress.say(f"  holding them idle for {hold:g} s")
        await asyncio.sleep(hold)
        open_clients = [c for c in clients if not c.error and not c.closed]
        await asyncio.gather(*(c.send({"type": "ping"}) for c in open_clients), return_exceptions=True)
        answered = await asyncio.gather(*(
            c.wait_for(lambda frames: any(f.get("type") == "pong" for _, f in frames), PONG_TIMEOUT)
            for c in open_clients))
        alive = sum(1 for a in answered if a)
        return {"before_kb": before_kb, "after_kb": after_kb, "connect_errors": len(errors),
                "connect_seconds": round(connect_seconds, 1), "alive": alive, "hold_seconds": hold,
                "dropped": sockets - len(errors) - alive,
                "error_samples": list(dict.fromkeys(errors + [c.error for c in clients if c.error]))[:3]}
    finally:
        await close_all(clients)


def run(ctx: Context) -> Result:
    sockets = ctx.options.idle_sockets
    result = Result(NAME, TITLE)
    raise_open_files_limit(4 * sockets + 512)
    with bench_school(ctx, NAME) as school:
        ctx.progress.say(f"memory: one daphne, {sockets} idle sockets")
        with servers(Daphne(server_env())) as (server,):
            hold = QUICK_HOLD_SECONDS if ctx.options.quick else HOLD_SECONDS
            measured = async_to_sync(_measure)(ctx, server, school.slug, sockets, hold)
            if measured["connect_errors"] or measured["dropped"]:
                server.keep_log = True
                measured["server_log"] = server.log.name
    before, after = measured["before_kb"], measured["after_kb"]
    growth_kb = after - before
    per_socket_kb = growth_kb / sockets
    errors = measured["connect_errors"] + measured["dropped"]
    result.figures = {
        "sockets": sockets,
        "rss_before_mb": round(before / 1024, 1),
        "rss_after_mb": round(after / 1024, 1),
        "growth_mb": round(growth_kb / 1024, 1),
        "per_socket_kb": round(per_socket_kb, 1),
        "connect_seconds": measured["connect_seconds"],
        "alive_at_end": measured["alive"],
        "errors": errors,
        **{k: v for k, v in measured.items()
           if k in ("connect_errors", "dropped", "error_samples", "server_log", "hold_seconds")},
    }
    result.rows = [
        Row(f"RSS with {sockets} idle sockets", f"{after / 1024:.1f} MB", f"{before / 1024:.1f} MB idle",
            f"{after / before:.2f}x" if before else "n/a", f"+{growth_kb / 1024:.1f} MB"),
        Row("per socket", f"{per_socket_kb:.1f} KB", "", "",
            f"{measured['alive']}/{sockets} answered a ping after {measured['hold_seconds']:g} s idle; "
            f"connect {measured['connect_seconds']} s"),
    ]
    if errors:
        result.status = "failed"
        result.reason = f"{measured['connect_errors']} connect error(s), {measured['dropped']} socket(s) dropped"
    return result
