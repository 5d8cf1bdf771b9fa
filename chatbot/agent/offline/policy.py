"""Decide the next step of a turn: which tools to call, or what to answer.

The policy keeps nothing between calls. Each call re-reads the conversation and
re-plans the whole turn in stages (unread messages; FAQ answers and
corrections; the main action of the flow; a second flow asked for in the same
turn; one follow-up); a stage whose calls already have results this turn is
passed, and when none is left it answers.
Memory across turns is the prompt: ACTIVE_TASK.collected, ACTIVE_TASK.dialogue (what
the last reply asked and offered, the read-back awaited, what was done: the policy's
replies declare it as they are written, chatbot/agent/dialogue.py), CONTACT.upcoming_tours,
and the parent's earlier messages, each read as the answer to what it was asked.
"""

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from functools import cached_property
from itertools import chain

from django.utils import translation

from bookings.callbacks import outside_hours, window_asked
from bookings.intake import REQUIRED, Intake, part_of_day, read_window
from chatbot.agent.datetimes import read_call_time
from chatbot.agent.dialogue import ASKS, TASKS, Declared, DialogueState
from chatbot.agent.offline import replies
from chatbot.agent.offline.compose import compose
from chatbot.agent.offline.conversation import Conversation, read
from chatbot.agent.offline.gloss import gloss
from chatbot.agent.offline.lexicon import CALLBACK_REF, NO, SAME_TIME, YES
from chatbot.agent.offline.understanding import (
    WHEN_FIELDS,
    Hints,
    Reading,
    keep_only,
    merge_children,
    read_lines,
    region_for,
    says_yes,
    understand,
)
from chatbot.agent.offline.when import When
from chatbot.agent.tools.results import MAX_SLOTS_SHOWN
from chatbot.faq import asked_nothing, has_topic

CHILD_FIELDS = ("child_name", "child_age", "children", "preferred_date", "preferred_time", "special_requirements")
FLOW_INTENTS = ("cancel", "reschedule", "callback", "book")
TASK_FLOWS = {
    "tour_booking": "book",
    "booking": "book",
    "reschedule": "reschedule",
    "tour_reschedule": "reschedule",
    "cancel": "cancel",
    "tour_cancel": "cancel",
    "callback": "callback",
    "callback_request": "callback",
    "open_day_booking": "book",  # chatbot.agent.tools.OPEN_DAY_TASK
}
PARENT_FIELDS = ("parent_name", "parent_phone", "parent_email")
# questions of the last reply that a "yes" answers, rather than the slots it listed ("propose_first": `choice`)
YES_ANSWERS = frozenset({"offer_book", "read_back", "confirm_cancel", "offer_waitlist", "offer_callback", "seat_offer"})
# The parent's answer to book_tour's has_upcoming_tour ("move that tour, or book another as well?"), glossed.
MOVE_IT = re.compile(r"\b(?:move|moving|change|reschedul\w*|shift|instead)\b", re.IGNORECASE)
ANOTHER_TOO = re.compile(r"\b(?:another|second|both|as well|also|too|new one|one more|extra|separate|keep|lagi)\b"
                         r"|再|另外|இன்னொ|மற்றொ", re.IGNORECASE)  # (words the glossary leaves as they are)
CONFIRMED_TOOLS = {"book_tour", "manage_tour_booking", "answer_seat_offer"}  # they commit after a read-back
TASK_TOOLS = {"book_tour", "check_availability", "manage_tour_booking", "request_callback", "manage_callback",
              "join_waitlist", "answer_seat_offer", "check_open_days"}
CALLBACK_TOOLS = ("request_callback", "manage_callback")
CALLBACK_CHANGES = {"callback_cancel": "cancel", "callback_change": "reschedule"}  # intent -> manage_callback action


@dataclass
class Call:
    name: str
    args: dict


@dataclass
class Decision:
    """Either tool calls or a final text, with what the text asked and offered (`declared`)."""

    calls: list[Call] = field(default_factory=list)
    text: str = ""
    declared: Declared | None = None


def _list_cut_in(day: str, options: list[dict]) -> bool:
    """Whether the list of slots shown may have been cut on `day`: it holds as many slots as a list shows, and
    `day` is its last day (the rest of that day was not listed)."""
    return len(options) >= MAX_SLOTS_SHOWN and options[-1]["date"] == day


def _slot_matches(slot: dict, when: When) -> bool:
    try:
        day = dt.date.fromisoformat(str(slot.get("date")))
    except ValueError:
        return False
    time = str(slot.get("time") or "")
    if when.date and when.kind == "weekday" and day.weekday() != when.date.weekday():
        return False
    if when.date and when.kind == "day" and day.day != when.date.day:
        return False
    if when.date and when.kind == "exact" and day != when.date:
        return False
    if when.start and not (when.start <= day <= (when.end or when.start)):
        return False
    return when.fits_time(time) if time else not when.time


