"""Grading a run by the final database state and by what the parent was told (tau-bench style).

`snapshot()` reads the school's bookings, callbacks and slot seat counts;
`diff()` compares two snapshots. Each expectation claims the changes it
explains (a new booking, a cancellation, a move...); whatever is left unclaimed
is a failure, and so is any seat count that moved differently from what the
expected changes imply. "Nothing else changed" is therefore the default of
every scenario, and a scenario that expects nothing passes only if the
database is exactly as it was.
"""

import re
from collections import Counter
from dataclasses import dataclass, field

from bookings.models import CallbackRequest, School, TourBooking, TourSlot, WaitlistEntry
from crm.models import Contact
from quality.evaluation.world import World

BOOKING_FIELDS = ("status", "date", "time", "child_name", "child_age", "children", "parent_name", "parent_phone",
                  "parent_email", "special_requirements", "cancellation_reason", "owner", "replaces", "moves")
CALLBACK_FIELDS = ("status", "parent_name", "parent_phone", "best_time", "specific_time", "due_date", "topic",
                   "owner")


@dataclass
class Snapshot:
    bookings: dict[str, dict]  # reference -> fields
    callbacks: dict[str, dict]
    seats: dict[str, int]  # "YYYY-MM-DD HH:MM" (local) -> seats taken
    contact: dict = field(default_factory=dict)  # the simulated parent's CRM record: name, children, context
    waitlist: dict[str, dict] = field(default_factory=dict)  # reference -> status, date, time, child, owner


def snapshot(school: School, me_id: int | None = None) -> Snapshot:
    """The state a run is graded on. `owner` is "me" for the simulated parent's rows, else "other"."""
    school.refresh_from_db()
    tz = school.tz
    bookings = {}
    for b in TourBooking.objects.filter(school=school).select_related("replaces").prefetch_related("children",
                                                                                                    "moves"):
        local = b.starts_at.astimezone(tz)
        children = list(b.children.all())
        bookings[b.reference] = {
            "reference": b.reference, "status": b.status, "date": local.date().isoformat(),
            "time": local.strftime("%H:%M"), "child_name": b.child_name,
            "child_age": children[0].age if len(children) == 1 else None,  # the age of a one-child booking
            "children": tuple(c.label for c in children),  # ("Leo (5)", "Mia (3)")
            "child_details": tuple((c.name, c.age) for c in children),  # (("Leo", 5), ("Mia", 3))
            "moves": tuple(f"{m.from_starts_at.astimezone(tz):%Y-%m-%d %H:%M}" for m in b.moves.all()),
            "moved_from": next((f"{m.from_starts_at.astimezone(tz):%Y-%m-%d %H:%M}" for m in b.moves.all()), None),
            "parent_name": b.parent_name, "parent_phone": b.parent_phone, "parent_email": b.parent_email,
            "special_requirements": b.special_requirements, "cancellation_reason": b.cancellation_reason,
            "owner": "me" if b.contact_id == me_id else "other",
            "replaces": b.replaces.reference if b.replaces else None,
        }
    callbacks = {}
    for c in CallbackRequest.objects.filter(school=school):
        callbacks[c.reference] = {
            "reference": c.reference, "status": c.status, "parent_name": c.parent_name,
            "parent_phone": c.parent_phone, "best_time": c.best_time,
            "specific_time": c.specific_time.strftime("%H:%M") if c.specific_time else None,
            "due_date": c.due_date.isoformat(), "topic": c.topic, "owner": "me" if c.contact_id == me_id else "other",
            "window_start": f"{c.window_start:%H:%M}", "window_end": f"{c.window_end:%H:%M}",
        }
    seats = {f"{slot.starts_at.astimezone(tz):%Y-%m-%d %H:%M}": slot.seats_taken
             for slot in TourSlot.objects.filter(school=school)}
    contact = Contact.objects.filter(pk=me_id).first() if me_id else None
    me = {"name": contact.name, "preferred_name": contact.preferred_name,
          "children": sorted(contact.children.values_list("name", flat=True)),
          "child_ages": dict(contact.children.values_list("name", "age")),
          "context": contact.context or {}} if contact else {}
    waiting = {}
    for entry in WaitlistEntry.objects.filter(school=school).select_related("slot"):
        local = entry.slot.starts_at.astimezone(tz)
        waiting[entry.reference] = {"reference": entry.reference, "status": entry.status,
                                    "date": local.date().isoformat(), "time": f"{local:%H:%M}",
                                    "child_name": entry.child_name, "owner": "me" if entry.contact_id == me_id
                                    else "other"}
    return Snapshot(bookings, callbacks, seats, me, waiting)


