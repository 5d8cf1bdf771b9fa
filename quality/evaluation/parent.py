"""The simulated parent: a scripted opening, then rule-driven answers from the persona's facts.

tau-bench drives agents with an LLM playing the user; this parent is rules, so a
run costs nothing and is the same every time, while still reacting to whatever
the concierge (any model) actually asks:

- a numbered list of slots -> pick the one the goal wants (by number, time,
  weekday, ordinal or full label), or ask for it by name once; a flexible
  parent takes the first;
- "which tour?" -> the reference (or the number) of the tour to change;
- questions about the parent's name, phone, e-mail, the child's name or age,
  the day and time, a good time to call, a reason, a topic -> the persona's facts;
- "shall I go ahead?" -> yes while the goal is open; offers of a call back or
  a booking -> yes only if that is the goal;
- the goal visibly done (a new reference, "has been cancelled") or nothing it
  can answer -> the parent stops.
"""

import datetime as dt
import re
from dataclasses import dataclass

from quality.evaluation.world import World

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_I = re.IGNORECASE
TOUR_REF = re.compile(r"\bT-[A-Z0-9]{6}\b")
CALLBACK_REF = re.compile(r"\bC-[A-Z0-9]{6}\b")
CANCELLED = re.compile(r"\b(?:has|have|'s|is|are|was|been|now|I've|I have)\s+(?:been\s+|now\s+)?cancell?ed\b", _I)
LIST_ITEM = re.compile(r"^\s*(?:\(?(\d{1,2})[.)]|[-*•])\s*(.+?)\s*$", re.MULTILINE)
TIME_12 = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?m\.?\b", _I)
TIME_24 = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b")
WEEKDAY_WORD = re.compile(r"\b(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\b", _I)
DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + "|".join(MONTHS) + r")[a-z]*\b", _I)
MONTH_DAY = re.compile(r"\b(" + "|".join(MONTHS) + r")[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b", _I)
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")

ASKS = {
    "child_name": re.compile(
        r"\b(?:child|son|daughter|kid|little one)'?s (?:full )?name\b|\bname of your (?:child|son|daughter)"
        r"|\bwhat(?:'s| is) (?:his|her|their) name\b|\bwho (?:is|'s) the tour for\b|\bchild called\b", _I),
    "child_age": re.compile(r"\bhow old\b|\b(?:child|son|daughter|kid)'?s age\b|\bage\b", _I),
    "parent_name": re.compile(
        r"\byour (?:full )?name\b|\bmay i have your name\b|\bwho am i speaking|\bwhat should i call you"
        r"|\bname (?:and|&) (?:a |your )?(?:phone|contact|mobile|number)", _I),
    "parent_phone": re.compile(
        r"\bphone\b|\bmobile\b|\bcontact number\b|\bnumber (?:we|i|they) can\b|\bnumber to call\b"
        r"|\bwhatsapp number\b|\bcontact details\b", _I),
    "parent_email": re.compile(r"\be-?mail\b", _I),
    "call_time": re.compile(
        r"\b(?:good|best|convenient|preferred) time (?:to|for (?:us|them|someone) to) (?:call|reach)"
        r"|\bwhen (?:should|can|shall|would|could) (?:we|they|someone|the team) (?:call|reach)"
        r"|\btime (?:to|for a) call\b|\bwhen (?:is|would be) (?:a )?good\b|\bwhen(?:'s| is) best\b", _I),
    "which_tour": re.compile(r"\bwhich (?:tour|booking|one)\b.*\b(?:cancel|move|change|reschedul)|\bwhich (?:tour|"
                             r"booking)\b|\bbooking (?:reference|id|number)\b|\breference number\b", _I),
    "when": re.compile(
        r"\bwhich (?:day|date|days)\b|\bwhat (?:day|date|time)\b|\bwhen would\b|\bsuits? you\b|\bsuit you\b"
        r"|\bpreferred (?:date|day|time)\b|\banother (?:day|date|time)\b|\bother (?:day|date|time)\b"
        r"|\bdifferent (?:day|date|time)\b|\bwhen (?:do|would|are) you\b", _I),
    "reason": re.compile(r"\b(?:reason|why)\b", _I),
    "topic": re.compile(r"\bwhat (?:would you like|do you want|is it|'s it) (?:to )?(?:discuss|talk about|about)"
                        r"|\btopic\b|\bwhat (?:it'?s|is it) regarding\b", _I),
    "offer_callback": re.compile(
        r"\b(?:would you like|shall i|should i|do you want|can i|may i|want me to|happy to)\b[^.?!]{0,80}"
        r"\b(?:call you|call back|callback|call-back|get back to you|contact you|reach out)", _I),
    "offer_book": re.compile(r"\b(?:would you like|do you want|shall i|should i|want me to)\b[^.?!]{0,40}"
                             r"\bbook\b", _I),
    "confirm": re.compile(
        r"\b(?:shall|should|can|may) i (?:go ahead|book|confirm|proceed|cancel|move|reschedule|arrange|request|"
        r"set|put)\b|\bwould you like me to\b|\bdo you want me to\b|\bconfirm\b[^.?!]*\?|\bis (?:that|this|"
        r"everything) (?:correct|right)\b|\bdoes (?:that|this) (?:look|sound) (?:right|good|correct)\b"
        r"|\bare you sure\b|\bgo ahead\?", _I),
}


