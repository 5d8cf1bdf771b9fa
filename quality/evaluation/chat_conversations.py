"""Held-out chat-style conversations (a folder's `chat.jsonl`), run through the concierge and scored RIGHT or WRONG.

The format, one JSON object per line (quality/evaluation/chat_dev/README.md shows a whole one):

- `id`, `language` (one of LANGUAGES), `turns`: the parent's messages in order, each sent after the concierge
  answered the one before; a list inside `turns` is a burst (messages sent together, before the reply);
- `facts`: what the parent answers when asked for something the turns do not give (`parent_name`, `phone`,
  `email`, `child_name` + `child_age` or `children` [{"name", "age"}], `call_time`), and the truth the
  expectations are checked against;
- `existing` (optional): the parent's tours booked before the conversation, [{"date", "time", "child_name",
  "child_age"}];
- `expect`: `booked` (every tour of the parent's that must be live at the end, the existing ones kept
  included: {"date", "time": "HH:MM" | "14:00|16:00" | null for any time, "child_name", "child_age" | null} or
  "children" instead of the child), `parent_name` (null: no name may be stored at all), `callback` (null, or
  {"date", "after", "before"} bounds its window must lie within), `cancelled` (how many of the parent's tours end
  cancelled), `reply_mentions` (groups of words: some reply must contain one word of each group), optional
  `may_store` ({"names": [...], "times": ["14:00"]}: values the parent said and then changed, which may be stored
  on the way) and `note`.

Running one: a fresh "tampines" world (world.build_world; the existing tours set up under the facts' name and
phone) with the clock at MOMENT, ticking; the turns go through the real entry point `chatbot.services.receive`
(runner.Conversation) with the configured model. A stand-in answers, plainly and in the conversation's language,
what the concierge asked that the turns do not give: what was asked is the dialogue state's typed `asked`
(chatbot/agent/dialogue.py, kept in the conversation's ActiveContext); only for a model that declares nothing is
it read from the reply's words (parent.asks_in). It gives only details from `facts` that no turn contains (one a
turn gave, before or after, is the turns' to give: whether it was understood is what is measured). Once the turns
are over it also answers offers and read-backs towards the expectations (a read-back of something not expected
gets a no), except a yes-or-no question the last turn was already the answer to (asked before it and asked again
unchanged: whether "ok la, tempah je" was understood is measured); it picks from a list only where the expectation
leaves the time open ("14:00|16:00", or any time), and which tour only when the parent has one. It never gives a
date or a time of its own.

Scoring: RIGHT when, at the end, the parent's live tours are exactly `booked`, exactly `cancelled` of them are
cancelled, the call back is as expected (none when null), nothing else changed (no waitlist entry, no other
family's tour), the contact carries the expected name, and, after every message: every stored parent name is
the expected one (or the facts' one, once the stand-in gave it; a preferred name may be part of one), every
stored child name and age is a child of the facts, every tour that existed is an expected or existing one, every
collected tour time is expected, existing, in `may_store` or an hour the parent wrote; every `reply_mentions`
group is met, and no reply is the same as the one before it. WRONG lists which of these failed.
"""

import datetime as dt
import json
import re
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from itertools import pairwise, permutations
from pathlib import Path
from zoneinfo import ZoneInfo

import time_machine
from asgiref.sync import sync_to_async
from django.test import override_settings

from bookings.models import split_names
from chatbot.agent.dialogue import DialogueState, Option
from chatbot.agent.memory import ActiveContext
from chatbot.agent.model import OFFLINE_MODEL
from quality.evaluation.checks import Snapshot, snapshot
from quality.evaluation.parent import Burst, asks_in, parse_options
from quality.evaluation.runner import Conversation
from quality.evaluation.world import Booking, build_world, destroy_world

LANGUAGES = ("en", "en-sg", "ms", "zh", "ta", "mixed")
FIXTURE = "tampines"
MOMENT = dt.datetime(2026, 12, 3, 9, 0, tzinfo=ZoneInfo("Asia/Singapore"))  # a Thursday
STAND_IN_TURNS = 8  # the stand-in's messages after the turns, at most
HHMM = re.compile(r"^(?:[01]\d|2[0-3]):[0-5]\d$")
HOUR_SAID = re.compile(r"(?<![\d.:/+-])(\d{1,2})(?:[:.](\d{2}))?(?![\d/-])")
CHINESE_HOUR = re.compile(r"(十[一二]?|[一二两三四五六七八九])\s*[点點]")
PUNCTUATION = re.compile(r"[.,!?;:'\"()，。！？：]")
NAME_LINKS = {"bin", "binti", "binte", "bte", "a/l", "a/p", "s/o", "d/o"}  # words inside a name that name no one
CHINESE_NUMBERS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
                   "十": 10, "十一": 11, "十二": 12}

