"""Issue 26 (low): visitor tokens never expired; a 400-day-old one resumed the contact and its history.

A token now expires VISITOR_TOKEN_MAX_AGE_DAYS (90) after its last use: each connection signs it afresh."""

import datetime as dt

import pytest
import time_machine
from channels.db import database_sync_to_async
from django.core import signing
from django.test import override_settings
from django.utils import timezone

from chatbot.channels.web.consumer import VISITOR_SALT
from tests.chatbot.test_web_consumer import open_chat
from tests.factories import ContactFactory, ConversationFactory, MessageFactory, SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def own_channel_layer():
    """Expiry is about the token, not the transport: each test gets an in-process channel layer of its own, so a
    Redis layer's receive left by another test's event loop cannot end this socket."""
    with override_settings(CHANNEL_LAYERS={"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}):
        yield


def _visitor_with_history(days_ago: int) -> tuple[str, str]:
    """A school, and a visitor with a conversation; (its slug, the token signed `days_ago` days ago)."""
    school = SchoolFactory()
    contact = ContactFactory(school=school, web_visitor_id="visitor-1")
    conversation = ConversationFactory(school=school, contact=contact, channel="web")
    MessageFactory(conversation=conversation, role="user", text="My son is Tom, 5")
    with time_machine.travel(timezone.now() - dt.timedelta(days=days_ago)):
        token = signing.dumps({"school": school.slug, "visitor": "visitor-1"}, salt=VISITOR_SALT)
    return school.slug, token


async def test_a_token_unused_for_400_days_resumes_nothing():
    slug, token = await database_sync_to_async(_visitor_with_history)(400)
    comm, session = await open_chat(slug, token)
    assert session["new_visitor"] is True and session["history"] == [] and session["conversation_id"] is None
    assert signing.loads(session["visitor_token"], salt=VISITOR_SALT)["visitor"] != "visitor-1"
    await comm.disconnect()


async def test_a_token_used_within_90_days_resumes_and_is_signed_afresh():
    slug, token = await database_sync_to_async(_visitor_with_history)(89)
    comm, session = await open_chat(slug, token)
    assert session["new_visitor"] is False and [m["text"] for m in session["history"]] == ["My son is Tom, 5"]
    fresh = session["visitor_token"]
    assert fresh != token and signing.loads(fresh, salt=VISITOR_SALT, max_age=60)["visitor"] == "visitor-1"
    await comm.disconnect()
