"""Regression scenarios from reviewed conversations: capture, expectations, replay, results.

A reviewer turns a conversation into a `ReviewScenario` with one action on its review page. `capture()` copies
what a replay needs, so it runs the same whatever happens to the school afterwards:

- the parent's messages, each with its time from the start; messages the concierge answered together (no reply
  between them) are one burst. Messages staff handled during a handoff are left out: the concierge never answered
  them;
- the school at the start: its rules and its own FAQ entries, the parent's upcoming tours (as they were: a tour
  cancelled or moved later is put back), the slots that were full, and the closures;
- the parent's details, and whether the concierge knew them already (a returning parent, a WhatsApp number);
- the expected end state, prefilled from what the conversation did (its successful tool calls, in order):
  tours booked (and cancelled or moved within the chat), the parent's tours moved or cancelled, corrections,
  callbacks, and that the parent was told the new reference. The reviewer edits it before saving. Anything
  the list does not name must not happen.

`to_scenario()` makes the saved scenario an ordinary `Scenario`, so `runner` and `checks` grade it like the
built-in ones. Its days are named by ISO date (world.DATED_DAYS_AHEAD): `manage.py evaluate --saved` runs it
with the clock at the conversation's first message (`time_machine`, ticking), so "tomorrow", "next Tuesday" and
"the 24th" mean what they meant, and the notice and advance rules cut where they cut. Each evaluation is stored as
a `ReviewScenarioResult` (`record_results`), which the console lists per scenario.
"""

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from django.db import transaction
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from bookings.models import CallbackRequest, SchoolClosure, TourBooking, TourSlot
from chatbot.models import Conversation, FaqEntry, Message, ReasoningStep, ReviewScenario, ReviewScenarioResult
from quality.evaluation.checks import (
    Booked,
    CallbackRequested,
    Cancelled,
    Corrected,
    NotSaid,
    Rescheduled,
    Said,
)
from quality.evaluation.parent import Goal, Persona
from quality.evaluation.runner import RunResult, pass_hat
from quality.evaluation.scenarios import Scenario
from quality.evaluation.world import DATED_DAYS_AHEAD, FIXTURES, Booking, Closed, Fixture, FullSlot

FLOW = "reviewed"
ID_PREFIX = "reviewed-"
SCHOOL_RULES = ("name", "time_zone", "address", "contact_email", "contact_phone", "default_phone_region",
                "tour_start_times", "tour_duration_minutes", "seats_per_tour", "max_advance_days", "min_notice_hours",
                "closed_weekdays")
FOLLOW_UP_TURNS = 6  # turns the simulated parent may add after the script
MAX_SLUG = 30  # the world adds "eval-" and a token; slugs are at most 50 characters
TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")
STATE_TYPES = ("booked", "moved", "cancelled", "corrected", "callback")
TOLD_TYPES = ("said", "not_said")
BEST_TIMES = tuple(CallbackRequest.BestTime.values)
CORRECTABLE = ("child_name", "child_age", "parent_name", "parent_phone")
TEMPLATE_WORDS = {"{new_ref}": "the new tour's reference", "{callback_ref}": "the callback's reference"}
FIELDS = {  # per type: (required, optional)
    "booked": (("date", "time"), ("child_name", "child_age", "parent_name", "parent_phone", "parent_email",
                                  "special_requirements", "status", "moved_from")),
    "moved": (("booking", "date", "time"), ("moves",)),
    "cancelled": (("booking",), ("reason",)),
    "corrected": (("booking",), CORRECTABLE),
    "callback": ((), ("parent_name", "parent_phone", "best_time", "specific_time", "topic")),
    "said": (("phrases",), ("last", "any_of")),
    "not_said": ((), ("text", "pattern")),
}


class ExpectationError(ValueError):
    """The expected end state can't be read; the message says which entry and why."""


# --- capture: what the conversation was ------------------------------------------------------------------------------


