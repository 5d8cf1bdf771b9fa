"""The session lock and message queue under concurrency (real Redis and PostgreSQL in CI).

While a turn runs, 10 more messages from the same contact arrive: each is seen by
exactly one turn, in order, every one gets answered, and no two turns of the
contact ever overlap.
"""

import asyncio
import time

import litellm
import pytest
from channels.db import database_sync_to_async
from django.test import override_settings
from litellm import CustomLLM
from litellm.types.utils import ModelResponse

from chatbot.agent.memory import ActiveContext
from chatbot.models import Message
from chatbot.services import receive
from tests.chatbot.scripted_model import Streamed
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]


class SlowEchoModel(Streamed, CustomLLM):
    """Takes `delay` seconds per call and echoes the parent messages of the turn; records each call's span."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.spans: list[tuple[float, float, list[str]]] = []

    async def acompletion(self, *args, **kwargs) -> ModelResponse:
        started = time.monotonic()
        await asyncio.sleep(self.delay)
        messages = kwargs["messages"]
        last_assistant = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=0)
        turn_user = [m["content"] for m in messages[last_assistant + 1:] if m["role"] == "user"]
        self.spans.append((started, time.monotonic(), turn_user))
        response = ModelResponse()
        response.choices[0].message.content = "Answered: " + " | ".join(turn_user)
        return response


@pytest.fixture
def slow_model():
    model = SlowEchoModel(delay=0.3)
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != "slowecho"]
    litellm.custom_provider_map.append({"provider": "slowecho", "custom_handler": model})
    litellm.utils.custom_llm_setup()
    with override_settings(LLM_MODEL="slowecho/test", CHAT_BURST_WINDOW_SECONDS=0):
        yield model


@database_sync_to_async
def _school_and_contact():
    school = SchoolFactory()
    return school, ContactFactory(school=school)


@database_sync_to_async
def _messages(contact):
    return list(Message.objects.filter(conversation__contact=contact).order_by("created_at", "id"))


async def test_messages_during_a_turn_are_each_answered_once_in_order(slow_model):
    school, contact = await _school_and_contact()
    first = asyncio.create_task(receive(school=school, contact=contact, channel="web", text="message 0"))
    await asyncio.sleep(0.1)  # the first turn is now inside the model call
    later = []
    for n in range(1, 11):
        later.append(asyncio.create_task(receive(school=school, contact=contact, channel="web", text=f"message {n}")))
        await asyncio.sleep(0.02)
    await asyncio.gather(first, *later)

    stored = await _messages(contact)
    parent = [m for m in stored if m.role == "user"]
    replies = [m for m in stored if m.role == "assistant"]
    assert [m.text for m in parent] == [f"message {n}" for n in range(11)]
    assert all(m.processed_at is not None for m in parent)

    # Each reply echoes every parent message its turn took in: together, each message exactly once, in order.
    answered = [text for r in replies for text in r.text.removeprefix("Answered: ").split(" | ")]
    assert answered == [f"message {n}" for n in range(11)], "each message answered exactly once, in order"
    assert replies and len(replies) < 11, "messages that arrived during a turn are answered together"
    state = (await database_sync_to_async(ActiveContext.load)(school.pk, contact.pk)).dialogue
    assert (state.since_done, len(state.answered)) == (11, 11), "the dialogue state counts each message once"
    position = {m.text: i for i, m in enumerate(stored)}
    for reply in replies:
        echoed = reply.text.removeprefix("Answered: ").split(" | ")
        assert all(position[text] < position[reply.text] for text in echoed), "a reply sorts after what it answers"

    spans = sorted((start, end) for start, end, _ in slow_model.spans)
    overlaps = sum(1 for (_, end), (start, _) in zip(spans, spans[1:], strict=False) if start < end)
    assert overlaps == 0, "two turns of one contact ran at the same time"


async def test_a_redelivered_message_is_answered_once(slow_model):
    slow_model.delay = 0
    school, contact = await _school_and_contact()
    results = await asyncio.gather(*[
        receive(school=school, contact=contact, channel="chatwoot", text="hello", channel_message_id="cw-42")
        for _ in range(3)
    ])
    assert sorted(r.duplicate for r in results) == [False, True, True]
    stored = await _messages(contact)
    assert [m.role for m in stored] == ["user", "assistant"]


async def test_two_contacts_run_in_parallel(slow_model):
    school, first = await _school_and_contact()
    second = await database_sync_to_async(ContactFactory)(school=school)
    await asyncio.gather(receive(school=school, contact=first, channel="web", text="hi from one"),
                         receive(school=school, contact=second, channel="web", text="hi from two"))
    (start_a, end_a, _), (start_b, end_b, _) = slow_model.spans
    assert start_b < end_a and start_a < end_b, "different contacts' turns must not wait for each other"
