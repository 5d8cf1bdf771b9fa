"""How a channel hears about a turn: typing, reasoning steps, queued notices, the reply.

Each channel (web chat, Chatwoot, WhatsApp, terminal) registers one observer;
the turn runner calls it for the conversation's channel, wherever the turn runs.
"""

from importlib import import_module

from chatbot.models import Conversation, Message


class TurnObserver:
    """Does nothing by default; channels override what they can show."""

    shows_drafts = False  # the answer's text as a hosted model writes it (`draft`): the web chat only

    async def typing(self, conversation: Conversation, active: bool) -> None:
        return None

    async def step(self, conversation: Conversation, step: dict) -> None:
        return None

    async def steps(self, conversation: Conversation, steps: list[dict]) -> None:
        """The reasoning steps of one tool cycle, stored together; by default one `step` each."""
        for step in steps:
            await self.step(conversation, step)

    async def draft(self, conversation: Conversation, frame: dict) -> None:
        """A frame of the answer's draft (`chatbot.agent.drafts`), for a channel that `shows_drafts`."""
        return None

    async def queued(self, conversation: Conversation, message: Message) -> None:
        return None

    async def reply(self, conversation: Conversation, message: Message) -> None:
        return None

    def reply_lookup(self, conversation: Conversation) -> tuple[bytes | str, int] | None:
        """A Redis sorted set the turn's last Redis step should read for the reply, after the reply is stored
        ((key, lowest score); `turn_reply` gets its members): one round trip less. None: nothing."""
        return None

    async def turn_reply(self, conversation: Conversation, message: Message, steps: list[dict],
                         looked_up: list[str] | None = None, draft: str = "") -> None:
        """A turn's end: its last steps, typing off, its reply (`looked_up`: what `reply_lookup` asked for, if
        read; `draft`: what the reply is to the draft shown, `drafts.Draft.outcome`). A channel that can say all
        three at once overrides this; here each part is tried even when one before it failed (typing is best
        effort)."""
        failure: Exception | None = None
        for part in (lambda: self.steps(conversation, steps), lambda: self.typing(conversation, False),
                     lambda: self.reply(conversation, message)):
            try:
                await part()
            except Exception as exc:
                failure = failure or exc
        if failure is not None:
            raise failure

    def handed_off(self, conversation: Conversation, notice: Message | None, *, reopen_platform: bool) -> None:
        """Synchronous, after commit: the conversation went to staff (deliver `notice`, tell the platform)."""
        return None

    def session_ended(self, conversation: Conversation) -> None:
        """Synchronous, inside the ending transaction: e.g. queue a write-back of the persistent context."""
        return None


_observers: dict[str, TurnObserver] = {}
# Imported on first use, so every process (web, agent worker, Celery) finds these channels' observers.
_LAZY_MODULES = {"chatwoot": "chatbot.channels.chatwoot", "whatsapp": "chatbot.channels.whatsapp"}


def register_observer(channel: str, observer: TurnObserver) -> None:
    _observers[channel] = observer


def observer_for(channel: str) -> TurnObserver:
    if channel not in _observers and channel in _LAZY_MODULES:
        import_module(_LAZY_MODULES[channel])
    return _observers.get(channel) or TurnObserver()
