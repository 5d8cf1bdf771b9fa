"""Who the tools act for during one turn: the context the loop sets before each call."""

import contextvars
import datetime as dt
from dataclasses import dataclass, field

from bookings import services as bookings
from bookings.models import School
from chatbot.agent import memory
from chatbot.models import Conversation
from crm.models import Contact


@dataclass
class ToolContext:
    """Who the tools act for, during one turn."""

    school: School
    contact: Contact
    conversation: Conversation
    active: memory.ActiveContext
    history: list[str] = field(default_factory=list)
    turn_message_ids: set[int] = field(default_factory=set)
    now: dt.datetime | None = None
    # The turn's claim: the `processed_at` it set on each message it took. Its reply is stored only while every
    # one still holds (`chatbot.hotpath.finish_turn`): a turn taken over after its lease lapsed stores nothing.
    claims: dict[int, dt.datetime] = field(default_factory=dict)

    @property
    def today(self) -> dt.date:
        return bookings.local_now(self.school, self.now).date()


current_context: contextvars.ContextVar[ToolContext] = contextvars.ContextVar("tool_context")


def _ctx() -> ToolContext:
    return current_context.get()