class Turn:
    """One model call's view of the turn, with the plan derived from it."""

    def __init__(self, conv: Conversation, tools: set[str]):
        self.conv = conv
        self.tools = tools
        self.today = conv.today
        self.previous = conv.previous_reply()  # whether the concierge spoke yet; never read for what it said
        self.state = conv.dialogue
        self.asked = _asked(self.state, conv.contact)
        self.options = [{"date": o.date, "time": o.time, "booking_id": o.booking_id or None}
                        for o in self.state.options] or self._remembered_slots()
        self.hints = Hints(
            today=conv.today,
            now=conv.now,
            tour_times=tuple(conv.school.get("tour_start_times") or ()),
            region=region_for(conv.time_zone, str(conv.contact.get("phone") or "")),
            asked=self.asked,
            options=len(self.options),
            known={**self._contact_defaults(), **conv.collected},
            booked_children=self._booked_children(),
            asked_ages_of=tuple(self.state.ages_of),
            known_children=conv.known_children,
        )
        self.earlier = self._read_history()
        # "Is Mira your daughter?" asked of the parent's last message: a yes to it gives what that message said
        unsure = self.earlier[-1][0].unsure if "child_is" in self.asked and self.earlier else {}
        self.hints = replace(self.hints, known={**self._contact_defaults(), **self.said_before, **conv.collected},
                             unsure=unsure)
        unread = [
            str(m.get("message") or "")
            for r in conv.results("check_unread_messages")
            for m in (r.get("messages") or [])
            if isinstance(m, dict)
        ]
        self.said_now = [*conv.turn_texts, *[t for t in unread if t.strip()]]
        self.reading = understand(self.said_now, self.hints)

    # --- what the conversation remembers -------------------------------------------------

    def _remembered_slots(self) -> list[dict]:
        """ACTIVE_TASK.slots_shown, less the slots this turn's tools just found (the parent has not seen them)."""
        fresh = {
            (s.get("date"), s.get("time"))
            for step in self.conv.steps
            if step.result
            for key in ("available_slots", "alternatives")
            for s in step.result.get(key) or []
            if isinstance(s, dict)
        }
        return [s for s in self.conv.slots_shown if (s.get("date"), s.get("time")) not in fresh]

    def _booked_children(self) -> tuple[str, ...]:
        """The children's names on the parent's tours, as they were before this turn's corrections."""
        before = [r.get("old_value") for r in self.conv.results("update_context")
                  if r.get("field") == "child_name" and r.get("booking_updated")]
        return tuple(str(name) for name in [*before, *(t.get("child_name") for t in self.conv.upcoming_tours)]
                     if name)

    def _contact_defaults(self) -> dict:
        """The parent's details on file, so a returning parent is not asked again."""
        contact = self.conv.contact
        on_file = {"parent_name": "name", "parent_phone": "phone", "parent_email": "email"}
        return {name: contact[key] for name, key in on_file.items() if contact.get(key)}

    def _read_history(self) -> list[tuple[Reading, int]]:
        """The parent's earlier messages, each read on its own, numbered by the task they belong to: 1 for those
        after the last turn that completed a booking, move, cancellation or call back (the dialogue state counts
        them), else 0."""
        said = [m["content"] for m in self.conv.history if m["role"] == "user"]
        state = self.state
        current = state.since_done if state.done or state.since_done else len(said)  # no state yet: all of them
        answered = state.answered[-len(said):] if said else []  # the asks each message answered, if kept
        answered = [[]] * (len(said) - len(answered)) + answered
        readings, known = [], dict(self.hints.known)
        for index, text in enumerate(said):
            asks = answered[index]
            asked = _asked(DialogueState([a for a in asks if a in ASKS], next((a for a in asks if a in TASKS), "")),
                           {})
            reading = read_lines(text, replace(self.hints, asked=asked, options=0, known=dict(known),
                                                 asked_ages_of=()))
            known.update(reading.facts)
            readings.append((reading, int(index >= len(said) - current)))
        return readings

    @cached_property
    def past(self) -> list[Reading]:
        """The parent's messages since the last completed task."""
        return [reading for reading, task in self.earlier if task == 1]

    @cached_property
    def said_before(self) -> dict:
        """Every detail the parent gave earlier (the latest of each), e.g. the old value a correction fixes."""
        facts: dict = {}
        for reading, _ in self.earlier:
            facts.update(reading.facts)
        return facts

    @cached_property
    def parent_memory(self) -> dict:
        """The parent's own details from anywhere in the conversation: they outlive a finished task."""
        facts: dict = {}
        for reading, _ in self.earlier:
            facts.update({k: v for k, v in reading.facts.items() if k in PARENT_FIELDS})
        return facts

    @cached_property
    def memory(self) -> Reading:
        """What the parent said earlier in the current task."""
        reading = Reading()
        for current in self.past:
            if "another" in current.intents:  # a new child: forget the previous one's details
                reading = Reading(facts={k: v for k, v in reading.facts.items() if k not in CHILD_FIELDS})
            reading = reading.merge(current)
        return reading

    @cached_property
    def booked(self) -> dict | None:
        """The tour booked (or moved) earlier in this conversation and not cancelled since."""
        last = str(self.conv.task.get("last_booking_id") or "")
        made_now = {str(s.result.get("booking_id")) for s in self.conv.steps  # booked this turn (a move is not)
                    if s.result and s.name in ("book_tour", "answer_seat_offer")}
        if not last or last in made_now:
            return None
        return next((tour for tour in self.conv.upcoming_tours if tour["booking_id"] == last), None)

    @property
    def own_task_steps(self) -> bool:
        """Whether this turn's tools ran already: ACTIVE_TASK may then show their effect, not the state before."""
        return any(step.name in TASK_TOOLS for step in self.conv.steps)

    def _flow_of_steps(self) -> str:
        """The flow this turn's first task tool belongs to (ACTIVE_TASK may already show its effect instead)."""
        step = next(s for s in self.conv.steps if s.name in TASK_TOOLS)
        if step.name == "manage_tour_booking":
            return "cancel" if step.args.get("action") == "cancel" else "reschedule"
        return "callback" if step.name in CALLBACK_TOOLS else "book"

    @cached_property
    def another(self) -> bool:
        return "another" in self.reading.intents or "another" in self.memory.intents

    @cached_property
    def spent(self) -> bool:
        """Whether the child and slot in ACTIVE_TASK belong to a tour that is already booked."""
        return bool(self.booked or self.another or self.holds_booked_slot)

    @cached_property
    def holds_booked_slot(self) -> bool:
        """Whether ACTIVE_TASK's day and time are those of a tour already booked (left from that booking)."""
        collected = self.conv.collected
        return any(
            t.get("date") == collected.get("preferred_date") and t.get("time") == collected.get("preferred_time")
            for t in self.conv.upcoming_tours
        )

    @cached_property
    def collected(self) -> dict:
        collected = {k: v for k, v in self.conv.collected.items() if v not in (None, "")}
        if "another" in self.reading.intents or self.holds_booked_slot:  # nothing of the last booking carries over
            collected = {k: v for k, v in collected.items() if k not in CHILD_FIELDS}
        return collected

    @cached_property
    def facts(self) -> dict:
        """Booking facts: contact on file < earlier messages < ACTIVE_TASK < this turn. The children are in
        `family`; for one child they are also child_name / child_age."""
        memory = self.memory.facts
        if "another" in self.reading.intents:  # earlier messages were about the other child
            memory = {k: v for k, v in memory.items() if k not in CHILD_FIELDS}
        facts = {**self._contact_defaults(), **self.parent_memory, **memory, **self.collected, **self.reading.facts}
        facts = {k: v for k, v in facts.items() if k not in ("child_name", "child_age", "children")}
        if self.several:
            return facts
        one = self.family[0] if self.family else {}
        return {**facts, **{f"child_{k}": one[k] for k in ("name", "age") if one.get(k) not in (None, "")}}

    # --- the children ----------------------------------------------------------------------

    @cached_property
    def _family_readings(self) -> list[Reading]:
        """The parent's messages about this booking's children: earlier ones of the task (since "another
        child"), then this turn's."""
        readings: list[Reading] = []
        for reading in self.past:
            readings = [] if "another" in reading.intents else readings
            readings.append(reading)
        return [] if "another" in self.reading.intents else readings

    @cached_property
    def family(self) -> list[dict]:
        """The children coming, in the order named ({"name"?, "age"?}). ACTIVE_TASK holds what the tools were
        told; without it, the earlier messages of the task are read again; this turn's message goes on top."""
        collected = self.collected
        base = [dict(c) for c in collected.get("children") or []] or [
            {k: collected[f"child_{k}"] for k in ("name", "age") if collected.get(f"child_{k}") not in (None, "")}]
        base = [c for c in base if c]
        if not base:
            for reading in self._family_readings:
                base = _with_children(base, reading)
        return _with_children(base, self.reading)

    @cached_property
    def family_size(self) -> int:
        """How many children come: those known, or more when the parent said so ("my three kids")."""
        readings = [*self._family_readings, self.reading]
        restricted = max((i for i, r in enumerate(readings) if r.only), default=-1)  # "only Noah is coming"
        counts = [r.child_count for r in readings[restricted + 1 :]]
        return max([len(self.family), *counts])

    @property
    def several(self) -> bool:
        return self.family_size >= 2

    @property
    def offers_known_family(self) -> bool:
        """A returning family starts a booking without naming a child: offer the children we know."""
        return (len(self.conv.known_children) >= 2 and not self.family and not self.family_size
                and self.starting and self.flow == "book" and "family_again" not in self.asked)

    def _moving_intake(self, intent: str) -> str:
        """"Can we move it to Friday?" before anything is booked changes the booking being collected."""
        collecting = bool(self.collected)
        return "book" if intent == "reschedule" and collecting and not self.conv.upcoming_tours else intent

    @property
    def relation(self) -> str:
        return self.reading.relation or self.memory.relation

    # --- choosing a slot ----------------------------------------------------------------

    @cached_property
    def choice(self) -> tuple[list[dict], bool]:
        """(matching offered slots, whether the parent was picking one)."""
        options = [o for o in self.options if o.get("time") and not o.get("booking_id")]  # slots, not tours
        reading = self.reading
        when = reading.when
        if reading.choice is not None and not options:  # a number picking one of the listed tours
            return [], False
        dated = [o for o in options if _slot_matches(o, when)] if when.kind == "day" else []
        if reading.choice is not None and len(dated) == 1:  # "the 2nd" when the 2 December is listed: that day
            return dated, True
        if reading.extreme and options:  # "the soonest", "the latest in the afternoon", "either is fine"
            fitting = [o for o in options if _slot_matches(o, when)] or ([] if not when.is_empty else options)
            if not fitting:  # "make it morning, earliest" to afternoon slots: the soonest of another search
                return [], False
            if reading.extreme in ("any", "either"):  # "either is fine": of those that fit what was asked for
                fitting = [o for o in fitting if self.intake.fits(o["date"], o["time"])] or fitting
            if reading.extreme == "either" and len(fitting) > 2:  # "either" of four: which two is not said
                return fitting, True
            pick = (max if reading.extreme == "latest" else min)(fitting, key=lambda o: (o["date"], o["time"]))
            return [pick], True
        if reading.choice is not None:
            if reading.choice == -1:
                return [options[-1]], True
            return (options[reading.choice : reading.choice + 1] if reading.choice < len(options) else []), True
        proposed = len(options) == 1 or "propose_first" in self.asked  # "great" to the one (or soonest) offered
        if options and proposed and "yes" in reading.intents and when.is_empty:
            return options[:1], True
        if (options and "yes" in reading.intents and when.is_empty and reading.hour is None
                and "options" in self.asked and not self.asked & YES_ANSWERS):
            # "ok, move it" to the new day's slots: at the tour's own time, as a move keeps it unless told
            kept = [o for o in options if o.get("time") == self._moving_time] if "reschedule" in self.asked else []
            return (kept, True) if len(kept) == 1 else (options, True)  # else all still fit: the reply asks which
        if options and reading.hour is not None and when.is_empty:
            hours = {reading.hour, reading.hour + 12}
            matches = [o for o in options if int(str(o["time"])[:2]) in hours]
            return matches, bool(matches)
        if not options or when.is_empty:
            return [], False
        matches = [o for o in options if _slot_matches(o, when)]
        if when.kind == "exact" and when.time and not matches:
            return [], False
        if len(matches) == 1 and not when.time and _list_cut_in(matches[0]["date"], options):
            # "monday then, after lunch" when the list was cut in Monday: its other afternoon slots were not shown,
            # so the one that was is no choice made; that day's slots at that part of the day are looked up
            return [], False
        return matches, bool(matches)

    @property
    def _moving_time(self) -> str:
        """The start time of the tour being moved (the dialogue state's subject), '' when none is."""
        tour = next((t for t in self.conv.upcoming_tours if t["booking_id"] == self.state.subject), {})
        return str(tour.get("time") or "")

    @cached_property
    def intake(self) -> Intake:
        """What the parent asked for so far (the intake in ACTIVE_TASK), refined by what this turn says."""
        intake = Intake.from_dict(self.collected)
        when = self.reading.when
        date = when.date
        if date and when.kind == "weekday":  # "next week" (or "next Tuesday") then "Thursday": that week's Thursday
            near = intake.day_in_range(date.weekday()) or self._in_the_tours_week(date.weekday())
            date = near if near and near > self.today.isoformat() else date
        intake.record_when(date=date, date_from=when.start, date_to=when.end, part=when.part_of_day, time=when.time,
                           window=(when.after, when.before))
        return intake

    def _in_the_tours_week(self, weekday: int) -> str | None:
        """For a move, that weekday in the week of the tour being moved ("khamis depan ke jumaat": the Friday after
        that Thursday, not this Friday); None for anything else."""
        if not ("reschedule" in self.reading.intents or "reschedule" in self.asked):
            return None
        tours = self.conv.upcoming_tours  # the one being moved, or the only one (not target_tour: it reads the flow)
        tour = next((t for t in tours if t["booking_id"] == self.state.subject), tours[0] if len(tours) == 1 else None)
        return Intake(preferred_date=tour["date"]).day_in_range(weekday) if tour and tour.get("date") else None

    @cached_property
    def slot(self) -> tuple[str | None, str | None]:
        """The (date, time) asked for: a picked option, or the day and time the intake holds now."""
        matches, picking = self.choice
        if picking and len(matches) == 1:
            return matches[0]["date"], matches[0]["time"]
        return self.intake.preferred_date, self.intake.preferred_time

    @property
    def when_args(self) -> dict:
        """check_availability arguments for everything the parent said about when."""
        return self.intake.search_args()

    # --- which flow ------------------------------------------------------------------------

    @cached_property
    def flow(self) -> str:
        """What this turn is about: book, reschedule, cancel, callback, my_tour, faq, keep, drop, refuse or chat."""
        reading = self.reading
        intents = reading.intents
        if "injection" in intents:
            return "refuse"
        if self.upcoming_choice:  # the answer to "move that tour, or book another as well?"
            return "reschedule" if self.upcoming_choice == "move" else "book"
        if "keep" in intents:
            return "book" if "book" in intents else "keep"
        # the answer to a seat held from a waitlist, however long the message (in a new chat: CONTACT.seat_offer,
        # which is gone from the facts once answered this turn)
        offered = self.conv.contact.get("seat_offer") and not self.state.asked
        if "seat_offer" in self.asked or offered or self.conv.called("answer_seat_offer"):
            said = " ".join(self.conv.turn_texts)
            if "no" in intents or NO.match(said):
                return "decline_offer"
            if "yes" in intents or YES.match(said):
                return "accept_offer"
        if "waitlist" in intents or ("yes" in intents and "offer_waitlist" in self.asked):
            return "waitlist"
        if "open_day" in intents and not intents & {"book", "yes"} and reading.when.is_empty:
            return "open_days"  # "is there an open day?"
        if "arriving" in intents and not intents & set(FLOW_INTENTS):
            return "my_tour"  # "running 10 mins late", "we'll be there by 9:15": the tour, not a new time for it
        if self.moves_booked_tour:
            return "reschedule"
        if self.corrected_tour and not intents & set(FLOW_INTENTS):  # "on T-7KQ3XM it's Miah": fix it only
            return "chat"
        if "confirm_cancel" in self.asked and "book" in intents and not intents & {"no", "keep"}:
            return "cancel"  # "now book Sam" after "cancel Mia's tour?": the cancellation still stands, read back both
        if "cancel" in intents and not self.conv.upcoming_tours and "offer_book" in self.asked:
            # "cancel that" at a booking's read-back: nothing was booked; "cancel that, book wed instead": the
            # booking still to be made changes day
            return "drop" if reading.when.is_empty else "book"
        if "no" in intents and "offer_book" in self.asked and self._no_again:
            return "drop"  # a second "no" to the same read-back: it is not wanted, not a change to ask about again
        if intents & set(CALLBACK_CHANGES) or self.moves_callback:  # "change my callback C-WUC3X6 to..."
            return "callback"
        for intent in FLOW_INTENTS:
            if intent in intents:
                return self._moving_intake(intent)
        if "my_tour" in intents:
            return "my_tour"
        if self.names_upcoming_tour:  # "ok see you wed" after Wednesday's tour was booked: that tour, not a new one
            return "my_tour" if reading.questions else "chat"
        if "yes" in intents and "offer_callback" in self.asked:
            return "callback"
        if "yes" in intents and "confirm_cancel" in self.asked:
            return "cancel"  # a yes to "cancel Mia's tour (and book Sam's)?": the booking follows as `then`
        if "yes" in intents and "offer_book" in self.asked:
            return "book"
        pending = self.pending
        said_when = not reading.when.is_empty or reading.choice is not None or reading.hour is not None
        changes = reading.facts or said_when
        if intents & {"no"} and self.asked & {"offer_callback", "offer_book"} and not (changes and pending):
            return "chat"  # "no, the 4pm one" at a read-back changes the booking instead
        if pending and (reading.facts or said_when or "availability" in intents or reading.call_time):
            return pending
        if pending and reading.booking_refs:
            return pending
        if set(self.corrections) - set(WHEN_FIELDS) and not pending:  # "her name is spelled Miah, not Mia": fix it,
            return "chat"  # start nothing (a day or time corrected is a booking's: the slots are offered)
        if "availability" in intents or said_when or set(reading.facts) - set(PARENT_FIELDS):
            return "book"
        if pending and "child_is" in self.asked and intents & {"yes", "no"}:  # "Is Mira your daughter?" "no"
            return pending
        closing = intents & {"thanks", "bye", "greet", "offtopic", "no"}
        # "yes, thank you" goes on; "ok thanks, bye" leaves: the question asked is not asked again
        if pending and not reading.questions and (("yes" in intents and "bye" not in intents) or not closing):
            return pending
        if reading.questions:
            return pending or "faq"
        return "chat"

    @cached_property
    def names_upcoming_tour(self) -> bool:
        """Whether the message only mentions the day (and time) of a tour already booked, to say goodbye, thank or
        ask about it ("ok see you wed", "still on for 9am Wednesday?"): nothing in it asks for a change."""
        reading, when = self.reading, self.reading.when
        if when.date is None or reading.facts or reading.choice is not None:
            return False
        if reading.intents - {"yes", "thanks", "bye", "greet"}:
            return False
        if not (reading.intents & {"thanks", "bye"} or reading.questions):
            return False

        def same_day(tour: dict) -> bool:
            day = dt.date.fromisoformat(str(tour.get("date")))
            return day == when.date or (when.kind == "weekday" and day.weekday() == when.date.weekday())

        return any(same_day(tour) and when.fits_time(str(tour.get("time"))) for tour in self.conv.upcoming_tours)

    @cached_property
    def upcoming_choice(self) -> str:
        """"move" or "another": the parent's answer to book_tour's question about the child's upcoming tour
        (ACTIVE_TASK.upcoming_tour_asked, asked in the last reply); "" when this message is not one."""
        if not self.conv.task.get("upcoming_tour_asked") or "move_or_another" not in self.state.asked:
            return ""
        said = " ".join(gloss(text).text for text in self.conv.turn_texts)
        if ANOTHER_TOO.search(said) or "another" in self.reading.intents:
            return "another"
        if MOVE_IT.search(said) or self.reading.intents & {"reschedule", "yes"}:  # "Shall I move that tour...?"
            return "move"
        return ""

    @cached_property
    def then(self) -> str:
        """The flow asked for after this one in the same turn: a booking after a cancellation ("please cancel
        T-7KQ3XM" + "and book my son Sam on Thursday at 11am")."""
        confirming_both = "yes" in self.reading.intents and "offer_book" in self.asked
        return "book" if self.flow == "cancel" and ("book" in self.reading.intents or confirming_both) else ""

    @property
    def moves_booked_tour(self) -> bool:
        """"Actually make it 11am" (or a bare "2pm" right after the confirmation) about the tour just booked."""
        intents = self.reading.intents
        if not self.booked or self.another or intents & {"cancel", "callback"}:
            return False
        just_done = bool(self.state.done)
        said_when = not self.reading.when.is_empty
        if "book" in intents:  # "no, book it on the 8th instead" right after the confirmation fixes that tour
            return just_done and said_when and self.reading.correcting
        bare_when = said_when and not self.reading.facts and not intents - {"yes", "availability"}
        return (self.reading.correcting and said_when) or (just_done and bare_when)

    @property
    def starting(self) -> bool:
        """Whether this turn starts the flow (and so the reply opens it) rather than continuing it."""
        intents = self.reading.intents
        if self.flow in intents or (self.flow == "book" and "yes" in intents and "offer_book" in self.asked):
            return True
        return self.flow != self.pending

    @cached_property
    def pending(self) -> str:
        """The unfinished task this turn continues, from the last reply, earlier messages and ACTIVE_TASK."""
        asked = self.asked
        if "browsing" in self.reading.intents:  # "just browsing": the task is put aside, nothing more is asked
            return ""
        if "call_time" in asked or ("callback" in asked and asked & {"parent_name", "parent_phone"}):
            return "callback"
        if "which_tour" in asked:
            return "cancel" if "cancel" in asked else "reschedule"
        if "reschedule" in asked and not self.state.done:
            return "reschedule"
        for past in reversed(self.past):
            intents = past.intents
            if ("keep" in intents and "book" not in intents) or "browsing" in intents:
                return ""
            for intent in FLOW_INTENTS:
                if intent in intents:
                    return self._moving_intake(intent)
        task = self._flow_of_steps() if self.own_task_steps else TASK_FLOWS.get(str(self.conv.task.get("task_type")))
        if task and not self.state.done:
            return task
        if self.previous and not self.state.done and asked & {"options", "when", *REQUIRED}:
            return "book"
        return ""

    # --- the plan --------------------------------------------------------------------------

    def _unread(self) -> list[Call]:
        if self.conv.unread > 0:
            return [Call("check_unread_messages", {})]
        return []

    def _info(self) -> list[Call]:
        calls = [Call("get_faq_answer", {"question": self.reading.said.get(q, q)})
                 for q in dict.fromkeys(self.reading.questions)]
        fixed_now = {s.args.get("field_to_update") for s in self.conv.steps if s.name == "update_context"}
        on_tour = {"booking_id": self.corrected_tour} if self.corrected_tour else {}
        for name, value in sorted(self.corrections.items()):
            if name not in fixed_now:  # once: the stored value changes under the correction
                args = {"field_to_update": name, "new_value": str(value), "reason": "user_correction", **on_tour}
                calls.append(Call("update_context", args))
        return calls

    @cached_property
    def corrected_tour(self) -> str:
        """The reference of a booked tour whose details this message corrects by reference ("on T-7KQ3XM the
        name is Miah, not Mia"), when it is not the tour booked in this conversation."""
        refs = self.reading.booking_refs
        details = self.reading.corrections - set(WHEN_FIELDS)
        if not (self.reading.correcting and refs and details):
            return ""
        booked = (self.booked or {}).get("booking_id")
        return "" if refs[-1] == booked else refs[-1]

    @cached_property
    def corrections(self) -> dict:
        """Corrected fields whose old value is known and different (a booked tour's slot is moved instead)."""
        new_values = dict(self.reading.facts)
        date, time = self.slot
        new_values.update({"preferred_date": date, "preferred_time": time})
        known = {**self._contact_defaults(), **self.said_before, **self.conv.collected}
        fixed = {}
        for name in self.reading.corrections:
            if name in WHEN_FIELDS and (self.booked or self.corrected_tour):
                continue
            old, new = known.get(name), new_values.get(name)
            if new not in (None, "") and (self.corrected_tour or old not in (None, "") and str(old) != str(new)):
                fixed[name] = new
        return fixed

    def _main(self) -> list[Call]:
        return {
            "book": self._book,
            "reschedule": lambda: self._manage("reschedule"),
            "cancel": lambda: self._manage("cancel"),
            "callback": self._callback,
            "waitlist": self._waitlist,
            "open_days": lambda: [Call("check_open_days", {})],
            "accept_offer": lambda: [Call("answer_seat_offer", {"answer": "accept"})],
            "decline_offer": lambda: [Call("answer_seat_offer", {"answer": "decline"})],
        }.get(self.flow, list)()

    def _waitlist(self) -> list[Call]:
        """Join the waitlist of the tour this message names, else of the full tour the booking last hit."""
        names = ("parent_name", "parent_phone", "child_name", "child_age")
        args = {k: v for k, v in self.booking_args.items() if k in names}
        date, time = self.slot
        if not self.reading.when.is_empty and date:
            args["preferred_date"] = date
            if time:
                args["preferred_time"] = time
        return [Call("join_waitlist", args)]

    def _then(self) -> list[Call]:
        """The second flow's calls, once the first flow's tool has answered."""
        return self._book() if self.then and self.conv.called("manage_tour_booking") else []

    def _follow_up(self) -> list[Call]:
        """Offer slots when only the slot is missing (a booking), or the tool asks for the new one (a move)."""
        if self.flow == "book" and not self.conv.called("check_availability") and not self._ambiguous:
            result = self.conv.last_result("book_tour")
            if result is None:
                missing = self.missing
            else:
                missing = result.get("missing") or [] if result.get("status") == "missing_fields" else []
            if missing and set(missing) <= set(WHEN_FIELDS):
                return [Call("check_availability", self.when_args)]
        if self.flow == "reschedule":
            result = self.conv.last_result("manage_tour_booking") or {}
            missing = result.get("missing") or [] if result.get("status") == "missing_fields" else ["booking_id"]
            if "booking_id" not in missing and not self.conv.called("check_availability"):
                return [Call("check_availability", self.when_args)]
        return []

    @property
    def _ambiguous(self) -> bool:
        matches, picking = self.choice
        return picking and len(matches) != 1

    @cached_property
    def booking_args(self) -> dict:
        facts = self.facts
        date, time = self.slot
        names = ("parent_name", "parent_phone", "parent_email", "child_name", "child_age", "special_requirements")
        args = {k: facts[k] for k in names if facts.get(k)}
        if self.several and self.family:
            args["children"] = self.family
        if date:
            args["preferred_date"] = date
        if time:
            args["preferred_time"] = time
        return args

    @property
    def missing(self) -> list[str]:
        if not self.several:
            return [f for f in REQUIRED if not self.booking_args.get(f)]
        named = [c for c in self.family if c.get("name")]
        children = {"child_name": len(named) >= self.family_size,
                    "child_age": bool(named) and all(c.get("age") is not None for c in named)}
        return [f for f in REQUIRED if not children.get(f, self.booking_args.get(f))]

    @cached_property
    def open_day(self) -> bool:
        """Whether the booking is for one of the school's open days rather than a regular tour."""
        return ("open_day" in self.reading.intents or "open_day" in self.memory.intents
                or self.conv.task.get("task_type") == "open_day_booking")

    def _book_open_day(self) -> list[Call]:
        """List the open days first; then book the one picked (or the only one) with the parent's details."""
        found = self.conv.last_result("check_open_days")
        if found is None and not self.options:
            return [Call("check_open_days", {})]
        listed = (found or {}).get("open_days") or [o for o in self.options if o.get("time")
                                                    and not o.get("booking_id")]
        args = {**self.booking_args, "open_day": True}
        if "preferred_date" not in args and len(listed) == 1:
            args.update(preferred_date=listed[0]["date"], preferred_time=listed[0]["time"])
        return [Call("book_tour", args)]

    def _book(self) -> list[Call]:
        if self.upcoming_choice == "another":  # the details are in ACTIVE_TASK: book them besides the upcoming tour
            date, time = self.slot if not self.reading.when.is_empty else (None, None)
            return [Call("book_tour", {"another_tour": True, **({"preferred_date": date} if date else {}),
                                       **({"preferred_time": time} if time else {})})]
        if self.open_day:
            return self._book_open_day()
        if self._ambiguous:
            return []
        args = self.booking_args
        exact = bool(args.get("preferred_date") and args.get("preferred_time"))
        # "do you have 2pm on Friday?" asks before booking; with every detail known, the read-back answers it
        asking = "availability" in self.reading.intents and bool(self.missing)
        decided = exact and not asking
        if self.spent and self.missing:  # ACTIVE_TASK still holds the booked child and slot: book only when complete
            return [Call("check_availability", self.when_args)] if not self.reading.when.is_empty else []
        # "we'd like to come for another tour": the parent asked for one more, so book_tour need not ask whether to
        # move the child's upcoming tour instead
        also = {"another_tour": True} if self.another and self.conv.upcoming_tours else {}
        if decided:
            return [Call("book_tour", {**args, **also})]
        said = {**self.parent_memory, **self.memory.facts, **self.reading.facts}  # the parent's words, not the file
        if self.several:
            said["children"] = self.family
        known, skip = self.conv.collected, (*WHEN_FIELDS, *self.corrections)
        new_facts = [k for k, v in args.items() if k in said and k not in skip and str(known.get(k, "")) != str(v)]
        calls = []
        if not self.reading.when.is_empty:
            calls.append(Call("check_availability", self.when_args))
        if new_facts:
            calls.append(Call("book_tour", {**{k: v for k, v in args.items() if k not in WHEN_FIELDS}, **also}))
        return calls

    def _names_the_tour(self, tour: dict, date: str | None, time: str | None) -> bool:
        """Whether the day (and time) a move is asked with are the tour's own: the message says which tour to move
        ("I have a tour on Tuesday the 8th morning, can I change it?"), not when to move it to."""
        if "reschedule" not in self.reading.intents or not date or date != tour.get("date"):
            return False
        part = self.reading.when.part_of_day
        return (not time or time == tour.get("time")) and (not part or part == part_of_day(str(tour.get("time"))))

    def _manage(self, action: str) -> list[Call]:
        if any(r.get("status") == "success" for r in self.conv.results("manage_tour_booking")):
            return []  # done this turn: the tour's new day is no request to look for slots
        tour, ambiguous = self.target_tour
        if ambiguous:
            return []
        ref = tour.get("booking_id") if tour else None
        if not ref:
            return [Call("manage_tour_booking", {"booking_id": "", "action": action})]  # it lists them, or says none
        if action == "cancel":
            args = {"booking_id": ref, "action": "cancel"}
            reason = self.reading.reason or self.memory.reason
            if reason:
                args["cancellation_reason"] = reason
            return [Call("manage_tour_booking", args)]
        date, time = self.slot
        if self._names_the_tour(tour, date, time):
            return [Call("check_availability", {})]  # "my tour on Tuesday 8th, can I change it?": which, not when to
        if time and not date and not self.choice[1]:
            date = tour.get("date")
        part = self.intake.part_of_day
        same_part = not part or (tour.get("time") and part_of_day(str(tour["time"])) == part)
        if date and not time and same_part and "preferred_date" in self.reading.corrections and self.booked:
            time = tour.get("time")  # "I meant Thursday": the same time on the day meant
        if date and not time and self.same_time:
            time = tour.get("time")  # "thurs same time instead": the time of the tour being moved
        if date and time:
            args = {"booking_id": ref, "action": "reschedule", "new_date": date, "new_time": time}
            return [Call("manage_tour_booking", args)]
        if self._ambiguous:
            return []
        if ref not in {t["booking_id"] for t in self.conv.upcoming_tours}:  # let the tool check the reference first
            return [Call("manage_tour_booking", {"booking_id": ref, "action": "reschedule"})]
        args = self.when_args
        if self.booked and self.reading.correcting and "date_range_start" not in args and tour.get("date"):
            args = {"date_range_start": tour["date"], "date_range_end": tour["date"], **args}  # "the other slot"
        return [Call("check_availability", args)]

    @cached_property
    def same_time(self) -> bool:
        """Whether this message keeps the time of the tour being moved ("friday, same time")."""
        return any(SAME_TIME.search(gloss(text).text) for text in self.conv.turn_texts)

    @cached_property
    def target_tour(self) -> tuple[dict | None, bool]:
        """(the tour to change, whether the parent must still say which)."""
        tours = self.conv.upcoming_tours
        by_ref = {t["booking_id"]: t for t in tours}
        if self.upcoming_choice == "move":
            asked = str(self.conv.task["upcoming_tour_asked"])
            return by_ref.get(asked, {"booking_id": asked}), False
        if self.reading.booking_refs:
            ref = self.reading.booking_refs[-1]
            return by_ref.get(ref, {"booking_id": ref}), False
        read_back = [r for r in dict.fromkeys(str(a.get("booking_id")) for a in self.state.awaiting) if r in by_ref]
        if "read_back" in self.asked and len(read_back) == 1:  # "yes" to "I'll cancel Leo's tour T-...?"
            return by_ref[read_back[0]], False
        listed = [o for o in self.options if o.get("booking_id")]
        if self.reading.choice is not None and listed and self.reading.choice < len(listed):
            ref = listed[self.reading.choice]["booking_id"]
            return by_ref.get(ref, {"booking_id": ref}), False
        remembered = [r for r in self.memory.booking_refs if r in by_ref]  # not the ones the tool rejected
        if remembered:
            return by_ref[remembered[-1]], False
        if self.state.subject in by_ref:  # the tour picked earlier in this move or cancellation
            return by_ref[self.state.subject], False
        if self.booked and self.booked.get("booking_id"):
            return self.booked, False
        if len(tours) <= 1:
            return (tours[0] if tours else None), False
        words = {w.removesuffix("'s") for w in re.findall(r"[a-z']+", " ".join(self.conv.turn_texts).lower())}
        named = [t for t in tours if str(t.get("child_name") or "").lower() in words]
        if len(named) == 1:
            return named[0], False
        # "which one?" answered with a date, or "cancel our Wednesday tour": the date names the tour
        if ("which_tour" in self.asked or self.flow == "cancel") and not self.reading.when.is_empty:
            dated = [t for t in tours if _slot_matches(t, self.reading.when)]
            if len(dated) == 1:
                return dated[0], False
        return None, True

    @cached_property
    def callback_args(self) -> dict:
        facts = self.facts
        asked = (self.memory.questions or [""])[-1]
        # the last question asked, in the parent's own words ("yuran primary brp ye", not its English reading)
        topic = self.reading.topic or self.memory.topic or self.memory.said.get(asked, asked)
        args = {
            "parent_name": facts.get("parent_name"),
            "parent_phone": facts.get("parent_phone"),
            "best_time_to_call": self.call_time,
            "topic": topic.strip(" ?") if topic else None,
        }
        return {k: v for k, v in args.items() if v}

    @cached_property
    def moves_callback(self) -> bool:
        """Whether this message gives another time of the day for the call back the last turn arranged, when the
        call was placed elsewhere than asked ("then Monday at lunch time", after a Saturday was closed) or the
        message asks for the call ("call me at lunch time instead"): that call back moves (the new window replaces
        the one refused), no tour is booked and no second call back requested."""
        arranged = any(d.get("action") in ("callback_requested", "callback_rescheduled") for d in self.state.done)
        when = self.reading.when  # a time of the day: a day alone ("change it to the 12th") may be a tour's...
        said = bool(when.time or when.after or when.before or when.part_of_day)
        other = self.reading.intents & {"book", "reschedule", "cancel", "availability", "waitlist", "open_day"}
        about_the_call = "callback" in self.reading.intents or self._callback_moved  # "call me at lunch instead"
        # ...unless no tour is booked or being booked and the call keeps its time: "actually make it tues same
        # time" moves the call ("can we change it to the 12th" after a call back may still be a tour's day)
        only_calls = not self.conv.upcoming_tours and self.pending in ("", "callback")
        changed_day = when.has_date and only_calls and bool(SAME_TIME.search(" ".join(self.conv.turn_texts)))
        return arranged and (said or changed_day) and not other and (about_the_call or changed_day)

    @cached_property
    def call_time(self) -> str:
        """When to call, in the parent's words: said now, else earlier in this task (on the day said before)."""
        return self.memory.merge(self.reading).call_time

    @cached_property
    def calling_hours(self) -> tuple[str, str] | None:
        """The school's calling hours ("09:00", "18:00") when the call time the parent gave lies wholly outside
        them ("8pm" where calls are made 09:00-18:00): the parent is told them and asked for another time, rather
        than a call being placed at a time they did not ask for. None otherwise."""
        hours = read_window(str(self.conv.school.get("calling_hours") or ""))
        if not self.call_time or not hours or not all(hours):
            return None
        opens, closes = (dt.time.fromisoformat(t) for t in hours)
        wish = read_call_time(self.call_time, self.today)
        start, end = window_asked(wish, opens, closes)
        return (hours[0], hours[1]) if outside_hours(start, end, opens, closes) else None

    @cached_property
    def _callback_moved(self) -> bool:
        """Whether the call back on file (CONTACT.context) is due on another day or in another window than the
        parent's last call time asked for (a closed day, the calling hours): the tool placed it elsewhere."""
        context = self.conv.contact.get("context") or {}
        _, due, window, *_ = [*str(context.get("callback_requested") or "").split(), "", "", ""][:3]
        said = next((r.call_time for r, _ in reversed(self.earlier) if r.call_time), "")
        hours = read_window(str(self.conv.school.get("calling_hours") or ""))
        if not (due and window and said and hours and all(hours)):
            return False
        wish = read_call_time(said, self.today)
        opens, closes = (dt.time.fromisoformat(t) for t in hours)
        start, end = window_asked(wish, opens, closes)
        asked = f"{max(start, opens):%H:%M}-{min(end, closes):%H:%M}"
        return (wish.day is not None and wish.day.isoformat() != due) or asked != window

    @cached_property
    def callback_change(self) -> str:
        """The change asked to a call back already requested ("reschedule" or "cancel"; '' for a new one): said
        now, or earlier in this task (the new time may come in a later message)."""
        if self.moves_callback:
            return "reschedule"
        for reading in (self.reading, *reversed(self.past)):
            found = [action for intent, action in CALLBACK_CHANGES.items() if intent in reading.intents]
            if found:
                return found[0]
        return ""

    @cached_property
    def callback_ref(self) -> str:
        """The call back meant: the reference the parent gave (now or earlier in the task), else the open one
        CONTACT.context.callback_requested shows; '' when none is known (the tool then lists them)."""
        named = self.reading.callback_refs or self.memory.callback_refs
        if named:
            return named[-1]
        context = self.conv.contact.get("context") or {}
        on_file = CALLBACK_REF.findall(str(context.get("callback_requested") or "") if isinstance(context, dict)
                                       else "")
        return on_file[-1].upper() if on_file else ""

    def _in_the_same_window(self, call_time: str) -> str:
        """"tues same time" for a call back: the new day, in the window the call back on file has."""
        if self.reading.when.is_empty_of_time and SAME_TIME.search(" ".join(self.conv.turn_texts)):
            context = self.conv.contact.get("context") or {}
            _, _, window, *_ = [*str(context.get("callback_requested") or "").split(), "", "", ""]
            start, end = read_window(window) or (None, None)
            if start and end:
                return f"{call_time} between {start} and {end}"
        return call_time

    def _callback(self) -> list[Call]:
        if self.callback_change:  # never a second call back to move the first
            args = {"callback_id": self.callback_ref, "action": self.callback_change}
            if self.callback_change == "reschedule" and self.calling_hours:
                return []  # "then 9pm": outside the calling hours, asked again
            if self.callback_change == "reschedule" and self.call_time:
                args["new_time"] = self._in_the_same_window(self.call_time)
            return [Call("manage_callback", args)]
        args = self.callback_args
        if all(args.get(k) for k in ("parent_name", "parent_phone", "best_time_to_call")) and not self.calling_hours:
            return [Call("request_callback", args)]
        return []

    # --- deciding ------------------------------------------------------------------------------

    @cached_property
    def agrees(self) -> bool:
        """The policy's own judgement that the parent's latest message is a plain yes to the read-back (or the seat
        offered): said to the tools as `confirmed`."""
        actions = tuple(str(a.get("action") or "") for a in self.state.awaiting)
        return (bool(self.asked & {"read_back", "seat_offer"}) and bool(self.said_now)
                and says_yes(self.said_now[-1], actions))

    def _confirming(self, call: Call) -> Call:
        if self.agrees and call.name in CONFIRMED_TOOLS:
            return Call(call.name, {**call.args, "confirmed": True})
        return call

    def _pending(self, stage, once: bool) -> list[Call]:
        """The stage's calls still to make. Action stages call each tool at most once a turn: their
        arguments are re-derived from facts the tools themselves change (a moved tour has a new reference)."""
        calls = [self._confirming(c) for c in stage()]
        return [c for c in calls if c.name in self.tools and not self.conv.called(c.name, None if once else c.args)]

    def decide(self) -> Decision:
        if not self.conv.last_call:  # CYCLES_LEFT: 1 is the turn's last call, answered in text
            stages = [(self._unread, True)]
            if self.flow != "refuse":
                stages += [(self._info, False), (self._main, True), (self._then, True), (self._follow_up, True)]
            for stage, once in stages:
                pending = self._pending(stage, once)
                if pending:
                    return Decision(calls=pending)
        with translation.override(self.conv.language), replies.recording() as declared:
            asked = self.conv.last_result("book_tour") or {}
            if asked.get("status") == "has_upcoming_tour":  # nothing booked: move that tour, or book another?
                answers = replies.faq_replies(self.conv.results("get_faq_answer"), False,
                                                     "answer_language" in self.state.told)
                text = replies.join([*answers, replies.move_or_another(asked, self.today)])
            else:
                text = compose(self)
            answered = any(r.get("status") == "success" for r in self.conv.results("get_faq_answer"))
            # the same reply, or the same after the greeting the last one opened with (the same said as not caught
            # is _said_twice's)
            greeted = self.previous.endswith(f" {text}") and not self.previous.startswith(replies.not_caught())
            again = text == self.previous or greeted or self._said_twice(text)
            if again and self.flow == "my_tour":  # "are we still booked" once more, "be there in 10" after "omw"
                if "arriving" in self.reading.intents and self.previous != replies.thanks_for_telling():
                    text, again = replies.thanks_for_telling(), False
                elif self.conv.upcoming_tours:
                    text, again = replies.join([replies.nothing_changed(), text]), False
            if self._missed_again(declared) or (again and not answered):  # a question asked again is answered
                text = self._not_again(declared, text)  # again
            return Decision(text=text, declared=declared)

    def _not_again(self, declared: Declared, text: str) -> str:
        """Another reply than the last one. At the second miss on the same question (or the same FAQ "not sure"
        again), what is still unclear and a call back offered instead; at a first miss, the same question said as
        not caught; a reply that asked nothing becomes what the concierge can do (no person is offered: nothing
        was asked twice)."""
        offered = "offer_callback" in self.state.asked
        # written only when reached: a call back offer is declared as asked once written
        escalate = (replies.still_unclear(declared.asked, shorter) for shorter in (offered, not offered))
        not_sure = any(r.get("status") != "success" and not asked_nothing(r)  # a real question, not answered
                       for r in self.conv.results("get_faq_answer"))
        if self._missed_again(declared) or not_sure or self._said_twice(text):
            first = []
        elif not set(declared.asked) - {"offer_callback"}:
            first = [replies.not_understood(), replies.help_text()]
        elif text.startswith(replies.not_caught()):
            first = []
        else:
            first = [replies.join([replies.not_caught(), text])]
        return next(t for t in chain(first, escalate) if t != self.previous)  # the last two differ from each other

    @property
    def _no_again(self) -> bool:
        """Whether the parent's previous message was a no to the read-back this one says no to as well."""
        before = self.earlier[-1][0] if self.earlier else None
        answered = self.state.answered[-1] if self.state.answered else []
        return before is not None and "no" in before.intents and "read_back" in answered

    def _said_twice(self, text: str) -> bool:
        """Whether the last reply was this one already said as not caught, and the parent sent nothing new (nothing
        the reader could use, or the very details the tools just turned down): a third time would be a loop."""
        if self.previous != replies.join([replies.not_caught(), text]):
            return False
        before = self.earlier[-1][0] if self.earlier else None
        same = before is not None and bool(self.reading.facts) and self.reading.facts == before.facts
        return same or _gave_nothing(self.reading)

    def _missed_again(self, declared: Declared) -> bool:
        """Whether this reply would ask the same question a third time: the state shows the last reply asked it
        again after the parent's previous message, and this message gave nothing the reader could use. Then
        the reply says what is unclear and offers a person instead."""
        asks = set(declared.asked) - {"offer_callback"}
        if "call_time" in asks or declared.about == "callback":  # the person offered would be this very call back
            return False
        answered_before = set(self.state.answered[-1]) if self.state.answered else set()
        before = self.earlier[-1][0] if self.earlier else None
        return (bool(asks) and asks == set(self.state.asked) - {"offer_callback"} and asks <= answered_before
                and not any(step.name != "get_faq_answer" for step in self.conv.steps)
                and _gave_nothing(self.reading) and before is not None and _gave_nothing(before))