# How the stand-in says things, per language (en-sg and mixed are answered in English).
PHRASES = {
    "en": {"parent_name": "My name is {}", "parent_phone": "My number is {}", "parent_email": "My email is {}",
           "child_name": "My child's name is {}", "age": "{} years old", "and": " and ", "yes": "Yes", "no": "No",
           "another": "Book another one as well", "move": "Move the one I have"},
    "ms": {"parent_name": "Nama saya {}", "parent_phone": "Nombor saya {}", "parent_email": "Emel saya {}",
           "child_name": "Nama anak saya {}", "age": "{} tahun", "and": " dan ", "yes": "Ya", "no": "Tidak",
           "another": "Tempah satu lagi", "move": "Pindahkan yang sedia ada"},
    "zh": {"parent_name": "我叫{}", "parent_phone": "我的电话是{}", "parent_email": "我的邮箱是{}",
           "child_name": "孩子叫{}", "age": "{}岁", "and": "和", "yes": "是的", "no": "不要",
           "another": "再订一个", "move": "改我已经订的那个"},
    "ta": {"parent_name": "என் பெயர் {}", "parent_phone": "என் எண் {}", "parent_email": "என் மின்னஞ்சல் {}",
           "child_name": "குழந்தையின் பெயர் {}", "age": "{} வயது", "and": " மற்றும் ", "yes": "ஆம்",
           "no": "இல்லை", "another": "இன்னொன்றும் பதிவு செய்யுங்கள்", "move": "இருப்பதை மாற்றுங்கள்"},
}
# What parent.asks_in reads from a reply's words, as the dialogue state's asks (for a model that declares nothing).
YES_NO = ("offer_book", "offer_callback", "offer_waitlist", "seat_offer", "take_soonest", "read_back")
WORDED_ASKS = {"child_name": "child_name", "child_age": "child_age", "parent_name": "parent_name",
               "parent_phone": "parent_phone", "parent_email": "parent_email", "call_time": "call_time",
               "which_tour": "which_tour", "when": "when", "offer_callback": "offer_callback",
               "offer_book": "offer_book", "confirm": "read_back"}


# --- the format ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Child:
    name: str
    age: int | None = None

    def __str__(self) -> str:
        return self.name if self.age is None else f"{self.name} ({self.age})"


@dataclass(frozen=True)
class Tour:
    """A tour wanted (or existing): its day, the start times that are right (none: any), the children on it."""

    date: str
    times: tuple[str, ...] = ()
    children: tuple[Child, ...] = ()

    def __str__(self) -> str:
        who = ", ".join(map(str, self.children))
        return f"{self.date} {'|'.join(self.times) or 'any time'}" + (f" {who}" if who else "")

    def fits(self, date: str, time: str) -> bool:
        return date == self.date and (not self.times or time in self.times)

    def fits_row(self, row: dict) -> bool:
        """Whether a booking row (checks.snapshot) is this tour: day, time, children's names and given ages."""
        if not self.fits(row["date"], row["time"]):
            return False
        if not self.children:
            return True
        got = {normal(name): age for name, age in row["child_details"]}
        return (sorted(got) == sorted(normal(c.name) for c in self.children)
                and all(c.age is None or got[normal(c.name)] == c.age for c in self.children))


@dataclass(frozen=True)
class CallbackWindow:
    date: str | None
    after: str | None
    before: str | None

    def __str__(self) -> str:
        return f"{self.date or 'any day'}, after {self.after or '-'}, before {self.before or '-'}"

    def fits(self, row: dict) -> bool:
        return ((self.date is None or row["due_date"] == self.date)
                and (self.after is None or row["window_start"] >= self.after)
                and (self.before is None or row["window_end"] <= self.before))


@dataclass(frozen=True)
class Facts:
    parent_name: str = ""
    phone: str = ""
    email: str = ""
    children: tuple[Child, ...] = ()
    call_time: str = ""


