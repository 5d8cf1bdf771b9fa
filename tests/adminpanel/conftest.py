"""Fixtures for the staff console: the seeded staff roles, logged-in clients, and conversations with traces."""

import datetime as dt
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from adminpanel.management.commands.seed_demo import Command as SeedDemo
from bookings.services import book_tour
from chatbot.models import Conversation, Message, ReasoningStep
from tests.factories import ContactFactory, ConversationFactory, UserFactory

# WhiteNoise warns when STATIC_ROOT has not been collected yet: irrelevant to these pages.
pytestmark = pytest.mark.filterwarnings("ignore:No directory at:UserWarning")


@pytest.fixture
def groups(db) -> dict[str, Group]:
    """The Reviewer and Admissions groups exactly as seed_demo makes them."""
    command = SeedDemo()
    command.progress = lambda line: None
    return command.seed_groups()


def _user(username: str, group: Group | None = None, **extra):
    user = UserFactory(username=username, **extra)
    if group:
        user.groups.add(group)
    return user


@pytest.fixture
def head(db):
    return _user("head", is_superuser=True)


@pytest.fixture
def reviewer(groups):
    return _user("rita", groups["Reviewer"])


@pytest.fixture
def admissions(groups):
    return _user("adam", groups["Admissions"])


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def head_client(head):
    return login(head)


@pytest.fixture
def reviewer_client(reviewer):
    return login(reviewer)


@pytest.fixture
def admissions_client(admissions):
    return login(admissions)


def conversation_url(conversation, view: str = "change") -> str:
    return reverse(f"admin:chatbot_conversation_{view}", args=[conversation.pk])


LIST_URL = "/admin/chatbot/conversation/"


def make_conversation(school, *, contact=None, started_at=None, turns=1, question="Do you have a pool?",
                      no_match=False, model="gpt-4o-mini", latencies=None, **fields) -> Conversation:
    """A conversation with `turns` parent/concierge exchanges; each answer has think/act/observe/answer steps."""
    contact = contact or ContactFactory(school=school)
    conversation = ConversationFactory(school=school, contact=contact, **fields)
    started_at = started_at or timezone.now() - dt.timedelta(hours=1)
    Conversation.objects.filter(pk=conversation.pk).update(started_at=started_at)
    conversation.started_at = started_at
    latencies = latencies or [1000 + 100 * i for i in range(turns)]
    for turn in range(turns):
        at = started_at + dt.timedelta(minutes=2 * turn)
        asked = Message.objects.create(conversation=conversation, role=Message.Role.USER, text=f"{question} ({turn})",
                                       channel=conversation.channel)
        answer = Message.objects.create(
            conversation=conversation, role=Message.Role.ASSISTANT, text=f"Answer {turn}", channel=conversation.channel,
            model=model, latency_ms=latencies[turn], prompt_tokens=100, completion_tokens=20, cost=Decimal("0.0001"),
            reply_to=asked,
        )
        Message.objects.filter(pk=asked.pk).update(created_at=at)
        Message.objects.filter(pk=answer.pk).update(created_at=at + dt.timedelta(seconds=5))
        call = f"call_{conversation.pk}_{turn}"
        result = ({"status": "no_match", "message": "No answer.", "standalone_question": question} if no_match
                  else {"status": "success", "answer": "Yes, a 25 m pool.", "question_matched": question})
        for position, (kind, extra) in enumerate([
            ("think", {"content": "The parent asks about the pool.", "latency_ms": 400, "prompt_tokens": 90,
                       "completion_tokens": 10, "model": model}),
            ("act", {"tool_name": "get_faq_answer", "tool_call_id": call, "tool_arguments": {"question": question}}),
            ("observe", {"tool_name": "get_faq_answer", "tool_call_id": call, "tool_result": result,
                         "content": f"{result['status']}", "latency_ms": 12}),
            ("answer", {"content": f"Answer {turn}", "latency_ms": latencies[turn], "model": model}),
        ]):
            ReasoningStep.objects.create(message=answer, cycle=1, position=position, kind=kind,
                                         created_at=at + dt.timedelta(seconds=5), **extra)
    conversation.refresh_from_db()
    return conversation


def book(school, day, time=dt.time(9), contact=None, **overrides):
    contact = contact or ContactFactory(school=school)
    details = {"parent_name": contact.name, "parent_phone": contact.phone, "child_name": "Ana", "child_age": 4}
    details.update(overrides)
    return book_tour(school=school, contact=contact, local_date=day, local_time=time, **details)


@pytest.fixture
def tuesday(school, next_weekday):
    return next_weekday(school, 1)
