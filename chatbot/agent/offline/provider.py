"""The offline policy behind the model interface: `complete("offline/policy", messages, tools)`.

It answers like a hosted chat model (an assistant message with OpenAI-style tool
calls, or plain content, plus estimated token usage), so the agent loop cannot
tell it from one. The loop calls it directly through `chatbot.agent.model`, with
no litellm in between; `chatbot.agent.offline.via_litellm` serves the same answers
to code that calls litellm itself.
"""

import hashlib
import json
import logging
from dataclasses import dataclass

from chatbot.agent.dialogue import Declared
from chatbot.agent.offline import replies
from chatbot.agent.offline.policy import Decision, decide

logger = logging.getLogger(__name__)
MODEL_NAME = "offline/policy"
CHARS_PER_TOKEN = 4
THOUGHTS = {  # short: a hosted model is billed for them twice (in the answer, then in the next call's prompt)
    "check_unread_messages": "Reading the new messages.",
    "get_faq_answer": "Looking it up in the FAQ.",
    "update_context": "Noting the correction.",
    "check_availability": "Checking open tour slots.",
    "book_tour": "Passing the details to book_tour.",
    "manage_tour_booking": "Changing the booking.",
    "request_callback": "Arranging a call back.",
    "manage_callback": "Changing the call back.",
}


@dataclass
class Answer:
    """One answer of the policy: text, or tool calls (`id`, `name`, `arguments` as a JSON string)."""

    content: str
    tool_calls: list[dict]
    prompt_tokens: int
    completion_tokens: int
    declared: Declared | None = None  # what a text answer asked and offered

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


def tool_names(tools: list | None) -> set[str]:
    """The names of the tools offered in this call (none offered: answer in text only)."""
    names = set()
    for tool in tools or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            names.add(str(function["name"]))
    return names


def _tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


def _call_id(messages: list, index: int, name: str, arguments: str) -> str:
    """Deterministic and unique within a turn: the same conversation gives the same ids."""
    seed = f"{len(messages)}:{index}:{name}:{arguments}"
    return "call_" + hashlib.sha1(seed.encode(), usedforsecurity=False).hexdigest()[:24]


def build_answer(decision: Decision, messages: list, tools: list) -> Answer:
    """The decision as an answer, with usage estimated from characters."""
    calls = []
    for index, call in enumerate(decision.calls):
        arguments = json.dumps(call.args, ensure_ascii=False, separators=(",", ":"))
        calls.append({"id": _call_id(messages, index, call.name, arguments), "name": call.name,
                      "arguments": arguments})
    if calls:
        content = " ".join(dict.fromkeys(THOUGHTS.get(c.name, "") for c in decision.calls)).strip()
        produced = content + "".join(c["arguments"] for c in calls)
    else:
        content = produced = decision.text
    prompt = json.dumps(messages, default=str, ensure_ascii=False) + json.dumps(tools or [], default=str)
    return Answer(content=content, tool_calls=calls, prompt_tokens=_tokens(prompt),
                  completion_tokens=_tokens(produced), declared=None if calls else decision.declared)


def answer(messages: list, tools: list) -> Answer:
    """Decide and wrap. A policy bug must not leave the parent without an answer, so it answers plainly."""
    try:
        decision = decide(messages, tool_names(tools))
    except Exception:  # the last-resort model: log the bug, still answer
        logger.exception("offline policy failed")
        decision = Decision(text=replies.not_understood())
    return build_answer(decision, messages, tools)


async def complete(model: str, messages: list, tools: list):
    """The model interface's entry point (`chatbot.agent.model.LocalModel`): the policy's answer as a ModelReply."""
    from chatbot.agent.model import ModelReply

    result = answer(messages, tools)
    return ModelReply(content=result.content, tool_calls=result.tool_calls, model=MODEL_NAME, latency_ms=0,
                      prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
                      declared=result.declared)