@dataclass(frozen=True)
class Expect:
    booked: tuple[Tour, ...] = ()
    parent_name: str | None = None
    callback: CallbackWindow | None = None
    cancelled: int = 0
    reply_mentions: tuple[tuple[str, ...], ...] = ()
    may_store_names: tuple[str, ...] = ()
    may_store_times: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class ChatCase:
    id: str
    language: str
    turns: tuple[tuple[str, ...], ...]  # each a message, or a burst of several
    facts: Facts
    expect: Expect
    existing: tuple[Tour, ...] = ()


def normal(text: str) -> str:
    """A name or word compared without case, punctuation ("R. Kavitha" is "r kavitha") or extra spaces."""
    return " ".join(PUNCTUATION.sub(" ", str(text or "")).split()).casefold()


def _iso(value, where: str) -> str:
    try:
        return dt.date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise ValueError(f"{where}: {value!r} is not an ISO date") from None


def _times(value, where: str) -> tuple[str, ...]:
    times = tuple(t.strip() for t in str(value).split("|")) if value else ()
    bad = [t for t in times if not HHMM.match(t)]
    if bad:
        raise ValueError(f"{where}: {bad} are not HH:MM times")
    return times


def _children(data: dict, where: str) -> tuple[Child, ...]:
    listed = data.get("children")
    given = listed if isinstance(listed, list) else [{"name": data["child_name"], "age": data.get("child_age")}] \
        if data.get("child_name") else []
    children = []
    for child in given:
        age = child.get("age")
        if age is not None and not isinstance(age, int):
            raise ValueError(f"{where}: the age {age!r} is not a whole number")
        children.append(Child(str(child.get("name") or "").strip(), age))
    return tuple(children)


def _tour(data: dict, where: str) -> Tour:
    return Tour(_iso(data.get("date"), where), _times(data.get("time"), where), _children(data, where))


def parse_case(data: dict) -> ChatCase:
    """One line of chat.jsonl; ValueError says what is wrong with it."""
    where = str(data.get("id") or "a conversation without an id")
    if data.get("language") not in LANGUAGES:
        raise ValueError(f"{where}: language {data.get('language')!r} is not one of {', '.join(LANGUAGES)}")
    turns = tuple(tuple(t) if isinstance(t, list) else (t,) for t in data.get("turns") or [])
    if not turns or not all(turn and all(isinstance(m, str) and m.strip() for m in turn) for turn in turns):
        raise ValueError(f"{where}: turns must be messages (or lists of messages), none empty")
    facts = data.get("facts") or {}
    expect = data.get("expect")
    if not isinstance(expect, dict):
        raise ValueError(f"{where}: expect is missing")
    callback = expect.get("callback")
    may_store = expect.get("may_store") or {}
    existing = tuple(_tour(t, f"{where} existing") for t in data.get("existing") or [])
    if any(len(t.times) != 1 or len(t.children) != 1 or t.children[0].age is None for t in existing):
        raise ValueError(f"{where}: an existing tour has one time and one child with an age")
    return ChatCase(
        id=where, language=data["language"], turns=turns,
        facts=Facts(str(facts.get("parent_name") or ""), str(facts.get("phone") or ""), str(facts.get("email") or ""),
                    _children(facts, f"{where} facts"), str(facts.get("call_time") or "")),
        expect=Expect(
            booked=tuple(_tour(t, f"{where} booked") for t in expect.get("booked") or []),
            parent_name=expect.get("parent_name"),
            callback=CallbackWindow(_iso(callback["date"], where) if callback.get("date") else None,
                                    (_times(callback.get("after"), where) or (None,))[0],
                                    (_times(callback.get("before"), where) or (None,))[0]) if callback else None,
            cancelled=int(expect.get("cancelled") or 0),
            reply_mentions=tuple(tuple(group) for group in expect.get("reply_mentions") or []),
            may_store_names=tuple(may_store.get("names") or []),
            may_store_times=_times("|".join(may_store.get("times") or []), where),
            note=str(expect.get("note") or "")),
        existing=existing,
    )


def load_cases(path: Path) -> list[ChatCase]:
    """The conversations of a folder's chat.jsonl (FileNotFoundError when it has none)."""
    lines = (path / "chat.jsonl").read_text(encoding="utf-8").splitlines()
    return [parse_case(json.loads(line)) for line in lines if line.strip()]


# --- what the run observed -------------------------------------------------------------------------------------------


