"""Stand-ins for Chatwoot, the WhatsApp Graph API and Pipedrive, served over real HTTP on 127.0.0.1.

Each fake records every request (method, path, headers, JSON body) and answers
the way the real service does for the calls we make (shapes from
docs/integrations.md). Faults are scripted: `fail_next` answers the next matching
requests with an error status, `down` answers everything with 503, `slow_next`
holds the next matching requests before answering. The shared server handles one
request at a time, so a held request holds the ones behind it too, as an
overloaded service would; `start_server(threaded=True)` answers them side by side.
"""

import itertools
import json
import re
import threading
import time
from dataclasses import dataclass

import pytest_httpserver.httpserver as httpserver_module
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response
from werkzeug.datastructures import Headers
from werkzeug.serving import WSGIRequestHandler, make_server


class RawHeadersHandler(WSGIRequestHandler):
    """Werkzeug's dev server drops headers with underscores (api_access_token); keep the raw ones too."""

    def make_environ(self):
        environ = super().make_environ()
        environ["test.raw_headers"] = list(self.headers.items())
        return environ


def start_server(*, threaded: bool = False) -> HTTPServer:
    """An HTTP server on 127.0.0.1 (random port) that records every header as sent."""
    server = HTTPServer(host="127.0.0.1", port=0, threaded=threaded)
    original = httpserver_module.make_server
    httpserver_module.make_server = lambda *a, **kw: make_server(*a, request_handler=RawHeadersHandler, **kw)
    try:
        server.start()
    finally:
        httpserver_module.make_server = original
    return server


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict
    json: object
    query: dict


def _json(data, status: int = 200) -> Response:
    return Response(json.dumps(data), status=status, content_type="application/json")


class Fake:
    prefix = ""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.fail_next: list[tuple[str, str, int]] = []  # (method, path regex, status)
        self.slow_next: list[tuple[str, str, float]] = []  # (method, path regex, seconds before answering)
        self.down = False
        self.lock = threading.Lock()

    def install(self, server) -> "Fake":
        server.expect_request(re.compile(f"^{re.escape(self.prefix)}/.*")).respond_with_handler(self.handle)
        return self

    def calls(self, method: str | None = None, path: str | None = None) -> list[Recorded]:
        return [r for r in self.requests if (method is None or r.method == method)
                and (path is None or re.fullmatch(path, r.path))]

    def handle(self, request: Request) -> Response:
        path = request.path[len(self.prefix):]
        body = request.get_json(silent=True)
        request.raw_headers = Headers(request.environ.get("test.raw_headers") or list(request.headers.items()))
        with self.lock:
            hold = next((entry for entry in self.slow_next
                         if entry[0] == request.method and re.fullmatch(entry[1], path)), None)
            if hold is not None:
                self.slow_next.remove(hold)
        if hold is not None:
            time.sleep(hold[2])
        with self.lock:
            self.requests.append(Recorded(request.method, path, request.raw_headers, body, request.args.to_dict()))
            if self.down:
                return _json({"success": False, "error": "Service unavailable"}, 503)
            for index, (method, pattern, status) in enumerate(self.fail_next):
                if method == request.method and re.fullmatch(pattern, path):
                    del self.fail_next[index]
                    return _json({"success": False, "error": f"scripted {status}"}, status)
            return self.route(request.method, path, body, request)

    def route(self, method: str, path: str, body, request: Request) -> Response:
        raise NotImplementedError


