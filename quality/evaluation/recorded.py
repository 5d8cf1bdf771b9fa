"""Conversations held with a capable model (through model-bridge), replayed and graded on the database.

Someone played the model from the requests alone while someone else played the parent; the requests and the
model's answers were saved. A recording (`recorded/<name>.json`) keeps the parent's messages, the model's answers
in order, the references the tools gave at the time (to follow them into a replay) and what the database must show
at the end. `replay()` runs the parent's messages through the real product (channel, loop, prompt, tools,
litellm) in a fresh evaluation school, with the clock at the recording's moment and the hosted-model path pointed
at a local OpenAI-compatible server that answers each request with the next recorded answer. A change to the
prompt, the tool schemas or the tool results that a capable model would have read differently shows as a
different end state.

References (T-, C-, W-) are random: the server maps each one a request shows in the replay (in the facts or a tool
result) to the one the recorded request showed in its place (by order of first appearance), so the model's calls
name the replay's.
"""

import datetime as dt
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from zoneinfo import ZoneInfo

import time_machine
from asgiref.sync import async_to_sync
from django.test import override_settings

from bookings.models import CallbackRequest, TourBooking
from chatbot.agent.offline.conversation import parse_facts
from chatbot.models import Channel, Message
from chatbot.services import receive
from quality.evaluation.world import Booking, build_world, destroy_world
from quality.local_endpoint import LocalEndpoint

RECORDINGS = Path(__file__).with_name("recorded")
REFERENCE = re.compile(r"\b[TCW]-[A-Z0-9]{4,12}\b")


@dataclass
class Recording:
    name: str
    title: str
    moment: dt.datetime  # when the conversation started (UTC)
    phone: str
    parent_name: str  # the name on file for the parent's earlier tours (setup), else ""
    turns: list[str]  # the parent's messages, one turn each
    answers: list[dict]  # the model's answers in order: {"text"} or {"calls": [{"name", "arguments"}]}
    references: list[list[str]]  # per answer: the references the request it answered showed (`_references_given`)
    setup: list[dict] = field(default_factory=list)  # the parent's tours before it: {"day": ISO, "time", "child"}
    expect: dict = field(default_factory=dict)  # see `grade`

    @classmethod
    def load(cls, path: Path) -> "Recording":
        data = json.loads(path.read_text())
        return cls(path.stem, data["title"], dt.datetime.fromisoformat(data["moment"]), data["phone"],
                   data.get("parent_name", ""), data["turns"], data["answers"], data["references"],
                   data.get("setup", []), data.get("expect", {}))


def recordings() -> list[Recording]:
    return [Recording.load(path) for path in sorted(RECORDINGS.glob("*.json"))]


def _references_given(messages: list[dict]) -> list[str]:
    """The references a request shows the model, in order of first appearance: the system prompt's facts (the
    parent's tours and call backs), then the tool results."""
    found: list[str] = []
    for message in messages:
        if message.get("role") in ("system", "tool"):
            found += [r for r in REFERENCE.findall(str(message.get("content") or "")) if r not in found]
    return found


class _Model:
    """The recorded answers, one per request, with the recording's references translated to the replay's."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.served = 0
        self.then_to_now: dict[str, str] = {}
        self.lock = threading.Lock()

    def answer(self, request: dict) -> dict:
        with self.lock:
            index = self.served
            self.served += 1
        if index >= len(self.recording.answers):
            raise LookupError(f"the recording has {len(self.recording.answers)} answers; this is request {index + 1}")
        now = _references_given(request.get("messages") or [])
        then = self.recording.references[index]
        self.then_to_now.update({old: new for old, new in zip(then, now, strict=False) if old != new})
        raw = json.dumps(self.recording.answers[index])
        for old, new in self.then_to_now.items():
            raw = raw.replace(old, new)
        return _completion(json.loads(raw), index)


def _completion(answer: dict, index: int) -> dict:
    """A recorded answer in the OpenAI chat-completion shape."""
    calls = [{"id": f"call_{index}_{n}", "type": "function",
              "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments") or {})}}
             for n, call in enumerate(answer.get("calls") or [])]
    message = {"role": "assistant", "content": answer.get("text") or None, **({"tool_calls": calls} if calls else {})}
    return {"id": f"replay-{index}", "object": "chat.completion", "created": 0, "model": "replay",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}


class _Replay:
    """A local OpenAI-compatible endpoint serving one recording (127.0.0.1, a free port)."""

    def __init__(self, model: _Model) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                try:
                    payload, status = model.answer(body), 200
                except LookupError as exc:
                    payload, status = {"error": {"message": str(exc)}}, 400
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.endpoint = LocalEndpoint(Handler, "model-replay")


@dataclass
class Replayed:
    recording: Recording
    replies: list[str]
    failures: list[str]
    answers_used: int

    @property
    def passed(self) -> bool:
        return not self.failures


def replay(recording: Recording) -> Replayed:
    """Run the recording's parent messages through the product against its recorded answers; grade the end."""
    model = _Model(recording)
    with time_machine.travel(recording.moment, tick=True), _Replay(model).endpoint as server, override_settings(
            LLM_MODEL="openai/replay", LLM_API_BASE=server.api_base, LLM_API_KEY="replay",
            CHAT_BURST_WINDOW_SECONDS=0):
        setup = tuple(Booking("mine", item["day"], item["time"], child_name=item["child"], child_age=item.get("age", 5))
                      for item in recording.setup)
        world = build_world(fixture="tampines", persona_name=recording.parent_name, persona_phone=recording.phone,
                            setup=setup)
        contact = world.contact
        try:
            for text in recording.turns:
                async_to_sync(receive)(school=world.school, contact=contact, channel=Channel.CLI, text=text)
            replies = list(Message.objects.filter(conversation__contact=contact, role="assistant")
                           .order_by("created_at", "id").values_list("text", flat=True))
            failures = grade(recording.expect, contact, world.school)
        finally:
            destroy_world(world.school.pk)
    return Replayed(recording, replies, failures, model.served)


