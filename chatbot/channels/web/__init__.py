"""The web chat channel: the parent's websocket (`consumer.py`, protocol in docs/web-chat-protocol.md), its
abuse limits (`limits.py`). A turn's frames go straight to the visitor's sockets (`WebObserver`)."""

from django.urls import path

from chatbot.channels.registry import ChannelSpec
from chatbot.channels.web.consumer import WebChatConsumer, WebObserver
from chatbot.models import Channel

CHANNEL = ChannelSpec(
    name=Channel.WEB,
    observer=WebObserver(),
    swept=True,  # a turn dies with its process (a deploy, a crash); its reply reaches the socket through the layer
    websocket_urls=(path("ws/chat/<slug:school_slug>/", WebChatConsumer.as_asgi()),),
)