@dataclass
class Capture:
    """Everything a ReviewScenario holds but its title, note and the reviewer's final say on `expect`."""

    starts_at: dt.datetime
    fixture: dict
    parent: dict
    setup: list[dict]
    script: list[dict]
    expect: list[dict]


def _local(moment: dt.datetime, school) -> dt.datetime:
    return moment.astimezone(school.tz)


def _live_at(booking: TourBooking, moment: dt.datetime) -> bool:
    """Was this tour booked and not yet cancelled or moved at `moment`?"""
    if booking.created_at >= moment:
        return False
    if booking.status == TourBooking.Status.CANCELLED:
        return booking.cancelled_at is None or booking.cancelled_at > moment
    if booking.status == TourBooking.Status.RESCHEDULED:
        successor = TourBooking.objects.filter(replaces=booking).only("created_at").first()
        return successor is None or successor.created_at > moment
    return True


def _start_at(booking: TourBooking, moment: dt.datetime) -> dt.datetime:
    """When the tour was at `moment`: where its first later move took it from, else where it is now."""
    later = booking.moves.filter(moved_at__gt=moment).order_by("moved_at", "pk").first()
    return later.from_starts_at if later else booking.starts_at


def _only_age(booking: TourBooking) -> int | None:
    children = list(booking.children.all())
    return children[0].age if len(children) == 1 else None


def parent_messages(conversation: Conversation) -> list[Message]:
    """The parent's messages the concierge took (not those staff handled), oldest first."""
    return list(conversation.messages.filter(role=Message.Role.USER, handled_by_staff=False).exclude(text="")
                .order_by("created_at", "id"))


def _script(conversation: Conversation, messages: list[Message]) -> list[dict]:
    """Each message with its seconds from the first and its burst: messages with no reply between them are one."""
    start = messages[0].created_at
    replies = list(conversation.messages.filter(role=Message.Role.ASSISTANT).exclude(text="")
                   .values_list("created_at", flat=True))
    script, burst = [], 0
    for previous, message in zip([None, *messages], messages, strict=False):
        if previous is not None and any(previous.created_at < r <= message.created_at for r in replies):
            burst += 1
        script.append({"text": message.text, "at": round((message.created_at - start).total_seconds(), 1),
                       "burst": burst})
    return script


def _observations(conversation: Conversation) -> list[tuple[str, dict]]:
    """(tool, result) of every tool call the conversation made, in the order they ran."""
    rows = (ReasoningStep.objects.filter(message__conversation=conversation, kind=ReasoningStep.Kind.OBSERVE)
            .order_by("message__created_at", "message_id", "position").values_list("tool_name", "tool_result"))
    return [(name, result) for name, result in rows if isinstance(result, dict)]


def _own_tours_at_start(conversation: Conversation, start: dt.datetime) -> list[TourBooking]:
    candidates = (TourBooking.objects.filter(contact_id=conversation.contact_id, school_id=conversation.school_id,
                                             created_at__lt=start, starts_at__gt=start)
                  .select_related("school").order_by("starts_at", "id"))
    return [b for b in candidates if _live_at(b, start)]


def _full_slots_at_start(conversation: Conversation, start: dt.datetime) -> list[dt.datetime]:
    school = conversation.school
    until = start + dt.timedelta(days=school.max_advance_days + 1)
    slots = TourSlot.objects.filter(school=school, starts_at__gt=start, starts_at__lte=until)
    full = []
    for slot in slots:
        taken = sum(_live_at(b, start) for b in TourBooking.objects.filter(slot=slot, created_at__lt=start))
        if taken >= slot.capacity:
            full.append(slot.starts_at)
    return sorted(full)


def _corrections(observations) -> dict[str, dict[str, tuple]]:
    """reference -> field -> (old value, new value), from update_context calls on booked tours."""
    found: dict[str, dict[str, tuple]] = {}
    for name, result in observations:
        if name == "update_context" and result.get("status") == "updated" and result.get("booking_updated"):
            fields = found.setdefault(result["booking_updated"], {})
            field = result.get("field")
            old = fields[field][0] if field in fields else result.get("old_value")
            fields[field] = (old, result.get("new_value"))
    return found


