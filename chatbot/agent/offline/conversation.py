"""Read the messages the loop sends into the few things the policy reasons about.

The policy keeps no state between calls, so everything it knows comes from here:
the Facts lines of the system prompt (ACTIVE_TASK.dialogue: what the last reply asked
and offered), the earlier turns' texts, and this turn's parent messages, tool calls
and tool results (CONTRACT.md, "Messages sent to the model").
"""

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from chatbot.agent.dialogue import DialogueState
from chatbot.agent.offline import lexicon as lx

FACTS_HEADER = "## Facts"
JSON_FACTS = {"SCHOOL", "CONTACT", "ACTIVE_TASK"}


@dataclass
class ToolStep:
    """One tool call of this turn and, once the loop ran it, its result."""

    name: str
    args: dict
    result: dict | None = None


@dataclass
class Conversation:
    """Everything one model call is given, parsed."""

    today: dt.date
    now: dt.time
    time_zone: str
    school: dict
    contact: dict
    task: dict
    unread: int
    history: list[dict]  # earlier turns: {"role": "user"|"assistant", "content": str}
    turn_texts: list[str]  # this turn's parent messages, in order
    steps: list[ToolStep] = field(default_factory=list)
    language: str = "en"  # the language to answer in (LANGUAGE)
    cycles: int = 0  # assistant tool-call messages already sent this turn
    cycles_left: int | None = None  # CYCLES_LEFT: this call and those after it in the turn (None: not stated)

    @property
    def last_call(self) -> bool:
        """Whether this call must answer in text: the turn's budget (CYCLES_LEFT) ends with it."""
        return self.cycles_left is not None and self.cycles_left <= 1

    @property
    def collected(self) -> dict:
        """ACTIVE_TASK.collected; a booking for one child reads as child_name / child_age, one for several keeps
        its `children` list."""
        value = self.task.get("collected")
        if not isinstance(value, dict):
            return {}
        children = [c for c in value.get("children") or [] if isinstance(c, dict)]
        flat = {k: v for k, v in value.items() if k != "children"}
        if len(children) == 1:
            flat.update({f"child_{key}": children[0][key] for key in ("name", "age")
                         if children[0].get(key) not in (None, "")})
        elif children:
            flat["children"] = children
        return flat

    @property
    def dialogue(self) -> DialogueState:
        """ACTIVE_TASK.dialogue: what the last reply asked, offered and did (chatbot.agent.dialogue)."""
        return DialogueState.from_prompt_dict(self.task.get("dialogue"))

    @property
    def known_children(self) -> tuple[dict, ...]:
        """CONTACT.children ("Leo (6)", "Mia") as {"name", "age"?}: the family's children in the CRM."""
        found = []
        for label in self.contact.get("children") or []:
            name, _, age = str(label).partition(" (")
            age = age.rstrip(")")
            found.append({"name": name, **({"age": int(age)} if age.isdigit() else {})})
        return tuple(found)

    @property
    def slots_shown(self) -> list[dict]:
        return _slot_facts(self.task.get("slots_shown"))

    @property
    def upcoming_tours(self) -> list[dict]:
        return [t for t in _slot_facts(self.contact.get("upcoming_tours"), "booking_id", "child_name")
                if t.get("booking_id")]

    @property
    def contact_name(self) -> str:
        """How to address the parent: the preferred name, else the name on file as `lexicon.address` greets it."""
        preferred = str(self.contact.get("preferred_name") or "").strip()
        if preferred:
            return preferred
        return lx.address(str(self.contact.get("name") or "").strip())

    def results(self, name: str) -> list[dict]:
        return [s.result for s in self.steps if s.name == name and s.result is not None]

    def last_result(self, name: str) -> dict | None:
        found = self.results(name)
        return found[-1] if found else None

    def called(self, name: str, args: dict | None = None) -> bool:
        return any(s.name == name and (args is None or s.args == args) for s in self.steps)

    def previous_reply(self) -> str:
        """The concierge's last answer before this turn ('' at the start)."""
        for message in reversed(self.history):
            if message["role"] == "assistant":
                return message["content"]
        return ""