@dataclass
class Diff:
    new_bookings: dict[str, dict]
    changed_bookings: dict[str, dict[str, tuple]]  # reference -> field -> (before, after)
    removed_bookings: list[str]
    new_callbacks: dict[str, dict]
    changed_callbacks: dict[str, dict[str, tuple]]
    removed_callbacks: list[str]
    seats: dict[str, int]  # slot -> change in seats taken (non-zero only)
    after: Snapshot
    claimed: set[tuple[str, str]] = field(default_factory=set)  # ("booking"|"callback"|"waitlist", reference)
    waitlist: dict[str, dict] = field(default_factory=dict)  # reference -> the entry, new or changed

    @property
    def is_empty(self) -> bool:
        return not (self.new_bookings or self.changed_bookings or self.removed_bookings or self.new_callbacks
                    or self.changed_callbacks or self.removed_callbacks or self.seats)


def _changes(before: dict[str, dict], after: dict[str, dict], fields: tuple[str, ...]) -> dict[str, dict]:
    changed = {}
    for ref in before.keys() & after.keys():
        delta = {f: (before[ref][f], after[ref][f]) for f in fields if before[ref][f] != after[ref][f]}
        if delta:
            changed[ref] = delta
    return changed


def diff(before: Snapshot, after: Snapshot) -> Diff:
    seats = {}
    for slot in before.seats.keys() | after.seats.keys():
        change = after.seats.get(slot, 0) - before.seats.get(slot, 0)
        if change:
            seats[slot] = change
    return Diff(
        new_bookings={r: after.bookings[r] for r in after.bookings.keys() - before.bookings.keys()},
        changed_bookings=_changes(before.bookings, after.bookings, BOOKING_FIELDS),
        removed_bookings=sorted(before.bookings.keys() - after.bookings.keys()),
        new_callbacks={r: after.callbacks[r] for r in after.callbacks.keys() - before.callbacks.keys()},
        changed_callbacks=_changes(before.callbacks, after.callbacks, CALLBACK_FIELDS),
        removed_callbacks=sorted(before.callbacks.keys() - after.callbacks.keys()),
        seats=seats,
        after=after,
        waitlist={r: row for r, row in after.waitlist.items() if before.waitlist.get(r) != row},
    )


def _describe(row: dict) -> str:
    return (f"{row['reference']} {row['status']} {row['date']} {row['time']} child={row['child_name']!r} "
            f"age={row['child_age']} parent={row['parent_name']!r} phone={row['parent_phone']}")


def _mismatches(row: dict, wanted: dict) -> list[str]:
    """Wanted values a row doesn't have; "~text" means "contains text", "!~text" "doesn't contain text"
    (case-insensitive)."""
    wrong = []
    for name, value in wanted.items():
        if value is None:
            continue
        actual = row.get(name)
        if isinstance(value, str) and value.startswith("!~"):
            if value[2:].lower() in str(actual or "").lower():
                wrong.append(f"{name}={actual!r} (wanted it not to contain {value[2:]!r})")
        elif isinstance(value, str) and value.startswith("~"):
            if value[1:].lower() not in str(actual or "").lower():
                wrong.append(f"{name}={actual!r} (wanted it to contain {value[1:]!r})")
        elif actual != value:
            wrong.append(f"{name}={actual!r} (wanted {value!r})")
    return wrong


# --- expectations about the database --------------------------------------------------------------------------------


