"""Chatwoot's REST API (the application API) and what identifies a conversation there.

Our Conversation.external_id is "<account id>:<conversation display id>" (display ids are per account).
"""

from typing import Any

from django.conf import settings

from crm.external.http import ApiClient, call, make_client

SYSTEM = "chatwoot"
BOT_STATUS = "pending"  # the only Chatwoot status in which the bot may talk


def external_id(account_id: Any, conversation_id: Any) -> str:
    return f"{account_id}:{conversation_id}"


def split_external_id(value: str) -> tuple[str, str]:
    account, _, conversation = (value or "").partition(":")
    if not account or not conversation:
        raise ValueError(f"not a Chatwoot conversation reference: {value!r}")
    return account, conversation


class ChatwootClient(ApiClient):
    """Chatwoot's application API: bot calls with the agent-bot token, contact calls with a user token."""

    def __init__(self, timeout: float | None = None) -> None:
        self.bot = make_client(settings.CHATWOOT_URL, {"api_access_token": settings.CHATWOOT_API_TOKEN}, timeout)
        self.user = make_client(settings.CHATWOOT_URL, {"api_access_token": settings.CHATWOOT_USER_TOKEN}, timeout)

    def close(self) -> None:
        self.bot.close()
        self.user.close()

    @staticmethod
    def _conversation(account: str, conversation: str) -> str:
        return f"/api/v1/accounts/{account}/conversations/{conversation}"

    def post_message(self, account: str, conversation: str, body: dict) -> str:
        response = call(self.bot, SYSTEM, "POST", f"{self._conversation(account, conversation)}/messages", json=body)
        return str(response.json().get("id") or "")

    def conversation_status(self, account: str, conversation: str) -> str:
        data = call(self.bot, SYSTEM, "GET", self._conversation(account, conversation)).json()
        return str(data.get("status") or (data.get("payload") or {}).get("status") or "")

    def toggle_status(self, account: str, conversation: str, status: str) -> str:
        data = call(
            self.bot,
            SYSTEM,
            "POST",
            f"{self._conversation(account, conversation)}/toggle_status",
            json={"status": status},
        ).json()
        return str((data.get("payload") or {}).get("current_status") or "")

    def toggle_typing(self, account: str, conversation: str, active: bool) -> None:
        call(
            self.bot,
            SYSTEM,
            "POST",
            f"{self._conversation(account, conversation)}/toggle_typing_status",
            json={"typing_status": "on" if active else "off"},
        )

    def list_messages(self, account: str, conversation: str) -> list[dict]:
        data = call(self.user, SYSTEM, "GET", f"{self._conversation(account, conversation)}/messages").json()
        return list(data.get("payload") or [])

    def contact_attributes(self, account: str, contact_id: str) -> dict:
        data = call(self.user, SYSTEM, "GET", f"/api/v1/accounts/{account}/contacts/{contact_id}").json()
        return dict((data.get("payload") or {}).get("custom_attributes") or {})

    def merge_contact_attributes(self, account: str, contact_id: str, attributes: dict) -> None:
        """PUT merges `custom_attributes` into the contact's existing ones (it does not replace them)."""
        call(
            self.user,
            SYSTEM,
            "PUT",
            f"/api/v1/accounts/{account}/contacts/{contact_id}",
            json={"custom_attributes": attributes},
        )


def configured() -> bool:
    return bool(settings.CHATWOOT_URL and settings.CHATWOOT_API_TOKEN)


def contacts_configured() -> bool:
    """Contact endpoints (custom attributes) and message lists need a user token: bot tokens are refused there."""
    return bool(settings.CHATWOOT_URL and settings.CHATWOOT_USER_TOKEN)
