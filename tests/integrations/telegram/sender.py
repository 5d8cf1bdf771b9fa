"""The Bot API (`POST {TELEGRAM_API_URL}/sendMessage`) and a stored reply as its messages: text, with the slot
buttons as an inline keyboard."""

from django.conf import settings

from chatbot.channels.outbound import Sender, choice_options, reply_text
from chatbot.models import Conversation, Message
from crm.external.http import ApiClient, call, make_client

SYSTEM = "telegram"


def configured() -> bool:
    return bool(getattr(settings, "TELEGRAM_API_URL", ""))


class TelegramClient(ApiClient):
    def __init__(self) -> None:
        self.http = make_client(settings.TELEGRAM_API_URL, {})

    def send_message(self, body: dict) -> str:
        return str(call(self.http, SYSTEM, "POST", "/sendMessage", json=body).json()["result"]["message_id"])


class TelegramSender(Sender):
    system = SYSTEM

    def __init__(self, client: TelegramClient) -> None:
        self.client = client

    def bodies(self, message: Message) -> list[dict]:
        body = {"chat_id": message.conversation.external_id, "text": reply_text(message)}
        options = choice_options(message, max_items=10, title_max=64)
        if options:
            body["reply_markup"] = {"inline_keyboard": [[{"text": title, "callback_data": value[:64]}]
                                                        for title, value in options]}
        return [body]

    def post(self, conversation: Conversation, body: dict) -> str:
        return self.client.send_message(body)
