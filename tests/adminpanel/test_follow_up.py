"""After the tour: the desk's attended / no-show marks send the follow-up on the parent's channel and move the
family along the admissions funnel (crm Deal stage). The clock is frozen at the end of the tour."""

import datetime as dt

import pytest
import time_machine
from django.urls import reverse

from bookings.services import record_tour_outcome
from chatbot.models import Message
from crm.models import Deal
from tests.adminpanel.conftest import book, make_conversation
from tests.adminpanel.test_desk import observer  # noqa: F401 (fixture)

pytestmark = pytest.mark.filterwarnings("ignore:No directory at:UserWarning")


@pytest.fixture
def toured(school, tuesday):
    """A tour on Tuesday at 09:00 by a parent who chatted on the web; the clock at 10:30 that day."""
    tour = book(school, tuesday, child_name="Mia")
    conversation = make_conversation(school, contact=tour.contact)
    with time_machine.travel(dt.datetime.combine(tuesday, dt.time(10, 30), school.tz), tick=False):
        yield tour, conversation


def test_attended_sends_thanks_with_the_schools_next_step_and_the_family_has_toured(
        admissions_client, school, toured, observer, django_capture_on_commit_callbacks):  # noqa: F811
    tour, conversation = toured
    school.after_tour_next_step = "Applications for 2027 are open at https://school.example/apply."
    school.save()
    with django_capture_on_commit_callbacks(execute=True):
        admissions_client.post(reverse("admin:desk_tour_outcome", args=[tour.pk]), {"status": "completed"})

    told = Message.objects.filter(conversation=conversation, role=Message.Role.ASSISTANT).latest("id")
    assert "Thank you for visiting" in told.text and "Mia" in told.text
    assert "https://school.example/apply" in told.text
    assert observer.replies[-1] == (conversation.pk, "assistant", told.text)
    assert Deal.objects.get(contact=tour.contact).stage == Deal.Stage.TOURED


def test_no_show_offers_to_rebook_and_the_family_stays_at_tour_booked(
        admissions_client, school, toured, observer, django_capture_on_commit_callbacks):  # noqa: F811
    tour, conversation = toured
    with django_capture_on_commit_callbacks(execute=True):
        admissions_client.post(reverse("admin:desk_tour_outcome", args=[tour.pk]), {"status": "no_show"})

    told = Message.objects.filter(conversation=conversation, role=Message.Role.ASSISTANT).latest("id")
    assert "We missed you" in told.text and "09:00" in told.text and "book another tour?" in told.text
    assert "Thank you for visiting" not in told.text
    assert Deal.objects.get(contact=tour.contact).stage == Deal.Stage.TOUR_BOOKED


def test_a_parent_who_never_chatted_gets_no_message_but_still_moves_on(school, tuesday,
                                                                       django_capture_on_commit_callbacks):
    tour = book(school, tuesday)
    with time_machine.travel(dt.datetime.combine(tuesday, dt.time(11), school.tz), tick=False), \
            django_capture_on_commit_callbacks(execute=True):
        record_tour_outcome(booking=tour, status="completed")
    assert not Message.objects.filter(conversation__contact=tour.contact).exists()
    assert Deal.objects.get(contact=tour.contact).stage == Deal.Stage.TOURED
