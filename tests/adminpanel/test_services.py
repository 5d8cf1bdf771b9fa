"""adminpanel.services: rating, and telling a parent what staff did on their channel."""

import datetime as dt
import io

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from adminpanel import services
from adminpanel.bench import measure_console
from adminpanel.management.commands.seed_demo import GROUP_PERMISSIONS
from adminpanel.management.commands.seed_load import Command as SeedLoad
from chatbot.channels.base import TurnObserver
from chatbot.models import Channel, Conversation, Message, ReasoningStep
from tests.adminpanel.conftest import book, make_conversation
from tests.factories import ConversationFactory, UserFactory

pytestmark = pytest.mark.filterwarnings("ignore:No directory at:UserWarning")


class Recording(TurnObserver):
    def __init__(self, fail: bool = False):
        self.fail = fail
        self.replies = []

    async def reply(self, conversation, message):
        if self.fail:
            raise ConnectionError("channel down")
        self.replies.append((conversation.channel, message.text))


def test_notify_parent_uses_the_latest_conversation_and_its_channel(school, tuesday, use_observer):
    booking = book(school, tuesday)
    older = ConversationFactory(school=school, contact=booking.contact, channel=Channel.WEB)
    Conversation.objects.filter(pk=older.pk).update(started_at=timezone.now() - dt.timedelta(days=3))
    latest = ConversationFactory(school=school, contact=booking.contact, channel=Channel.CLI)
    recording = Recording()
    use_observer(Channel.CLI, recording)

    message = services.notify_parent(booking, "Your tour has moved.")

    assert message.conversation_id == latest.pk and message.role == Message.Role.STAFF
    assert message.channel == Channel.CLI
    assert recording.replies == [(Channel.CLI, "Your tour has moved.")]
    latest.refresh_from_db()
    assert latest.last_message_at == message.created_at


def test_notify_parent_survives_a_channel_failure(school, tuesday, use_observer, caplog):
    booking = book(school, tuesday)
    ConversationFactory(school=school, contact=booking.contact, channel=Channel.CLI)
    use_observer(Channel.CLI, Recording(fail=True))
    message = services.notify_parent(booking, "Cancelled.")
    assert Message.objects.filter(pk=message.pk).exists()  # stored even though delivery failed
    assert "could not deliver" in caplog.text


def test_notify_parent_on_the_real_web_channel(school, tuesday):
    booking = book(school, tuesday)
    ConversationFactory(school=school, contact=booking.contact, channel=Channel.WEB)
    assert services.notify_parent(booking, "Hello from admissions").text == "Hello from admissions"


def test_notify_parent_without_a_conversation(school, tuesday):
    assert services.notify_parent(book(school, tuesday), "x") is None
    assert not Message.objects.exists()


def test_rate_conversation_keeps_the_note_unless_given(school, db):
    user = UserFactory(username="r")
    conversation = make_conversation(school)
    services.rate_conversation(conversation, rating="good", note="Great", user=user)
    services.rate_conversation(conversation, rating="bad", user=user)
    conversation.refresh_from_db()
    assert (conversation.rating, conversation.rating_note, conversation.rated_by) == ("bad", "Great", user)
    with pytest.raises(services.RatingError):
        services.rate_conversation(conversation, rating="excellent", user=user)


def test_seeded_roles_match_the_console(groups):
    reviewer = groups["Reviewer"].permissions.values_list("content_type__app_label", "codename")
    admissions = groups["Admissions"].permissions.values_list("content_type__app_label", "codename")
    assert ("chatbot", "change_conversation") in reviewer  # rating
    assert not any(app == "bookings" and "tourbooking" in code for app, code in reviewer)
    assert ("bookings", "change_tourbooking") in admissions and ("chatbot", "add_faqentry") in admissions
    assert ("chatbot", "change_conversation") not in admissions
    assert set(GROUP_PERMISSIONS) == {"Reviewer", "Admissions"}


def test_seed_load_makes_what_it_says(db):
    out = io.StringIO()
    call_command(SeedLoad(), "--conversations", "30", "--messages", "200", "--days", "10", "--seed", "3", stdout=out)
    assert Conversation.objects.count() == 30
    assert Message.objects.count() == 200
    assert ReasoningStep.objects.filter(message__role="assistant").exists()
    assert "Made 30 conversations, 200 messages" in out.getvalue()
    oldest = Conversation.objects.order_by("started_at").first().started_at
    assert timezone.now() - oldest < dt.timedelta(days=10, minutes=1)
    assert oldest < timezone.now() - dt.timedelta(hours=1)  # the generated timestamps were kept
    for conversation in Conversation.objects.all()[:5]:
        tokens = sum(m.prompt_tokens + m.completion_tokens for m in conversation.messages.all())
        assert conversation.total_tokens == tokens
    assert ReasoningStep.objects.filter(tool_name="get_faq_answer").exists()
    call_command(SeedLoad(), "--conversations", "5", "--messages", "10", stdout=io.StringIO())  # runs again
    assert Conversation.objects.count() == 35


def test_measure_console_reports_timings_and_queries(db):
    call_command(SeedLoad(), "--conversations", "20", "--messages", "120", "--seed", "1", stdout=io.StringIO())
    head = UserFactory(username="bench", is_superuser=True)
    result = measure_console(head, runs=3)
    assert result["conversations"] == 20 and result["messages"] == 120
    for page in ("list", "detail"):
        assert result[page]["p50_ms"] > 0 and result[page]["p95_ms"] >= result[page]["p50_ms"]
        assert 0 < result[page]["queries"] < 20
    client = Client()
    client.force_login(head)
    assert measure_console(client, runs=2)["list"]["runs"] == 2