class Expectation:
    """One change the scenario expects. `check` claims the rows it explains and returns failure messages."""

    def check(self, d: Diff, world: World) -> list[str]:
        raise NotImplementedError

    def seats(self, d: Diff, world: World) -> Counter:
        """The seat changes this expectation implies, per slot."""
        return Counter()


@dataclass(frozen=True)
class Booked(Expectation):
    """Exactly one new tour with these values (None: don't care); its reference becomes {new_ref}.

    `status`: "cancelled" for a tour booked and then cancelled in the same conversation.
    `moved_from`: (day, time) it was first booked at and then moved to day/time within the conversation
    (the same row, its first move from there: the reference stayed).
    `children`: every child on it, as ("Leo (5)", "Mia (3)").
    """

    day: str
    time: str
    child_name: str | None = None
    child_age: int | None = None
    parent_name: str | None = None
    parent_phone: str | None = None
    parent_email: str | None = None
    special_requirements: str | None = None  # "~text": contains
    status: str = "scheduled"
    moved_from: tuple[str, str] | None = None
    children: tuple[str, ...] | None = None

    def wanted(self, world: World) -> dict:
        moved_from = f"{world.day(self.moved_from[0]).isoformat()} {self.moved_from[1]}" if self.moved_from else None
        return {"status": self.status, "date": world.day(self.day).isoformat(), "time": self.time,
                "child_name": self.child_name, "child_age": self.child_age, "parent_name": self.parent_name,
                "parent_phone": self.parent_phone, "parent_email": self.parent_email,
                "special_requirements": self.special_requirements, "owner": "me", "replaces": None,
                "moved_from": moved_from, "moves": None if moved_from else (), "children": self.children}

    def check(self, d: Diff, world: World) -> list[str]:
        wanted = self.wanted(world)
        candidates = [r for r in d.new_bookings.values() if ("booking", r["reference"]) not in d.claimed]
        for row in candidates:
            if not _mismatches(row, wanted):
                d.claimed.add(("booking", row["reference"]))
                world.found["new_ref"] = row["reference"]
                return []
        what = (f"a new {self.status} booking on {wanted['date']} at {self.time}"
                + "".join(f", {k}={v!r}" for k, v in wanted.items()
                          if v is not None and k not in ("date", "time", "status")))
        if not candidates:
            return [f"expected {what}; no such booking was made"]
        closest = min(candidates, key=lambda r: len(_mismatches(r, wanted)))
        return [f"expected {what}; closest new booking {closest['reference']} has "
                + "; ".join(_mismatches(closest, wanted))]

    def seats(self, d: Diff, world: World) -> Counter:
        if self.status != "scheduled":
            return Counter()
        return Counter({f"{world.day(self.day).isoformat()} {self.time}": 1})


def _setup_row(d: Diff, world: World, key: str) -> tuple[str, dict]:
    ref = world.refs[key]
    return ref, d.after.bookings[ref]


@dataclass(frozen=True)
class Waitlisted(Expectation):
    """The parent is on the waitlist of the tour on day/time for the child, ending in `status` ("waiting", or
    "accepted" when the seat they were offered is booked: Booked checks that tour)."""

    day: str
    time: str
    child_name: str
    status: str = "waiting"

    def check(self, d: Diff, world: World) -> list[str]:
        wanted = {"status": self.status, "date": world.day(self.day).isoformat(), "time": self.time,
                  "child_name": self.child_name, "owner": "me"}
        for ref, row in d.waitlist.items():
            if not _mismatches(row, wanted):
                d.claimed.add(("waitlist", ref))
                world.found["waitlist_ref"] = ref
                return []
        return [f"expected a waitlist entry {wanted}; found {list(d.waitlist.values()) or 'none'}"]