def _setup(conversation: Conversation, start: dt.datetime, corrections: dict) -> tuple[list[dict], dict[str, str]]:
    """The setup entries and the original reference -> setup key of the parent's tours."""
    school = conversation.school
    setup, keys = [], {}
    for number, booking in enumerate(_own_tours_at_start(conversation, start), 1):
        key = f"t{number}"
        keys[booking.reference] = key
        local = _local(_start_at(booking, start), school)
        before = {field: old for field, (old, _new) in corrections.get(booking.reference, {}).items()}
        setup.append({"type": "booking", "key": key, "reference": booking.reference, "date": local.date().isoformat(),
                      "time": f"{local:%H:%M}", "child_name": before.get("child_name", booking.child_name),
                      "child_age": before.get("child_age", _only_age(booking))})
    for starts_at in _full_slots_at_start(conversation, start):
        local = _local(starts_at, school)
        setup.append({"type": "full_slot", "date": local.date().isoformat(), "time": f"{local:%H:%M}"})
    first_day = _local(start, school).date()
    closures = SchoolClosure.objects.filter(school=school, date__gte=first_day,
                                            date__lte=first_day + dt.timedelta(days=school.max_advance_days))
    setup += [{"type": "closed", "date": c.date.isoformat(), "reason": c.reason} for c in closures]
    return setup, keys


def _fixture(conversation: Conversation) -> dict:
    school = conversation.school
    rules = {name: getattr(school, name) for name in SCHOOL_RULES}
    rules["slug"] = school.slug[:MAX_SLUG].strip("-") or "school"
    active = FaqEntry.objects.filter(school=school, is_active=True)
    translations: dict[int, dict] = {}
    for version in active.filter(translation_of__in=active).order_by("pk"):
        translations.setdefault(version.translation_of_id, {})[version.language] = {
            "question": version.question, "answer": version.answer}
    faqs = [{"key": str(entry.pk), "question": entry.question, "answer": entry.answer, "tags": list(entry.tags or []),
             "related_questions": list(entry.related_topics or []), "translations": translations.get(entry.pk, {})}
            for entry in active.exclude(translation_of__in=active).order_by("pk")]
    return {"school": rules, "faqs": faqs}


def _parent(conversation: Conversation, start: dt.datetime, has_tours: bool) -> dict:
    contact = conversation.contact
    returning = has_tours or contact.phone_verified or Conversation.objects.filter(
        contact=contact, started_at__lt=conversation.started_at).exists() or CallbackRequest.objects.filter(
        contact=contact, created_at__lt=start).exists()
    return {"name": contact.name, "phone": contact.phone, "email": contact.email,
            "known": bool(contact.name and contact.phone and returning)}


def _row_time(starts_at: dt.datetime, school) -> tuple[str, str]:
    local = _local(starts_at, school)
    return local.date().isoformat(), f"{local:%H:%M}"


