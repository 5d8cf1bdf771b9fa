"""Structured reply blocks derived from a turn's tool results.

The model answers in plain text; the blocks (slot buttons, confirmation cards,
topic chips) come from what the tools actually returned, so every model gets
them and they can never disagree with the database. Channels without buttons
show the text, which always carries the same information.
"""

import datetime as dt

from django.core import signing
from django.urls import reverse
from django.utils.translation import get_language

from bookings.models import said_names, split_names
from bookings.services import short_label
from chatbot.agent.dialogue import Option
from chatbot.dates import human_slot

ICS_SALT = "chatbot.booking-ics"


def slot_label(slot: dict) -> str:
    """A slot in the reply's language: "Thu 26 Nov, 11:00" in English; elsewhere as the reply's own list writes
    it ("11月26日（星期四） 11:00"), which the offline reader reads back in that language."""
    if (get_language() or "en").startswith("en"):
        return slot.get("label") or short_label(dt.date.fromisoformat(str(slot["date"])), str(slot.get("time") or ""))
    return human_slot(str(slot["date"]), slot.get("time"))


def _booking_card(result: dict, rescheduled: bool = False) -> dict:
    details = result["confirmation_details"]
    return {
        "type": "booking_confirmation",
        "booking_id": result["booking_id"],
        "rescheduled": rescheduled,
        "date": details["date"],
        "weekday": details["weekday"],
        "time": details["time"],
        "label": details["label"],
        "child_name": said_names(split_names(details["child_name"])),  # "Leo和Mia" in Chinese
        "school": details["school"],
        "address": details["address"],
        "ics_url": reverse("chatbot:booking_ics", args=[signing.dumps(result["booking_id"], salt=ICS_SALT)]),
    }


def blocks_for(observations: list[tuple[str, dict]], options: list[Option]) -> list[dict]:
    """Blocks for the turn, from (tool name, result) pairs in order, and a button per slot the reply offered
    (`options`, the dialogue state's: the same the text lists)."""
    blocks: list[dict] = []
    for name, result in observations:
        status = result.get("status")
        if name in ("book_tour", "manage_tour_booking") and status == "success":
            if result.get("action") == "cancelled":
                blocks.append({"type": "notice", "text": result["message"]})
            else:
                blocks.append(_booking_card(result, rescheduled=result.get("action") == "rescheduled"))
        elif name == "request_callback" and status == "success":
            blocks.append({"type": "callback_confirmation", "callback_id": result["callback_id"], **result["details"]})
        elif name == "get_faq_answer" and status == "success" and result.get("related_topics"):
            blocks.append({"type": "chips", "options": [{"label": t, "value": t} for t in result["related_topics"]]})
    # A button per slot; pressing one sends its label as the parent's message, the words a person would type,
    # which every model and the transcript read naturally.
    labels = [o.label for o in options if not o.booking_id and o.time]
    if labels:
        blocks.append({"type": "buttons", "options": [{"label": label, "value": label} for label in labels]})
    return blocks
