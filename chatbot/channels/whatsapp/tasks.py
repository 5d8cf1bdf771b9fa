"""WhatsApp's Celery task: sending one stored reply. Its name is the one queued and stored before the channels
were packages ("chatbot.tasks.deliver_whatsapp_message")."""

from celery import shared_task

from chatbot.channels import outbound
from chatbot.channels.whatsapp.client import WhatsAppClient, configured
from chatbot.channels.whatsapp.sender import WhatsAppSender
from crm.external.tasks import ExternalTask


@shared_task(base=ExternalTask, bind=True, name="chatbot.tasks.deliver_whatsapp_message")
def deliver_whatsapp_message(self, message_id: int) -> str:
    """Send one stored reply through the WhatsApp Cloud API (idempotent: see chatbot.channels.outbound)."""
    if not configured():
        return "skipped: WhatsApp is not configured"
    return outbound.deliver_with(WhatsAppClient, WhatsAppSender, message_id)
