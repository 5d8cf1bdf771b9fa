"""A small Pipedrive client: API v2 for persons, deals and activities, v1 only for notes.

Auth is the `x-api-token` header (never the legacy `?api_token=` query string,
which ends up in access logs). Every call returns the `data` object or raises
`TransientError` / `PermanentError` (see crm.external.http).
"""

from typing import Any

from django.conf import settings

from crm.external.http import ApiClient, PermanentError, call, make_client

SYSTEM = "pipedrive"


class PipedriveClient(ApiClient):
    def __init__(self, base_url: str | None = None, token: str | None = None) -> None:
        token = token if token is not None else settings.PIPEDRIVE_API_TOKEN
        self.http = make_client(base_url or settings.PIPEDRIVE_API_URL, {"x-api-token": token})

    def _data(self, method: str, path: str, **kwargs) -> Any:
        body = call(self.http, SYSTEM, method, path, **kwargs).json()
        if not body.get("success", True):
            raise PermanentError(SYSTEM, f"{method} {path}: {body.get('error') or 'success=false'}")
        return body.get("data")

    # --- persons ---------------------------------------------------------
    def search_person(self, term: str, field: str) -> int | None:
        """The id of the person whose `field` (phone or email) is exactly `term`, if any."""
        data = self._data("GET", "/api/v2/persons/search",
                          params={"term": term, "fields": field, "exact_match": "true", "limit": 5})
        items = (data or {}).get("items") or []
        return int(items[0]["item"]["id"]) if items else None

    def create_person(self, *, name: str, phone: str = "", email: str = "") -> int:
        body: dict[str, Any] = {"name": name}
        if phone:
            body["phones"] = [{"value": phone, "primary": True, "label": "mobile"}]
        if email:
            body["emails"] = [{"value": email, "primary": True, "label": "home"}]
        return int(self._data("POST", "/api/v2/persons", json=body)["id"])

    # --- deals -----------------------------------------------------------
    def open_deals_of(self, person_id: int) -> list[dict]:
        return list(self._data("GET", "/api/v2/deals", params={"person_id": person_id, "status": "open",
                                                               "limit": 50}) or [])

    def create_deal(self, *, title: str, person_id: int) -> int:
        return int(self._data("POST", "/api/v2/deals", json={"title": title, "person_id": person_id})["id"])

    def update_deal(self, deal_id: int, **fields: Any) -> None:
        self._data("PATCH", f"/api/v2/deals/{deal_id}", json=fields)

    # --- activities ------------------------------------------------------
    def activities_of_deal(self, deal_id: int) -> list[dict]:
        return list(self._data("GET", "/api/v2/activities", params={"deal_id": deal_id, "limit": 100}) or [])

    def create_activity(self, fields: dict[str, Any]) -> int:
        return int(self._data("POST", "/api/v2/activities", json=fields)["id"])

    def update_activity(self, activity_id: int, fields: dict[str, Any]) -> None:
        self._data("PATCH", f"/api/v2/activities/{activity_id}", json=fields)

    # --- notes (v1) ------------------------------------------------------
    def add_note(self, *, content: str, deal_id: int) -> int:
        return int(self._data("POST", "/v1/notes", json={"content": content, "deal_id": deal_id})["id"])
