"""Top-1 accuracy of FAQ retrieval on a labelled set of paraphrased parent questions.

`questions.json` holds, per demo school slug, questions as parents type them,
each with the FAQ question it should match (null: off-topic, must be no_match)
and optionally the parent's earlier messages (`history`).
"""

import json
from functools import cache
from pathlib import Path

from chatbot.faq import answer_question
from chatbot.models import FaqEntry

QUESTIONS_FILE = Path(__file__).with_name("questions.json")
LANGUAGES_FILE = Path(__file__).with_name("languages.json")  # the same in Malay, Tamil, Chinese and mixed


@cache
def load_questions() -> dict[str, list[dict]]:
    return json.loads(QUESTIONS_FILE.read_text(encoding="utf-8"))["schools"]


def faq_accuracy(school) -> dict:
    """Runs the school's question set; off-topic questions count as correct when they get no_match."""
    items = load_questions().get(school.slug, [])
    misses = []
    on_topic = off_topic = on_topic_correct = off_topic_correct = 0
    for item in items:
        result = answer_question(school, item["question"], item.get("history"))
        got = result.get("question_matched") if result["status"] == "success" else None
        correct = got == item["expected"]
        if item["expected"] is None:
            off_topic += 1
            off_topic_correct += correct
        else:
            on_topic += 1
            on_topic_correct += correct
        if not correct:
            misses.append({"question": item["question"], "expected": item["expected"], "got": got})
    total = on_topic + off_topic
    return {
        "school": school.slug,
        "total": total,
        "correct": on_topic_correct + off_topic_correct,
        "accuracy": (on_topic_correct + off_topic_correct) / total if total else 0.0,
        "on_topic_accuracy": on_topic_correct / on_topic if on_topic else 0.0,
        "off_topic_accuracy": off_topic_correct / off_topic if off_topic else 0.0,
        "misses": misses,
    }


def faq_accuracy_by_language(school) -> dict[str, dict]:
    """Top-1 accuracy per language on `languages.json`: the entry found (a translation counts as its entry) must
    be the one expected. {"ms": {"correct": 9, "total": 10, "misses": [...]}, ...}"""
    items = json.loads(LANGUAGES_FILE.read_text(encoding="utf-8")).get(school.slug, [])
    report: dict[str, dict] = {}
    for item in items:
        result = answer_question(school, item["question"])
        found = (FaqEntry.objects.select_related("translation_of")
                 .filter(id=(result.get("sources") or [{}])[0].get("id")).first())
        got = (found.translation_of or found).question if found else None
        row = report.setdefault(item["language"], {"correct": 0, "total": 0, "misses": []})
        row["total"] += 1
        if got == item["expected"]:
            row["correct"] += 1
        else:
            row["misses"].append({"question": item["question"], "expected": item["expected"], "got": got})
    return report
