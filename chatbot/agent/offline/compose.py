"""Assemble the final answer of a turn from what the parent said and what the tools answered.

One reply addresses everything in the turn, in the order a person would:
greeting, corrections, FAQ answers, the task itself, then thanks or goodbye.
"""

import datetime as dt
from typing import Protocol

from chatbot.agent.dialogue import DialogueState
from chatbot.agent.offline import lexicon as lx
from chatbot.agent.offline import replies
from chatbot.agent.offline.conversation import Conversation
from chatbot.agent.offline.understanding import WHEN_FIELDS, Reading


class Turn(Protocol):
    """What the answer is assembled from: the policy's `Turn` (policy.py), read here through this interface
    so that compose need not import the policy that calls it."""

    conv: Conversation
    today: dt.date
    reading: Reading
    state: DialogueState
    asked: frozenset[str]
    options: list[dict]
    another: bool
    callback_args: dict
    calling_hours: tuple[str, str] | None
    choice: tuple[list[dict], bool]
    facts: dict
    family: list[dict]
    family_size: int
    flow: str
    missing: list[str]
    offers_known_family: bool
    open_day: bool
    relation: str
    several: bool
    slot: tuple[str | None, str | None]
    starting: bool
    target_tour: tuple[dict | None, bool]
    then: str


def _last(turn: "Turn", name: str) -> dict | None:
    return turn.conv.last_result(name)


def _availability(turn: "Turn", purpose: str = "") -> str:
    steps = [s for s in turn.conv.steps if s.name == "check_availability" and s.result is not None]
    if not steps:
        return ""
    result, when = steps[-1].result, turn.reading.when
    if (when.after or when.before) and not when.time:  # "after 3": the afternoon's slots from 15:00 on
        fitting = [s for s in result.get("available_slots") or [] if when.fits_time(str(s.get("time") or ""))]
        result = {**result, "available_slots": fitting} if fitting else result
    return replies.availability(result, steps[-1].args, turn.today, purpose)


def _choice_problem(turn: "Turn") -> str:
    matches, picking = turn.choice
    if picking and not matches:
        return replies.bad_choice(turn.options)
    if picking and len(matches) > 1:
        return replies.ambiguous(matches, turn.today)
    return ""


def _open_days(turn: "Turn") -> str:
    result = _last(turn, "check_open_days")
    if not result:
        return ""
    if result.get("status") != "success":
        return replies.no_open_days()
    return replies.open_days(result["open_days"], turn.today)


def _book_open_day(turn: "Turn", result: dict | None) -> str:
    listed = _open_days(turn)
    if not result or result.get("status") != "missing_fields":
        return listed
    personal = [str(m) for m in result.get("missing") or [] if m not in WHEN_FIELDS]
    question = replies.ask_for(personal, turn.relation, str(turn.facts.get("child_name") or ""))
    if not question and "preferred_date" in (result.get("missing") or []):
        question = replies.which_open_day()
    return replies.join([listed, question])


def _book(turn: "Turn") -> str:
    result = _last(turn, "book_tour")
    if turn.open_day and not (result and result.get("status") in ("success", "confirm", "error")):
        return _book_open_day(turn, result)
    if result and result.get("status") == "success":
        return replies.booking_confirmed(result, turn.today)
    if result and result.get("status") == "confirm":
        return replies.read_back_booking(result, turn.today)
    if result and result.get("status") == "error":
        return replies.tool_error(result, turn.today)
    problem = _choice_problem(turn)
    if problem:
        return problem
    pieces = []
    facts = turn.facts
    offered = _availability(turn)
    if result and result.get("status") == "missing_fields" and result.get("options"):
        offered = replies.options(result["options"], turn.today)
    who = replies.join_names([str(c["name"]) for c in turn.family if c.get("name")]) if turn.several else str(
        facts.get("child_name") or "")
    if turn.starting and not offered:
        pieces.append(replies.start_booking(turn.relation, who, turn.another))
    else:  # every detail given is acknowledged
        known = turn.conv.collected
        pieces.append(replies.noted_details({k: v for k, v in turn.reading.facts.items() if known.get(k) != v},
                                            turn.reading.children))
    if result and result.get("status") == "missing_fields":
        missing = [str(m) for m in result.get("missing") or []]
    else:
        missing = turn.missing
    personal = [m for m in missing if m not in WHEN_FIELDS]
    unsure = str(turn.reading.unsure.get("child_name") or "") if "child_name" in personal else ""
    if unsure:  # "it's for Mira": whose name it is, asked on its own before it is stored
        return replies.join([*pieces, offered, replies.is_your_child(unsure, turn.relation)])
    date, time = turn.slot
    if offered:
        pieces.append(offered)
    elif personal and date and time:  # the parent just named the slot
        pieces.append(replies.booking_pending(date, time, turn.today))
    if personal and turn.offers_known_family:
        pieces.append(replies.family_again(turn.conv.known_children))
    elif personal:
        question = (replies.ask_family(turn.family, turn.family_size, personal) if turn.several
                    else replies.ask_for(personal, turn.relation, str(facts.get("child_name") or "")))
        pieces.append(replies.also(question) if offered else question)
    elif not offered and missing:
        pieces.append(replies.ask_when())
    return replies.join(pieces)


