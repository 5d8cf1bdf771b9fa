"""The tools by name, their schemas, and how one call runs: its arguments checked, in a database hop, within
TOOL_TIMEOUT_SECONDS, never raising."""

import asyncio
import inspect
import json
import logging
import threading
import time
from collections.abc import Callable

from bookings.services import BookingError
from chatbot.agent.tools.availability import check_availability
from chatbot.agent.tools.booking import book_tour, check_open_days, manage_tour_booking
from chatbot.agent.tools.callbacks import manage_callback, request_callback
from chatbot.agent.tools.context import ToolContext, _ctx, current_context
from chatbot.agent.tools.corrections import update_context
from chatbot.agent.tools.faq import get_faq_answer
from chatbot.agent.tools.results import _booking_error, _error
from chatbot.agent.tools.unread import check_unread_messages
from chatbot.agent.tools.waitlist import answer_seat_offer, join_waitlist
from chatbot.text import without_nul
from plumbing.hops import database_hop

logger = logging.getLogger(__name__)

TOOL_TIMEOUT_SECONDS = 20


TOOLS: dict[str, Callable[..., dict]] = {
    fn.__name__: fn
    for fn in (check_availability, book_tour, manage_tour_booking, request_callback, manage_callback, get_faq_answer,
               update_context, check_unread_messages, join_waitlist, answer_seat_offer, check_open_days)
}


def all_schemas() -> list[dict]:
    """`TOOL_SCHEMAS`: every tool, in TOOLS' order, offered on every model call of every conversation (a tool that
    cannot apply says why when called; one stable list lets a provider cache the prompt's prefix). Built on first
    use: it needs langchain-core, which takes about a second to import
    (a serving process builds them at start-up: `chatbot.warmup`)."""
    if "TOOL_SCHEMAS" not in globals():
        from langchain_core.utils.function_calling import convert_to_openai_tool

        globals()["TOOL_SCHEMAS"] = [convert_to_openai_tool(fn) for fn in TOOLS.values()]
    return globals()["TOOL_SCHEMAS"]


# Tools that only read: the active task they change (the slots shown) is saved with the turn's end. After any
# other tool it is saved at once: a turn that fails after booking is tried again knowing what was booked.
READ_ONLY_TOOLS = frozenset({"check_availability", "check_open_days", "get_faq_answer"})


class _Then:
    """What runs in a tool's hop right after it (`execute(then=...)`), and the hand-shake with a timeout: a tool
    past TOOL_TIMEOUT_SECONDS goes on in its thread, so either `then` never runs (the caller gave up first and
    answers with a timeout error), or the caller waits for it and takes the tool's own result: never both."""

    def __init__(self, then: Callable[[dict, int], None]) -> None:
        self.then = then
        self.lock = threading.Lock()
        self.state = "waiting"  # -> "running" (in the hop) or "abandoned" (by the caller)
        self.done = threading.Event()
        self.result: dict | None = None

    def __call__(self, result: dict, latency_ms: int) -> None:
        with self.lock:
            if self.state == "abandoned":
                return
            self.state = "running"
        try:
            self.then(result, latency_ms)
            self.result = result
        finally:
            self.done.set()

    def abandon(self) -> bool:
        """Give up on the tool: True if `then` will never run; False if it has begun (wait for `done`)."""
        with self.lock:
            if self.state == "waiting":
                self.state = "abandoned"
            return self.state == "abandoned"


def _run_tool(name: str, arguments: dict, then: _Then | None = None) -> dict:
    started = time.perf_counter()
    try:
        result = TOOLS[name](**arguments)
    except BookingError as exc:
        result = _booking_error(exc)
    except Exception:  # a tool must answer, never crash the turn
        logger.exception("tool %s failed", name)
        result = _error("Something went wrong on our side while doing that. Please try again in a moment.")
    if name not in READ_ONLY_TOOLS:
        _ctx().active.save()
    if then is not None:
        then(result, int((time.perf_counter() - started) * 1000))
    return result


def parse_arguments(name: str, raw: str | dict | None) -> tuple[dict | None, dict | None]:
    """(arguments, None) when the call can run, else (None, an error result for the model)."""
    if name not in TOOLS:
        return None, _error(f"There is no tool called “{name}”. Available: {', '.join(TOOLS)}.")
    try:
        arguments = raw if isinstance(raw, dict) else json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        return None, _error(f"The arguments for {name} were not valid JSON ({exc.msg}). Send a JSON object.")
    if not isinstance(arguments, dict):
        return None, _error(f"The arguments for {name} must be a JSON object.")
    arguments = without_nul(arguments)
    params = inspect.signature(TOOLS[name]).parameters
    unknown = sorted(set(arguments) - set(params))
    if unknown:
        return None, _error(f"{name} has no argument(s) {', '.join(unknown)}. It takes: {', '.join(params)}.")
    missing = [p.name for p in params.values() if p.default is inspect.Parameter.empty and p.name not in arguments]
    if missing:
        return None, {"status": "missing_fields", "missing": missing,
                      "message": f"{name} needs {', '.join(missing)}."}
    return arguments, None


async def execute(name: str, raw_arguments: str | dict | None, ctx: ToolContext,
                  then: Callable[[dict, int], None] | None = None) -> tuple[dict | None, dict]:
    """Run one tool call for the model: (parsed arguments, result). Never raises, except what `then` raises.

    `then(result, milliseconds)` runs in the tool's own database hop, right after it (e.g. to store the
    result), only if the tool ran and its result is the one returned here: past TOOL_TIMEOUT_SECONDS the
    tool is given up (a timeout error) unless `then` has begun, in which case its end is waited for."""
    arguments, problem = parse_arguments(name, raw_arguments)
    if problem:
        return arguments, problem
    current_context.set(ctx)
    after = _Then(then) if then is not None else None
    try:
        result = await asyncio.wait_for(
            database_hop(_run_tool)(name, arguments, after), TOOL_TIMEOUT_SECONDS
        )
    except TimeoutError:
        result = _error(f"{name} took too long to answer. Please try again.")
        if after is not None and not after.abandon():  # `then` is under way in the tool's thread
            await asyncio.get_running_loop().run_in_executor(None, after.done.wait)
            if after.result is None:
                raise RuntimeError(f"storing what {name} did failed in its thread (see the log)") from None
            result = after.result
    return arguments, result
