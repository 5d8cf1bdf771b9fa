"""How a channel hears about a turn: typing, reasoning steps, queued notices, the reply.

Each channel (web chat, Chatwoot, WhatsApp, terminal) has one observer, in its registry entry
(chatbot.channels.registry); the turn runner calls it for the conversation's channel, wherever the turn runs.
"""

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

