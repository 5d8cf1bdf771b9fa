"""End-to-end booking success on whole dialogues of real phrasing (a corpus folder's `dialogues.jsonl`).

Each dialogue is a parent's side of a booking conversation written for another
service (a salon, a restaurant, a flat viewing): its user turns are sent, in
order, through the real entry point `chatbot.services.receive` and the
configured model, to a fresh "corpus school" that offers a tour every 15
minutes from 07:00 to 22:00 every day, with the clock frozen at the corpus's
reference date, 09:00 in the school's zone. The corpus never says the things a
school needs (the child, the parent's name and phone), so a parent stand-in
answers only those questions, from its own facts, when the concierge asks; a
slot list is answered only when the dialogue never named a time (any slot on
the right day will do), and a "shall I book?" only after the dialogue's own
turns are over. It never repeats a date or a time for the concierge.

A dialogue counts as bookable when its gold date is within the school's booking
window, its gold time (if any) is one of the school's start times, and the
original service never failed a booking in it (NOTIFY_FAILURE): there the slot
finally booked is one that service proposed instead, which a parent talking to
a school with that slot open would never be offered. It is
booked right when, at the end, exactly one tour is booked for the parent, on the
gold date, at the gold time.
"""

import datetime as dt
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import time_machine
from asgiref.sync import sync_to_async
from django.test import override_settings

from bookings.models import School, TourBooking
from chatbot.models import Channel
from chatbot.services import receive
from crm.services import find_or_create_contact
from quality.evaluation.corpus import ratio
from quality.evaluation.parent import ASKS, LIST_ITEM, Persona
from quality.evaluation.runner import _last_reply_id, _replies_since
from quality.evaluation.world import SLUG_PREFIX, destroy_world

CORPUS_ZONE = "Asia/Singapore"
START_TIMES = [f"{minutes // 60:02d}:{minutes % 60:02d}" for minutes in range(7 * 60, 22 * 60 + 1, 15)]
MAX_ADVANCE_DAYS = 60
EXTRA_TURNS = 6  # the parent stand-in's answers after the dialogue's own turns
PARENT = Persona(name="Dana Reyes", phone="+65 9345 6789", child="Theo", age=5, relation="son")
PERSONAL = ("child_name", "child_age", "parent_name", "parent_phone")
BOOKED_REF = re.compile(r"\bT-[A-Z0-9]{6}\b")


@dataclass
class DialogueResult:
    source: str
    gold_date: str
    gold_time: str | None
    bookable: bool
    booked_right: bool = False
    booked: list[str] = field(default_factory=list)  # "2019-03-08 14:00" per live booking
    transcript: list[dict] = field(default_factory=list)
    error: str = ""


def load_dialogues(path: Path) -> list[dict]:
    file = path / "dialogues.jsonl"
    if not file.exists():
        return []
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]


def _gold(item: dict) -> tuple[str, str | None]:
    canonical = (item.get("gold") or {}).get("canonical") or {}
    return str(canonical.get("date") or ""), canonical.get("time")


def is_bookable(item: dict) -> bool:
    day, time = _gold(item)
    try:
        reference = dt.date.fromisoformat(item["reference_date_implied"])
        gold_day = dt.date.fromisoformat(day)
    except (KeyError, ValueError):
        return False
    in_window = reference <= gold_day <= reference + dt.timedelta(days=MAX_ADVANCE_DAYS)
    failed = any("NOTIFY_FAILURE" in act for turn in item.get("turns") or [] if turn.get("speaker") == "SYSTEM"
                 for act in turn.get("acts") or [])
    return in_window and (time is None or time in START_TIMES) and not failed


def _create_world() -> tuple[School, object]:
    token = uuid.uuid4().hex[:10]
    school = School.objects.create(
        slug=f"{SLUG_PREFIX}corpus-{token}", name="Corpus Hill School", time_zone=CORPUS_ZONE,
        address="1 Corpus Road", contact_email="admissions@corpus.example", default_phone_region="SG",
        tour_start_times=START_TIMES, tour_duration_minutes=30, seats_per_tour=5,
        max_advance_days=MAX_ADVANCE_DAYS, min_notice_hours=0, closed_weekdays=[], is_active=False,
        chatwoot_inbox_ids=[],
    )
    contact = find_or_create_contact(school=school, web_visitor_id=f"corpus-{token}")
    return school, contact


def _live_bookings(school_id: int) -> list[str]:
    bookings = TourBooking.objects.filter(school_id=school_id, status=TourBooking.Status.SCHEDULED)
    return sorted(f"{b.local_start:%Y-%m-%d %H:%M}" for b in bookings.select_related("school"))


