"""The console side of "from review to regression test": one action on a conversation's review page saves it as
a scenario (a short form, prefilled from what the conversation ended with), and the scenarios' list and page show
each one's latest result and history."""

import datetime as dt
import json
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.contrib.admin.models import LogEntry
from django.core.management import call_command
from django.test import override_settings

from chatbot.models import Conversation, ReviewScenario, ReviewScenarioResult
from chatbot.services import receive
from tests.adminpanel.conftest import conversation_url, make_conversation
from tests.factories import ContactFactory

pytestmark = [pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
              pytest.mark.django_db(transaction=True)]

LIST = "/admin/chatbot/reviewscenario/"


@pytest.fixture
def booked(school, tuesday) -> Conversation:
    """A real conversation (offline model): a new parent books Mia's tour on Tuesday at 9am."""
    contact = ContactFactory(school=school, name="", phone="", email="")
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0, PIPEDRIVE_API_TOKEN=""):
        for text in (f"Hi, I'm Jon Tan, 91234567. A tour for my daughter Mia (5) on {tuesday:%A} {tuesday.day} "
                     f"{tuesday:%B} at 9am please", "yes please"):
            async_to_sync(receive)(school=school, contact=contact, channel="web", text=text)
    return Conversation.objects.get(contact=contact)


def scenario_url(conversation) -> str:
    return conversation_url(conversation, "scenario")


def test_a_reviewer_turns_a_conversation_into_a_scenario_with_one_action(reviewer_client, reviewer, booked, tuesday):
    page = reviewer_client.get(conversation_url(booked)).content.decode()
    assert f'href="{scenario_url(booked)}" data-role="make-scenario"' in page

    form = reviewer_client.get(scenario_url(booked))
    assert form.status_code == 200
    html = form.content.decode()
    assert f"booked {tuesday:%a} {tuesday.day} {tuesday:%b} 09:00 (Mia)" in html  # what it ended with, in words
    assert "Hi, I&#x27;m Jon Tan" in html and "+0:00:00" in html  # the parent's messages with their timing
    initial = form.context["form"].initial
    assert initial["title"].startswith(f"#{booked.pk} ")
    assert initial["expect"][0] == {"type": "booked", "date": tuesday.isoformat(), "time": "09:00",
                                    "child_name": "Mia", "child_age": 5, "parent_name": "Jon Tan",
                                    "parent_phone": "+6591234567"}

    response = reviewer_client.post(scenario_url(booked), {
        "title": initial["title"], "expect": json.dumps(initial["expect"]), "must_not_say": "Grace\n\n",
        "note": "Books in two messages", "follow_up": "on"})
    saved = ReviewScenario.objects.get()
    assert response.status_code == 302 and response["Location"] == f"{LIST}{saved.pk}/change/"
    assert (saved.conversation, saved.created_by, saved.note, saved.follow_up) == (booked, reviewer,
                                                                                   "Books in two messages", True)
    assert saved.expect[-1] == {"type": "not_said", "text": "Grace"}
    assert [line["text"] for line in saved.script][1] == "yes please"
    assert LogEntry.objects.filter(object_id=str(booked.pk), change_message__contains=saved.scenario_id).exists()
    page = reviewer_client.get(conversation_url(booked)).content.decode()
    assert f'data-role="saved-scenario">{saved.scenario_id}</a>' in page


def test_an_unreadable_expected_state_is_shown_back_and_nothing_is_saved(reviewer_client, booked):
    response = reviewer_client.post(scenario_url(booked), {"title": "x", "expect": "[{\"type\": \"booked\"}"})
    assert response.status_code == 200 and "not valid JSON" in response.content.decode()
    response = reviewer_client.post(scenario_url(booked), {"title": "x", "expect": '[{"type": "cancelled", '
                                                                                    '"booking": "t4"}]'})
    assert "not one of the parent&#x27;s tours" in response.content.decode()
    assert not ReviewScenario.objects.exists()


def test_without_the_permission_there_is_no_action(admissions_client, booked):
    assert "make-scenario" not in admissions_client.get(conversation_url(booked)).content.decode()
    assert admissions_client.get(scenario_url(booked)).status_code == 403
    assert admissions_client.post(scenario_url(booked), {"title": "x", "expect": "[]"}).status_code == 403
    assert not ReviewScenario.objects.exists()


def test_a_conversation_without_a_parent_message_cannot_be_saved(head_client, school):
    conversation = make_conversation(school, turns=0)
    response = head_client.get(scenario_url(conversation), follow=True)
    assert "no message from the parent" in response.content.decode()


def test_the_list_and_page_show_the_latest_result_and_the_history(head_client, reviewer_client, booked, monkeypatch):
    from bookings import services as bookings
    from quality.evaluation import reviewed

    saved = reviewed.create_from_conversation(booked, title="Mia's tour", expect=reviewed.capture(booked).expect)
    assert "not run yet" in head_client.get(LIST).content.decode()

    def evaluate() -> None:
        with override_settings(LLM_MODEL="offline/policy"):
            call_command("evaluate", "--saved-only", "--k", "1", stdout=StringIO())

    evaluate()
    monkeypatch.setattr(bookings, "book_tour", lambda **kwargs: (_ for _ in ()).throw(
        bookings.BookingError("slot_full", "Sorry, that tour is full.")))
    evaluate()
    results = list(ReviewScenarioResult.objects.filter(scenario=saved).order_by("run_at", "id"))
    assert [r.passed for r in results] == [True, False]

    listing = reviewer_client.get(LIST).content.decode()
    assert saved.scenario_id in listing and "failed 0/1" in listing and "offline/policy" in listing
    page = reviewer_client.get(f"{LIST}{saved.pk}/change/").content.decode()
    assert "failed 0/1" in page and "passed 1/1" in page  # the latest result, and the history below it
    assert "no such booking was made" in page
    assert "Sorry, that tour is full." in page  # the failed run's transcript
    assert f"conversation #{booked.pk}" in page and "yes please" in page


def test_the_expected_state_can_be_corrected_on_the_scenario_page(head_client, booked, tuesday):
    from quality.evaluation import reviewed

    saved = reviewed.create_from_conversation(booked, title="Mia's tour", expect=reviewed.capture(booked).expect)
    url = f"{LIST}{saved.pk}/change/"
    later = [{"type": "booked", "date": (tuesday + dt.timedelta(days=1)).isoformat(), "time": "11:00"}]
    data = {"title": "Mia's tour", "note": "", "is_active": "on", "follow_up": "on", "expect": json.dumps(later),
            "results-TOTAL_FORMS": "0", "results-INITIAL_FORMS": "0"}
    assert head_client.post(url, data).status_code == 302
    assert ReviewScenario.objects.get(pk=saved.pk).expect == later
    response = head_client.post(url, {**data, "expect": '[{"type": "booked", "date": "tomorrow", "time": "11:00"}]'})
    assert response.status_code == 200 and "YYYY-MM-DD" in response.content.decode()
