from django.apps import AppConfig
from django.conf import settings


class ChatbotConfig(AppConfig):
    name = "chatbot"
    verbose_name = "Conversations"

    def ready(self) -> None:
        # Imported once the models are (Django's app loading), as the signal receivers below.
        from chatbot import outreach  # noqa: F401  (connects the waitlist's seat offers to the channels)
        from chatbot.channels import registry

        registry.load(settings.CHAT_CHANNELS)  # every process knows every channel, its observer and its tasks
