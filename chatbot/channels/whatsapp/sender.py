"""Replies out to WhatsApp: a stored reply as Graph API messages, posted exactly once (chatbot.channels.outbound).

Slot choices go as reply buttons (up to 3, titles <= 20 chars) or a list (up to 10 rows, titles <= 24 chars),
everything else as text. A button's id is the canonical slot text ("Wednesday 2026-11-25 at 09:00"), and that is
what comes back as the parent's message when they tap it. Outside 24 hours of the parent's last message only an
approved template goes (`template_body`).
"""

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext, gettext_lazy

from chatbot.channels.outbound import Sender, choice_options, reply_text
from chatbot.channels.whatsapp.client import SYSTEM, WhatsAppClient
from chatbot.language import ENGLISH
from chatbot.models import Conversation, Message

TEXT_LIMIT = 4096
INTERACTIVE_BODY_LIMIT = 1024
LIST_BUTTON_LABEL = gettext_lazy("See times")  # WhatsApp: at most 20 characters


def _chunks(text: str, size: int) -> list[str]:
    text = text.strip()
    chunks = []
    while len(text) > size:
        cut = text.rfind("\n", 0, size)
        cut = cut if cut > size // 2 else text.rfind(" ", 0, size)
        cut = cut if cut > size // 2 else size
        chunks.append(text[:cut].strip())
        text = text[cut:].strip()
    return [*chunks, text] if text else chunks


def reply_bodies(message: Message, to: str) -> list[dict]:
    """Graph API message bodies for one reply: text, then the slot choice as buttons (<= 3) or a list."""
    base = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": to}
    text = reply_text(message) or "…"
    texts = [
        {**base, "type": "text", "text": {"preview_url": False, "body": chunk}} for chunk in _chunks(text, TEXT_LIMIT)
    ]
    options = choice_options(message, max_items=10, title_max=24)
    if not options:
        return texts
    with translation.override(message.language or ENGLISH):  # the reply's language
        parts, prompt = [], text
        if len(text) > INTERACTIVE_BODY_LIMIT:
            parts, prompt = texts, gettext("Please choose one:")
        if len(options) <= 3 and all(len(title) <= 20 for title, _ in options):
            action = {
                "buttons": [{"type": "reply", "reply": {"id": value[:256], "title": title}} for title, value in options]
            }
            interactive = {"type": "button", "body": {"text": prompt}, "action": action}
        else:
            rows = [{"id": value[:200], "title": title} for title, value in options]  # already <= 10, titles <= 24
            interactive = {
                "type": "list",
                "body": {"text": prompt},
                "action": {
                    "button": str(LIST_BUTTON_LABEL),
                    "sections": [{"title": gettext("Tour times"), "rows": rows}],
                },
            }
    return [*parts, {**base, "type": "interactive", "interactive": interactive}]


def template_body(template: dict, to: str) -> dict:
    """An approved template message, the only kind WhatsApp delivers outside 24 hours of the parent's last
    message: `template` is {"name", "language", "parameters": values of {{1}}, {{2}} ... in order}."""
    body: dict = {"name": template["name"], "language": {"code": template["language"]}}
    if template.get("parameters"):
        body["components"] = [
            {"type": "body", "parameters": [{"type": "text", "text": str(value)} for value in template["parameters"]]}
        ]
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "template",
        "template": body,
    }


def _route(conversation: Conversation) -> tuple[str, str]:
    phone_number_id, _, wa_id = conversation.external_id.partition(":")
    return (
        phone_number_id or conversation.school.whatsapp_phone_number_id or settings.WHATSAPP_PHONE_NUMBER_ID,
        wa_id or conversation.contact.phone.lstrip("+"),
    )


class WhatsAppSender(Sender):
    system = SYSTEM

    def __init__(self, client: WhatsAppClient) -> None:
        self.client = client

    def bodies(self, message: Message) -> list[dict]:
        to = _route(message.conversation)[1]
        template = message.payload.get("template")
        return [template_body(template, to)] if template else reply_bodies(message, to)

    def post(self, conversation: Conversation, body: dict) -> str:
        return self.client.send(_route(conversation)[0], body)
