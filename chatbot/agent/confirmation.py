"""Read-back before commit: a tour is booked, moved or cancelled only after the parent said yes to exactly that.

The tools enforce it, whichever model drives them: the first call that could
commit reads the action back instead (status "confirm") and notes it in the
active context; a later call commits only if the action is still the same and
the parent's latest message, sent after the read-back, says yes. A parent who
answers "no, the afternoon" changes the intake, so the next call reads back
the new action: nothing already collected is lost.
"""

import re

from chatbot.agent.offline import lexicon, when
from chatbot.agent.offline.gloss import gloss
from chatbot.models import Message

_I = re.IGNORECASE
HESITATE = re.compile(
    r"\b(?:no|not|nope|nah|don'?t|wait|hold on|actually|instead|change|rather|but|hmm|sorry|(?:what|how) about)\b",
    _I,
)


def says_yes(text: str) -> bool:
    """A plain yes to a read-back: "yes please", "ok go ahead", "that's right. What's the address?".

    Not a yes with a change anywhere in it ("yes. But the 11th", "please make it 2pm", "sure, what about
    Friday?"): a message that names a day or a time changes what was read back. Read in English words, so
    "ya betul", "好的" and "சரி" are a yes too."""
    text = gloss(text).text.strip()
    return bool(lexicon.YES.match(text)) and not HESITATE.search(text) and not when.spans(text)


def confirmed(read_back: dict, action: str, contact_id: int, latest_message_id: int) -> bool:
    """Whether `action` was read back earlier and the parent's latest message since then says yes."""
    after = read_back.get("after")
    if action not in (read_back.get("actions") or []) or not isinstance(after, int) or latest_message_id <= after:
        return False
    latest = (Message.objects.filter(conversation__contact_id=contact_id, role=Message.Role.USER, pk__gt=after,
                                     pk__lte=latest_message_id)
              .order_by("-pk").values_list("text", flat=True).first())
    return latest is not None and says_yes(latest)


NOT_YET = ("Nothing has changed yet. Read this back to the parent in your own words and ask them to confirm; "
           "call the tool again with the same details only after they say yes in a later message.")