@dataclass
class Step:
    """The state after one message of the parent's (or the stand-in's): the database and the task's collected
    details (ActiveContext.collected)."""

    message: str
    state: Snapshot
    collected: dict


@dataclass
class ChatRun:
    case: ChatCase
    before: Snapshot
    steps: list[Step] = field(default_factory=list)
    transcript: list[dict] = field(default_factory=list)
    gave: set[str] = field(default_factory=set)  # the facts the stand-in gave ("parent_name", ...)
    error: str = ""

    @property
    def after(self) -> Snapshot:
        return self.steps[-1].state if self.steps else self.before


def _mine(rows: dict[str, dict]) -> list[dict]:
    return [row for row in rows.values() if row["owner"] == "me"]


@dataclass
class Open:
    """What the conversation still owes the parent: tours not yet booked, cancellations, a call back."""

    tours: list[Tour]
    cancel: int
    callback: bool


def still_open(case: ChatCase, state: Snapshot) -> Open:
    live = [row for row in _mine(state.bookings) if row["status"] == "scheduled"]
    tours = [tour for tour in case.expect.booked if not any(tour.fits_row(row) for row in live)]
    cancelled = sum(row["status"] == "cancelled" for row in _mine(state.bookings))
    called = any(row["status"] == "open" for row in _mine(state.callbacks))
    return Open(tours, case.expect.cancelled - cancelled, case.expect.callback is not None and not called)


# --- the stand-in ----------------------------------------------------------------------------------------------------


def _phrases(language: str) -> dict[str, str]:
    return PHRASES.get(language, PHRASES["en"])


def _said_in(value: str, text: str) -> bool:
    """Whether a fact appears in the parent's text: a name by any of its words, a number by its digits."""
    digits = re.sub(r"\D", "", value)
    if len(digits) >= 7:
        return digits[-8:] in re.sub(r"\D", "", text)
    if value.isdigit():
        return re.search(rf"(?<!\d){value}(?!\d)", text) is not None
    folded = text.casefold()
    return any((re.search(rf"\b{re.escape(word)}\b", folded) if word.isascii() else word in folded)
               for word in normal(value).split() if word not in NAME_LINKS and (len(word) >= 3 or not word.isascii()))


def _details(case: ChatCase, asked: list[str], ages_of: list[str]) -> tuple[list[str], set[str]]:
    """The phrases answering the details asked for that the facts hold and no turn gives (a detail a turn gave,
    earlier or later, is the turns' to give: whether it was understood is what is measured)."""
    facts, say, turns = case.facts, _phrases(case.language), [m for turn in case.turns for m in turn]
    script = "\n".join(turns)
    values = {"parent_name": facts.parent_name, "parent_phone": facts.phone, "parent_email": facts.email}
    parts, gave = [], set()
    for name in ("parent_name", "parent_phone", "parent_email"):
        if name in asked and values[name] and not _said_in(values[name], script):
            parts.append(say[name].format(values[name]))
            gave.add(name)
    children = [c for c in facts.children if c.name]
    if "child_name" in asked and children and not any(_said_in(c.name, script) for c in children):
        named = [f"{c.name}, {say['age'].format(c.age)}" if "child_age" in asked and c.age is not None else c.name
                 for c in children]
        parts.append(say["child_name"].format(say["and"].join(named)))
        gave |= {"child_name"} | ({"child_age"} if "child_age" in asked else set())
    elif "child_age" in asked:
        wanted = {normal(n) for n in ages_of}
        aged = [c for c in facts.children if c.age is not None and (not wanted or normal(c.name) in wanted)]
        told = any(_said_in(c.name, m) and _said_in(str(c.age), m) for c in aged for m in turns)  # "Leo, 5"
        if aged and not told:
            parts.append(say["and"].join(f"{c.name} {say['age'].format(c.age)}" for c in aged))
            gave.add("child_age")
    return parts, gave


def _changing(case: ChatCase, refs: dict[str, str]) -> frozenset[str]:
    """The references of the existing tours the conversation is about: those no expected tour keeps as they are."""
    return frozenset({refs[f"existing-{n}"] for n, tour in enumerate(case.existing)
            if not any(want.fits(tour.date, tour.times[0]) for want in case.expect.booked)})


def _open_choice(option: Option, still: Open) -> bool:
    """A slot the parent may take without having named it: one of several right times of a tour still owed (or
    any time on its day). A tour with one right time was named by the turns: choosing it is theirs."""
    return not option.booking_id and any(len(tour.times) != 1 and tour.fits(option.date, option.time)
                                         for tour in still.tours)


