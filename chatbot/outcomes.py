"""A conversation's outcome: what it left true at its end, decided in this one place.

The outcome follows the conversation's last consequential act, in order:

- booked, moved (rescheduled), cancelled, callback: the latest of these wins, so "booked, then cancelled,
  then asked for a call" is a callback, and "booked, then moved" is moved;
- answered (an FAQ answer) only when nothing consequential happened; a question after a booking keeps it booked;
- handed off to staff stays: the concierge no longer runs that conversation. If staff hand it back, only a
  booking, move, cancellation or callback the concierge makes after that replaces it (an answer does not);
- abandoned: it ended (idle, closed) without any of the above.

The outcome is stored on the conversation (the list filters and counts it at any size) and recomputed when a
turn ends (`settle_turn`: `after_turn` on the conversation's stored state, from that turn's tool results in the
order they ran; a turn that ends after staff took over leaves it handed off), on handoff and at session end.
`from_steps` derives it from the stored reasoning steps, for conversations recorded before this rule.
"""

from collections.abc import Iterable

from chatbot.models import Conversation

Outcome = Conversation.Outcome
# What a successful tool call leaves true; manage_tour_booking depends on its action.
ACTS = {"book_tour": Outcome.BOOKED, "request_callback": Outcome.CALLBACK}
MANAGE_ACTIONS = {"rescheduled": Outcome.RESCHEDULED, "cancelled": Outcome.CANCELLED}
CONSEQUENTIAL = frozenset({Outcome.BOOKED, Outcome.RESCHEDULED, Outcome.CANCELLED, Outcome.CALLBACK})
FINAL = frozenset({Outcome.HANDED_OFF})
TOOLS = ("book_tour", "manage_tour_booking", "request_callback", "get_faq_answer")


def of_call(tool_name: str, result: dict | None) -> str:
    """The outcome one tool call leaves ("" when it leaves none: a failure, a lookup, a question)."""
    if not isinstance(result, dict) or result.get("status") != "success":
        return ""
    if tool_name == "manage_tour_booking":
        return MANAGE_ACTIONS.get(result.get("action", ""), "")
    if tool_name == "get_faq_answer":
        return Outcome.FAQ_ONLY
    return ACTS.get(tool_name, "")


def fold(current: str, happened: Iterable[str]) -> str:
    """The outcome after `happened` (outcomes of calls, in order) on top of `current`."""
    outcome = current or ""
    for step in happened:
        if not step or (outcome in FINAL and step not in CONSEQUENTIAL):
            continue
        answered_first = step == Outcome.FAQ_ONLY and outcome in ("", Outcome.ABANDONED)
        if step in CONSEQUENTIAL or answered_first:
            outcome = step
    return outcome


def after_turn(current: str, observations: list[tuple[str, dict]]) -> str:
    """The outcome once a turn has ended: `observations` are its (tool name, result) pairs in order."""
    return fold(current, (of_call(name, result) for name, result in observations))


def settles(observations: list[tuple[str, dict]]) -> bool:
    """Whether any of a turn's calls leaves an outcome (then `settle_turn` reads the conversation, locked)."""
    return any(of_call(name, result) for name, result in observations)


def settle_turn(conversation_pk: int, observations: list[tuple[str, dict]]) -> str | None:
    """Inside the transaction that stores a turn's reply: the conversation's outcome once the turn has ended;
    None when none of the turn's calls leaves an outcome (a lookup, a failure): nothing to read or change.

    Read from the stored conversation, not the turn's copy: staff may have taken it over while the turn ran,
    and then it stays handed off whatever the turn did.
    """
    if not settles(observations):
        return None
    status, current = (Conversation.objects.select_for_update().filter(pk=conversation_pk)
                       .values_list("status", "outcome").get())
    if status == Conversation.Status.HANDED_OFF:
        return current
    return after_turn(current, observations)


def at_end(current: str) -> str:
    """The outcome when the session ends: what it was, or abandoned when nothing happened."""
    return current or Outcome.ABANDONED


def from_steps(rows: Iterable[tuple[str, dict | None]], *, handed_off: bool = False, ended: bool = False) -> str:
    """The outcome from a conversation's stored observe steps ((tool name, result) in the order they ran)."""
    if handed_off:
        return Outcome.HANDED_OFF
    outcome = fold("", (of_call(name, result) for name, result in rows))
    return at_end(outcome) if ended else outcome
