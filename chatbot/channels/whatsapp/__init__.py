"""The WhatsApp Cloud API channel (direct, without Chatwoot): webhook in, Graph API out.

`inbound.py` reads a delivery's messages, `webhook.py` is its endpoint, `client.py` the Graph API, `sender.py` a
reply as WhatsApp messages (buttons, lists, templates), `observer.py` what a turn does there, `tasks.py` the
Celery task that sends. There is no staff inbox behind it: a handoff is seen in the admin.
"""

from django.urls import path

from chatbot.channels.registry import ChannelSpec, Delivery
from chatbot.channels.whatsapp.client import WhatsAppClient, configured
from chatbot.channels.whatsapp.observer import WhatsAppObserver
from chatbot.channels.whatsapp.sender import WhatsAppSender
from chatbot.channels.whatsapp.tasks import deliver_whatsapp_message
from chatbot.channels.whatsapp.webhook import whatsapp_webhook
from chatbot.models import Channel
from chatbot.reminders.models import SentReminder

CHANNEL = ChannelSpec(
    name=Channel.WHATSAPP,
    observer=WhatsAppObserver(),
    staffed=True,
    swept=True,
    messaging_window=True,
    delivery=Delivery(
        configured=configured,
        client=WhatsAppClient,
        sender=WhatsAppSender,
        task=deliver_whatsapp_message,
        text_via=SentReminder.Via.WHATSAPP_TEXT,
        template_via=SentReminder.Via.WHATSAPP_TEMPLATE,
    ),
    urls=(path("webhooks/whatsapp/", whatsapp_webhook, name="whatsapp_webhook"),),
)
