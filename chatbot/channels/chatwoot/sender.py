"""Replies out to Chatwoot: a stored reply as Chatwoot messages, posted exactly once (chatbot.channels.outbound)."""

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext

from chatbot import handoff
from chatbot.channels.chatwoot.client import BOT_STATUS, SYSTEM, ChatwootClient, split_external_id
from chatbot.channels.outbound import NotCheckable, Sender, Skip, choice_options, reply_text
from chatbot.language import ENGLISH
from chatbot.models import Conversation, Message

MAX_SELECT_TEXT = 1000  # longer replies go out as text, then the options with a short prompt


def template_body(text: str, template: dict) -> dict:
    """A WhatsApp template through Chatwoot (`template_params`; the placeholders {{1}}, {{2}} ... as
    `processed_params.body`); `content` is what the conversation shows."""
    return {
        "content": text,
        "template_params": {
            "name": template["name"],
            "category": template.get("category") or "UTILITY",
            "language": template["language"],
            "processed_params": {
                "body": {str(index): str(value) for index, value in enumerate(template.get("parameters") or [], 1)}
            },
        },
    }


def reply_bodies(message: Message) -> list[dict]:
    """The Chatwoot messages for one reply: slot buttons become an `input_select` with readable titles.

    On WhatsApp a tapped option comes back as a new message whose text is its
    *title*, so titles are the slot itself ("Wed 25 Nov, 09:00"), unique, and
    within WhatsApp's 20-character button limit; the value is the canonical
    "Wednesday 2026-11-25 at 09:00" (the web widget sends that back).
    """
    text = reply_text(message)
    plain = {"content": text, "message_type": "outgoing", "private": False}
    options = choice_options(message, max_items=10, title_max=20)
    if not options:
        return [plain]
    select = {
        **plain,
        "content_type": "input_select",
        "content_attributes": {"items": [{"title": title, "value": value} for title, value in options]},
    }
    if len(text) > MAX_SELECT_TEXT:
        with translation.override(message.language or ENGLISH):
            return [plain, {**select, "content": gettext("Please choose one:")}]
    return [select]


class ChatwootSender(Sender):
    system = SYSTEM

    def __init__(self, client: ChatwootClient) -> None:
        self.client = client

    def bodies(self, message: Message) -> list[dict]:
        template = message.payload.get("template")
        return [template_body(message.text, template)] if template else reply_bodies(message)

    def gate(self, conversation: Conversation) -> None:
        account, number = split_external_id(conversation.external_id)
        status = self.client.conversation_status(account, number)
        if status != BOT_STATUS:
            if status in ("open", "snoozed"):
                handoff.hand_off(conversation, f"the conversation is {status} in Chatwoot", reopen_platform=False)
            raise Skip(f"the Chatwoot conversation is {status or 'unknown'}, not {BOT_STATUS}")

    def post(self, conversation: Conversation, body: dict) -> str:
        account, number = split_external_id(conversation.external_id)
        return self.client.post_message(account, number, body)

    def reconcile(self, conversation: Conversation, body: dict, claimed_at) -> str | None:
        if not settings.CHATWOOT_USER_TOKEN:
            raise NotCheckable
        account, number = split_external_id(conversation.external_id)
        since = (claimed_at.timestamp() if claimed_at else 0) - 120
        for item in reversed(self.client.list_messages(account, number)):
            outgoing = item.get("message_type") in (1, "outgoing")
            if outgoing and item.get("content") == body.get("content") and (item.get("created_at") or 0) >= since:
                return str(item.get("id"))
        return None
