"""What the conversation is waiting for, as data: written from what was actually sent, read by every model.

After each reply the loop writes a `DialogueState` into the active task (`memory.ActiveContext.dialogue`):

- `asked`: what the reply asked the parent for, typed (`ASKS`): a detail, a choice, a yes or no to an offer;
- `about`: the task those questions belong to (`TASKS`);
- `ages_of`: the children whose age it asked for;
- `options`: what it offered to choose from, as the parent saw them (position, label, and the slot or tour they
  stand for); the reply's buttons are made from these, so the text and the buttons cannot disagree;
- `subject`: the parent's tour the conversation is about (a move or cancellation in progress), until done;
- `awaiting`: the read-backs waiting for the parent's yes, as the tools gave them (status "confirm"), until done;
- `done`: what the turn committed (booked, moved, cancelled...), from the tools' success results only;
- `answered`: for each parent message since the last turn that finished a task (oldest first, at most
  MAX_ANSWERED), what the reply before it had asked: a message is read as the answer to its own question;
- `since_done`: how many parent messages came after the last turn that finished a task.

The read-back waiting for a yes (the exact action) is kept beside it by the tools (`ActiveContext.read_back`,
see `chatbot.agent.confirmation`).

The offline policy declares what its reply asked and offered (`chatbot.agent.offline.replies` records it while
writing the text). A hosted model declares nothing: its state is what the turn's tool results left open (the
details still missing, a read-back, the slots shown as buttons). No part of the product reads state back out of
the reply's words.
"""

import datetime as dt
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from bookings.models import WEEKDAY_NAMES

DETAILS = ("parent_name", "parent_phone", "parent_email", "child_name", "child_age")
ASKS = frozenset({
    *DETAILS,
    "when",  # a day and time (for a tour, a move, a waitlist)
    "choice",  # one of `options`
    "take_soonest",  # yes takes the first of `options` ("the soonest is ...: shall I take that one?")
    "call_time",  # a good time for a call back
    "which_tour",  # which of the parent's tours (the tours are `options`)
    "family_again",  # the same children as before, or someone else?
    "child_is",  # yes or no to "Is Mira your daughter?" (a name said without saying whose it is)
    "read_back",  # yes or no to the read-back of an action (ActiveContext.read_back)
    "offer_book",  # yes or no to "shall I book a tour?"
    "offer_callback",  # yes or no to "shall someone call you back?"
    "offer_waitlist",  # yes or no to "shall I put you on its waitlist?"
    "seat_offer",  # yes or no to a seat held from the waitlist (chatbot.outreach)
    "move_or_another",  # the child has a tour coming up: move it, or book another as well? (book_tour)
})
# What a conversation is told once, not in every reply that could say it
TOLD = frozenset({
    "answer_language",  # "(We have this answer in English only.)": the FAQ's answers lack the parent's language
})
TASKS = frozenset({"book", "reschedule", "cancel", "callback", "waitlist"})
DONE_BY_TOOL = {"book_tour": "booked", "request_callback": "callback_requested", "join_waitlist": "waitlisted"}
MAX_SINCE_DONE = 50
MAX_ANSWERED = 12


@dataclass(frozen=True)
class Option:
    """One thing offered to choose from: a tour slot, or one of the parent's tours (`booking_id`)."""

    position: int  # 1-based, as listed
    label: str  # as the parent saw it (a button's label and the value it sends)
    date: str  # ISO, school's zone
    time: str  # HH:MM
    booking_id: str = ""

    def as_fact(self) -> str:
        """"2. Wed 2026-11-25 09:00" (a tour adds its reference), as the prompt's facts write it."""
        try:
            day = WEEKDAY_NAMES[dt.date.fromisoformat(self.date).weekday()][:3]
        except ValueError:
            day = ""
        return " ".join(p for p in (f"{self.position}.", day, self.date, self.time, self.booking_id) if p)

    @classmethod
    def from_fact(cls, fact: str) -> "Option | None":
        words = str(fact).split()
        if len(words) < 4 or not words[0].rstrip(".").isdigit():
            return None
        position, _day, date, time, *rest = words
        return cls(int(position.rstrip(".")), f"{date} {time}", date, time, rest[0] if rest else "")


