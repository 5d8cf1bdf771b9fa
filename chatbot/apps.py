from django.apps import AppConfig


class ChatbotConfig(AppConfig):
    name = "chatbot"
    verbose_name = "Conversations"

    def ready(self) -> None:
        from chatbot import outreach  # noqa: F401  (connects the waitlist's seat offers to the channels)
