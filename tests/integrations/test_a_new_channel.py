"""A new channel is one package and one registry entry: a Telegram-like channel (tests/integrations/telegram/),
registered here and nowhere else, answers a parent end to end (webhook in, `receive()`, the turn, the reply sent
through its API by its Celery task), and every part of the product that treats channels differently finds it in
the registry (the sweeper, the resend of lost replies, handoff, outreach)."""

import datetime as dt
import importlib
import itertools
import json

import pytest
from celery import current_app
from django.urls import clear_url_caches
from django.utils import timezone
from werkzeug import Response

import chatbot.urls
import config.urls
from chatbot import handoff
from chatbot.channels import registry
from chatbot.models import Conversation, Message
from chatbot.reminders import services as reminders
from chatbot.tasks import resend_lost_replies
from crm.models import Contact
from tests.factories import SchoolFactory
from tests.integrations import telegram
from tests.integrations.fakes import Fake
from tests.integrations.test_reminders import TUESDAY, at, book, clock, parent_on  # noqa: F401 (clock: a fixture)

pytestmark = [pytest.mark.django_db(transaction=True)]


class FakeTelegram(Fake):
    prefix = "/telegram"

    def __init__(self) -> None:
        super().__init__()
        self.ids = itertools.count(700)
        self.sent: list[dict] = []

    def route(self, method, path, body, request):
        if method == "POST" and path == "/sendMessage":
            self.sent.append(body)
            return Response(json.dumps({"ok": True, "result": {"message_id": next(self.ids)}}),
                            content_type="application/json")
        return Response(json.dumps({"ok": False}), status=404, content_type="application/json")


def _reload_urls() -> None:
    for module in (chatbot.urls, config.urls):
        importlib.reload(module)
    clear_url_caches()


@pytest.fixture
def telegram_channel(monkeypatch):
    """The channel registered (as settings.CHAT_CHANNELS would at start-up), and its webhook routed."""
    monkeypatch.setitem(registry.CHANNELS, telegram.CHANNEL.name, telegram.CHANNEL)
    _reload_urls()
    yield telegram.CHANNEL
    monkeypatch.undo()
    _reload_urls()


@pytest.fixture
def telegram_api(http, settings):
    fake = FakeTelegram().install(http)
    settings.TELEGRAM_API_URL = http.url_for("/telegram")
    return fake


def update(text: str, message_id: int, chat_id: int = 4242) -> dict:
    return {"update_id": message_id, "message": {"message_id": message_id, "chat": {"id": chat_id},
                                                 "from": {"first_name": "Ana"}, "text": text}}


def post(client, school, body: dict):
    return client.post(f"/webhooks/telegram/{school.slug}/", data=json.dumps(body), content_type="application/json")


def test_a_message_on_a_new_channel_is_answered_end_to_end(client, telegram_channel, telegram_api, echo_model,
                                                           turns):
    school = SchoolFactory()
    response = post(client, school, update("Hello, can we visit the school?", 1))
    assert response.status_code == 200 and response.json() == {"result": "dispatched"}
    turns.settle()

    conversation = Conversation.objects.get()
    assert (conversation.channel, conversation.external_id, conversation.school) == ("telegram", "4242", school)
    assert Contact.objects.get().name == "Ana"
    reply = Message.objects.get(role=Message.Role.ASSISTANT)
    assert reply.text == "Answered: Hello, can we visit the school?"
    assert telegram_api.sent == [{"chat_id": "4242", "text": reply.text}]  # through its API, by its task
    reply.refresh_from_db()
    assert reply.delivered_at is not None and reply.channel_message_id == "700"

    assert post(client, school, update("Hello, can we visit the school?", 1)).json() == {"result": "duplicate"}
    assert post(client, school, {"message": "not an object"}).status_code == 400


def test_the_former_channel_lists_read_the_registry(client, telegram_channel, telegram_api, echo_model, turns):
    """Swept, delivered again when its send was lost, not a staffed inbox (no handoff on "a person please")."""
    assert "telegram" in registry.names(lambda spec: spec.swept)
    assert registry.delivering()["telegram"].task is telegram.tasks.deliver_telegram_message
    school = SchoolFactory()
    post(client, school, update("Can I speak to a real person?", 2))
    turns.settle()
    conversation = Conversation.objects.get()
    assert conversation.status == Conversation.Status.ACTIVE  # not handed to a staff inbox it does not have
    assert not handoff.hand_off_after_failures(Message.objects.get(role=Message.Role.USER).pk)

    lost = Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, channel="telegram",
                                  text="A reply whose send task was lost.")
    Message.objects.filter(pk=lost.pk).update(created_at=timezone.now() - dt.timedelta(minutes=10))
    assert resend_lost_replies() == 1
    assert telegram_api.sent[-1] == {"chat_id": "4242", "text": "A reply whose send task was lost."}


def test_a_tour_reminder_goes_on_the_new_channel_which_has_no_24_hour_rule(clock, telegram_channel,  # noqa: F811
                                                                           telegram_api):
    school = SchoolFactory(time_zone="Asia/Singapore")
    booking = book(school, parent_on(school, "telegram", external_id="4242"))
    clock.move_to(at(TUESDAY, 12))  # 26 hours after the parent's last message: WhatsApp would want a template
    assert reminders.send_due_reminders() == {"sent": 1}
    [sent] = telegram_api.sent
    assert sent["chat_id"] == "4242" and f"Your reference is {booking.reference}." in sent["text"]


def test_the_channels_celery_tasks_keep_the_names_queued_and_stored_before_they_moved():
    """Queued tasks, failed-task records (retried by name) and their dead letters name them so."""
    stored = {"chatbot.tasks.deliver_chatwoot_message", "chatbot.tasks.chatwoot_hand_off",
              "chatbot.tasks.chatwoot_push_contact_context", "chatbot.tasks.deliver_whatsapp_message"}
    assert stored <= set(current_app.tasks)
    assert {spec.delivery.task.name for spec in registry.CHANNELS.values() if spec.delivery} == {
        "chatbot.tasks.deliver_chatwoot_message", "chatbot.tasks.deliver_whatsapp_message"}
