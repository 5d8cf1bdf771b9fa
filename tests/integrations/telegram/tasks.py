"""Sending one stored reply, exactly once (chatbot.channels.outbound)."""

from celery import shared_task

from chatbot.channels import outbound
from crm.external.tasks import ExternalTask
from tests.integrations.telegram.sender import TelegramClient, TelegramSender


@shared_task(base=ExternalTask, bind=True, name="tests.telegram.deliver_telegram_message")
def deliver_telegram_message(self, message_id: int) -> str:
    return outbound.deliver_with(TelegramClient, TelegramSender, message_id)