def expected_end_state(conversation: Conversation, setup_keys: dict[str, str],
                       observations: list | None = None) -> list[dict]:
    """What the conversation did, as expectations: its successful bookings, moves, cancellations, corrections and
    callbacks in the order they ran, and that the parent was told the last new reference."""
    school = conversation.school
    observations = _observations(conversation) if observations is None else observations
    rows = {b.reference: b for b in TourBooking.objects.filter(
        reference__in=[r.get("booking_id") for _name, r in observations if r.get("booking_id")])}
    booked: dict[str, dict] = {}  # reference -> expectation, in the order they were made
    state: list[dict] = []
    told_refs: list[str] = []
    for name, result in observations:
        if result.get("status") not in ("success", "updated"):
            continue
        ref = result.get("booking_id") or ""
        if name == "book_tour" and ref in rows:
            row = rows[ref]
            day, time = _row_time(row.starts_at, school)
            booked[ref] = {"type": "booked", "date": day, "time": time, "child_name": row.child_name,
                           "child_age": _only_age(row), "parent_name": row.parent_name,
                           "parent_phone": row.parent_phone}
            told_refs.append(ref)
        elif name == "manage_tour_booking" and result.get("action") == "cancelled":
            if ref in booked:
                booked[ref]["status"] = "cancelled"
            elif ref in setup_keys:
                state.append({"type": "cancelled", "booking": setup_keys[ref]})
        elif name == "manage_tour_booking" and result.get("action") == "rescheduled" and ref in rows:
            day, time = _row_time(rows[ref].starts_at, school)  # a move keeps the reference: where it is now
            if ref in booked:
                first = booked[ref]
                booked[ref] = {**first, "date": day, "time": time,
                               "moved_from": first.get("moved_from") or [first["date"], first["time"]]}
            elif ref in setup_keys:
                earlier = next((e for e in state if e["type"] == "moved" and e["booking"] == setup_keys[ref]), None)
                if earlier:
                    earlier.update(date=day, time=time, moves=earlier.get("moves", 1) + 1)
                else:
                    state.append({"type": "moved", "booking": setup_keys[ref], "date": day, "time": time})
            told_refs.append(ref)
        elif name == "request_callback" and result.get("callback_id"):
            callback = CallbackRequest.objects.filter(reference=result["callback_id"]).first()
            if callback is not None:
                state.append({"type": "callback", "parent_name": callback.parent_name,
                              "parent_phone": callback.parent_phone, "best_time": callback.best_time,
                              "specific_time": f"{callback.specific_time:%H:%M}" if callback.specific_time else None})
                told_refs.append(callback.reference)
        elif name == "update_context" and result.get("booking_updated") in setup_keys \
                and result.get("field") in CORRECTABLE:
            key = setup_keys[result["booking_updated"]]
            entry = next((e for e in state if e["type"] == "corrected" and e["booking"] == key), None)
            if entry is None:
                entry = {"type": "corrected", "booking": key}
                state.append(entry)
            entry[result["field"]] = result.get("new_value")
    expect = [*booked.values(), *state]
    replies = " ".join(conversation.messages.filter(role=Message.Role.ASSISTANT).values_list("text", flat=True))
    if told_refs and told_refs[-1] in replies:
        template = "{callback_ref}" if told_refs[-1].startswith("C-") else "{new_ref}"
        expect.append({"type": "said", "phrases": [template]})
    return expect


def capture(conversation: Conversation) -> Capture:
    """What a regression scenario needs from the conversation, with the end state it actually reached."""
    messages = parent_messages(conversation)
    if not messages:
        raise ExpectationError("This conversation has no message from the parent that the concierge answered.")
    start = messages[0].created_at
    observations = _observations(conversation)
    setup, keys = _setup(conversation, start, _corrections(observations))
    return Capture(starts_at=start, fixture=_fixture(conversation),
                   parent=_parent(conversation, start, bool(keys)), setup=setup,
                   script=_script(conversation, messages),
                   expect=expected_end_state(conversation, keys, observations))


def default_title(conversation: Conversation, expect: list[dict]) -> str:
    """"Tampines Green: booked Tue 24 Nov 09:00 (Mia)", or the parent's first words when nothing changed."""
    parts = [describe(e) for e in expect if e.get("type") in STATE_TYPES]
    if not parts:
        first = next(iter(parent_messages(conversation)), None)
        words = " ".join((first.text if first else "").split())
        parts = [f"answered “{words[:60]}{'…' if len(words) > 60 else ''}”"]
    return f"#{conversation.pk} {conversation.school.name}: {'; '.join(parts)}"[:200]


