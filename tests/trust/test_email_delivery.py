"""Production without EMAIL_URL: a reminder is refused, tried again, then left to staff; the worker's log never
carries the parent's address or a working manage link. (`check --deploy` failing on it: tests/test_settings.py.)"""

import pytest
from django.core import mail

from bookings.links import manage_path
from chatbot.models import Channel
from chatbot.reminders.models import SentReminder
from tests.integrations.test_reminders import TUESDAY, at, book, clock, parent_on, run, school  # noqa: F401
from tests.trust.test_low_items import log_output  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.mark.attack("medium")
def test_without_email_url_reminders_are_refused_and_nothing_personal_is_logged(clock, school, settings,  # noqa: F811
                                                                                log_output):  # noqa: F811
    settings.EMAIL_BACKEND = "config.mail.NotConfiguredBackend"
    settings.SITE_URL = "https://concierge.school.example"
    booking = book(school, parent_on(school, Channel.WEB))
    assert run(clock, at(TUESDAY, 9)) == {"pending": 1}
    assert run(clock, at(TUESDAY, 9, 3)) == {"pending": 1}
    assert run(clock, at(TUESDAY, 9, 6)) == {"failed": 1}
    assert not mail.outbox
    row = SentReminder.objects.get()
    assert "EMAIL_URL is not set" in row.staff_note and booking.reference in row.staff_note
    logged = log_output.getvalue()
    assert booking.reference in logged, "the reminder's attempts are logged"
    token = manage_path(booking.reference).strip("/").split("/")[-1]
    assert "mei@mail.example" not in logged and token not in logged, logged
