"""The WhatsApp Cloud API (Meta's Graph API): `POST {WHATSAPP_API_URL}/{phone number id}/messages`, a Bearer token."""

from django.conf import settings

from crm.external.http import ApiClient, call, make_client

SYSTEM = "whatsapp"


def configured() -> bool:
    """Replies can go out: the Graph API token is set."""
    return bool(settings.WHATSAPP_TOKEN)


class WhatsAppClient(ApiClient):
    def __init__(self) -> None:
        self.http = make_client(settings.WHATSAPP_API_URL, {"Authorization": f"Bearer {settings.WHATSAPP_TOKEN}"})

    def send(self, phone_number_id: str, body: dict) -> str:
        data = call(self.http, SYSTEM, "POST", f"/{phone_number_id}/messages", json=body).json()
        return str(((data.get("messages") or [{}])[0]).get("id") or "")
