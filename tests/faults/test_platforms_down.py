"""Drill 4: Chatwoot refuses connections and Pipedrive answers 503 while a parent books on WhatsApp (Chatwoot);
and a send lost with the broker.

The single-fault cases (a 500 then 200, a 4xx, exhausted retries, a sync dying
mid-way) are in tests/integrations. This is the drill as a whole: both down at
once during a booking conversation, then both back: what staff and the beat do
to recover, and that nothing happens twice however often it is run.
"""

import datetime as dt

import pytest
from django.utils import timezone

from bookings.models import TourBooking
from chatbot.models import Message
from chatbot.tasks import redispatch_stale_inbound
from crm.external.tasks import retry_failed_task
from crm.models import ExternalCall, FailedTask
from crm.tasks import pipedrive_reconcile
from tests.factories import ContactFactory, ConversationFactory, MessageFactory, SchoolFactory
from tests.faults.conftest import free_port
from tests.integrations import payloads as p
from tests.integrations.conftest import SECRET

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def school():
    return SchoolFactory(chatwoot_inbox_ids=[p.INBOX_ID], time_zone="Asia/Singapore")


def _post(client, text: str, message_id: int) -> None:
    event = p.message_created(text, message_id=message_id)
    response = client.post(f"/webhooks/chatwoot/{SECRET}/", data=p.dumps(event), content_type="application/json")
    assert response.status_code == 200


def _booking_call(day: dt.date, **more) -> tuple[str, dict]:
    """The model's book_tour call (`confirmed=True` once the parent agreed to its read-back)."""
    return ("book_tour", {"parent_name": "Mei Lin Tan", "parent_phone": "+6591234567", "child_name": "Tom",
                          "child_age": 5, "preferred_date": day.isoformat(), "preferred_time": "09:00", **more})


def _retry_dead_letters() -> None:
    """What staff do in the admin ("Retry the selected tasks now"), for every dead letter."""
    for failed in FailedTask.objects.order_by("pk"):
        retry_failed_task.apply(args=[failed.pk])


def test_chatwoot_and_pipedrive_down_then_back(client, school, chatwoot, pipedrive, drill_model, turns, settings,
                                               next_weekday):
    day = next_weekday(school, 1)
    # The booking is read back first (nothing is booked yet), while both platforms are still up.
    drill_model.script = [{"tool_calls": [_booking_call(day)]}, {"content": "Shall I book Tuesday 09:00 for Tom?"}]
    _post(client, "Book Tuesday 9am for Tom, I'm Mei Lin", 9300)
    turns.settle()
    assert not TourBooking.objects.exists()
    chatwoot.posted.clear()
    pipedrive_before = len(pipedrive.persons)

    chatwoot_url = settings.CHATWOOT_URL
    settings.CHATWOOT_URL = f"http://127.0.0.1:{free_port()}/chatwoot"  # nothing listens there: refused
    pipedrive.down = True
    drill_model.script = [{"tool_calls": [_booking_call(day, confirmed=True)]}, {"content": "Booked: Tuesday 09:00."}]

    _post(client, "yes please", 9301)
    turns.settle()

    # The parent's message is stored and answered; the booking is made once; nothing reached either platform.
    inbound = Message.objects.filter(role="user").latest("pk")
    reply = Message.objects.filter(role="assistant").exclude(text="").latest("pk")
    assert inbound.processed_at is not None and reply.text == "Booked: Tuesday 09:00." and reply.delivered_at is None
    assert TourBooking.objects.count() == 1
    assert not chatwoot.posted and len(pipedrive.persons) == pipedrive_before
    letters = {f.task_name: (f.reason, f.retries) for f in FailedTask.objects.all()}
    assert letters == {"chatbot.tasks.deliver_chatwoot_message": ("exhausted", 8),
                       "crm.tasks.sync_contact_to_pipedrive": ("exhausted", 8)}, "each retried, then dead-lettered"
    assert ExternalCall.objects.get(key=f"chatwoot:message:{reply.pk}:0").state == "pending", "surely not posted"

    # Both come back. Staff retry the dead letters; the beat's sweeps run (more than once, as they would).
    settings.CHATWOOT_URL = chatwoot_url
    pipedrive.down = False
    _retry_dead_letters()
    for _ in range(2):
        assert pipedrive_reconcile.apply().get() == 0, "the retried sync left nothing to reconcile"
        assert redispatch_stale_inbound.apply().get() == 0, "nothing unanswered to re-dispatch"
    _retry_dead_letters()  # a second click on the same (now resolved) letters changes nothing

    assert [m["content"] for m in chatwoot.posted] == ["Booked: Tuesday 09:00."], "the reply went out once"
    reply.refresh_from_db()
    assert reply.delivered_at is not None and reply.channel_message_id == str(chatwoot.posted[0]["id"])
    assert (len(pipedrive.persons), len(pipedrive.deals), len(pipedrive.activities), len(pipedrive.notes)) == (
        1, 1, 1, 1), "Pipedrive has the booking once"
    assert not FailedTask.objects.filter(resolved_at__isnull=True).exists()

    # The next turn works without anything done by hand.
    drill_model.script = [{"content": "You're welcome!"}]
    _post(client, "Thanks!", 9302)
    turns.settle()
    assert [m["content"] for m in chatwoot.posted] == ["Booked: Tuesday 09:00.", "You're welcome!"]
    assert TourBooking.objects.count() == 1


def test_a_reply_whose_send_task_was_lost_with_the_broker_is_sent_once(school, chatwoot):
    """Redis (the broker) restarted without persistence: a queued send is gone, with no dead letter to retry."""
    conversation = ConversationFactory(school=school, contact=ContactFactory(school=school), channel="chatwoot",
                                       external_id="1:123")
    lost = MessageFactory(conversation=conversation, role="assistant", text="Your tour is booked.")
    recent = MessageFactory(conversation=conversation, role="assistant", text="Anything else?")
    Message.objects.filter(pk=lost.pk).update(created_at=timezone.now() - dt.timedelta(minutes=3))

    for _ in range(2):  # the beat runs the sweep every minute
        assert redispatch_stale_inbound.apply().get() == 0, "no parent message to re-dispatch"
    assert [m["content"] for m in chatwoot.posted] == ["Your tour is booked."], "sent once; the fresh one waits"
    assert Message.objects.get(pk=lost.pk).delivered_at is not None
    assert Message.objects.get(pk=recent.pk).delivered_at is None