def _manage_result(turn: "Turn", action: str) -> str:
    result = _last(turn, "manage_tour_booking")
    if not result:
        return ""
    status = result.get("status")
    if status == "confirm":
        read_back = replies.read_back_cancel if result.get("action") == "cancel" else replies.read_back_move
        return read_back(result, turn.today)
    if status == "success":
        if result.get("action") == "cancelled":
            ref = result.get("booking_id")
            tour = next((t for t in turn.conv.upcoming_tours if t["booking_id"] == ref), None)
            return replies.cancelled(result, tour, turn.today, offer_new=not turn.then)
        return replies.rescheduled(result, turn.today)
    if status == "no_change":  # "move it to Wednesday 2pm" when it is on Wednesday at 2pm
        return replies.already_then(result, turn.today)
    if status == "missing_fields" and "booking_id" in (result.get("missing") or []):
        tours = [t for t in result.get("your_bookings") or [] if isinstance(t, dict) and t.get("booking_id")]
        return replies.which_tour(tours, action, turn.today) if tours else replies.no_bookings()
    if status == "missing_fields" and result.get("options"):
        return replies.options(result["options"], turn.today)
    if status == "missing_fields":
        tour, _ = turn.target_tour
        return _availability(turn, "instead") or replies.ask_new_slot(tour, turn.today)
    return replies.manage_error(result, action, turn.today)


def _manage(turn: "Turn", action: str) -> str:
    done = _manage_result(turn, action)
    if done:
        return done
    tour, ambiguous = turn.target_tour
    if ambiguous:
        return replies.which_tour(turn.conv.upcoming_tours, action, turn.today)
    replies.concerning(str((tour or {}).get("booking_id") or ""))
    problem = _choice_problem(turn)
    if problem:
        return problem
    offered = _availability(turn, "instead")
    if offered and tour and tour.get("date") and turn.starting:
        return replies.join([replies.moving(tour, turn.today), offered])
    return offered or replies.ask_new_slot(tour, turn.today)


def _callback(turn: "Turn") -> str:
    managed = _last(turn, "manage_callback")  # a call back already requested, moved or cancelled
    if managed:
        return replies.callback_managed(managed, turn.today)
    result = _last(turn, "request_callback")
    if result and result.get("status") == "success":
        return replies.callback_done(result, turn.today)
    if result and result.get("status") == "error":
        return replies.rule_message(result, replies.callback_failed(), turn.today)
    if result:
        missing = [str(m) for m in result.get("missing") or []]
    else:
        missing = [k for k in ("parent_name", "parent_phone", "best_time_to_call") if not turn.callback_args.get(k)]
    if turn.calling_hours:  # "call me at 8pm": the calling hours said, another time asked for
        return replies.outside_calling_hours(*turn.calling_hours, missing, first=turn.starting)
    return replies.ask_callback(missing, first=turn.starting) if missing else ""


def _waitlist(turn: "Turn") -> str:
    result = _last(turn, "join_waitlist") or {}
    if result.get("status") == "success":
        return replies.waitlisted(result, turn.today)
    if result.get("status") == "missing_fields":
        missing = [str(m) for m in result.get("missing") or []]
        personal = [m for m in missing if m not in WHEN_FIELDS]
        if personal:
            return replies.ask_for(personal, turn.relation, str(turn.facts.get("child_name") or ""))
        return replies.ask_waitlist_tour()
    return replies.tool_error(result, turn.today) if result else ""


def _seat_offer(turn: "Turn") -> str:
    result = _last(turn, "answer_seat_offer") or {}
    if result.get("status") == "success" and result.get("action") == "declined":
        return replies.seat_declined()
    if result.get("status") == "success":
        return replies.booking_confirmed(result, turn.today)
    if result.get("status") == "confirm":
        return replies.read_back_booking(result, turn.today)
    return replies.rule_message(result, "", turn.today)


def _main(turn: "Turn") -> str:
    """The text of the turn's flow, then of the flow asked for after it."""
    texts = []
    for flow in (turn.flow, turn.then):
        text = _flow(turn, flow)
        if text and flow in ("book", "reschedule", "cancel", "callback", "waitlist"):
            replies.about(flow)
        texts.append(text)
    return replies.join(texts)