def text_of(content: Any) -> str:
    """Message content as plain text (a string, or OpenAI content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _json_object(raw: Any) -> dict:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str | bytes) else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _slot_facts(value: Any, *names: str) -> list[dict]:
    """Slots or tours as the facts write them ("Wed 2026-11-25 09:00", then the named words), read back into
    {"date", "time", *names}; the last name takes the rest of the line."""
    found = []
    for fact in value if isinstance(value, list) else []:
        _, date, time, *rest = [*str(fact).split(maxsplit=2 + len(names)), "", ""][: 3 + len(names)]
        if date and time:
            found.append({"date": date, "time": time, **dict(zip(names, rest, strict=True))})
    return found


def _tool_calls(message: dict) -> list[dict]:
    calls = message.get("tool_calls") or []
    return [c if isinstance(c, dict) else c.model_dump() for c in calls]


def parse_facts(system: str) -> dict[str, str]:
    """The 'KEY: value' lines after the Facts header."""
    _, _, section = system.partition(FACTS_HEADER)
    facts = {}
    for line in section.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().isupper():
            facts[key.strip()] = value.strip()
    return facts


def _date(value: str, default: dt.date) -> dt.date:
    try:
        return dt.date.fromisoformat(value.split()[0])
    except (ValueError, IndexError):
        return default


def _time(value: str) -> dt.time:
    try:
        return dt.time.fromisoformat(value.strip())
    except ValueError:
        return dt.time(9, 0)


def _int(value: str) -> int:
    try:
        return int(value.strip())
    except ValueError:
        return 0


def read(messages: list[dict]) -> Conversation:
    """Split the message list into facts, earlier turns and the current turn."""
    messages = [m if isinstance(m, dict) else dict(m) for m in messages]
    system = "\n".join(text_of(m.get("content")) for m in messages if m.get("role") == "system")
    facts = parse_facts(system)
    parsed = {key: _json_object(facts.get(key, "")) for key in JSON_FACTS}

    dialogue = [m for m in messages if m.get("role") != "system"]
    start = len(dialogue)
    while start > 0:
        previous = dialogue[start - 1]
        if previous.get("role") == "assistant" and not previous.get("tool_calls"):
            break
        start -= 1
    history = [
        {"role": m["role"], "content": text_of(m.get("content"))}
        for m in dialogue[:start]
        if m.get("role") in ("user", "assistant") and text_of(m.get("content")).strip()
    ]

    turn_texts, steps, by_id, cycles = [], [], {}, 0
    for message in dialogue[start:]:
        role = message.get("role")
        if role == "user":
            text = text_of(message.get("content")).strip()
            if text:
                turn_texts.append(text)
        elif role == "assistant":
            cycles += 1
            for call in _tool_calls(message):
                function = call.get("function") or {}
                step = ToolStep(str(function.get("name", "")), _json_object(function.get("arguments")))
                steps.append(step)
                by_id[call.get("id")] = step
        elif role == "tool":
            step = by_id.get(message.get("tool_call_id"))
            if step is not None:
                content = text_of(message.get("content"))
                step.result = _json_object(content) or {"status": "error", "message": content}

    today = _date(facts.get("TODAY", ""), dt.date.today())
    return Conversation(
        today=today,
        now=_time(facts.get("NOW_LOCAL_TIME", "09:00")),
        time_zone=facts.get("TIME_ZONE", ""),
        school=parsed["SCHOOL"],
        contact=parsed["CONTACT"],
        task=parsed["ACTIVE_TASK"],
        unread=_int(facts.get("UNREAD", "0")),
        history=history,
        turn_texts=turn_texts,
        steps=steps,
        cycles=cycles,
        cycles_left=_int(facts["CYCLES_LEFT"]) if "CYCLES_LEFT" in facts else None,
        language=facts.get("LANGUAGE") or "en",
    )