class FakeChatwoot(Fake):
    prefix = "/chatwoot"

    def __init__(self, bot_token: str = "bot-token", user_token: str = "user-token") -> None:
        super().__init__()
        self.bot_token, self.user_token = bot_token, user_token
        self.ids = itertools.count(50001)
        self.status: dict[str, str] = {}  # conversation display id -> status
        self.posted: list[dict] = []  # messages created through the API
        self.contacts: dict[str, dict] = {}  # contact id -> custom_attributes

    def route(self, method, path, body, request):
        token = request.raw_headers.get("api_access_token")
        match = re.fullmatch(r"/api/v1/accounts/(\d+)/conversations/(\d+)(/[a-z_]+)?", path)
        if match:
            _, conversation, action = match.groups()
            if method == "POST" and action == "/messages":
                if token not in (self.bot_token, self.user_token):
                    return _json({"error": "Invalid Access Token"}, 401)
                message = {"id": next(self.ids), "content": body.get("content"), "message_type": 1,
                           "content_type": body.get("content_type", "text"),
                           "content_attributes": body.get("content_attributes", {}), "private": body.get("private"),
                           "conversation_id": int(conversation), "created_at": int(time.time()),
                           "sender": {"type": "agent_bot"}}
                self.posted.append(message)
                return _json({**message, "message_type": "outgoing"})
            if method == "GET" and action == "/messages":
                if token != self.user_token:
                    return _json({"error": "Access to this endpoint is not authorized for bots"}, 401)
                return _json({"meta": {}, "payload": [m for m in self.posted
                                                      if m["conversation_id"] == int(conversation)]})
            if method == "GET" and action is None:
                return _json({"id": int(conversation), "status": self.status.get(conversation, "pending"),
                              "inbox_id": 3, "meta": {}})
            if method == "POST" and action == "/toggle_typing_status":
                if token not in (self.bot_token, self.user_token):
                    return _json({"error": "Invalid Access Token"}, 401)
                if (body or {}).get("typing_status") not in ("on", "off"):
                    return _json({"error": "typing_status must be on or off"}, 422)
                return Response(status=200)  # Chatwoot answers `head :ok`: no body
            if method == "POST" and action == "/toggle_status":
                self.status[conversation] = body["status"]
                return _json({"meta": {}, "payload": {"success": None, "conversation_id": int(conversation),
                                                      "current_status": body["status"], "snoozed_until": None}})
        match = re.fullmatch(r"/api/v1/accounts/(\d+)/contacts/(\d+)", path)
        if match:
            if token != self.user_token:
                return _json({"error": "Access to this endpoint is not authorized for bots"}, 401)
            contact = match.group(2)
            attributes = self.contacts.setdefault(contact, {})
            if method == "PUT":
                attributes.update(body.get("custom_attributes") or {})  # Chatwoot merges
            return _json({"payload": {"id": int(contact), "name": "Ana", "custom_attributes": attributes}})
        return _json({"error": "not found"}, 404)

    def posts(self) -> list[Recorded]:
        return self.calls("POST", r"/api/v1/accounts/\d+/conversations/\d+/messages")

    def typing(self) -> list[Recorded]:
        return self.calls("POST", r"/api/v1/accounts/\d+/conversations/\d+/toggle_typing_status")


class FakeWhatsApp(Fake):
    prefix = "/graph"

    def __init__(self, token: str = "wa-token") -> None:
        super().__init__()
        self.token = token
        self.ids = itertools.count(1)
        self.sent: list[dict] = []

    def route(self, method, path, body, request):
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return _json({"error": {"message": "Invalid OAuth access token.", "code": 190}}, 401)
        if method == "POST" and re.fullmatch(r"/\d+/messages", path):
            wamid = f"wamid.OUT{next(self.ids)}"
            self.sent.append(body)
            return _json({"messaging_product": "whatsapp", "contacts": [{"input": body["to"], "wa_id": body["to"]}],
                          "messages": [{"id": wamid}]})
        return _json({"error": {"message": "Unsupported request", "code": 100}}, 400)


class FakePipedrive(Fake):
    prefix = "/pipedrive"

    def __init__(self, token: str = "pd-token") -> None:
        super().__init__()
        self.token = token
        self.ids = itertools.count(101)
        self.persons: dict[int, dict] = {}
        self.deals: dict[int, dict] = {}
        self.activities: dict[int, dict] = {}
        self.notes: dict[int, dict] = {}

    def route(self, method, path, body, request):
        if request.headers.get("x-api-token") != self.token:
            return _json({"success": False, "error": "unauthorized access", "errorCode": 401}, 401)
        ok = lambda data: _json({"success": True, "data": data})  # noqa: E731
        if path == "/api/v2/persons/search" and method == "GET":
            term, fields = request.args["term"], request.args.get("fields", "")
            hits = [p for p in self.persons.values()
                    if ("phone" in fields and term in [x["value"] for x in p.get("phones", [])])
                    or ("email" in fields and term.lower() in [x["value"].lower() for x in p.get("emails", [])])]
            return ok({"items": [{"result_score": 1, "item": {"id": p["id"], "type": "person", "name": p["name"],
                                                              "phones": [x["value"] for x in p.get("phones", [])],
                                                              "emails": [x["value"] for x in p.get("emails", [])]}}
                                 for p in hits]})
        for name, store in (("persons", self.persons), ("deals", self.deals), ("activities", self.activities)):
            if path == f"/api/v2/{name}" and method == "POST":
                record = {"id": next(self.ids), **body}
                store[record["id"]] = record
                return ok(record)
            match = re.fullmatch(rf"/api/v2/{name}/(\d+)", path)
            if match and method == "PATCH":
                record = store[int(match.group(1))]
                record.update(body)
                return ok(record)
        if path == "/api/v2/deals" and method == "GET":
            person = int(request.args["person_id"])
            return ok([d for d in self.deals.values() if d.get("person_id") == person
                       and d.get("status", "open") == request.args.get("status", "open")])
        if path == "/api/v2/activities" and method == "GET":
            deal = int(request.args["deal_id"])
            return ok([a for a in self.activities.values() if a.get("deal_id") == deal])
        if path == "/v1/notes" and method == "POST":
            note = {"id": next(self.ids), **body}
            self.notes[note["id"]] = note
            return _json({"success": True, "data": note}, 201)
        return _json({"success": False, "error": "Unknown method ."}, 404)