@dataclass(frozen=True)
class Cancelled(Expectation):
    """The setup booking `key` is cancelled (its seat freed); `reason` "~text" / "!~text" checks the stored reason."""

    key: str
    reason: str | None = None

    def check(self, d: Diff, world: World) -> list[str]:
        ref, row = _setup_row(d, world, self.key)
        d.claimed.add(("booking", ref))
        failures = []
        if row["status"] != "cancelled":
            failures.append(f"expected {ref} ({self.key}) to be cancelled; it is {row['status']}")
        if self.reason:
            failures += [f"{ref}: {m}" for m in _mismatches(row, {"cancellation_reason": self.reason})]
        unexpected = set(d.changed_bookings.get(ref, {})) - {"status", "cancellation_reason"}
        failures += [f"{ref}: unexpected change of {f}" for f in sorted(unexpected)]
        return failures

    def seats(self, d: Diff, world: World) -> Counter:
        ref, row = _setup_row(d, world, self.key)
        return Counter({f"{row['date']} {row['time']}": -1})


@dataclass(frozen=True)
class Rescheduled(Expectation):
    """The setup booking `key` moved to day/time `moves` times, keeping its reference ({new_ref} is that same
    reference): still scheduled, only its day, time and move history changed."""

    key: str
    day: str
    time: str
    moves: int = 1

    def check(self, d: Diff, world: World) -> list[str]:
        ref, row = _setup_row(d, world, self.key)
        d.claimed.add(("booking", ref))
        world.found["new_ref"] = ref
        failures = [f"{ref} ({self.key}): {m}" for m in _mismatches(row, {
            "status": "scheduled", "date": world.day(self.day).isoformat(), "time": self.time})]
        changed = d.changed_bookings.get(ref, {})
        before, after = changed.get("moves", ((), row["moves"]))
        if len(after) - len(before) != self.moves:
            failures.append(f"{ref}: {len(after) - len(before)} move(s) in its history, wanted {self.moves}")
        failures += [f"{ref}: unexpected change of {f}" for f in sorted(set(changed) - {"date", "time", "moves"})]
        if d.new_bookings:
            failures.append(f"a move made new booking(s) {sorted(d.new_bookings)}: the reference must stay")
            d.claimed.update(("booking", r) for r in d.new_bookings)
        return failures

    def seats(self, d: Diff, world: World) -> Counter:
        ref, _row = _setup_row(d, world, self.key)
        first = d.changed_bookings.get(ref, {}).get("moves", ((),))[0]
        was = d.after.bookings[ref]["moves"][len(first)] if len(d.after.bookings[ref]["moves"]) > len(first) else ""
        return Counter({was: -1, f"{world.day(self.day).isoformat()} {self.time}": 1}) if was else Counter()


@dataclass(frozen=True)
class Corrected(Expectation):
    """The setup booking `key` has exactly these corrected details (same slot, still scheduled)."""

    key: str
    child_name: str | None = None
    child_age: int | None = None
    parent_name: str | None = None
    parent_phone: str | None = None

    def check(self, d: Diff, world: World) -> list[str]:
        ref, row = _setup_row(d, world, self.key)
        d.claimed.add(("booking", ref))
        wanted = {"child_name": self.child_name, "child_age": self.child_age, "parent_name": self.parent_name,
                  "parent_phone": self.parent_phone, "status": "scheduled"}
        failures = [f"{ref}: {m}" for m in _mismatches(row, wanted)]
        allowed = {k for k, v in wanted.items() if v is not None} - {"status"}
        if allowed & {"child_name", "child_age"}:
            allowed.add("children")  # a child's name or age is a change of the booking's children
        failures += [f"{ref}: unexpected change of {f}" for f in sorted(set(d.changed_bookings.get(ref, {})) - allowed)]
        return failures


@dataclass(frozen=True)
class ContactRecord(Expectation):
    """The parent's CRM record at the end: its name, a child on it, the persistent context's preferred name."""

    name: str | None = None
    child: str | None = None
    preferred_name: str | None = None

    def check(self, d: Diff, world: World) -> list[str]:
        me = d.after.contact
        failures = []
        if self.name is not None and me.get("name") != self.name:
            failures.append(f"contact name is {me.get('name')!r}, wanted {self.name!r}")
        if self.child is not None and self.child not in me.get("children", []):
            failures.append(f"contact's children are {me.get('children')}, wanted {self.child!r} among them")
        preferred = (me.get("context") or {}).get("parent_preferred_name")
        if self.preferred_name is not None and preferred != self.preferred_name:
            failures.append(f"persistent context's preferred name is {preferred!r}, wanted {self.preferred_name!r}")
        return failures