def _read_back_wanted(awaiting: list[dict], still: Open, changing: set[str]) -> bool:
    """Whether the read-backs waiting for a yes are what the parent wants (none known: whether anything is owed)."""
    if not awaiting:
        return bool(still.tours or still.cancel > 0 or still.callback)
    for item in awaiting:
        action = item.get("action")
        target = item.get("read_back") if action == "book" else item.get("to") if action == "reschedule" else None
        if action == "cancel" and not (still.cancel > 0 and item.get("booking_id") in changing):
            return False
        if target is not None and not any(t.fits(str(target.get("date")), str(target.get("time")))
                                          for t in still.tours):
            return False
        if action not in ("book", "reschedule", "cancel"):
            return False
    return True


@dataclass(frozen=True)
class Situation:
    """What the stand-in decides by: what is still owed, the existing tours being changed, and the state the last
    turn was sent into (None while turns remain)."""

    still: Open
    changing: frozenset[str]
    last_turn_faced: DialogueState | None = None

    def answered_by_turns(self, state: DialogueState) -> set[str]:
        """The yes-or-no questions the last turn was the answer to: asked before it, and asked again unchanged
        (the same read-back waiting). The stand-in leaves them alone: whether that answer was understood is what
        is measured."""
        faced = self.last_turn_faced
        return set(faced.asked) & set(YES_NO) if faced is not None and faced.awaiting == state.awaiting else set()


def _decisions(case: ChatCase, state: DialogueState, situation: Situation) -> list[str]:
    """Answers to what only the parent's goal decides: an offer, a read-back, a choice the turns left open."""
    say, asked, options, still = _phrases(case.language), state.asked, state.options, situation.still
    yes_no = {"offer_book": bool(still.tours), "offer_callback": still.callback, "offer_waitlist": False,
              "seat_offer": False, "take_soonest": bool(options) and _open_choice(options[0], still),
              "read_back": _read_back_wanted(state.awaiting, still, situation.changing)}
    skipped = situation.answered_by_turns(state)
    parts = [say["yes" if yes_no[name] else "no"] for name in YES_NO if name in asked and name not in skipped]
    chosen = None
    if "choice" in asked:
        chosen = next((o for o in options if _open_choice(o, still)), None)
    if "which_tour" in asked and len(case.existing) == 1:  # one tour: nothing for the turns to choose between
        chosen = next((o for o in options if o.booking_id in situation.changing), None)
    parts += [chosen.label] if chosen else []
    if "move_or_another" in asked:
        keeps = len(case.existing) - case.expect.cancelled
        parts.append(say["another"] if len(case.expect.booked) > keeps else say["move"])
    if "family_again" in asked and case.facts.children:
        parts.append(say["and"].join(c.name for c in case.facts.children))
    if "call_time" in asked and case.facts.call_time:
        parts.append(case.facts.call_time)
    return parts


def worded_state(reply: str) -> DialogueState:
    """What a reply asks and offers, read from its words (parent.py): for a model that declares nothing."""
    asked = [WORDED_ASKS[name] for name in sorted(asks_in(reply)) if name in WORDED_ASKS]
    options = [Option(o.index, o.text, o.date.isoformat() if o.date else "", o.time or "", o.ref or "")
               for o in parse_options(reply, MOMENT.date())]
    return DialogueState(asked=asked + (["choice"] if options else []), options=options)


def stand_in(case: ChatCase, state: DialogueState, situation: Situation) -> tuple[str | None, set[str]]:
    """The stand-in's message (None: nothing to say) and the facts it gives. Once the turns are over
    (`situation.last_turn_faced` is set) offers, read-backs and open choices are answered too."""
    parts, gave = _details(case, state.asked, state.ages_of)
    if situation.last_turn_faced is not None:
        parts += _decisions(case, state, situation)
    separator = "，" if case.language == "zh" else ". "
    return (separator.join(parts) if parts else None), gave


# --- running one -----------------------------------------------------------------------------------------------------


def _world(case: ChatCase):
    setup = [Booking(key=f"existing-{n}", day=tour.date, time=tour.times[0], child_name=tour.children[0].name,
                     child_age=tour.children[0].age) for n, tour in enumerate(case.existing)]
    known = bool(case.existing)
    return build_world(fixture=FIXTURE, persona_name=case.facts.parent_name if known else "",
                       persona_phone=case.facts.phone if known else "", setup=setup)


