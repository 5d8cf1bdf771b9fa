"""A Reviewer (no call-back rights) sees phones and e-mails masked on the review page, as in the lists and exports;
Admissions (who call parents back) see them in full."""

import pytest
from django.urls import reverse
from django.utils import timezone

from chatbot.models import Message, ReasoningStep
from tests.adminpanel.conftest import (  # noqa: F401 (fixtures)
    admissions,
    admissions_client,
    conversation_url,
    groups,
    reviewer,
    reviewer_client,
)
from tests.factories import ContactFactory, ConversationFactory

SECRETS = ("98765432", "9876 5432", "wei.ling@mail", "+6591234567", "91234567")


@pytest.fixture
def conversation(school):
    contact = ContactFactory(school=school, phone="+6591234567", email="wei.ling@mail.example")
    conversation = ConversationFactory(school=school, contact=contact, channel="whatsapp")
    Message.objects.create(conversation=conversation, role="user", channel="whatsapp",
                           text="I'm Wei Ling, 9876 5432, wei.ling@mail.example, for Vera on 2026-11-25")
    reply = Message.objects.create(conversation=conversation, role="assistant", channel="whatsapp",
                                   text="Booked! We'll call 9876 5432.", payload={"blocks": []})
    ReasoningStep.objects.create(
        message=reply, cycle=1, position=1, kind="act", created_at=timezone.now(), tool_name="book_tour",
        content="booking for +65 9876 5432",
        tool_arguments={"parent_phone": "+65 9876 5432", "parent_email": "wei.ling@mail.example"},
        tool_result={"success": True, "booking": {"parent_phone": "+6598765432", "note": "call 9876 5432"}})
    return conversation


@pytest.mark.django_db
@pytest.mark.attack("medium")
def test_a_reviewer_sees_phones_and_emails_masked_in_the_transcript_and_tool_calls(reviewer_client, conversation):  # noqa: F811
    page = reviewer_client.get(conversation_url(conversation))
    assert page.status_code == 200
    html = page.content.decode()
    assert "book_tour" in html and "for Vera on 2026-11-25" in html
    for secret in SECRETS:
        assert secret not in html, f"{secret} shown to a Reviewer"
    assert "***@mail.example" in html and "432" in html


@pytest.mark.django_db
def test_admissions_see_them_in_full(admissions_client, conversation):  # noqa: F811
    html = admissions_client.get(conversation_url(conversation)).content.decode()
    assert "9876 5432" in html and "wei.ling@mail.example" in html


def _record_pages(conversation) -> list[str]:
    """The raw admin record pages of the conversation's messages and steps: change pages and change lists."""
    step = ReasoningStep.objects.get(message__conversation=conversation)
    return [reverse("admin:chatbot_message_changelist"), reverse("admin:chatbot_reasoningstep_changelist"),
            *(reverse("admin:chatbot_message_change", args=[m.pk]) for m in conversation.messages.all()),
            reverse("admin:chatbot_reasoningstep_change", args=[step.pk])]


@pytest.mark.django_db
@pytest.mark.attack("medium")
def test_a_reviewer_sees_them_masked_on_the_raw_message_and_step_pages_too(reviewer_client, conversation):  # noqa: F811
    for url in _record_pages(conversation):
        page = reviewer_client.get(url)
        assert page.status_code == 200, url
        html = page.content.decode()
        for secret in SECRETS:
            at = html.find(secret)
            assert at < 0, f"{secret} shown to a Reviewer on {url}: {html[max(at - 300, 0):at + 50]}"
    step_page = reviewer_client.get(_record_pages(conversation)[-1]).content.decode()
    assert "book_tour" in step_page and "***@mail.example" in step_page


@pytest.mark.django_db
def test_admissions_see_them_in_full_on_the_raw_pages(admissions_client, conversation):  # noqa: F811
    step_page = admissions_client.get(_record_pages(conversation)[-1]).content.decode()
    assert "9876 5432" in step_page and "wei.ling@mail.example" in step_page
