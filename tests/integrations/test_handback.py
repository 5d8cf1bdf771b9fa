"""A clean handback (issue 13, item 6): once staff give a Chatwoot conversation back to the bot, the bot answers
only what the parent says from then on; the messages staff handled are never answered again."""

import datetime as dt
import re

import pytest
from django.db import transaction
from django.utils import timezone

from chatbot import handoff
from chatbot.channels.worker import sweep_stale_inbound
from chatbot.models import Conversation, Message
from tests.factories import FaqEntryFactory, SchoolFactory
from tests.integrations import payloads as p
from tests.integrations.test_webhooks_chatwoot import _our_conversation, post, replies

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.filterwarnings("ignore:No directory at:UserWarning")]


@pytest.fixture
def school():
    school = SchoolFactory(chatwoot_inbox_ids=[p.INBOX_ID])
    FaqEntryFactory(school=school, question="How long is a campus tour?", answer="A tour lasts about 45 minutes.",
                    tags=["tour", "duration"])
    return school


@pytest.fixture
def offline(settings):
    settings.LLM_MODEL, settings.CHAT_BURST_WINDOW_SECONDS = "offline/policy", 0


def _staff_take_answer_and_hand_back(client) -> None:
    """Staff open the conversation, the parent writes twice, staff answer, staff hand it back (pending)."""
    assert post(client, p.status_changed("open")).json()["result"] == "handed off"
    post(client, p.message_created("Do you have a swimming pool?", status="open"))
    post(client, p.message_created("And when is the uniform shop open?", status="open"))
    post(client, p.message_created("Hi Ana, Mrs Tan here: yes to the pool, and the shop opens 8-10am.",
                                   message_type="outgoing", sender=p.agent_user(), status="open"))
    assert post(client, p.status_changed("pending", previous="open")).json()["result"] == "bot resumed"


def test_after_the_handback_the_bot_answers_only_the_new_message(client, school, chatwoot, turns, offline):
    post(client, p.message_created("How long is a campus tour?"))
    turns.settle()
    _staff_take_answer_and_hand_back(client)
    post(client, p.message_created("How long is a campus tour?"))
    turns.settle()

    first, last = replies()
    assert "45 minutes" in last.text
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", last.text) if s.strip()]
    assert len(sentences) == len(set(sentences)), f"one garbled reply to several messages: {last.text!r}"
    assert "don't have that information" not in last.text, "the messages staff handled are answered again"
    assert last.reply_to.text == "How long is a campus tour?"
    staff_handled = Message.objects.filter(role="user", handled_by_staff=True).order_by("created_at")
    assert [m.text for m in staff_handled] == ["Do you have a swimming pool?", "And when is the uniform shop open?"]
    assert all(m.processed_at for m in staff_handled)
    conversation = _our_conversation()
    assert conversation.status == Conversation.Status.ACTIVE
    assert conversation.outcome == Conversation.Outcome.HANDED_OFF, "an answer after the handback keeps it handed off"
    assert [c["content"] for c in chatwoot.posted] == [first.text, last.text]


def test_the_model_is_sent_neither_the_staff_handled_messages_nor_the_staff_replies(client, school, chatwoot,
                                                                                    echo_model, turns):
    post(client, p.message_created("hello"))
    turns.settle()
    _staff_take_answer_and_hand_back(client)
    post(client, p.message_created("I'd like a tour"))
    turns.settle()
    assert echo_model.turns[-1] == ["I'd like a tour"]
    assert replies()[-1].text == "Answered: I'd like a tour"


def test_a_message_left_unanswered_when_staff_took_over_is_theirs(client, school, chatwoot, echo_model, turns):
    """A message stored but not yet answered when the conversation is opened in Chatwoot is the staff's too."""
    post(client, p.message_created("hello"))
    turns.settle()
    conversation = _our_conversation()
    waiting = Message.objects.create(conversation=conversation, role="user", channel="chatwoot",
                                     text="is the school open on Saturdays?")
    handoff.hand_off(conversation, "a staff member opened it", reopen_platform=False)
    assert Message.objects.get(pk=waiting.pk).handled_by_staff
    post(client, p.status_changed("pending", previous="open"))
    post(client, p.message_created("thanks, bye"))
    turns.settle()
    assert echo_model.turns[-1] == ["thanks, bye"]