@transaction.atomic
def create_from_conversation(conversation: Conversation, *, title: str, expect: list[dict], note: str = "",
                             follow_up: bool = True, user=None) -> ReviewScenario:
    """Save the conversation as a regression scenario with the reviewer's expected end state."""
    captured = capture(conversation)
    expect = clean_expectations(expect, captured.setup)
    return ReviewScenario.objects.create(
        conversation=conversation, school=conversation.school, title=title.strip() or default_title(
            conversation, expect), note=note.strip(), starts_at=captured.starts_at, fixture=captured.fixture,
        parent=captured.parent, setup=captured.setup, script=captured.script, expect=expect, follow_up=follow_up,
        created_by=user if user is not None and user.is_authenticated else None,
    )


# --- the expected end state ------------------------------------------------------------------------------------------


def _is_date(value) -> bool:
    try:
        dt.date.fromisoformat(str(value))
    except ValueError:
        return False
    return True


def clean_expectations(value, setup: list[dict]) -> list[dict]:
    """The expectations, checked: known types and fields, ISO dates, HH:MM times, the parent's tours by key."""
    if not isinstance(value, list):
        raise ExpectationError("The expected end state is a list of entries, e.g. [{\"type\": \"booked\", ...}].")
    tours = {item["key"] for item in setup if item.get("type") == "booking"}
    cleaned = []
    for number, entry in enumerate(value, 1):
        where = f"Entry {number}"
        if not isinstance(entry, dict) or entry.get("type") not in FIELDS:
            raise ExpectationError(f"{where}: the type must be one of {', '.join(FIELDS)}.")
        kind = entry["type"]
        required, optional = FIELDS[kind]
        missing = [name for name in required if entry.get(name) in (None, "", [])]
        unknown = sorted(set(entry) - {"type", *required, *optional})
        if missing:
            raise ExpectationError(f"{where} ({kind}): give {', '.join(missing)}.")
        if unknown:
            raise ExpectationError(f"{where} ({kind}): unknown field {', '.join(unknown)}.")
        if "date" in entry and not _is_date(entry["date"]):
            raise ExpectationError(f"{where} ({kind}): the date must be YYYY-MM-DD, not {entry['date']!r}.")
        for name in ("time", "specific_time"):
            if entry.get(name) is not None and not TIME.match(str(entry[name])):
                raise ExpectationError(f"{where} ({kind}): the {name.replace('_', ' ')} must be HH:MM.")
        if "booking" in entry and entry["booking"] not in tours:
            raise ExpectationError(f"{where} ({kind}): {entry['booking']!r} is not one of the parent's tours at the "
                                   f"start ({', '.join(sorted(tours)) or 'they had none'}).")
        if kind == "booked":
            if entry.get("status", "scheduled") not in ("scheduled", "cancelled"):
                raise ExpectationError(f"{where} (booked): the status is scheduled or cancelled.")
            moved = entry.get("moved_from")
            if moved is not None and not (isinstance(moved, list | tuple) and len(moved) == 2 and _is_date(moved[0])
                                          and TIME.match(str(moved[1]))):
                raise ExpectationError(f"{where} (booked): moved_from is [\"YYYY-MM-DD\", \"HH:MM\"].")
        if kind == "callback" and entry.get("best_time") not in (None, *BEST_TIMES):
            raise ExpectationError(f"{where} (callback): the best time is one of {', '.join(BEST_TIMES)}.")
        if kind == "said" and not (isinstance(entry["phrases"], list) and all(isinstance(p, str) and p
                                                                              for p in entry["phrases"])):
            raise ExpectationError(f"{where} (said): phrases is a list of texts.")
        if kind == "not_said":
            if bool(entry.get("text")) == bool(entry.get("pattern")):
                raise ExpectationError(f"{where} (not_said): give either a text or a pattern.")
            if entry.get("pattern"):
                try:
                    re.compile(entry["pattern"])
                except re.error as exc:
                    raise ExpectationError(f"{where} (not_said): the pattern is not a regular expression "
                                           f"({exc}).") from None
        if "child_age" in entry and entry["child_age"] not in (None, ""):
            try:
                entry = {**entry, "child_age": int(entry["child_age"])}
            except (TypeError, ValueError):
                raise ExpectationError(f"{where} ({kind}): the child's age is a number.") from None
        cleaned.append(entry)
    return cleaned