@dataclass
class DialogueState:
    asked: list[str] = field(default_factory=list)
    about: str = ""
    ages_of: list[str] = field(default_factory=list)
    options: list[Option] = field(default_factory=list)
    done: list[dict] = field(default_factory=list)
    since_done: int = 0
    awaiting: list[dict] = field(default_factory=list)  # {"tool", **the confirm result but its message}
    answered: list[list[str]] = field(default_factory=list)  # per parent message: the asks (and task) it answered
    subject: str = ""  # the tour reference a move or cancellation in progress is about
    told: list[str] = field(default_factory=list)  # notes said once a conversation (TOLD)

    def as_dict(self) -> dict:
        return {**asdict(self), "options": [asdict(o) for o in self.options]}

    @classmethod
    def from_dict(cls, data: dict | None) -> "DialogueState":
        """The state as `as_dict` stored it."""
        data = data if isinstance(data, dict) else {}
        return cls._read(data, [Option(**o) for o in data.get("options") or [] if isinstance(o, dict)],
                         [d for d in data.get("done") or [] if isinstance(d, dict)], data.get("since_done"))

    @classmethod
    def _read(cls, data: dict, options: list[Option], done: list[dict], since_done) -> "DialogueState":
        """The fields both forms write alike, with the ones they write differently already read."""
        return cls([a for a in data.get("asked") or [] if a in ASKS], str(data.get("about") or ""),
                   [str(n) for n in data.get("ages_of") or []], options, done, int(since_done or 0),
                   [a for a in data.get("awaiting") or [] if isinstance(a, dict)],
                   [[str(a) for a in asks] for asks in data.get("answered") or [] if isinstance(asks, list)],
                   str(data.get("subject") or ""), [t for t in data.get("told") or [] if t in TOLD])

    def as_prompt_dict(self) -> dict:
        """For ACTIVE_TASK.dialogue: only what says something; options as "2. Wed 2026-11-25 09:00"."""
        facts = {"asked": self.asked, "about": self.about, "subject": self.subject, "ages_of": self.ages_of,
                 "options": [o.as_fact() for o in self.options],
                 "done": [" ".join(filter(None, (d.get("action"), d.get("reference")))) for d in self.done],
                 "awaiting": self.awaiting,
                 "answered": self.answered if any(self.answered) else [], "told": self.told}
        if self.since_done:
            facts["parent_messages_since_done"] = self.since_done
        return {k: v for k, v in facts.items() if v}

    @classmethod
    def from_prompt_dict(cls, data: dict | None) -> "DialogueState":
        """ACTIVE_TASK.dialogue as a model reads it back (the offline policy)."""
        data = data if isinstance(data, dict) else {}
        done = [dict(zip(("action", "reference"), str(item).partition(" ")[::2], strict=True))
                for item in data.get("done") or []]
        options = [o for o in map(Option.from_fact, data.get("options") or []) if o]
        return cls._read(data, options, done, data.get("parent_messages_since_done"))


@dataclass
class Declared:
    """What a reply says it asked and offered (the offline policy's own account of its text)."""

    asked: list[str] = field(default_factory=list)
    about: str = ""
    ages_of: list[str] = field(default_factory=list)
    options: list[dict] = field(default_factory=list)  # {"date", "time", "booking_id"?, "label"?}, as listed
    subject: str = ""  # the parent's tour the reply is about
    told: list[str] = field(default_factory=list)  # notes said (TOLD)


def _done_action(name: str, result: dict) -> str:
    """What one tool result says was changed in the database ('' for nothing)."""
    status, action = result.get("status"), result.get("action")
    if name == "update_context":
        return "updated" if status == "updated" else ""
    if status != "success":
        return ""
    if name == "manage_tour_booking":
        return {"rescheduled": "rescheduled", "cancelled": "cancelled"}.get(action, "")
    if name == "manage_callback":
        return {"rescheduled": "callback_rescheduled", "cancelled": "callback_cancelled"}.get(action, "")
    if name == "answer_seat_offer":
        return "declined_seat" if action == "declined" else "booked"
    return DONE_BY_TOOL.get(name, "")


def done_in(observations: list[tuple[str, dict]]) -> list[dict]:
    """What the turn's tools changed in the database, in order, each with its reference (an update_context that
    changed a booked tour names it; one that changed the details being collected has none)."""
    done = []
    for name, result in observations:
        action = _done_action(name, result) if isinstance(result, dict) else ""
        if action:
            reference = (result.get("booking_id") or result.get("callback_id") or result.get("waitlist_id")
                         or result.get("booking_updated") or "")
            done.append({"action": action, "reference": str(reference)})
    return done


