"""Read-back before commit: a tour is booked, moved or cancelled only after the parent said yes to exactly that.

Whether the parent's message is a yes is the model's judgement: the model says so in the call
(`confirmed=true`: a hosted model from its reading, the offline policy from its own,
`chatbot.agent.offline.understanding.says_yes`). The structure is the tools': the first call that could commit
reads the action back instead (status "confirm") and notes it in the active context; a later call commits only
if the same action was read back in an earlier reply, the parent has written since, and the model says the
parent agreed. No word list overrules the model, and no model can skip the read-back. A parent who answers "no,
the afternoon" changes the intake, so the next call reads back the new action: nothing already collected is
lost.
"""

NOT_YET = ("Nothing has changed yet. Read this back to the parent in your own words and ask them to confirm; "
           "after they agree in a later message, call the tool again with the same details and confirmed=true (an "
           "e-mail or a special requirement given with their yes may be added in that call).")


def confirmed(read_back: dict, action: str, latest_message_id: int, parent_agreed: bool) -> bool:
    """Whether `action` was read back in an earlier reply (`read_back`, noted by the tools), the parent has written
    since (their latest message of this turn is newer than the read-back), and the model says they agreed."""
    after = read_back.get("after")
    return (parent_agreed is True and action in (read_back.get("actions") or []) and isinstance(after, int)
            and latest_message_id > after)
