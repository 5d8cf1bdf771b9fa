"""streaming: how soon a parent reads a hosted model's answer in the web chat.

A local OpenAI-compatible stand-in (`quality.bench.standin`) writes a 60-word answer over 2 s, streamed as
server-sent events; a web server as the Procfile runs it (uvicorn, one process, LLM_MODEL=openai/standin with
LLM_API_BASE at the stand-in: litellm's own client, the real wire format) serves the chat; a real websocket
client opens it with `?protocol=3` and sends one message per turn, in a conversation of TURNS turns (the first
turn of a fresh process is reported apart: it pays the process's cold start).

Per turn: time to the first word (the first `reply_delta`, from sending), time to the whole reply (its
`message` frame), and checks: one reply per message, its text equal to the pieces shown and to the stored
message. The baseline is the same turns seen by a protocol-2 widget, which is sent no draft: the whole
reply at once, as every widget saw it before.
The bar: the first words within 0.6 s of sending.
"""

import asyncio
import statistics
import time

from asgiref.sync import async_to_sync

from chatbot.models import Message
from quality.bench.clients import ChatClient
from quality.bench.common import Context, Result, Row, Uvicorn, bench_school, server_env, servers
from quality.bench.standin import Say, StandIn

NAME = "streaming"
TITLE = "Web chat: first words of a hosted model's answer (60 words over 2 s)"
MODEL_SECONDS = 2.0
WORDS = 60
TURNS = 6
FIRST_WORDS_BAR_SECONDS = 0.6
REPLY_TIMEOUT = 60.0
ANSWER = " ".join(f"word{n}" if n % 10 else "Thanks!" for n in range(1, WORDS + 1))


def _reply(frames: list[tuple[float, dict]]) -> tuple[float, dict] | None:
    """The first assistant reply among these frames, with its arrival time."""
    return next(((at, f) for at, f in frames if f.get("type") == "message" and f.get("role") == "assistant"), None)


async def _turn(streamed: ChatClient, whole: ChatClient, index: int) -> dict:
    """One message from the streaming widget; both widgets (same visitor) see the turn."""
    before = (len(streamed.frames), len(whole.frames))
    sent = time.monotonic()
    await streamed.send(
        {"type": "message", "text": f"Question {index}: which days can we visit?", "client_id": f"q{index}"}
    )

    got = await streamed.wait_for(lambda frames: _reply(frames[before[0] :]), REPLY_TIMEOUT)
    seen = await whole.wait_for(lambda frames: _reply(frames[before[1] :]), REPLY_TIMEOUT)
    if not got or not seen:
        return {"error": f"no reply to message {index}"}
    frames = streamed.frames[before[0] :]
    pieces = [(at, f) for at, f in frames if f.get("type") == "reply_delta"]
    replies = [f for _, f in frames if f.get("type") == "message" and f.get("role") == "assistant"]
    return {
        "first_word": pieces[0][0] - sent if pieces else None,
        "whole": got[0] - sent,
        "whole_v2": seen[0] - sent,
        "shown": "".join(f["text"] for _, f in pieces),
        "reply": got[1],
        "replies": len(replies),
        "v2_draft_frames": sum(f.get("type", "").startswith("reply_") for _, f in whole.frames[before[1] :]),
    }


async def _conversation(server: Uvicorn, slug: str) -> list[dict]:
    streamed = ChatClient(f"{server.ws_base}/ws/chat/{slug}/?protocol=3", server.origin)
    await streamed.open()
    whole = ChatClient(f"{server.ws_base}/ws/chat/{slug}/?visitor={streamed.session['visitor_token']}", server.origin)
    await whole.open()
    try:
        turns = []
        for index in range(TURNS):
            turns.append(await _turn(streamed, whole, index))
            await asyncio.sleep(0.2)  # the turn's lock released: the next message starts a turn of its own
        return turns
    finally:
        await streamed.close()
        await whole.close()


def _stored(reply_ids: list[int]) -> dict[int, str]:
    return dict(Message.objects.filter(pk__in=reply_ids).values_list("pk", "text"))


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3) if values else 0.0


def run(ctx: Context) -> Result:
    result = Result(NAME, TITLE)
    with StandIn([Say(ANSWER, seconds=MODEL_SECONDS)]) as stand_in, bench_school(ctx, NAME) as school:
        # the burst windows as configured (CHAT_STREAMED_BURST_WINDOW_SECONDS): part of the wait a parent sees
        env = server_env(LLM_MODEL="openai/standin", LLM_API_BASE=stand_in.api_base, LLM_API_KEY="sk-local")
        ctx.progress.say(f"streaming: {TURNS} turns, a {WORDS}-word answer over {MODEL_SECONDS:g} s")
        with servers(Uvicorn(env, 1)) as (server,):
            turns = async_to_sync(_conversation)(server, school.slug)
        stored = _stored([t["reply"]["id"] for t in turns if "reply" in t])
    errors = [t["error"] for t in turns if "error" in t]
    for n, turn in enumerate(t for t in turns if "reply" in t):
        text = turn["reply"]["text"]
        if turn["replies"] != 1:
            errors.append(f"turn {n}: {turn['replies']} replies")
        if not (turn["shown"] == text == stored.get(turn["reply"]["id"]) == ANSWER):
            errors.append(f"turn {n}: the text shown, the reply and the stored message differ")
        if turn["v2_draft_frames"]:
            errors.append(f"turn {n}: a protocol-2 widget was sent draft frames")
    done = [t for t in turns if "reply" in t]
    warm = done[1:]
    first = [t["first_word"] for t in warm if t["first_word"] is not None]
    figures = {
        "model_seconds": MODEL_SECONDS,
        "words": WORDS,
        "turns": len(done),
        "cold_first_word_seconds": round(done[0]["first_word"] or 0, 3) if done else None,
        "cold_whole_seconds": round(done[0]["whole"], 3) if done else None,
        "first_word_seconds": _median(first),
        "first_word_max_seconds": round(max(first), 3) if first else None,
        "whole_seconds": _median([t["whole"] for t in warm]),
        "whole_v2_seconds": _median([t["whole_v2"] for t in warm]),
        "errors": errors,
    }
    figures["own_seconds"] = round(figures["whole_seconds"] - MODEL_SECONDS, 3)
    result.figures = figures
    result.rows = [
        Row(
            "first words (median of warm turns)",
            f"{figures['first_word_seconds']:.2f} s",
            f"{figures['whole_v2_seconds']:.2f} s",
            f"bar {FIRST_WORDS_BAR_SECONDS} s",
            f"max {figures['first_word_max_seconds']} s; baseline: a protocol-2 widget (the whole reply at once); "
            f"cold first turn {figures['cold_first_word_seconds']} s",
        ),
        Row(
            "whole reply (median of warm turns)",
            f"{figures['whole_seconds']:.2f} s",
            f"{MODEL_SECONDS:g} s model",
            f"+{figures['own_seconds']:.2f} s ours",
            f"cold first turn {figures['cold_whole_seconds']} s; errors {len(errors)}",
        ),
    ]
    if errors or not first or max(first) > FIRST_WORDS_BAR_SECONDS:
        result.status = "failed"
        result.reason = "; ".join(errors) or f"first words after {max(first or [0]):.2f} s"
    return result