def grade(expect: dict, contact, school) -> list[str]:
    """What the database shows against what the recording expects (empty: passed):

    - "tours": {child name: status} for the parent's tours ("scheduled", "cancelled", ...), and "tour_count";
    - "tour_children": {reference-less child list joined "+": status} for family tours ("Adam+Nur Aisyah");
    - "callbacks": [{"status", "weekday", "from", "to"}] for the parent's call backs, in order made;
    - "email": {child: address} on their tour;
    - "at": {child: "Monday 11:00"}: their tour's weekday and time in the school's zone.
    """
    failures = []
    tours = list(TourBooking.objects.filter(contact=contact).order_by("created_at"))
    if "tour_count" in expect and len(tours) != expect["tour_count"]:
        failures.append(f"{len(tours)} tours, expected {expect['tour_count']}: "
                        + ", ".join(f"{t.child_name} {t.status}" for t in tours))
    by_children = {"+".join(sorted(c.name for c in t.children.all())) or t.child_name: t for t in tours}
    for children, status in (expect.get("tours") or {}).items():
        tour = by_children.get("+".join(sorted(children.split("+"))))
        if tour is None or tour.status != status:
            failures.append(f"tour for {children}: {tour.status if tour else 'none'}, expected {status}")
    for children, email in (expect.get("email") or {}).items():
        tour = by_children.get("+".join(sorted(children.split("+"))))
        if tour is None or tour.parent_email != email:
            failures.append(f"tour for {children}: e-mail {tour.parent_email if tour else None!r}, expected {email}")
    for children, when in (expect.get("at") or {}).items():
        tour = by_children.get("+".join(sorted(children.split("+"))))
        local = f"{tour.starts_at.astimezone(school.tz):%A %H:%M}" if tour else None
        if local != when:
            failures.append(f"tour for {children}: at {local}, expected {when}")
    callbacks = list(CallbackRequest.objects.filter(contact=contact).order_by("created_at"))
    wanted = expect.get("callbacks")
    if wanted is not None:
        seen = [_callback_view(c, school) for c in callbacks]
        if len(seen) != len(wanted) or any({k: s[k] for k in w} != w for s, w in zip(seen, wanted, strict=False)):
            failures.append(f"call backs {seen}, expected {wanted}")
    return failures


def _callback_view(callback: CallbackRequest, school) -> dict:
    window = [getattr(callback, name, None) for name in ("window_start", "window_end")]
    return {"status": callback.status, "weekday": callback.due_date.strftime("%A"),
            "from": f"{window[0]:%H:%M}" if window[0] else "", "to": f"{window[1]:%H:%M}" if window[1] else ""}


def from_bridge(directory: Path, phone: str) -> dict:
    """A recording's data from a model-bridge folder (req-N.json, resp-N.json): the requests of the conversation
    whose CONTACT has `phone`, in order. Title, setup and expect are to be written by hand."""
    numbered = sorted((int(p.stem.split("-")[1]), p) for p in directory.glob("req-*.json"))
    turns, answers, references, moment = [], [], [], None
    for number, path in numbered:
        request = json.loads(path.read_text())
        messages = request.get("messages") or []
        system = str(messages[0].get("content") if messages else "")
        if f'"phone":"{phone}"' not in system:
            continue
        answer_path = directory / f"resp-{number}.json"
        if not answer_path.exists():
            continue
        if moment is None:
            moment = _moment(system)
        if messages[-1].get("role") == "user":
            turns.append(str(messages[-1].get("content")))
        answers.append(json.loads(answer_path.read_text()))
        references.append(_references_given(messages))
    return {"title": "", "moment": moment.isoformat() if moment else "", "phone": phone, "parent_name": "",
            "turns": turns,
            "answers": answers, "references": references, "setup": [], "expect": {}}


def _moment(system: str) -> dt.datetime:
    """TODAY and NOW_LOCAL_TIME of the facts, in TIME_ZONE, as UTC."""
    facts = parse_facts(system)
    local = dt.datetime.fromisoformat(f"{facts['TODAY'].split()[0]}T{facts['NOW_LOCAL_TIME']}")
    return local.replace(tzinfo=ZoneInfo(facts["TIME_ZONE"])).astimezone(dt.UTC)