def must_not_say(lines: Iterable[str]) -> list[dict]:
    """One "not_said" entry per non-empty line (matched as plain text, ignoring case)."""
    return [{"type": "not_said", "text": line.strip()} for line in lines if line.strip()]


def _short_day(value: str) -> str:
    day = dt.date.fromisoformat(value)
    return f"{day:%a} {day.day} {day:%b}"


def describe(entry: dict) -> str:
    """One expectation in words, for the console."""
    kind = entry.get("type")
    if kind == "booked":
        who = f" ({entry['child_name']})" if entry.get("child_name") else ""
        text = f"booked {_short_day(entry['date'])} {entry['time']}{who}"
        if entry.get("moved_from"):
            text += f", moved there from {_short_day(entry['moved_from'][0])} {entry['moved_from'][1]}"
        return text + (", then cancelled" if entry.get("status") == "cancelled" else "")
    if kind == "moved":
        return f"tour {entry['booking']} moved to {_short_day(entry['date'])} {entry['time']}"
    if kind == "cancelled":
        return f"tour {entry['booking']} cancelled" + (f" (reason {entry['reason']})" if entry.get("reason") else "")
    if kind == "corrected":
        changes = ", ".join(f"{k}={entry[k]!r}" for k in CORRECTABLE if k in entry)
        return f"tour {entry['booking']} corrected: {changes}"
    if kind == "callback":
        when = entry.get("specific_time") or entry.get("best_time") or "any time"
        return f"callback requested ({when})"
    if kind == "said":
        return "a reply says " + " and ".join(TEMPLATE_WORDS.get(p, repr(p)) for p in entry["phrases"])
    if kind == "not_said":
        return f"no reply says {entry.get('text') or entry.get('pattern')!r}"
    return str(entry)


def describe_setup(entry: dict) -> str:
    kind = entry.get("type")
    if kind == "booking":
        return (f"{entry['key']}: the parent's tour {entry.get('reference', '')} on {_short_day(entry['date'])} "
                f"{entry['time']} for {entry.get('child_name') or 'a child'}")
    if kind == "full_slot":
        return f"full: {_short_day(entry['date'])} {entry['time']}"
    if kind == "closed":
        return f"closed: {_short_day(entry['date'])}" + (f" ({entry['reason']})" if entry.get("reason") else "")
    return str(entry)


# --- replay: a saved scenario as a Scenario --------------------------------------------------------------------------


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _templated(text: str, references: dict[str, str]) -> str:
    """The parent's words as a script template: braces kept literal, their tours' references as {ref.<key>}."""
    text = _escape(text)
    for reference, key in references.items():
        text = re.sub(rf"\b{re.escape(reference)}\b", f"{{ref.{key}}}", text, flags=re.IGNORECASE)
    return text


def _steps(saved: ReviewScenario) -> tuple:
    from quality.evaluation.parent import Burst

    references = {item["reference"]: item["key"] for item in saved.setup
                  if item.get("type") == "booking" and item.get("reference")}
    groups: dict[int, list[str]] = {}
    for item in saved.script:
        groups.setdefault(int(item.get("burst", len(groups))), []).append(_templated(item["text"], references))
    return tuple(texts[0] if len(texts) == 1 else Burst(*texts) for texts in groups.values())


def _fixture_key(saved: ReviewScenario) -> str:
    """Register the saved school as a world fixture (again on every conversion: an edit may have changed it)."""
    key = saved.scenario_id
    school = {**saved.fixture["school"], "chatwoot_inbox_ids": [], "whatsapp_phone_number_id": "",
              "is_active": False}
    questions = {entry["key"]: entry["question"] for entry in saved.fixture.get("faqs", [])}
    faqs = [{"key": entry["key"], "question": entry["question"], "answer": entry["answer"], "tags": entry["tags"],
             "related": [k for k, q in questions.items() if q in entry.get("related_questions", [])],
             "translations": entry.get("translations", {})}
            for entry in saved.fixture.get("faqs", [])]
    FIXTURES[key] = Fixture(school, faqs)
    return key