@dataclass(frozen=True)
class CallbackRequested(Expectation):
    """Exactly one new open callback request with these values; its reference becomes {callback_ref}."""

    parent_name: str | None = None
    parent_phone: str | None = None
    best_time: str | None = None  # morning / afternoon / evening / anytime / specific
    specific_time: str | None = None
    topic: str | None = None  # "~text": contains

    def check(self, d: Diff, world: World) -> list[str]:
        wanted = {"status": "open", "parent_name": self.parent_name, "parent_phone": self.parent_phone,
                  "best_time": self.best_time, "specific_time": self.specific_time, "topic": self.topic,
                  "owner": "me"}
        candidates = [r for r in d.new_callbacks.values() if ("callback", r["reference"]) not in d.claimed]
        for row in candidates:
            if not _mismatches(row, wanted):
                d.claimed.add(("callback", row["reference"]))
                world.found["callback_ref"] = row["reference"]
                return []
        if not candidates:
            return ["expected a callback request; none was made"]
        return [f"expected a callback request with {wanted}; {candidates[0]['reference']} has "
                + "; ".join(_mismatches(candidates[0], wanted))]


def unexplained(d: Diff, world: World, expectations: list[Expectation]) -> list[str]:
    """Every change no expectation claimed, and seat counts that don't add up."""
    failures = []
    for ref, row in d.new_bookings.items():
        if ("booking", ref) not in d.claimed:
            failures.append(f"unexpected new booking {_describe(row)}")
    for ref, delta in d.changed_bookings.items():
        if ("booking", ref) not in d.claimed:
            changes = ", ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in delta.items())
            failures.append(f"unexpected change to booking {ref}: {changes}")
    failures += [f"booking {ref} was deleted" for ref in d.removed_bookings]
    for ref, row in d.new_callbacks.items():
        if ("callback", ref) not in d.claimed:
            failures.append(f"unexpected callback request {ref} ({row['parent_name']}, {row['best_time']}, "
                            f"{row['topic']!r})")
    for ref, delta in d.changed_callbacks.items():
        if ("callback", ref) not in d.claimed:
            failures.append(f"unexpected change to callback {ref}: {delta}")
    failures += [f"callback {ref} was deleted" for ref in d.removed_callbacks]
    failures += [f"unexpected waitlist change {ref}: {row['status']} on {row['date']} {row['time']}"
                 for ref, row in d.waitlist.items() if ("waitlist", ref) not in d.claimed]
    expected = Counter()
    for expectation in expectations:
        expected.update(expectation.seats(d, world))
    for slot in sorted(set(expected) | set(d.seats)):
        want, got = expected.get(slot, 0), d.seats.get(slot, 0)
        if want != got:
            failures.append(f"seats on {slot} changed by {got:+d}, expected {want:+d}")
    return failures


def check_state(d: Diff, world: World, expectations: list[Expectation]) -> list[str]:
    failures = []
    for expectation in expectations:
        failures += expectation.check(d, world)
    return failures + unexplained(d, world, expectations)


# --- expectations about what the parent was told -------------------------------------------------------------------


@dataclass(frozen=True)
class Said:
    """Every phrase appears (case-insensitive) in one concierge reply; `last`: in the final reply.

    Phrases are templates: "{new_ref}", "{callback_ref}", "{tue.weekday}", "{ref.mine}".
    `any_of`: one of the phrases is enough.
    """

    phrases: tuple[str, ...]
    last: bool = False
    any_of: bool = False

    def __init__(self, *phrases: str, last: bool = False, any_of: bool = False):
        object.__setattr__(self, "phrases", phrases)
        object.__setattr__(self, "last", last)
        object.__setattr__(self, "any_of", any_of)

    def check(self, replies: list[str], world: World) -> list[str]:
        try:
            wanted = [world.fmt(p) for p in self.phrases]
        except (KeyError, AttributeError) as exc:
            return [f"can't check what was said: {exc} is unknown (the expected change was not found)"]
        pool = replies[-1:] if self.last else replies
        ok = all if not self.any_of else any
        if any(ok(w.lower() in reply.lower() for w in wanted) for reply in pool):
            return []
        where = "the last reply" if self.last else "any reply"
        join = " or " if self.any_of else " and "
        return [f"expected {where} to mention {join.join(repr(w) for w in wanted)}"]


