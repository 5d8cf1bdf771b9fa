"""The terminal's observer: a turn's reasoning steps and its reply printed as they happen (`manage.py chat`)."""

from rich.console import Console

from chatbot.channels.base import TurnObserver
from chatbot.models import Conversation, Message

STYLES = {"think": "dim italic", "act": "cyan", "observe": "green", "answer": "bold"}


class TerminalObserver(TurnObserver):
    def __init__(self, console: Console, show_steps: bool) -> None:
        self.console = console
        self.show_steps = show_steps

    async def step(self, conversation: Conversation, step: dict) -> None:
        if not self.show_steps or step["kind"] == "answer":
            return
        if step["kind"] == "act":
            text = f"→ {step['tool_name']}({step['tool_arguments']})"
        elif step["kind"] == "observe":
            text = f"← {step['tool_name']}: {step['content']}"
        else:
            text = f"… {step['content']}"
        style = "red" if step["kind"] == "observe" and (step["tool_result"] or {}).get("status") == "error" else None
        self.console.print(text, style=style or STYLES[step["kind"]], markup=False, highlight=False)

    async def reply(self, conversation: Conversation, message: Message) -> None:
        self.console.print(f"Concierge: {message.text}", style="bold", markup=False, highlight=False)
        for block in message.payload.get("blocks", []):
            if block["type"] == "buttons":
                for number, option in enumerate(block["options"], start=1):
                    self.console.print(f"   [{number}] {option['label']}", markup=False, highlight=False)