def _flow(turn: "Turn", flow: str) -> str:
    if flow == "book":
        return _book(turn)
    if flow in ("reschedule", "cancel"):
        return _manage(turn, flow)
    if flow == "callback":
        return _callback(turn)
    if flow == "waitlist":
        return _waitlist(turn)
    if flow == "open_days":
        return _open_days(turn)
    if flow in ("accept_offer", "decline_offer"):
        return _seat_offer(turn)
    if flow == "my_tour":
        arriving = replies.thanks_for_telling() if "arriving" in turn.reading.intents else ""
        return replies.join([arriving, replies.tours_summary(turn.conv.upcoming_tours, turn.today)])
    if flow == "keep":
        return replies.kept_booking_more()
    if flow == "drop":
        return replies.nothing_booked()
    return ""


def _read_back_again(turn: "Turn") -> str:
    """The read-backs still waiting for the parent's yes (the dialogue state's), written again."""
    texts = []
    for waiting in turn.state.awaiting:
        if waiting.get("tool") == "manage_tour_booking":
            read_back = replies.read_back_cancel if waiting.get("action") == "cancel" else replies.read_back_move
        else:
            read_back = replies.read_back_booking
        texts.append(read_back(waiting, turn.today))
    return replies.join(texts)


def _aside(turn: "Turn") -> bool:
    """Whether this turn dealt with something else while a read-back waits for the parent's yes: a question
    answered, the parent's tours listed, or a call back arranged (its read-back is then asked again)."""
    if "read_back" not in turn.asked or "no" in turn.reading.intents:
        return False
    arranged = any(r.get("status") == "success" for name in ("request_callback", "manage_callback")
                   for r in turn.conv.results(name))
    return turn.flow in ("faq", "my_tour") or (turn.flow == "callback" and arranged)


def compose(turn: "Turn") -> str:
    """The final text of the turn."""
    if turn.flow == "refuse":
        return replies.refuse_injection()
    reading, conv, today = turn.reading, turn.conv, turn.today
    school = str(conv.school.get("name") or "")
    name = lx.address(str(reading.facts.get("parent_name") or "")) or conv.contact_name
    quiet = turn.flow == "chat" and not reading.questions and not conv.steps
    if "greet" in reading.intents and quiet and not reading.intents & {"offtopic", "thanks", "bye", "no"}:
        returning = bool(conv.contact.get("returning") or conv.upcoming_tours)
        return replies.welcome(school, name, returning, conv.upcoming_tours, today)
    if "offtopic" in reading.intents and quiet:
        return replies.refuse_offtopic(school)

    parts = []
    if "greet" in reading.intents:
        parts.append(replies.hello(name))
    if "offtopic" in reading.intents:
        parts.append(replies.refuse_offtopic(school, short=True))
    if "keep" in reading.intents and turn.flow == "book":
        parts.append(replies.kept_booking())
    # "updated to 16:30" then "16:30 isn't a tour time": say only the latter
    refused = {r.get("field") for r in conv.results("book_tour") if r.get("status") == "error"}
    parts += [replies.corrected(r, today) for r in conv.results("update_context") if r.get("field") not in refused]
    offer_callback = turn.flow in ("faq", "chat")
    parts += replies.faq_replies(conv.results("get_faq_answer"), offer_callback,
                                   "answer_language" in turn.state.told)
    main = _main(turn)
    if main:
        parts.append(main)
    elif "no" in reading.intents and "read_back" in turn.asked:
        parts.append(replies.what_to_change())
    elif reading.intents & {"no", "browsing"}:  # "just browsing": nothing more is asked
        parts.append(replies.no_problem())
    elif reading.intents & {"help", "language"} and not parts:  # "english pls" with nothing asked: what we do
        parts.append(replies.help_text())
    elif "yes" in reading.intents and not parts and not reading.intents & {"thanks", "bye"}:  # "ok thanks": below
        parts.append(replies.anything_else())
    elif reading.facts.keys() & {"parent_name", "parent_phone"} and not parts:
        parts.append(replies.noted(name))
    aside = _aside(turn)
    waiting = _read_back_again(turn) if "read_back" in turn.asked and (not main or aside) else ""
    if waiting and reading.intents & {"bye", "thanks"}:  # never let a parent leave thinking it is done
        parts.append(replies.unconfirmed(waiting))
    elif waiting and aside:  # a question answered (a call back arranged) while the tour still waits for its yes
        parts.append(waiting)
    elif "bye" in reading.intents:
        parts.append(replies.bye(name, conv.upcoming_tours, today))
    elif "thanks" in reading.intents and not main and replies.no_problem() not in parts:  # "no, thank you"
        parts.append(replies.thanks(name))
    if not [p for p in parts if p and p != replies.hello(name)]:
        parts.append(replies.not_understood())
    return replies.join(parts)
