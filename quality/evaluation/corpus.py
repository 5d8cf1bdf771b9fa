"""Measure how the offline reader takes dates and times from single messages of a labelled corpus.

    python manage.py evaluate --corpus /path/to/corpus --show-failures 40

A corpus folder holds JSONL files (booking_turns.jsonl, corrections.jsonl) whose items
have an `utterance`, a `gold_canonical` {"date": ISO or null, "time": "HH:MM" or null}
and a `reference_date_implied` (the "today" the utterance was written against). Each
utterance is read with the offline policy's own reader, so the figures are what a
parent would get.

Every measure returns a *section*: a dict with a title, columns, rows (the last one
the total), notes and failures, so the command can print any number of them the same
way and write them all to one JSON report.
"""

import datetime as dt
import json
from pathlib import Path

from chatbot.agent.offline.understanding import Hints, read_message
from chatbot.agent.offline.when import When

TURN_FILES = ("booking_turns.jsonl", "corrections.jsonl")
NOW = dt.time(9, 0)
# A school that runs tours every 15 minutes from 07:00 to 22:00: the reader gets no help from the timetable.
TOUR_TIMES = tuple(f"{minutes // 60:02d}:{minutes % 60:02d}" for minutes in range(7 * 60, 22 * 60 + 1, 15))
COLUMNS = {
    "file": "File",
    "items": "Items",
    "dates": "Dates read right",
    "times": "Times read right",
    "spurious_dates": "Spurious dates",
    "spurious_times": "Spurious times",
}


def ratio(hits: int, of: int) -> dict:
    """A share the printer shows as "97.5 % (78/80)"."""
    return {"hits": hits, "of": of, "rate": round(hits / of, 4) if of else None}


def read_when(utterance: str, today: dt.date) -> When:
    """What the offline policy reads about when from one message."""
    return read_message(utterance, Hints(today=today, now=NOW, tour_times=TOUR_TIMES)).when


def _date_read(when: When) -> str | None:
    if when.date:
        return when.date.isoformat()
    if when.start:  # a range where one day was meant counts as a miss
        return f"{when.start.isoformat()}..{when.end.isoformat() if when.end else ''}"
    return None


def _time_read(when: When) -> str | None:
    return when.time or (f"({when.part_of_day})" if when.part_of_day else None)


def _is_iso_date(value: str | None) -> bool:
    try:
        return bool(value) and bool(dt.date.fromisoformat(value))
    except ValueError:
        return False


def _is_time(value: str | None) -> bool:
    try:
        return bool(value) and bool(dt.time.fromisoformat(value))
    except ValueError:
        return False


def _measure_file(path: Path, failures: list[dict]) -> dict:
    counts = dict.fromkeys(("items", "date_hits", "date_gold", "time_hits", "time_gold",
                            "spurious_dates", "no_date", "spurious_times", "no_time"), 0)
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        gold = item.get("gold_canonical") or {}
        today = dt.date.fromisoformat(item.get("reference_date_implied") or "2019-03-01")
        when = read_when(item["utterance"], today)
        date, time = _date_read(when), _time_read(when)
        counts["items"] += 1
        missed = []
        # (what we read, whether it is a value at all when the gold has none, the gold's own check)
        for kind, ours, said, valid in (("date", date, date is not None, _is_iso_date),
                                        ("time", time, when.time is not None, _is_time)):
            if valid(gold.get(kind)):  # "dontcare" and the like: nothing to read
                counts[f"{kind}_gold"] += 1
                counts[f"{kind}_hits"] += ours == gold[kind]
                missed += [kind] if ours != gold[kind] else []
            else:
                counts[f"no_{kind}"] += 1
                counts[f"spurious_{kind}s"] += said
                missed += [f"spurious {kind}"] if said else []
        if missed:
            failures.append({"file": path.name, "missed": missed, "utterance": item["utterance"],
                             "gold": {"date": gold.get("date"), "time": gold.get("time")},
                             "ours": {"date": date, "time": time}})
    return counts


def _row(name: str, counts: dict) -> dict:
    return {
        "file": name,
        "items": counts["items"],
        "dates": ratio(counts["date_hits"], counts["date_gold"]),
        "times": ratio(counts["time_hits"], counts["time_gold"]),
        "spurious_dates": ratio(counts["spurious_dates"], counts["no_date"]),
        "spurious_times": ratio(counts["spurious_times"], counts["no_time"]),
    }


def measure_turns(path: Path) -> dict:
    """Date and time accuracy of the offline reader on the single-message files of the corpus at `path`.

    Raises FileNotFoundError when `path` is not a folder; a missing file is only noted."""
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"No corpus folder at {path}.")
    rows, notes, failures = [], [], []
    total: dict[str, int] = {}
    for name in TURN_FILES:
        file = path / name
        if not file.is_file():
            notes.append(f"{name} is missing from {path}: skipped.")
            continue
        counts = _measure_file(file, failures)
        rows.append(_row(name, counts))
        total = {key: total.get(key, 0) + value for key, value in counts.items()}
    if total:
        rows.append(_row("total", total))
    notes.append("Spurious: a date/time read from an item whose gold has none (share of such items).")
    return {"section": "turns", "title": f"Dates and times in single messages ({path})", "columns": COLUMNS,
            "rows": rows, "notes": notes, "failures": failures}