def _offered_slots(observations: list[tuple[str, dict]]) -> list[dict]:
    """The slots the turn's latest relevant tool result offered (what a hosted model's buttons show)."""
    slots: list[dict] = []
    for name, result in observations:
        status = result.get("status")
        if name in ("check_availability", "check_open_days"):
            slots = result.get("available_slots") or result.get("alternatives") or result.get("open_days") or []
        elif name in ("book_tour", "manage_tour_booking", "answer_seat_offer", "join_waitlist"):
            slots = [] if status in ("success", "confirm") else (
                result.get("alternatives") or result.get("options") or slots)
    return [s for s in slots if isinstance(s, dict) and s.get("date")]


def _left_open(observations: list[tuple[str, dict]]) -> tuple[list[str], str]:
    """What the turn's last task result leaves the parent to answer (for a model that declares nothing)."""
    for name, result in reversed(observations):
        status = result.get("status")
        if name in ("get_faq_answer", "check_unread_messages", "update_context"):
            continue
        about = {"book_tour": "book", "check_availability": "book", "check_open_days": "book",
                 "request_callback": "callback", "join_waitlist": "waitlist"}.get(name, "")
        if name == "manage_tour_booking":
            about = "cancel" if result.get("action") in ("cancel", "cancelled") else "reschedule"
        if status == "confirm":
            return ["read_back"], about
        if status == "missing_fields":
            missing = [str(m) for m in result.get("missing") or []]
            asked = [m for m in missing if m in DETAILS]
            if "booking_id" in missing:
                asked.append("which_tour")
            if set(missing) & {"preferred_date", "preferred_time", "new_date", "new_time"}:
                asked.append("when")
            if "best_time_to_call" in missing:
                asked.append("call_time")
            return asked, about
        return [], about if status != "success" else ""
    return [], ""


def _awaiting(previous: list[dict], observations: list[tuple[str, dict]], still_awaited: bool) -> list[dict]:
    """The read-backs the parent has not answered: this turn's, else the earlier ones while the tools still await
    a yes to them (`still_awaited`)."""
    now = [{"tool": name, **{k: v for k, v in result.items() if k not in ("status", "message")}}
           for name, result in observations if result.get("status") == "confirm"]
    return now or (previous if still_awaited else [])


def after_reply(previous: DialogueState, declared: Declared | None, observations: list[tuple[str, dict]],
                parent_messages: int, label: Callable[[dict], str], still_awaited: bool) -> DialogueState:
    """The state once a reply is sent: what it asked and offered (declared, else what the tools left open), what
    the turn did. `label(slot)` is how a slot reads on a button; `parent_messages` those the turn answered;
    `still_awaited`, whether the tools still wait for a yes (ActiveContext.read_back)."""
    done = [d for d in done_in(observations) if d["action"] != "updated"]  # a detail noted finishes no task
    since = 0 if done else min(previous.since_done + parent_messages, MAX_SINCE_DONE)
    asks = [*previous.asked, *([previous.about] if previous.about else [])]
    answered = [] if done else [*previous.answered, *[asks] * parent_messages][-MAX_ANSWERED:]
    if declared is not None:
        asked, about, ages_of, offered = declared.asked, declared.about, declared.ages_of, declared.options
    else:
        (asked, about), ages_of, offered = _left_open(observations), [], _offered_slots(observations)
        if offered and "read_back" not in asked:
            asked = [*asked, "choice"]
    options = [Option(position, str(o.get("label") or label(o)), str(o["date"]), str(o.get("time") or ""),
                      str(o.get("booking_id") or ""))
               for position, o in enumerate(offered, 1)]
    managed = [str(result["booking_id"]) for name, result in observations
               if name == "manage_tour_booking" and result.get("booking_id")]
    subject = "" if done else (declared.subject if declared is not None and declared.subject else
                               managed[-1] if managed else previous.subject)
    return DialogueState([a for a in dict.fromkeys(asked) if a in ASKS], about if about in TASKS else "",
                         list(ages_of), options, done, since, _awaiting(previous.awaiting, observations, still_awaited),
                         answered, subject, list(dict.fromkeys([*previous.told, *(declared.told if declared else [])])))