@dataclass(frozen=True)
class Persona:
    """The facts the parent answers from."""

    name: str = "Jon Tan"
    phone: str = "+65 9123 4567"
    email: str = ""
    child: str = "Mia"
    age: int = 5
    relation: str = "daughter"
    call_time: str = "tomorrow morning"
    topic: str = "the fees"
    cancel_reason: str = "our plans have changed"

    @property
    def pronoun(self) -> str:
        return {"son": "he", "daughter": "she"}.get(self.relation, "they")


@dataclass(frozen=True)
class Goal:
    """What the parent is after, so it can pick slots and know when it's done.

    kind: "book", "reschedule", "cancel", "callback" or "none" (only the script).
    day/time/part: the slot the parent will accept (day is a world day key).
    pick: how the parent names the slot it picks: "number", "time", "day", "ordinal", "label".
    booking: the setup booking to change (reschedule/cancel).
    flexible: take the first offered slot when none matches.
    """

    kind: str = "none"
    day: str | None = None
    time: str | None = None
    part: str | None = None
    pick: str = "time"
    booking: str | None = None
    flexible: bool = False


@dataclass(frozen=True)
class Burst:
    """Several messages sent at once: stored together, answered in one turn."""

    messages: tuple[str, ...]

    def __init__(self, *messages: str):
        object.__setattr__(self, "messages", messages)


@dataclass(frozen=True)
class Respond:
    """A script step: answer the last reply by the rules (skipped if there is nothing to answer).

    `until_done`: keep answering until the goal is done, the parent has nothing to say or the turn cap.
    """

    until_done: bool = False


RESPOND = Respond()
FOLLOW_UP = Respond(until_done=True)


@dataclass(frozen=True)
class Option:
    index: int
    text: str
    date: dt.date | None
    time: str | None
    ref: str | None


def spoken_time(hhmm: str) -> str:
    """"09:00" -> "9am", "15:30" -> "3:30pm"."""
    hours, minutes = (int(x) for x in hhmm.split(":"))
    suffix = "am" if hours < 12 else "pm"
    hour = hours % 12 or 12
    return f"{hour}{suffix}" if minutes == 0 else f"{hour}:{minutes:02d}{suffix}"


def _time_in(text: str) -> str | None:
    match = TIME_24.search(text)
    if match:
        return f"{int(match.group(1)):02d}:{match.group(2)}"
    match = TIME_12.search(text)
    if match:
        hour = int(match.group(1)) % 12 + (12 if match.group(3).lower() == "p" else 0)
        return f"{hour:02d}:{match.group(2) or '00'}"
    return None


