"""The peer's turn, run in the peer's own virtualenv: LangGraph's prebuilt ReAct agent, AsyncPostgresSaver.

The same turn as `turn_overhead`: a parent message, one `check_availability` tool call, a text answer, from a
zero-latency chat model; each thread (a parent) has TURNS_PER_THREAD turns, its state checkpointed in
PostgreSQL after every step, as the library is documented to be used (an AsyncConnectionPool with
autocommit, `prepare_threshold=0` and dict rows). The checkpoint tables live in a schema of their own
(`--schema`), created and dropped here, so the project's tables are never touched.

Prints one JSON object: per-turn milliseconds, and the round trips of a few counted turns
(`quality.bench.counting`, at psycopg's level like ours).
"""

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid

import psycopg
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.prebuilt import create_react_agent
from psycopg import sql
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from quality.bench.counting import Counts, RoundTrips

TURNS_PER_THREAD = 10
REPLY = "Here are the open tour slots. Which one suits you?"


class ZeroLatencyModel(BaseChatModel):
    """One check_availability call, then a text answer; answers at once (no thread, no waiting)."""

    @property
    def _llm_type(self) -> str:
        return "bench-zero"

    def bind_tools(self, tools, **kwargs):
        return self

    def _answer(self, messages) -> ChatResult:
        if messages and isinstance(messages[-1], ToolMessage):
            message = AIMessage(content=REPLY)
        else:
            message = AIMessage(content="", tool_calls=[
                {"name": "check_availability", "args": {}, "id": f"call_{uuid.uuid4().hex[:12]}"}])
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        return self._answer(messages)

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        return self._answer(messages)


@tool
async def check_availability() -> str:
    """The open tour slots."""
    return "Open tour slots: Monday 09:00, Monday 11:00, Tuesday 14:00."


async def _turns(dsn: str, schema: str, warmup: int, counting: int, timed: int) -> dict:
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row,
              "options": f"-c search_path={schema}"}
    async with AsyncConnectionPool(dsn, kwargs=kwargs, min_size=1, max_size=10, open=False) as pool:
        checkpointer = AsyncPostgresSaver(pool)
        await checkpointer.setup()
        agent = create_react_agent(ZeroLatencyModel(), [check_availability], checkpointer=checkpointer)
        run = uuid.uuid4().hex[:6]
        n = 0

        async def turn() -> float:
            nonlocal n
            config = {"configurable": {"thread_id": f"peer-{run}-{n // TURNS_PER_THREAD}"}}
            started = time.perf_counter()
            state = await agent.ainvoke({"messages": [("user", f"turn {n}: can we book a tour?")]}, config)
            took = (time.perf_counter() - started) * 1000
            if state["messages"][-1].content != REPLY:
                raise RuntimeError(f"unexpected answer: {state['messages'][-1].content!r}")
            n += 1
            return took

        for _ in range(warmup):
            await turn()
        per_turn: list[Counts] = []
        with RoundTrips(vendor="postgresql") as trips:
            for _ in range(counting):
                trips.reset()
                await turn()
                per_turn.append(trips.reset())
        timings = []
        shown = time.monotonic()
        for i in range(timed):
            timings.append(await turn())
            if i + 1 == timed or time.monotonic() - shown > 2:
                shown = time.monotonic()
                print(f"[peer {time.strftime('%H:%M:%S')}]   LangGraph turns: {i + 1}/{timed}", file=sys.stderr,
                      flush=True)
    names = Counts().as_dict()
    counts = {name: statistics.median(getattr(c, name) for c in per_turn) if per_turn else 0 for name in names}
    return {"timings_ms": timings, "per_turn": counts, "turns": n}


async def _main(args) -> dict:
    schema = sql.Identifier(args.schema)
    async with await psycopg.AsyncConnection.connect(args.dsn, autocommit=True) as admin:
        await admin.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
        try:
            return await _turns(args.dsn, args.schema, args.warmup, args.counting, args.turns)
        finally:
            await admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(schema))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--schema", required=True)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--counting", type=int, default=20)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(_main(args))))


if __name__ == "__main__":
    main()
