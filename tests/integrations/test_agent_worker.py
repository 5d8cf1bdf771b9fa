"""The agent worker, dispatch over the channel layer, and the sweeper that re-dispatches lost turns."""

import asyncio
import datetime as dt

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import ApplicationCommunicator
from django.utils import timezone

from chatbot.agent import memory
from chatbot.channels import worker
from chatbot.models import Conversation, Message
from chatbot.tasks import redispatch_stale_inbound
from crm.models import FailedTask
from plumbing.redis import get_redis
from tests.factories import ContactFactory, ConversationFactory, MessageFactory, SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]


def _waiting_message(*, minutes_ago: float = 3, processed_minutes_ago: float | None = None, channel="chatwoot",
                     status=Conversation.Status.ACTIVE, text="Do you offer lunch?") -> Message:
    school = SchoolFactory(chatwoot_inbox_ids=[3])
    conversation = ConversationFactory(school=school, contact=ContactFactory(school=school), channel=channel,
                                       external_id="1:123" if channel == "chatwoot" else "106540352242922:6591234567",
                                       status=status)
    message = MessageFactory(conversation=conversation, role="user", text=text, channel=channel)
    created = timezone.now() - dt.timedelta(minutes=minutes_ago)
    processed = timezone.now() - dt.timedelta(minutes=processed_minutes_ago) if processed_minutes_ago else None
    Message.objects.filter(pk=message.pk).update(created_at=created, processed_at=processed)
    return Message.objects.get(pk=message.pk)


def _answers(message: Message) -> list[str]:
    return list(Message.objects.filter(conversation=message.conversation, role="assistant").exclude(text="")
                .values_list("text", flat=True))


def test_a_message_whose_dispatch_was_lost_is_answered_by_the_sweeper(chatwoot, echo_model, turns):
    message = _waiting_message()
    assert redispatch_stale_inbound.apply().get() == 1
    turns.settle()
    assert _answers(message) == ["Answered: Do you offer lunch?"]
    assert [c["content"] for c in chatwoot.posted] == ["Answered: Do you offer lunch?"]
    assert redispatch_stale_inbound.apply().get() == 0, "answered: nothing left to sweep"


def test_a_turn_whose_worker_died_is_run_again(chatwoot, echo_model, turns):
    message = _waiting_message(processed_minutes_ago=2.5)  # taken by a turn that never answered
    assert redispatch_stale_inbound.apply().get() == 1
    turns.settle()
    assert _answers(message) == ["Answered: Do you offer lunch?"]


def test_recent_messages_running_turns_and_staff_conversations_are_left_alone(chatwoot, echo_model, turns):
    fresh = _waiting_message(minutes_ago=0.5)
    running = _waiting_message(processed_minutes_ago=2.5)
    get_redis().set(memory.lock_key(running.conversation.school_id, running.conversation.contact_id), "token", ex=60)
    _waiting_message(status=Conversation.Status.HANDED_OFF)
    assert redispatch_stale_inbound.apply().get() == 0
    agent_worker_idle()
    assert not chatwoot.posted
    assert Message.objects.get(pk=fresh.pk).processed_at is None


def test_messages_staff_handled_are_not_answered_after_the_bot_resumes(chatwoot, echo_model, turns):
    from chatbot import handoff

    message = _waiting_message(minutes_ago=10)
    handoff.hand_off(message.conversation, "the parent asked for a person")
    later = MessageFactory(conversation=message.conversation, role="user", text="are you there?", channel="chatwoot",
                           processed_at=timezone.now())
    Message.objects.filter(pk=later.pk).update(created_at=timezone.now() - dt.timedelta(minutes=5))
    handoff.resume_bot(message.conversation, "set to pending in Chatwoot")
    Message.objects.filter(role="system").update(created_at=timezone.now() - dt.timedelta(minutes=4))
    Message.objects.filter(role="user").update(processed_at=timezone.now() - dt.timedelta(minutes=4))
    assert redispatch_stale_inbound.apply().get() == 0
    assert not echo_model.turns


def test_a_message_that_never_gets_answered_goes_to_staff(chatwoot, echo_model, turns, monkeypatch):
    message = _waiting_message()
    monkeypatch.setattr(worker, "dispatch_sync", lambda *a, **k: None)  # every dispatch is lost
    for _ in range(worker.MAX_REDISPATCHES):
        assert redispatch_stale_inbound.apply().get() == 1
    assert redispatch_stale_inbound.apply().get() == 0
    assert Conversation.objects.get().status == Conversation.Status.HANDED_OFF
    assert FailedTask.objects.get().args == [message.pk]
    assert "admissions team" in chatwoot.posted[0]["content"]


def test_a_web_chat_turn_that_died_with_its_process_is_answered_by_the_sweeper(echo_model, turns):
    """A deploy or crash kills daphne mid-turn: the message was taken, never answered, and the parent's socket
    is gone. The sweeper runs the turn again; the reply is stored for the history the widget shows on return."""
    message = _waiting_message(channel="web", processed_minutes_ago=2.5)
    assert redispatch_stale_inbound.apply().get() == 1
    turns.settle()
    assert _answers(message) == ["Answered: Do you offer lunch?"]
    assert redispatch_stale_inbound.apply().get() == 0, "answered: nothing left to sweep"


def test_a_web_chat_message_that_never_gets_answered_is_left_for_staff(echo_model, turns, monkeypatch):
    message = _waiting_message(channel="web")
    monkeypatch.setattr(worker, "dispatch_sync", lambda *a, **k: None)  # every dispatch is lost
    for _ in range(worker.MAX_REDISPATCHES):
        assert redispatch_stale_inbound.apply().get() == 1
    assert redispatch_stale_inbound.apply().get() == 0
    assert redispatch_stale_inbound.apply().get() == 0, "not counted again"
    assert Conversation.objects.get().status == Conversation.Status.ACTIVE, "no staff inbox to hand it to"
    failed = FailedTask.objects.get()
    assert failed.args == [message.pk] and "Failed tasks" in failed.error


def agent_worker_idle() -> None:
    worker.runner.wait_idle(10)


def test_the_agent_worker_consumer_runs_dispatched_turns(chatwoot, echo_model):
    """`runworker agent` feeds channel messages to AgentWorker; each turn runs as its own task."""
    message = _waiting_message(minutes_ago=0)

    async def run():
        communicator = ApplicationCommunicator(worker.AgentWorker.as_asgi(),
                                               {"type": "channel", "channel": worker.AGENT_CHANNEL})
        await communicator.send_input(worker.turn_event(message.pk))
        await communicator.send_input(worker.turn_event(message.pk))  # a duplicate event changes nothing
        for _ in range(200):
            await asyncio.sleep(0.05)
            if worker.in_flight() == 0 and await database_sync_to_async(_answers)(message):
                break
        communicator.stop()

    async_to_sync(run)()
    assert _answers(message) == ["Answered: Do you offer lunch?"]
    assert len(chatwoot.posted) == 1


@pytest.mark.redis
def test_dispatch_from_a_celery_worker_goes_through_the_real_channel_layer(chatwoot, echo_model, turns, settings):
    """Sync code (a Celery task) sends over channels-redis with its own pools; the agent worker picks it up."""
    assert settings.AGENT_WORKER
    message = _waiting_message(minutes_ago=0)
    worker.dispatch_sync(message.pk)
    worker.dispatch_sync(message.pk)  # a second event for the same message changes nothing
    turns.settle()
    assert _answers(message) == ["Answered: Do you offer lunch?"]
    assert len(chatwoot.posted) == 1