def _step(world, message: str) -> tuple[Step, DialogueState]:
    active = ActiveContext.load(world.school.pk, world.contact.pk)
    return Step(message, snapshot(world.school, world.contact.pk), dict(active.collected)), active.dialogue


def _literal(text: str) -> str:
    """A parent's message as runner.Conversation sends it (it formats scenario templates: braces are literal)."""
    return text.replace("{", "{{").replace("}", "}}")


async def run_case(case: ChatCase) -> ChatRun:
    """One conversation in a world of its own, with the clock at MOMENT."""
    with time_machine.travel(MOMENT, tick=True):
        try:
            world = await sync_to_async(_world)(case)
        except Exception as exc:  # e.g. an existing tour the school's rules refuse: the conversation can't run
            return ChatRun(case, Snapshot({}, {}, {}), error=f"setup failed: {type(exc).__name__}: {exc}")
        run = ChatRun(case, await sync_to_async(snapshot)(world.school, world.contact.pk))
        chat = Conversation(world)
        changing = _changing(case, world.refs)

        async def send(messages: tuple[str, ...], by_stand_in: bool = False) -> DialogueState:
            sent_at = len(chat.transcript)
            literal = [_literal(m) for m in messages]
            await chat.send(Burst(*literal) if len(literal) > 1 else literal[0])
            chat.transcript[sent_at]["stand_in"] = by_stand_in
            step, state = await sync_to_async(_step)(world, "\n".join(messages))
            run.steps.append(step)
            replies = [r for r in chat.transcript[sent_at:] if r["role"] == "concierge"]
            declared = any(str(r.get("model") or "").startswith(OFFLINE_MODEL) for r in replies)
            return state if declared or state.asked or state.options else worded_state(chat.last_reply)

        try:
            state = DialogueState()
            for number, turn in enumerate(case.turns):
                faced, state = state, await send(turn)
                over = number == len(case.turns) - 1
                for _ in range(STAND_IN_TURNS if over else 2):
                    situation = Situation(still_open(case, run.after), changing, faced if over else None)
                    message, gave = stand_in(case, state, situation)
                    if message is None or _looping(chat.transcript, message):
                        break
                    run.gave |= gave
                    state = await send((message,), by_stand_in=True)
        except Exception as exc:  # a crash is a wrong conversation, reported with its traceback
            run.error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
        finally:
            run.transcript = chat.transcript
            await sync_to_async(destroy_world)(world.school.pk)
    return run


def _looping(transcript: list[dict], message: str) -> bool:
    """The stand-in said exactly this twice already in a row (the concierge keeps asking the same)."""
    said = [e["text"] for e in transcript if e["role"] == "parent" and e.get("stand_in")]
    return said[-2:] == [message, message]


# --- scoring ---------------------------------------------------------------------------------------------------------


def _hours_said(texts: list[str]) -> set[int]:
    """Every hour of the day the parent's messages could mean by a number they wrote ("3" -> 3 and 15)."""
    hours = set()
    for text in texts:
        numbers = [int(m.group(1)) for m in HOUR_SAID.finditer(text)]
        numbers += [CHINESE_NUMBERS[m.group(1)] for m in CHINESE_HOUR.finditer(text)]
        for number in numbers:
            if number <= 12:
                hours |= {number % 12, number % 12 + 12}
            elif number < 24:
                hours.add(number)
    return hours


def _parent_names(step: Step) -> list[tuple[str, str]]:
    """(where, name) of every parent name stored at a step."""
    state, contact = step.state, step.state.contact
    found = [("contact name", contact.get("name")), ("name being collected", step.collected.get("parent_name"))]
    found += [(f"tour {row['reference']}", row["parent_name"]) for row in _mine(state.bookings)]
    found += [(f"call back {row['reference']}", row["parent_name"]) for row in _mine(state.callbacks)]
    return [(where, str(name)) for where, name in found if name]


def _preferred_names(step: Step) -> list[tuple[str, str]]:
    contact = step.state.contact
    found = [("preferred name", contact.get("preferred_name")),
             ("preferred name (context)", (contact.get("context") or {}).get("parent_preferred_name"))]
    return [(where, str(name)) for where, name in found if name]