def _date_in(text: str, today: dt.date) -> dt.date | None:
    """The first date in the next eight weeks that fits the weekday / day / month written in `text`."""
    iso = ISO_DATE.search(text)
    if iso:
        try:
            return dt.date(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)))
        except ValueError:
            return None
    weekday = WEEKDAY_WORD.search(text)
    day_month = DAY_MONTH.search(text)
    month_day = MONTH_DAY.search(text)
    day = month = None
    if day_month:
        day, month = int(day_month.group(1)), MONTHS.index(day_month.group(2).lower()[:3]) + 1
    elif month_day:
        day, month = int(month_day.group(2)), MONTHS.index(month_day.group(1).lower()[:3]) + 1
    if not (weekday or day):
        return None
    for offset in range(0, 60):
        candidate = today + dt.timedelta(days=offset)
        if weekday and WEEKDAYS[candidate.weekday()][:3] != weekday.group(1).lower()[:3]:
            continue
        if day and (candidate.day, candidate.month) != (day, month):
            continue
        return candidate
    return None


def parse_options(reply: str, today: dt.date) -> list[Option]:
    """The numbered or bulleted choices in a reply (slots or tours), with their dates, times and references."""
    options = []
    for position, match in enumerate(LIST_ITEM.finditer(reply), start=1):
        number, text = match.groups()
        ref = TOUR_REF.search(text)
        time = _time_in(text)
        date = _date_in(TIME_24.sub(" ", text), today)
        if date or time or ref:
            options.append(Option(int(number) if number else position, text, date, time, ref.group(0) if ref else None))
    return options


REQUEST = re.compile(
    r"\b(?:could|can|may|would) (?:you |i )?(?:please )?(?:tell|share|give|provide|send|have|get|let me know|"
    r"confirm)\b|\b(?:please|kindly) (?:tell|share|give|provide|send|let me know|confirm)\b"
    r"|\bi(?:'ll| will| just| would|'d)? (?:still )?need\b", _I)


def asks_in(reply: str) -> set[str]:
    """What a reply asks the parent: its questions, its requests ("Could you tell me...", "I'll need:") and,
    in a reply that asks something, its list items ("- your full name")."""
    pieces = [p.strip() for p in re.split(r"(?<=[.!?:])\s+|\n+", reply) if p.strip()]
    asking = [p for p in pieces if p.endswith("?") or REQUEST.search(p)]
    if asking:
        asking += [p for p in pieces if LIST_ITEM.match(p)]
    text = " ".join(asking)
    return {name for name, pattern in ASKS.items() if pattern.search(text)}


