"""`manage.py evaluate --corpus`: the date/time reading measure on a tiny corpus written here."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from quality.evaluation.corpus import measure_turns

REFERENCE = "2026-11-19"  # a Thursday


def item(utterance: str, date: str | None, time: str | None) -> str:
    return json.dumps({"utterance": utterance, "gold_canonical": {"date": date, "time": time, "party_size": None},
                       "reference_date_implied": REFERENCE})


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "booking_turns.jsonl").write_text("\n".join([
        item("Could we see the school on Friday next week at half past 9?", "2026-11-27", "09:30"),
        item("A tour tomorrow at four in the afternoon, please.", "2026-11-20", "16:00"),
        item("Hi, is the library open to visitors?", None, None),
        item("We'd like Tuesday at 10.", "2026-11-24", "11:00"),  # gold says 11: a miss
        item("Whatever day suits you.", "dontcare", None),  # not a date: not counted
    ]) + "\n", encoding="utf-8")
    return tmp_path


def run(*args: str) -> str:
    out = StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


def test_measure_turns_counts_dates_times_and_spurious_ones(corpus):
    section = measure_turns(corpus)
    total = section["rows"][-1]
    assert total["file"] == "total" and total["items"] == 5
    assert (total["dates"]["hits"], total["dates"]["of"]) == (3, 3)
    assert (total["times"]["hits"], total["times"]["of"]) == (2, 3)
    assert (total["spurious_dates"]["hits"], total["spurious_dates"]["of"]) == (0, 2)
    assert [f["utterance"] for f in section["failures"]] == ["We'd like Tuesday at 10."]
    assert any("corrections.jsonl is missing" in note for note in section["notes"])


def test_the_command_prints_figures_failures_and_writes_json(corpus, tmp_path):
    report = tmp_path / "report.json"
    output = run("--corpus", str(corpus), "--show-failures", "5", "--json", str(report))
    assert "booking_turns.jsonl" in output and "66.7% (2/3)" in output and "100.0% (3/3)" in output
    assert "We'd like Tuesday at 10." in output and "'11:00'" in output and "'10:00'" in output
    assert "corrections.jsonl is missing" in output
    sections = json.loads(report.read_text(encoding="utf-8"))
    assert sections[0]["section"] == "turns" and sections[0]["rows"][-1]["times"]["rate"] == 0.6667


def test_failures_are_listed_only_when_asked(corpus):
    assert "We'd like Tuesday at 10." not in run("--corpus", str(corpus))


def test_a_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="No corpus folder"):
        run("--corpus", str(tmp_path / "nowhere"))