def _asked(state: DialogueState, contact: dict) -> frozenset[str]:
    """What the last reply asked, in the words the policy reasons with: the typed asks, "options" when it listed
    choices, the task it was about ("booking", "reschedule", "cancel", "callback"), "confirm_cancel" for the
    read-back of a cancellation, "offer_book" for that of a booking, and "propose_first" when a yes takes the soonest
    slot."""
    asked = set(state.asked) - {"choice", "take_soonest"}
    if state.options or "choice" in state.asked:
        asked.add("options")
    if "take_soonest" in state.asked:
        asked.add("propose_first")
    asked.add({"book": "booking"}.get(state.about, state.about))
    awaited = {a.get("action") for a in state.awaiting} if "read_back" in state.asked else set()
    if "cancel" in awaited:
        asked.add("confirm_cancel")
    if "book" in awaited:  # "Shall I book it?": a yes books it
        asked.add("offer_book")
    return frozenset(asked - {""})


def _gave_nothing(reading: Reading) -> bool:
    """A message with nothing the reader could use for the question asked: no detail, child, day, time, choice,
    reference, request, yes, no, thanks or goodbye (each has its own answer), or question with a topic of its own
    (such a question is a digression, not a miss)."""
    return (not reading.facts and not reading.children and reading.when.is_empty and reading.choice is None
            and reading.hour is None
            and not reading.booking_refs and not any(has_topic(q) for q in reading.questions)
            and not reading.intents - {"greet", "offtopic"})


def _with_children(children: list[dict], reading: Reading) -> list[dict]:
    """The children with what one message said of them: its list of children, or its one child (the only
    child's name and age for a one-child booking, as the tools' child_name / child_age; among several, the
    child of that name, the one spelt like it when correcting, or one child more)."""
    if reading.only:  # "only Noah would be starting": of the children known, the one said
        children = keep_only(children, reading.only)
    if reading.children:
        return keep_only(merge_children(children, reading.children), reading.only)
    one = {f: reading.facts[f"child_{f}"] for f in ("name", "age") if reading.facts.get(f"child_{f}") not in (None, "")}
    if not one:
        return children
    if len(children) <= 1:
        return [{**(children[0] if children else {}), **one}]
    if "name" in one and "child_name" in reading.corrections:
        closest = max(children, key=lambda c: SequenceMatcher(None, str(c.get("name", "")).lower(),
                                                                one["name"].lower()).ratio())
        return [{**c, **one} if c is closest else c for c in children]
    return merge_children(children, [one])


def decide(messages: list[dict], tools: set[str]) -> Decision:
    """The next assistant step for these messages, given the names of the tools on offer."""
    return Turn(read(messages), tools).decide()