def stand_in_answer(reply: str, gold_time: str | None, dialogue_over: bool) -> str | None:
    """What the parent stand-in says to a reply: its own details when asked, never a date or time."""
    asked = [name for name in PERSONAL if ASKS[name].search(reply)]
    if asked:
        facts = {"child_name": f"his name is {PARENT.child}", "child_age": f"he's {PARENT.age}",
                 "parent_name": f"my name is {PARENT.name}", "parent_phone": f"my number is {PARENT.phone}"}
        return ", ".join(facts[name] for name in asked)
    if gold_time is None and LIST_ITEM.search(reply):
        return "the first one"
    if dialogue_over and (ASKS["confirm"].search(reply) or ASKS["offer_book"].search(reply)):
        return "yes please"
    return None


async def _send(school, contact, text: str, transcript: list[dict]) -> str:
    after = await sync_to_async(_last_reply_id)(contact.pk)
    transcript.append({"role": "parent", "text": text})
    await receive(school=school, contact=contact, channel=Channel.CLI, text=text)
    replies = await sync_to_async(_replies_since)(contact.pk, after)
    transcript += [{"role": "concierge", "text": r["text"], "tools": r["tools"]} for r in replies]
    return "\n".join(r["text"] for r in replies)


async def run_dialogue(item: dict) -> DialogueResult:
    """Replay one dialogue's parent turns with the clock at the reference date, 09:00 in the school's zone."""
    gold_date, gold_time = _gold(item)
    result = DialogueResult(source=item.get("source", ""), gold_date=gold_date, gold_time=gold_time,
                            bookable=is_bookable(item))
    if not result.bookable:
        return result
    reference = dt.date.fromisoformat(item["reference_date_implied"])
    start = dt.datetime.combine(reference, dt.time(9), ZoneInfo(CORPUS_ZONE))
    with time_machine.travel(start, tick=True):
        school, contact = await sync_to_async(_create_world)()
        try:
            texts = [t["utterance"] for t in item.get("turns") or [] if t.get("speaker") == "USER"]
            for text in texts:
                reply = await _send(school, contact, text, result.transcript)
                for _ in range(EXTRA_TURNS):  # the details the concierge asks for on the way
                    answer = stand_in_answer(reply, gold_time, dialogue_over=False)
                    if answer is None or BOOKED_REF.search(reply):
                        break
                    reply = await _send(school, contact, answer, result.transcript)
            for _ in range(EXTRA_TURNS):
                if BOOKED_REF.search(reply):
                    break
                answer = stand_in_answer(reply, gold_time, dialogue_over=True)
                if answer is None:
                    break
                reply = await _send(school, contact, answer, result.transcript)
            result.booked = await sync_to_async(_live_bookings)(school.pk)
        except Exception as exc:  # a crash is a failed dialogue, reported
            result.error = f"{type(exc).__name__}: {exc}"
        finally:
            await sync_to_async(destroy_world)(school.pk)
    wanted = f"{gold_date} {gold_time}" if gold_time else gold_date
    result.booked_right = len(result.booked) == 1 and result.booked[0].startswith(wanted)
    return result


COLUMNS = {"file": "file", "dialogues": "dialogues", "bookable": "bookable", "booked": "booked right"}


async def measure_dialogues(
    path: Path, limit: int | None = None, on_progress: Callable[[int, int], None] | None = None
) -> dict:
    """Booked right / bookable over the folder's dialogues: a section for `evaluate --corpus` (corpus.py's shape),
    each miss with its transcript."""
    items = load_dialogues(path)[:limit]
    notes = [] if items else [f"dialogues.jsonl is missing from {path} (or empty): skipped."]
    results = []
    with override_settings(CHAT_BURST_WINDOW_SECONDS=0, PIPEDRIVE_API_TOKEN=""):  # one message, one turn
        for number, item in enumerate(items, 1):
            results.append(await run_dialogue(item))
            if on_progress:
                on_progress(number, len(items))
    bookable = [r for r in results if r.bookable]
    right = [r for r in bookable if r.booked_right]
    rows = [{"file": "dialogues.jsonl", "dialogues": len(results), "bookable": len(bookable),
             "booked": ratio(len(right), len(bookable))}] if items else []
    notes.append("Booked right: exactly one tour booked at the end, on the gold day at the gold time (any time "
                 "when the dialogue names none). Bookable: see quality/evaluation/corpus_dialogues.py.")
    failures = [{"missed": [r.error or "not booked right"], "utterance": r.source,
                 "gold": {"date": r.gold_date, "time": r.gold_time}, "ours": {"booked": r.booked},
                 "transcript": r.transcript} for r in bookable if not r.booked_right]
    return {"section": "dialogues", "title": f"Whole booking dialogues ({path})", "columns": COLUMNS,
            "rows": rows, "notes": notes, "failures": failures}
