"""The read-back: an action waits for the parent's yes to exactly what was read back (chatbot.agent.confirmation)."""

from bookings.intake import DETAILS
from bookings.models import join_names
from chatbot.agent import confirmation
from chatbot.agent.tools.context import ToolContext

# Details a yes may add without changing what was read back: recorded with the booking, no new read-back needed.
ADDED_WITH_A_YES = ("parent_email", "special_requirements")


def _described(details: dict) -> str:
    """A booking as the read-back awaits the parent's yes to it (and the prompt shows it), in one line:
    "2026-11-27, 09:00, Sarah Tan, +6591234567, Mia (5) and Leo (3, Year 1)". An e-mail or a special requirement
    given with the yes does not change it (ADDED_WITH_A_YES)."""
    def child(c: dict) -> str:  # every detail given, so a change to any of them needs a new yes
        known = [str(c[k]) for k in ("age", "date_of_birth", "year_group") if c.get(k) not in (None, "")]
        return f"{c.get('name') or ''} ({', '.join(known)})" if known else str(c.get("name") or "")

    def said(key: str) -> str:
        return join_names([child(c) for c in details[key]]) if key == "children" else str(details[key])
    return ", ".join(said(k) for k in ("date", "time", *DETAILS) if k in details and k not in ADDED_WITH_A_YES)


def _awaiting_yes(ctx: ToolContext, action: str, confirmed: bool | None) -> bool:
    """True, with the read-back noted, unless this action was read back earlier and the model says the parent
    agreed since (`confirmed`).

    One reply may read back several actions ("cancel Mia's tour and book Sam's"): one yes confirms them all."""
    latest = max(ctx.turn_message_ids, default=0)
    pending = ctx.active.read_back
    if confirmation.confirmed(pending, action, latest, confirmed is True):
        return False  # the yes stands until the action is done (a failed commit may be tried again)
    earlier = pending.get("actions") or [] if pending.get("after") == latest else []
    ctx.active.read_back = {"actions": [*earlier, action], "after": latest}
    return True


def _done(ctx: ToolContext, action: str) -> None:
    """The confirmed action is committed: its yes is used up."""
    left = [a for a in ctx.active.read_back.get("actions") or [] if a != action]
    ctx.active.read_back = {**ctx.active.read_back, "actions": left} if left else {}