def _children_stored(step: Step) -> list[tuple[str, str, int | None]]:
    """(where, name, age) of every child stored at a step (an age alone has the name "")."""
    contact = step.state.contact
    found = [("contact's child", name, age) for name, age in (contact.get("child_ages") or {}).items()]
    found += [("child (context)", name, None) for name in split_names((contact.get("context") or {}).get("child_name"))]
    for row in _mine(step.state.bookings):
        found += [(f"tour {row['reference']}", name, age) for name, age in row["child_details"]]
    collected = step.collected.get("children") or []
    found += [("child being collected", str(c.get("name") or ""), c.get("age")) for c in collected
              if isinstance(c, dict)]
    return found


def _tour_matching(wanted: tuple[Tour, ...], rows: list[dict]) -> bool:
    """Whether the rows are exactly the wanted tours, one each."""
    return len(wanted) == len(rows) and any(all(t.fits_row(r) for t, r in zip(wanted, order, strict=True))
                                            for order in permutations(rows))


def _describe(row: dict) -> str:
    kids = ", ".join(f"{n} ({a})" if a is not None else n for n, a in row["child_details"]) or row["child_name"]
    return f"{row['date']} {row['time']} {kids}"


def _end_failures(run: ChatRun) -> list[str]:
    """What is wrong with the database at the end."""
    case, before, after = run.case, run.before, run.after
    expect, failures = case.expect, []
    mine = _mine(after.bookings)
    live = [row for row in mine if row["status"] == "scheduled"]
    if not _tour_matching(expect.booked, live):
        failures.append(f"tours: {[_describe(r) for r in live] or 'none'}; wanted "
                        f"{[str(t) for t in expect.booked] or 'none'}")
    cancelled = sum(row["status"] == "cancelled" for row in mine)
    if cancelled != expect.cancelled:
        failures.append(f"cancelled: {cancelled} tour(s); wanted {expect.cancelled}")
    calls = [row for ref, row in after.callbacks.items() if ref not in before.callbacks]
    if expect.callback is None and calls:
        failures.append(f"call back: {[r['due_date'] + ' ' + r['window_start'] for r in calls]} made; wanted none")
    elif expect.callback is not None and not (len(calls) == 1 and calls[0]["status"] == "open"
                                              and expect.callback.fits(calls[0])):
        made = [f"{r['due_date']} {r['window_start']}-{r['window_end']} ({r['status']})" for r in calls]
        failures.append(f"call back: {made or 'none'}; wanted one on {expect.callback}")
    others = {ref: row for ref, row in after.bookings.items() if row["owner"] != "me"}
    if others != {ref: row for ref, row in before.bookings.items() if row["owner"] != "me"}:
        failures.append("another family's tour changed")
    if set(after.waitlist) - set(before.waitlist):
        failures.append(f"waitlist entries made: {sorted(set(after.waitlist) - set(before.waitlist))}")
    return failures


def _right_names(run: ChatRun) -> tuple[set[str], set[str]]:
    """The parent names right at the end (the expected one; the facts' one once the stand-in gave it or the tours
    set up before carry it) and those also right on the way (`may_store`). None right when none is expected."""
    case = run.case
    if case.expect.parent_name is None:
        return set(), set()
    given = "parent_name" in run.gave or bool(case.existing)
    final = {normal(n) for n in (case.expect.parent_name, case.facts.parent_name if given else "") if n}
    return final, final | {normal(n) for n in case.expect.may_store_names}


def _name_failures(run: ChatRun) -> list[str]:
    """Parent names: the contact's at the end, and every one stored on the way (a preferred name may be part of
    a right one)."""
    final, on_the_way = _right_names(run)
    name, failures = run.after.contact.get("name") or "", []
    if run.case.expect.parent_name is not None and normal(name) not in final:
        failures.append(f"parent name at the end {name!r}; wanted {run.case.expect.parent_name!r}")
    parts = [set(right.split()) for right in on_the_way]
    for step in run.steps:
        wrong = [f"{where} {name!r}" for where, name in _parent_names(step) if normal(name) not in on_the_way]
        wrong += [f"{where} {name!r}" for where, name in _preferred_names(step)
                  if not any(set(normal(name).split()) <= words for words in parts)]
        if wrong:
            failures.append(f"wrong parent name stored after {step.message!r}: {', '.join(wrong)}")
            break
    return failures


