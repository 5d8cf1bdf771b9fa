"""How WhatsApp hears about a turn: the reply (and a handoff notice) queued for the Celery task that sends it."""

from chatbot.channels.base import TurnObserver
from chatbot.channels.outbound import queue_task
from chatbot.channels.whatsapp.tasks import deliver_whatsapp_message
from chatbot.models import Conversation, Message
from plumbing.hops import database_hop


class WhatsAppObserver(TurnObserver):
    async def reply(self, conversation: Conversation, message: Message) -> None:
        await database_hop(queue_task)(deliver_whatsapp_message, message.pk)

    def handed_off(self, conversation: Conversation, notice: Message | None, *, reopen_platform: bool) -> None:
        if notice is not None:  # no staff inbox here: the admin shows the conversation as handed off
            queue_task(deliver_whatsapp_message, notice.pk)
