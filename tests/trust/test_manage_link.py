"""The signed manage link: how a parent proves a booking is theirs from any browser (docs/identity.md).

It is sent only through the channel that booked (WhatsApp, Chatwoot, the web chat's
own card); whoever holds it may see, move or cancel that one booking, until it
expires. A forged, altered or expired link shows nothing.
"""

import datetime as dt
import time

import pytest
from django.core import signing

from bookings import services
from bookings.links import MANAGE_SALT, manage_path, manage_url
from bookings.models import TourBooking
from chatbot.channels.chatwoot import sender as chatwoot
from chatbot.channels.web.consumer import message_event
from chatbot.channels.whatsapp import sender as whatsapp
from tests.factories import ContactFactory, ConversationFactory, MessageFactory

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def booking(school, next_weekday):
    return services.book_tour(school=school, contact=ContactFactory(school=school), parent_name="Wei Ling",
                              parent_phone="+6591234567", child_name="Vera", local_date=next_weekday(school, 1),
                              local_time=dt.time(9))


def confirmation(booking, channel: str):
    conversation = ConversationFactory(school=booking.school, contact=booking.contact, channel=channel,
                                       external_id="1:123" if channel == "chatwoot" else "106540352242922:6591234567")
    return MessageFactory(conversation=conversation, role="assistant", text=f"Booked: {booking.reference}.",
                          payload={"blocks": [{"type": "booking_confirmation", "booking_id": booking.reference}]})


def test_the_confirmation_on_the_booking_channel_carries_the_link(booking, settings):
    settings.SITE_URL = "https://concierge.school.example"
    link = manage_url(booking.reference)
    assert link.startswith("https://concierge.school.example/manage/")
    [body] = whatsapp.reply_bodies(confirmation(booking, "whatsapp"), "6591234567")
    assert link in body["text"]["body"]
    [post] = chatwoot.reply_bodies(confirmation(booking, "chatwoot"))
    assert link in post["content"]
    [card] = message_event(confirmation(booking, "web"))["blocks"]
    assert card["manage_url"] == manage_path(booking.reference)


def test_without_site_url_platform_messages_carry_no_link(booking, settings):
    settings.SITE_URL = ""
    [body] = whatsapp.reply_bodies(confirmation(booking, "whatsapp"), "6591234567")
    assert "/manage/" not in body["text"]["body"]


def test_the_link_shows_and_cancels_the_booking(client, booking):
    path = manage_path(booking.reference)
    page = client.get(path)
    assert page.status_code == 200
    assert booking.reference in page.text and "Vera" in page.text and "Cancel my tour" in page.text
    assert page["Cache-Control"].startswith("max-age=0")
    response = client.post(path, {"action": "cancel", "reason": "we moved"}, follow=True)
    booking.refresh_from_db()
    assert booking.status == TourBooking.Status.CANCELLED and booking.cancellation_reason == "we moved"
    assert "is cancelled" in response.text and "Cancel my tour" not in response.text


def test_the_link_moves_the_booking_and_still_works_afterwards(client, booking):
    path = manage_path(booking.reference)
    new = next(s for s in services.next_open_slots(booking.school) if s.starts_at != booking.starts_at)
    client.post(path, {"action": "reschedule", "slot": new.starts_at.isoformat()})
    moved = TourBooking.objects.get(pk=booking.pk)
    assert moved.starts_at == new.starts_at and moved.status == TourBooking.Status.SCHEDULED
    assert moved.reference == booking.reference and moved.moves.count() == 1
    assert moved.reference in client.get(path).text, "the link follows the booking to its new time"


def test_a_forged_altered_or_expired_link_shows_nothing(client, booking, settings, monkeypatch):
    forged = signing.dumps(booking.reference, salt=MANAGE_SALT, key="dev-only-insecure-secret-key-change-me-"
                                                                  "0123456789abcdefghijklmnop")
    assert client.get(f"/manage/{forged}/").status_code == 404
    token = manage_path(booking.reference).split("/")[2]
    assert client.get(f"/manage/{token[:-2]}xx/").status_code == 404
    assert client.post(f"/manage/{forged}/", {"action": "cancel"}).status_code == 404
    later = time.time() + (settings.BOOKING_MANAGE_LINK_MAX_AGE_DAYS + 1) * 86400
    monkeypatch.setattr(signing.time, "time", lambda: later)
    assert client.get(f"/manage/{token}/").status_code == 404
    booking.refresh_from_db()
    assert booking.status == TourBooking.Status.SCHEDULED
