"""The tools (seed 000's seven names and shapes, the waitlist's two, open days): thin adapters from a model's strings
to typed services.

Each tool is a plain function whose typed signature and docstring become the
schema the model sees (langchain-core), so the contract is written once. The
conversation a call belongs to comes from `current_context`, set by the loop.
Tools validate everything and answer with a JSON-able dict; they never raise.

One module per job: the tools that belong together (`availability`; `booking`: a tour booked, moved or
cancelled, and open days; `callbacks`, `corrections`, `waitlist`, `faq`, `unread`), what they share (`context`,
`intake`, `results`, `readback`), and `registry`: the tools by name, their schemas and how one call runs. Every
public name is importable from here, as before the split.
"""

from chatbot.agent.tools.availability import check_availability
from chatbot.agent.tools.booking import OPEN_DAY_TASK, book_tour, check_open_days, manage_tour_booking
from chatbot.agent.tools.callbacks import manage_callback, request_callback
from chatbot.agent.tools.context import ToolContext, current_context
from chatbot.agent.tools.corrections import update_context
from chatbot.agent.tools.faq import get_faq_answer
from chatbot.agent.tools.registry import (
    READ_ONLY_TOOLS,
    TOOL_TIMEOUT_SECONDS,
    TOOLS,
    all_schemas,
    execute,
    parse_arguments,
)
from chatbot.agent.tools.results import MAX_SLOTS_SHOWN
from chatbot.agent.tools.unread import check_unread_messages, take_unread
from chatbot.agent.tools.waitlist import answer_seat_offer, join_waitlist

__all__ = [
    "MAX_SLOTS_SHOWN",
    "OPEN_DAY_TASK",
    "READ_ONLY_TOOLS",
    "TOOLS",
    "TOOL_TIMEOUT_SECONDS",
    "ToolContext",
    "all_schemas",
    "answer_seat_offer",
    "book_tour",
    "check_availability",
    "check_open_days",
    "check_unread_messages",
    "current_context",
    "execute",
    "get_faq_answer",
    "join_waitlist",
    "manage_callback",
    "manage_tour_booking",
    "parse_arguments",
    "request_callback",
    "take_unread",
    "update_context",
]


def __getattr__(name: str):
    if name == "TOOL_SCHEMAS":
        return all_schemas()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
