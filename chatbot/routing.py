from django.urls import path

from chatbot.channels.web import WebChatConsumer

websocket_urlpatterns = [
    path("ws/chat/<slug:school_slug>/", WebChatConsumer.as_asgi()),
]
