"""WhatsApp and Chatwoot with a hosted model: one message per reply, as before web chat drafts; no streaming.

The model is the local OpenAI-compatible stand-in (`quality.bench.standin`) reached through litellm; the
platforms are the fakes on 127.0.0.1.
"""

import pytest
from django.test import override_settings

from chatbot.models import Message
from quality.bench.standin import PROMPT_TOKENS, Say, StandIn
from tests.factories import SchoolFactory
from tests.integrations import payloads as p
from tests.integrations import test_webhooks_chatwoot as chatwoot_hook
from tests.integrations import test_webhooks_whatsapp as whatsapp_hook

pytestmark = [pytest.mark.django_db(transaction=True)]

ANSWER = "We have tours on Tuesday at 9:00 and Thursday at 14:00. Which one suits you?"


@pytest.fixture
def stand_in():
    with StandIn([Say(ANSWER, seconds=0.3)]) as model, override_settings(
            LLM_MODEL="openai/standin", LLM_API_BASE=model.api_base, LLM_API_KEY="sk-local"):
        yield model


def assert_one_whole_call(stand_in: StandIn) -> None:
    [request] = stand_in.requests
    assert "stream" not in request and "stream_options" not in request
    reply = Message.objects.get(role=Message.Role.ASSISTANT)
    assert (reply.text, reply.prompt_tokens) == (ANSWER, PROMPT_TOKENS)


def test_whatsapp_gets_the_hosted_models_answer_as_one_message(client, whatsapp, stand_in, turns):
    SchoolFactory(whatsapp_phone_number_id=p.PHONE_NUMBER_ID)
    assert whatsapp_hook.post(client, p.wa_text("Which days can we visit?")).status_code == 200
    turns.settle()
    [call] = whatsapp.calls("POST", whatsapp_hook.SEND_PATH)
    assert call.json["text"]["body"] == ANSWER
    assert_one_whole_call(stand_in)


def test_chatwoot_gets_the_hosted_models_answer_as_one_message(client, chatwoot, stand_in, turns):
    SchoolFactory(chatwoot_inbox_ids=[p.INBOX_ID])
    assert chatwoot_hook.post(client, p.message_created("Which days can we visit?", message_id=9001)).status_code == 200
    turns.settle()
    [post_call] = chatwoot.posts()
    assert post_call.json["content"] == ANSWER
    assert_one_whole_call(stand_in)
