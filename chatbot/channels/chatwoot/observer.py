"""How Chatwoot hears about a turn: typing shown while it runs, the reply and the handoff queued as Celery tasks."""

import asyncio
import functools
import logging

from django.db import transaction

from chatbot.channels.base import TurnObserver
from chatbot.channels.chatwoot.client import ChatwootClient, configured, contacts_configured, split_external_id
from chatbot.channels.chatwoot.tasks import chatwoot_hand_off, chatwoot_push_contact_context, deliver_chatwoot_message
from chatbot.channels.outbound import queue_task
from chatbot.models import Conversation, Message
from plumbing.hops import database_hop

logger = logging.getLogger(__name__)

TYPING_TIMEOUT_SECONDS = 3.0  # a typing indicator that cannot be shown quickly is not worth waiting for


def _toggle_typing(external: str, active: bool) -> None:
    """Best effort: the indicator is cosmetic, so a failure is logged and the turn goes on."""
    try:
        account, conversation = split_external_id(external)
        with ChatwootClient(timeout=TYPING_TIMEOUT_SECONDS) as client:
            client.toggle_typing(account, conversation, active)
    except Exception as exc:
        logger.warning(
            "could not turn the typing indicator %s in Chatwoot conversation %s (%s: %s)",
            "on" if active else "off",
            external,
            type(exc).__name__,
            exc,
        )


# The last typing toggle per conversation: "off" waits for the "on" before it, so it can never overtake it
# and leave the parent looking at a bot that types forever.
_typing: dict[int, asyncio.Task] = {}


def _forget_typing(conversation_pk: int, task: asyncio.Task) -> None:
    if _typing.get(conversation_pk) is task:
        del _typing[conversation_pk]


async def _send_typing(previous: asyncio.Task | None, external: str, active: bool) -> None:
    if previous is not None:
        await asyncio.wait([previous])
    await asyncio.to_thread(_toggle_typing, external, active)


class ChatwootObserver(TurnObserver):
    async def typing(self, conversation: Conversation, active: bool) -> None:
        """Toggle Chatwoot's typing indicator in the background: the turn never waits for Chatwoot.

        Not a message, so not through the send ledger: a lost toggle is harmless, a repeated one too.
        """
        if not configured() or not conversation.external_id:
            return
        previous = _typing.get(conversation.pk)
        if previous is not None and (previous.done() or previous.get_loop() is not asyncio.get_running_loop()):
            previous = None
        task = asyncio.create_task(_send_typing(previous, conversation.external_id, active))
        _typing[conversation.pk] = task
        task.add_done_callback(functools.partial(_forget_typing, conversation.pk))

    async def reply(self, conversation: Conversation, message: Message) -> None:
        await database_hop(queue_task)(deliver_chatwoot_message, message.pk)

    def handed_off(self, conversation: Conversation, notice: Message | None, *, reopen_platform: bool) -> None:
        if notice is not None or reopen_platform:
            queue_task(chatwoot_hand_off, conversation.pk, notice.pk if notice else None, reopen_platform)

    def session_ended(self, conversation: Conversation) -> None:
        if contacts_configured():
            transaction.on_commit(lambda: queue_task(chatwoot_push_contact_context, conversation.pk))