def _setup_items(saved: ReviewScenario) -> tuple:
    """Bookings first (a closure or a full slot added later must not refuse them), then full slots, closures."""
    items = [Booking(item["key"], item["date"], item["time"], child_name=item.get("child_name") or "",
                     child_age=item.get("child_age"))
             for item in saved.setup if item.get("type") == "booking"]
    items += [FullSlot(item["date"], item["time"]) for item in saved.setup if item.get("type") == "full_slot"]
    items += [Closed((item["date"],), item.get("reason") or "Closed") for item in saved.setup
              if item.get("type") == "closed"]
    return tuple(items)


def _expectation(entry: dict):
    kind = entry["type"]
    if kind == "booked":
        moved = entry.get("moved_from")
        return Booked(entry["date"], entry["time"], entry.get("child_name"), entry.get("child_age"),
                      entry.get("parent_name"), entry.get("parent_phone"), entry.get("parent_email"),
                      entry.get("special_requirements"), entry.get("status") or "scheduled",
                      tuple(moved) if moved else None)
    if kind == "moved":
        return Rescheduled(entry["booking"], entry["date"], entry["time"], entry.get("moves", 1))
    if kind == "cancelled":
        return Cancelled(entry["booking"], entry.get("reason"))
    if kind == "corrected":
        return Corrected(entry["booking"], **{k: entry[k] for k in CORRECTABLE if k in entry})
    if kind == "callback":
        return CallbackRequested(entry.get("parent_name"), entry.get("parent_phone"), entry.get("best_time"),
                                 entry.get("specific_time"), entry.get("topic"))
    if kind == "said":
        return Said(*entry["phrases"], last=bool(entry.get("last")), any_of=bool(entry.get("any_of")))
    return NotSaid(entry.get("pattern") or re.escape(entry["text"]))


def _relation(saved: ReviewScenario) -> str:
    words = " ".join(item["text"] for item in saved.script).lower()
    if re.search(r"\b(?:son|boy|he|his|him)\b", words):
        return "son"
    return "daughter"


def _goal_and_persona(saved: ReviewScenario) -> tuple[Goal, Persona]:
    """What the simulated parent is after once the script is over, and the facts it answers from."""
    parent, expect = saved.parent or {}, saved.expect or []
    child = next((e for e in expect if e.get("type") == "booked" and e.get("child_name")), None) or next(
        (s for s in saved.setup if s.get("type") == "booking" and s.get("child_name")), {})
    persona = Persona(name=parent.get("name") or "Jon Tan", phone=parent.get("phone") or "+65 9123 4567",
                      email=parent.get("email") or "", child=child.get("child_name") or "Mia",
                      age=child.get("child_age") or 5, relation=_relation(saved))
    booked = [e for e in expect if e.get("type") == "booked" and e.get("status", "scheduled") == "scheduled"]
    moved = [e for e in expect if e.get("type") == "moved"]
    if booked:
        goal = Goal("book", booked[-1]["date"], booked[-1]["time"])
    elif moved:
        goal = Goal("reschedule", moved[-1]["date"], moved[-1]["time"], booking=moved[-1]["booking"])
    elif any(e.get("type") == "cancelled" for e in expect):
        goal = Goal("cancel", booking=next(e["booking"] for e in expect if e.get("type") == "cancelled"))
    elif any(e.get("type") == "callback" for e in expect):
        goal = Goal("callback")
    else:
        goal = Goal()
    return goal, persona


def to_scenario(saved: ReviewScenario) -> Scenario:
    """The saved scenario as an ordinary Scenario (run it with the clock at `saved.starts_at`: see `replay_moment`)."""
    expect = clean_expectations(saved.expect, saved.setup)
    goal, persona = _goal_and_persona(saved)
    script = _steps(saved)
    return Scenario(
        saved.scenario_id, FLOW, saved.title, script, goal=goal, persona=persona, fixture=_fixture_key(saved),
        setup=_setup_items(saved), known=bool((saved.parent or {}).get("known")),
        expect=tuple(_expectation(e) for e in expect if e["type"] in STATE_TYPES),
        told=tuple(_expectation(e) for e in expect if e["type"] in TOLD_TYPES),
        follow_up=saved.follow_up, max_turns=len(script) + (FOLLOW_UP_TURNS if saved.follow_up else 0),
    )


