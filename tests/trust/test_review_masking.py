"""A Reviewer (no call-back rights) sees phones and e-mails masked on the review page, as in the lists and exports;
Admissions (who call parents back) see them in full."""

import pytest
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
