"""The Chatwoot channel: agent-bot events in, replies, typing and handoffs out through Chatwoot's REST API.

`inbound.py` reads the events, `webhook.py` is their endpoint, `client.py` Chatwoot's API, `sender.py` a reply as
Chatwoot messages, `observer.py` what a turn shows there, `tasks.py` the Celery tasks, `context.py` the contact's
custom attributes. Staff answer in Chatwoot's inbox: a parent can be handed to them (chatbot.handoff).
"""

from django.urls import path

from chatbot.channels.chatwoot.client import ChatwootClient, configured
from chatbot.channels.chatwoot.context import load_contact_context
from chatbot.channels.chatwoot.observer import ChatwootObserver
from chatbot.channels.chatwoot.sender import ChatwootSender
from chatbot.channels.chatwoot.tasks import deliver_chatwoot_message
from chatbot.channels.chatwoot.webhook import chatwoot_webhook
from chatbot.channels.registry import ChannelSpec, Delivery
from chatbot.models import Channel
from chatbot.reminders.models import SentReminder

CHANNEL = ChannelSpec(
    name=Channel.CHATWOOT,
    observer=ChatwootObserver(),
    staffed=True,
    swept=True,
    messaging_window=True,  # its parents write on WhatsApp through Chatwoot
    delivery=Delivery(
        configured=configured,
        client=ChatwootClient,
        sender=ChatwootSender,
        task=deliver_chatwoot_message,
        text_via=SentReminder.Via.CHATWOOT_TEXT,
        template_via=SentReminder.Via.CHATWOOT_TEMPLATE,
    ),
    session_start=load_contact_context,
    urls=(path("webhooks/chatwoot/<str:secret>/", chatwoot_webhook, name="chatwoot_webhook"),),
)