def replay_moment(saved: ReviewScenario) -> dt.datetime:
    """The clock during the replay: the conversation's first message. Its days are then the world's ISO-dated
    days (up to world.DATED_DAYS_AHEAD ahead)."""
    return saved.starts_at


def select(ids: Iterable[str] = ()) -> list[ReviewScenario]:
    """The active saved scenarios, or those with these ids ("reviewed-12"; inactive ones too when named)."""
    wanted = {int(i.removeprefix(ID_PREFIX)) for i in ids if i.startswith(ID_PREFIX)
              and i.removeprefix(ID_PREFIX).isdigit()}
    queryset = ReviewScenario.objects.filter(Q(pk__in=wanted) if wanted else Q(is_active=True))
    return list(queryset.order_by("pk"))


def days_beyond_reach(saved: ReviewScenario) -> list[str]:
    """Dates the scenario names that the replay's world can't name (before its first day or more than
    DATED_DAYS_AHEAD after it)."""
    first = saved.starts_at.astimezone(ZoneInfo(saved.fixture["school"]["time_zone"])).date()
    dates = [e["date"] for e in [*saved.setup, *saved.expect] if e.get("date")]
    last = first + dt.timedelta(days=DATED_DAYS_AHEAD)
    return sorted({d for d in dates if not first <= dt.date.fromisoformat(d) <= last})


# --- results ---------------------------------------------------------------------------------------------------------


def record_results(saved: list[ReviewScenario], results: list[RunResult], *, model: str, k: int,
                   run_at: dt.datetime | None = None) -> list[ReviewScenarioResult]:
    """Store one result per saved scenario that ran: passed runs, pass^k, what failed, a transcript."""
    run_at = run_at or timezone.now()
    stored = []
    for scenario in saved:
        runs = sorted((r for r in results if r.scenario == scenario.scenario_id), key=lambda r: r.run)
        if not runs:
            continue
        passed = sum(r.passed for r in runs)
        failed = [r for r in runs if not r.passed]
        lines = [f"run {r.run}: {failure}" for r in failed for failure in r.failures]
        shown = failed[0] if failed else runs[0]
        stored.append(ReviewScenarioResult.objects.create(
            scenario=scenario, run_at=run_at, model=model[:100], k=k, runs=len(runs), passed_runs=passed,
            pass_k=pass_hat(passed, len(runs), k), failures="\n".join(lines),
            transcript=shown.transcript, seconds=round(sum(r.seconds for r in runs), 3),
        ))
    return stored


def with_latest_result(queryset: QuerySet[ReviewScenario]) -> QuerySet[ReviewScenario]:
    """Each scenario with its latest result (latest_passed_runs, latest_runs, latest_pass_k, latest_model,
    latest_run_at) and how many results it has (result_count), for the console's list."""
    latest = ReviewScenarioResult.objects.filter(scenario=OuterRef("pk")).order_by("-run_at", "-id")
    count = (ReviewScenarioResult.objects.filter(scenario=OuterRef("pk")).order_by().values("scenario")
             .annotate(n=Count("id")).values("n"))
    return queryset.annotate(
        latest_passed_runs=Subquery(latest.values("passed_runs")[:1]),
        latest_runs=Subquery(latest.values("runs")[:1]),
        latest_pass_k=Subquery(latest.values("pass_k")[:1]),
        latest_model=Subquery(latest.values("model")[:1]),
        latest_run_at=Subquery(latest.values("run_at")[:1]),
        result_count=Coalesce(Subquery(count, output_field=IntegerField()), Value(0)),
    )