class SimulatedParent:
    """Answers the concierge's replies for one run."""

    def __init__(self, persona: Persona, goal: Goal, world: World) -> None:
        self.persona = persona
        self.goal = goal
        self.world = world
        self.done = False
        self.asked_for_target = False
        self.sent: list[str] = []
        self.known_refs = set(world.refs.values())

    # --- the goal ------------------------------------------------------------------------------------------------

    def notice(self, reply: str) -> None:
        """Update whether the goal is visibly done after a reply."""
        kind = self.goal.kind
        if kind in ("book", "reschedule"):
            new = set(TOUR_REF.findall(reply)) - self.known_refs
            if new:
                self.done = True
            self.known_refs |= new
        elif kind == "cancel":
            self.done = self.done or bool(CANCELLED.search(reply))
        elif kind == "callback":
            self.done = self.done or bool(CALLBACK_REF.search(reply))

    @property
    def pursuing(self) -> bool:
        return self.goal.kind != "none" and not self.done

    # --- answering ---------------------------------------------------------------------------------------------------

    def answer(self, reply: str) -> str | None:
        """The parent's next message by the rules, or None when there is nothing to say."""
        if not reply:
            return None
        asks = asks_in(reply)
        options = parse_options(reply, self.world.today)
        parts: list[str] = []
        picked = False
        if self.pursuing and self.goal.kind in ("reschedule", "cancel") and (
            "which_tour" in asks or any(o.ref for o in options)
        ):
            tour = self._which_tour(options)
            if tour:
                parts.append(tour)
                picked = True
        if not picked and self.pursuing and self.goal.kind in ("book", "reschedule"):
            slot_options = [o for o in options if o.date and o.time and not o.ref]
            if slot_options:
                choice = self._pick(slot_options)
                if choice:
                    parts.append(choice)
                    picked = True
        if self.pursuing:
            parts += self._details(asks)
            if not picked and "when" in asks and self.goal.kind in ("book", "reschedule"):
                parts.append(self._when())
            if "reason" in asks and self.goal.kind == "cancel":
                parts.append(f"It's because {self.persona.cancel_reason}.")
        if "offer_callback" in asks and not parts:
            return "Yes, please." if self.goal.kind == "callback" and not self.done else "No, thank you."
        if "offer_book" in asks and not parts and not options:
            return "Yes, please." if self.goal.kind == "book" and not self.done else "No, thank you."
        if "confirm" in asks and not parts and self.pursuing:
            return "Yes, please go ahead."
        message = " ".join(p for p in parts if p)
        if not message or self.sent[-2:] == [message, message]:  # nothing to say, or stuck repeating itself
            return None
        return message

    def _details(self, asks: set[str]) -> list[str]:
        p = self.persona
        parts = []
        if self.goal.kind == "book":
            if {"child_name", "child_age"} <= asks:
                parts.append(f"{p.child}, {p.pronoun}'s {p.age}.")
            elif "child_name" in asks:
                parts.append(f"{p.pronoun.capitalize()} is called {p.child}.")
            elif "child_age" in asks:
                parts.append(f"{p.pronoun.capitalize()}'s {p.age} years old.")
        if self.goal.kind in ("book", "callback"):
            if {"parent_name", "parent_phone"} <= asks:
                parts.append(f"I'm {p.name}, my number is {p.phone}.")
            elif "parent_name" in asks:
                parts.append(f"My name is {p.name}.")
            elif "parent_phone" in asks:
                parts.append(f"My number is {p.phone}.")
            if "parent_email" in asks:
                parts.append(f"My e-mail is {p.email}." if p.email else "I'd rather not give an e-mail.")
        if self.goal.kind == "callback":
            if "call_time" in asks:
                parts.append(f"{p.call_time[0].upper()}{p.call_time[1:]} is best.")
            if "topic" in asks:
                parts.append(f"It's about {p.topic}.")
        return parts

    def _target(self) -> str:
        """The slot the parent wants, in words: "Tuesday 1 December at 9am", "Tuesday 1 December in the morning"."""
        goal = self.goal
        day = self.world.days[goal.day].spoken if goal.day else ""
        if goal.time:
            return f"{day} at {spoken_time(goal.time)}" if day else spoken_time(goal.time)
        if goal.part:
            return f"{day} in the {goal.part}" if day else f"any weekday in the {goal.part}"
        return day or "any weekday next week"

    def _when(self) -> str:
        target = self._target()
        return f"{target[0].upper()}{target[1:]}, please."

    def _which_tour(self, options: list[Option]) -> str | None:
        ref = self.world.refs.get(self.goal.booking or "")
        if not ref:
            return None
        listed = next((o for o in options if o.ref == ref), None)
        if listed and self.goal.pick == "number":
            return str(listed.index)
        return f"The one with reference {ref}."

    def _matches(self, option: Option) -> bool:
        goal = self.goal
        if goal.day and option.date != self.world.day(goal.day):
            return False
        if goal.time and option.time != goal.time:
            return False
        if goal.part and option.time:
            hour = int(option.time[:2])
            part = "morning" if hour < 12 else "afternoon" if hour < 17 else "evening"
            if part != goal.part:
                return False
        return True

    def _pick(self, options: list[Option]) -> str | None:
        chosen = next((o for o in options if self._matches(o)), None)
        if chosen is None and not self.asked_for_target and (self.goal.day or self.goal.time):
            self.asked_for_target = True
            return f"Do you have {self._target()}?"
        if chosen is None and self.goal.flexible:
            chosen = options[0]
        if chosen is None:
            return None
        how = self.goal.pick
        position = options.index(chosen)
        if how == "number":
            return str(chosen.index)
        if how == "ordinal" and position < len(ORDINALS):
            return f"The {ORDINALS[position]} one, please."
        weekday = WEEKDAYS[chosen.date.weekday()].capitalize()
        if how == "day" and sum(o.date == chosen.date for o in options) == 1:
            return f"{weekday}, please."
        if how == "time" and sum(o.time == chosen.time for o in options) == 1:
            return f"The {chosen.time} one, please."
        return f"{weekday} {chosen.date.day} {chosen.date:%B} at {chosen.time}, please."

    def sent_message(self, text: str) -> None:
        self.sent.append(text)