def _child_failures(run: ChatRun) -> list[str]:
    """Every child name and age stored at any step is one of the family's."""
    case = run.case
    known: dict[str, set[int]] = {}
    for child in [*case.facts.children, *(c for t in (*case.expect.booked, *case.existing) for c in t.children)]:
        known.setdefault(normal(child.name), set()).update([child.age] if child.age is not None else [])
    known.update({normal(n): set() for n in case.expect.may_store_names if normal(n) not in known})
    ages = set().union(*known.values()) if known else set()
    for step in run.steps:
        wrong = []
        for where, name, age in _children_stored(step):
            if name and normal(name) not in known:
                wrong.append(f"{where} {name!r}")
            elif age is not None and age not in (known.get(normal(name)) or ages if name else ages):
                wrong.append(f"{where} {name or 'a child'} aged {age}")
        if wrong:
            return [f"wrong child stored after {step.message!r}: {', '.join(wrong)}"]
    return []


def _time_failures(run: ChatRun) -> list[str]:
    """Every tour that existed at any step is wanted (or existed before); every collected time, and every call
    back's window, is one the parent could mean."""
    case = run.case
    tours = (*case.expect.booked, *case.existing)
    any_time = any(not t.times for t in case.expect.booked)
    times = {t for tour in tours for t in tour.times} | set(case.expect.may_store_times)
    hours = _hours_said([e["text"] for e in run.transcript if e["role"] == "parent"])
    for step in run.steps:
        wrong = [f"tour {_describe(row)}" for row in _mine(step.state.bookings)
                 if not any(t.fits(row["date"], row["time"]) for t in tours)]
        held = str(step.collected.get("preferred_time") or "")
        if held and not any_time and held not in times and int(held[:2]) not in hours:
            wrong.append(f"tour time {held} being collected")
        if case.expect.callback is not None:
            wrong += [f"call back {row['due_date']} {row['window_start']}-{row['window_end']}"
                      for row in _mine(step.state.callbacks) if not case.expect.callback.fits(row)]
        if wrong:
            return [f"wrong time stored after {step.message!r}: {', '.join(wrong)}"]
    return []


def _reply_failures(run: ChatRun) -> list[str]:
    replies = [e["text"] for e in run.transcript if e["role"] == "concierge"]
    failures = [f"no reply mentions any of {list(group)}" for group in run.case.expect.reply_mentions
                if not any(word.casefold() in reply.casefold() for reply in replies for word in group)]
    repeated = next((a for a, b in pairwise(replies) if normal(a) == normal(b)), None)
    if repeated is not None:
        failures.append(f"the same reply twice in a row: {repeated[:120]!r}")
    return failures


def score(run: ChatRun) -> list[str]:
    """Why the conversation is WRONG (empty: RIGHT)."""
    failures = [f"error: {run.error.splitlines()[0]}"] if run.error else []
    return failures + (_end_failures(run) + _name_failures(run) + _child_failures(run) + _time_failures(run)
                       + _reply_failures(run))


# --- the measure -----------------------------------------------------------------------------------------------------


@dataclass
class Scored:
    id: str
    language: str
    right: bool
    reasons: list[str]
    transcript: list[dict]
    note: str = ""


def summary(results: list[Scored]) -> list[dict]:
    """Right / conversations per language (in LANGUAGES order) and in total."""
    rows = []
    for language in [*LANGUAGES, "total"]:
        chosen = [r for r in results if language in ("total", r.language)]
        if chosen:
            right = sum(r.right for r in chosen)
            rows.append({"language": language, "conversations": len(chosen), "right": right,
                         "rate": round(right / len(chosen), 4)})
    return rows


async def measure_chats(path: Path, on_progress: Callable[[int, int], None] | None = None) -> dict:
    """Every conversation of the folder, scored: {"rows": per language and total, "results": each one}."""
    cases = load_cases(path)
    results = []
    with override_settings(CHAT_BURST_WINDOW_SECONDS=0, PIPEDRIVE_API_TOKEN=""):
        for number, case in enumerate(cases, 1):
            run = await run_case(case)
            reasons = score(run)
            results.append(Scored(case.id, case.language, not reasons, reasons, run.transcript, case.expect.note))
            if on_progress:
                on_progress(number, len(cases))
    return {"title": f"Chat conversations ({path}), clock at {MOMENT:%a %Y-%m-%d %H:%M} {MOMENT.tzinfo}",
            "rows": summary(results), "results": [asdict(r) for r in results]}
