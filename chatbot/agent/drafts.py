"""A reply's draft: the answer's text shown as a hosted model writes it, before the reply is stored.

Web chat protocol v3 (docs/web-chat-protocol.md). A draft is never the reply: the reply is stored first and
sent whole, once (its `message` frame), and it replaces the draft on the parent's screen. The frames:

- `reply_delta` {draft, at, text}: more of draft number `draft` (1, 2... within the turn), `at` characters in;
  pieces written while the last one was still on its way go out together;
- `reply_dropped` {draft, reason}: what was written is not the answer. "tool_calls": the model turned to tools
  (the widget takes the text away: it is the round's reasoning step); "interrupted": the stream broke (the
  retry, or the offline policy, answers instead); "more_messages": the parent wrote again meanwhile, and the
  answer is written again for everything. The widget keeps an interrupted or outdated draft on screen, marked,
  until the reply replaces it;
- the reply's `message` frame carries `draft`: "kept" (the reply is the text shown, as it was written) or
  "replaced" (it is not: the widget says so), when a draft is on screen.
"""

from collections.abc import Callable

from chatbot.text import without_nul

# Schedules one frame, made when its turn to be sent comes (None: nothing to send by then).
FrameSender = Callable[[Callable[[], dict | None]], None]


class Draft:
    """The turn's drafts, written to the parent's channel in order (`chatbot.services._Frames`)."""

    def __init__(self, send: FrameSender) -> None:
        self.send = send
        self.number = 0
        self.text = ""  # the current draft's text so far
        self.writing = False  # a draft is being written (not dropped)
        self.on_screen = False  # the widget shows a draft: a live one, or one interrupted or outdated
        self.unsent: dict | None = None  # a delta scheduled and not sent yet: more text joins it

    def write(self, text: str) -> None:
        if not text:
            return
        if not self.writing:
            self.number, self.text, self.writing, self.on_screen = self.number + 1, "", True, True
        if self.unsent is not None and self.unsent["draft"] == self.number:
            self.unsent["text"] += text
        else:
            self.unsent = {"type": "reply_delta", "draft": self.number, "at": len(self.text), "text": text}
            self.send(self._take)
        self.text += text

    def _take(self) -> dict | None:
        frame, self.unsent = self.unsent, None
        return frame

    def drop(self, reason: str) -> None:
        """What the current draft wrote is not the answer (see the module docstring for the reasons)."""
        if not self.writing:
            return
        self.writing = False
        self.on_screen = reason != "tool_calls"
        number = self.number
        self.send(lambda: {"type": "reply_dropped", "draft": number, "reason": reason})

    def outcome(self, reply_text: str) -> str:
        """What the reply's frame says of the draft on screen: "kept", "replaced", or "" (none on screen)."""
        if not self.on_screen:
            return ""
        return "kept" if self.writing and without_nul(self.text).strip() == reply_text else "replaced"