@dataclass(frozen=True)
class NotSaid:
    """No concierge reply matches the regular expression (case-insensitive)."""

    pattern: str

    def check(self, replies: list[str], world: World) -> list[str]:
        rx = re.compile(self.pattern, re.IGNORECASE)
        for reply in replies:
            match = rx.search(reply)
            if match:
                return [f"a reply said {match.group(0)!r}, which it must not: {reply[:160]!r}"]
        return []


@dataclass(frozen=True)
class NotAsked:
    """No reply asks for these (already given) details; names as in parent.ASKS, e.g. "child_name", "which_tour"."""

    fields: tuple[str, ...]

    def __init__(self, *fields: str):
        object.__setattr__(self, "fields", fields)

    def check(self, replies: list[str], world: World) -> list[str]:
        from quality.evaluation.parent import asks_in

        for reply in replies:
            asked = asks_in(reply) & set(self.fields)
            if asked:
                return [f"asked again for {', '.join(sorted(asked))}, which the parent had already given: "
                        f"{reply[:160]!r}"]
        return []


SENTENCE = re.compile(r"[^.!?\n]+[.!?]")


@dataclass(frozen=True)
class WellFormed:
    """Every parent turn got a non-empty reply, and no reply says the same sentence twice (applied to every run)."""

    def check(self, replies: list[str], world: World, transcript: list[dict] | None = None) -> list[str]:
        failures = []
        for entry in transcript or []:
            if entry["role"] == "parent" and not entry.get("replies", 1):
                failures.append(f"no reply to {entry['text'][:60]!r}")
        for reply in replies:
            if not reply.strip():
                failures.append("an empty reply")
            sentences = [s.strip().lower() for s in SENTENCE.findall(reply) if len(s.split()) >= 4]
            repeated = {s for s in sentences if sentences.count(s) > 1}
            if repeated:
                failures.append(f"a reply repeats itself ({sorted(repeated)[0]!r}): {reply[:160]!r}")
        return failures


@dataclass(frozen=True)
class OneReplyPerTurn:
    """Every parent turn (a burst counts as one) got exactly one concierge reply."""

    def check(self, replies: list[str], world: World, transcript: list[dict] | None = None) -> list[str]:
        failures = []
        for entry in transcript or []:
            if entry["role"] == "parent" and entry.get("replies", 1) != 1:
                failures.append(f"{entry['replies']} replies to {entry['text'][:60]!r}, expected one")
        return failures


@dataclass(frozen=True)
class TruthfulReplies:
    """No turn's reply claims a change its turn did not make: booked, moved, cancelled, a call back arranged, a
    detail changed... without that tool's success in the turn (`chatbot.agent.claims`; the runner lists them per
    reply as `unbacked`). Applied to every run."""

    def check(self, replies: list[str], world: World, transcript: list[dict] | None = None) -> list[str]:
        return [f"{claim}: {entry['text'][:160]!r}" for entry in transcript or []
                if entry["role"] == "concierge" for claim in entry.get("unbacked") or []]


def check_told(transcript: list[dict], world: World, told: list) -> list[str]:
    """The checks on what the parent was told, against the concierge's lines of the transcript."""
    replies = [entry["text"] for entry in transcript if entry["role"] == "concierge"]
    failures = []
    for item in [*told, WellFormed(), TruthfulReplies()]:
        if isinstance(item, OneReplyPerTurn | WellFormed | TruthfulReplies):
            failures += item.check(replies, world, transcript)
        else:
            failures += item.check(replies, world)
    return failures
