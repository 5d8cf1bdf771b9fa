"""A turn's reply queued for the task that sends it (Telegram shows no reasoning steps)."""

from chatbot.channels.base import TurnObserver
from chatbot.channels.outbound import queue_task
from chatbot.models import Conversation, Message
from plumbing.hops import database_hop
from tests.integrations.telegram.tasks import deliver_telegram_message


class TelegramObserver(TurnObserver):
    async def reply(self, conversation: Conversation, message: Message) -> None:
        await database_hop(queue_task)(deliver_telegram_message, message.pk)