def test_the_sweeper_never_redispatches_staff_handled_messages(client, school, chatwoot, echo_model, turns, settings):
    post(client, p.message_created("hello"))
    turns.settle()
    _staff_take_answer_and_hand_back(client)
    later = timezone.now() + dt.timedelta(seconds=settings.INBOUND_REDISPATCH_AFTER_SECONDS + 60)
    assert sweep_stale_inbound(now=later) == 0
    turns.settle()
    assert len(replies()) == 1


def test_a_turn_that_ends_after_staff_took_over_leaves_the_conversation_handed_off(school, contact, monkeypatch,
                                                                                   settings):
    """The turn's copy of the conversation predates the handoff: its FAQ answer must not flip it to "Answered"."""
    from asgiref.sync import async_to_sync

    from chatbot import faq
    from chatbot.services import receive
    from tests.chatbot import scripted_model

    model = scripted_model.install()
    settings.LLM_MODEL, settings.CHAT_BURST_WINDOW_SECONDS = "scripted/test", 0
    model.script = [{"tool_calls": [("get_faq_answer", {"question": "How long is a campus tour?"})]},
                    {"content": "A tour lasts about 45 minutes."}]
    real_answer = faq.answer_question

    def staff_take_over_meanwhile(school, question, **kwargs):
        conversation = Conversation.objects.get(contact=contact)
        handoff.hand_off(conversation, "a staff member opened it", reopen_platform=False)
        return real_answer(school, question, **kwargs)

    monkeypatch.setattr(faq, "answer_question", staff_take_over_meanwhile)
    async_to_sync(receive)(school=school, contact=contact, channel="cli", text="How long is a campus tour?")
    conversation = Conversation.objects.get(contact=contact)
    assert conversation.status == Conversation.Status.HANDED_OFF
    assert conversation.outcome == Conversation.Outcome.HANDED_OFF


def test_after_the_handback_a_booking_the_concierge_makes_is_the_outcome(school, contact):
    from chatbot import outcomes
    from tests.factories import ConversationFactory

    conversation = ConversationFactory(school=school, contact=contact, status="active", outcome="handed_off")
    booked = ("book_tour", {"status": "success", "booking_id": "T-AAAAAA"})
    answered = ("get_faq_answer", {"status": "success", "answer": "Yes."})

    def settle(observation) -> str:  # as the turn does: inside the transaction that stores its reply
        with transaction.atomic():
            return outcomes.settle_turn(conversation.pk, [observation])

    assert settle(answered) == "handed_off"
    assert settle(booked) == "booked"
    Conversation.objects.filter(pk=conversation.pk).update(status="handed_off")
    assert settle(booked) == "handed_off", "not while staff have it"


def test_conversations_recorded_before_the_change_are_marked_from_their_handoff_notes(school, contact):
    """The migration marks the messages of recorded handoffs: unanswered when staff took over, or sent while
    they had it; not those the concierge answered, nor those after the handback."""
    import importlib

    from django.apps import apps

    from tests.factories import ConversationFactory

    migration = importlib.import_module("chatbot.migrations.0004_message_handled_by_staff")
    conversation = ConversationFactory(school=school, contact=contact, channel="chatwoot")
    texts = []

    def add(role: str, text: str, **payload) -> None:
        Message.objects.create(conversation=conversation, role=role, text=text, channel="chatwoot", payload=payload,
                               processed_at=timezone.now() if role == "user" else None)
        texts.append(text)

    add("user", "hello")
    add("assistant", "Hi! How can I help?")
    add("user", "is anyone there?")
    add("system", "Handed off to staff", handoff="opened in Chatwoot")
    add("user", "do you have a pool?")
    add("staff", "Yes, we do.")
    add("system", "Handed back", resumed="set to pending")
    add("user", "I'd like a tour")
    Message.objects.update(handled_by_staff=False)
    migration.mark_recorded(apps, None)
    marked = list(Message.objects.filter(handled_by_staff=True).order_by("created_at", "id")
                  .values_list("text", flat=True))
    assert marked == ["is anyone there?", "do you have a pool?"]
