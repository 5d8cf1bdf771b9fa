"""How a channel hears about a turn: typing, reasoning steps, queued notices, the reply.

Each channel (web chat, Chatwoot, WhatsApp, terminal) registers one observer;
the turn runner calls it for the conversation's channel, wherever the turn runs.
"""

from chatbot.models import Conversation, Message


class TurnObserver:
    """Does nothing by default; channels override what they can show."""

    async def typing(self, conversation: Conversation, active: bool) -> None:
        return None

    async def step(self, conversation: Conversation, step: dict) -> None:
        return None

    async def queued(self, conversation: Conversation, message: Message) -> None:
        return None

    async def reply(self, conversation: Conversation, message: Message) -> None:
        return None


_observers: dict[str, TurnObserver] = {}


def register_observer(channel: str, observer: TurnObserver) -> None:
    _observers[channel] = observer


def observer_for(channel: str) -> TurnObserver:
    return _observers.get(channel) or TurnObserver()
