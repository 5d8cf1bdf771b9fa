"""A Telegram-like channel, as a newcomer would add one: this package and its registry entry, nothing else.

`inbound.py` reads the Bot API's updates (its webhook), `sender.py` is the Bot API client and a reply as its
messages, `observer.py` queues a reply's send, `tasks.py` sends it. tests/integrations/test_a_new_channel.py
registers it and runs a message end to end.
"""

from django.urls import path

from chatbot.channels.registry import ChannelSpec, Delivery
from tests.integrations.telegram.inbound import NAME, telegram_webhook
from tests.integrations.telegram.observer import TelegramObserver
from tests.integrations.telegram.sender import TelegramClient, TelegramSender, configured
from tests.integrations.telegram.tasks import deliver_telegram_message

CHANNEL = ChannelSpec(
    name=NAME,
    observer=TelegramObserver(),
    swept=True,
    delivery=Delivery(configured=configured, client=TelegramClient, sender=TelegramSender,
                      task=deliver_telegram_message),
    urls=(path("webhooks/telegram/<slug:school_slug>/", telegram_webhook, name="telegram_webhook"),),
)
