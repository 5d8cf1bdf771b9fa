"""Drill 1: Redis restarted mid-conversation (SIGKILL, empty on restart): the database is the truth.

The session lock, the queue, the active context and the channel layer all live
in the redis-server this test owns. Killing it while a turn runs, or between
turns, must lose no message, answer each once, and need no restart by hand.
"""

import asyncio

import pytest
from channels.db import database_sync_to_async

from chatbot.agent import memory
from chatbot.models import Message
from chatbot.services import receive
from tests.factories import ContactFactory, SchoolFactory
from tests.faults.conftest import answered_once

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@database_sync_to_async
def _school_and_contact():
    school = SchoolFactory()
    return school, ContactFactory(school=school)


async def _taken(contact, text: str) -> bool:
    return await database_sync_to_async(Message.objects.filter(
        conversation__contact=contact, text=text, processed_at__isnull=False).exists)()


async def _until(condition, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not await condition():
            await asyncio.sleep(0.02)


async def test_redis_killed_between_turns(own_redis, echo_model):
    school, contact = await _school_and_contact()
    say = lambda text: receive(school=school, contact=contact, channel="web", text=text)  # noqa: E731

    await say("before the outage")
    own_redis.kill()
    await say("during the outage")  # no lock to take: answered anyway, the database claim keeps it single
    own_redis.start()
    await say("after the restart")

    # The lock and the queue work again with no restart of the app: a message sent during a turn is queued
    # (Redis) and answered once, by that turn or right after it.
    echo_model.delay = 0.6
    running = asyncio.create_task(say("a long one"))
    await _until(lambda: _taken(contact, "a long one"))
    assert await memory.session_lock(school.pk, contact.pk).locked()
    await say("and a quick one")
    await running

    await database_sync_to_async(answered_once)({"conversation__contact": contact}, [
        "before the outage", "during the outage", "after the restart", "a long one", "and a quick one"])


async def test_redis_killed_while_a_turn_runs(own_redis, echo_model):
    school, contact = await _school_and_contact()
    say = lambda text: asyncio.create_task(  # noqa: E731
        receive(school=school, contact=contact, channel="web", text=text))

    echo_model.delay = 1.5
    first = say("first")
    await _until(lambda: _taken(contact, "first"))  # the turn is inside the model call
    own_redis.kill()  # its lock, the queue and the active context are gone
    second = say("second, while Redis is down")
    await asyncio.sleep(0.4)
    own_redis.start()
    third = say("third, after the restart")  # takes the (empty) lock while the first turn still runs
    await asyncio.gather(first, second, third)

    echo_model.delay = 0
    await receive(school=school, contact=contact, channel="web", text="later")
    assert not await memory.session_lock(school.pk, contact.pk).locked(), "no lock left behind"
    # Each message here had a turn of its own (two of them overlapping, as neither could see the other's
    # lock), so a reply's `reply_to` names what it answered; the echo would also repeat unanswered history.
    replies = await database_sync_to_async(_replies)(contact)
    assert sorted(replies) == ["first", "later", "second, while Redis is down", "third, after the restart"]
    assert await database_sync_to_async(_all_taken)(contact)


def _replies(contact) -> list[str]:
    return [m.reply_to.text for m in Message.objects.filter(conversation__contact=contact, role="assistant")
            .exclude(text="").select_related("reply_to")]


def _all_taken(contact) -> bool:
    return not Message.objects.filter(conversation__contact=contact, role="user", processed_at__isnull=True).exists()
