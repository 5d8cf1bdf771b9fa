"""From review to regression test (issue 13, item 4): a reviewed conversation saved as a scenario, replayed by
`evaluate --saved` at the conversation's own moment, graded on the final database state, its results kept.

The conversations here are real ones: the parent's messages go through `chatbot.services.receive` and the
offline model, as on any channel. The last tests break the captured behaviour on purpose and see the saved
scenario fail, then pass again once it is restored.
"""

import datetime as dt
import json
from io import StringIO

import pytest
import time_machine
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from bookings import services as booking_services
from bookings.models import School, SchoolClosure, TourBooking
from bookings.services import BookingError, local_now
from chatbot.models import Conversation, Message, ReviewScenario, ReviewScenarioResult
from chatbot.services import receive
from quality.evaluation import reviewed
from quality.evaluation.checks import Booked, CallbackRequested, Cancelled, NotSaid, Said
from quality.evaluation.parent import Burst
from quality.evaluation.world import SLUG_PREFIX
from tests.factories import ContactFactory, ConversationFactory, FaqEntryFactory, SchoolFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _offline_and_fast():
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0, PIPEDRIVE_API_TOKEN=""):
        yield


@pytest.fixture
def school():
    school = SchoolFactory(name="Tampines Green International School", slug="tampines-green")
    FaqEntryFactory(school=school, question="How long is a campus tour?", answer="A tour lasts about 45 minutes.",
                    tags=["tour", "duration", "how long"])
    return school


def weekday_ahead(school, weekday: int, min_days: int = 3) -> dt.date:
    day = local_now(school).date() + dt.timedelta(days=min_days)
    while day.weekday() != weekday:
        day += dt.timedelta(days=1)
    return day


def spoken(day: dt.date) -> str:
    return f"{day:%A} {day.day} {day:%B}"


def talk(school, contact, *texts: str) -> Conversation:
    for text in texts:
        async_to_sync(receive)(school=school, contact=contact, channel="web", text=text)
    return Conversation.objects.filter(contact=contact).latest("started_at")


def book_by_chat(school, contact, day: dt.date) -> Conversation:
    return talk(school, contact, f"Hi, I'm Jon Tan, 91234567. A tour for my daughter Mia (5) on {spoken(day)} at "
                                 "9am please", "yes please")


def evaluate(*args: str) -> str:
    out = StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


def saved_from(conversation: Conversation, **changes) -> ReviewScenario:
    captured = reviewed.capture(conversation)
    return reviewed.create_from_conversation(conversation, title=changes.pop("title", "A reviewed booking"),
                                             expect=changes.pop("expect", captured.expect), **changes)


# --- capture -----------------------------------------------------------------------------------------------------


def test_the_parents_messages_are_kept_with_their_timing_and_answered_together_ones_are_a_burst(school):
    conversation = ConversationFactory(school=school, contact=ContactFactory(school=school, name="", phone=""))
    start = timezone.now() - dt.timedelta(hours=1)

    def add(role: str, text: str, seconds: float, **fields) -> None:
        message = Message.objects.create(conversation=conversation, role=role, text=text, channel="web",
                                         processed_at=timezone.now() if role == "user" else None, **fields)
        Message.objects.filter(pk=message.pk).update(created_at=start + dt.timedelta(seconds=seconds))

    add("assistant", "Hello! How can I help?", 0)  # a greeting before the parent says anything
    add("user", "hi", 1)
    add("user", "I want a tour", 2.5)
    add("assistant", "Happy to help. Which day?", 4)
    add("user", "Tuesday please", 75)
    add("user", "is there a pool?", 80, handled_by_staff=True)  # staff answered it during a handoff
    add("staff", "Yes there is!", 90)

    captured = reviewed.capture(conversation)
    assert captured.script == [{"text": "hi", "at": 0.0, "burst": 0},
                               {"text": "I want a tour", "at": 1.5, "burst": 0},
                               {"text": "Tuesday please", "at": 74.0, "burst": 1}]
    assert captured.starts_at == start + dt.timedelta(seconds=1)
    saved = reviewed.create_from_conversation(conversation, title="", expect=captured.expect)
    scenario = reviewed.to_scenario(saved)
    assert scenario.script == (Burst("hi", "I want a tour"), "Tuesday please")
    assert scenario.flow == "reviewed" and scenario.id == f"reviewed-{saved.pk}"
    assert saved.title.startswith(f"#{conversation.pk} Tampines Green International School: answered “hi”")


def test_the_school_at_the_start_is_copied_as_it_was(school):
    """The parent's tours then (one cancelled later, one booked after the start is left out), the slots other
    families had filled, closures, the school's rules and FAQ."""
    contact = ContactFactory(school=school, name="Jon Tan", phone="+6591234567")
    tuesday, wednesday = weekday_ahead(school, 1), weekday_ahead(school, 2)
    details = {"school": school, "parent_name": "Jon Tan", "parent_phone": "+6591234567"}
    mine = booking_services.book_tour(contact=contact, child_name="Mia", child_age=5, local_date=tuesday,
                                      local_time=dt.time(9), **details)
    for number in range(school.seats_per_tour):
        other = ContactFactory(school=school)
        booking_services.book_tour(school=school, contact=other, parent_name=f"Parent {number}",
                                   parent_phone=f"+659000000{number}", child_name="Noah", local_date=wednesday,
                                   local_time=dt.time(11))
    SchoolClosure.objects.create(school=school, date=weekday_ahead(school, 3), reason="Sports day")
    TourBooking.objects.update(created_at=timezone.now() - dt.timedelta(days=2))
    conversation = talk(school, contact, f"please cancel {mine.reference}", "yes please")
    later = booking_services.book_tour(contact=contact, child_name="Leo", local_date=tuesday,
                                       local_time=dt.time(14), **details)  # after the conversation: not setup

    captured = reviewed.capture(conversation)
    assert captured.setup[0] == {"type": "booking", "key": "t1", "reference": mine.reference,
                                 "date": tuesday.isoformat(), "time": "09:00", "child_name": "Mia", "child_age": 5}
    assert {"type": "full_slot", "date": wednesday.isoformat(), "time": "11:00"} in captured.setup
    assert {"type": "closed", "date": weekday_ahead(school, 3).isoformat(), "reason": "Sports day"} in captured.setup
    assert later.reference not in json.dumps(captured.setup)
    assert captured.fixture["school"]["tour_start_times"] == school.tour_start_times
    assert [f["question"] for f in captured.fixture["faqs"]] == ["How long is a campus tour?"]
    assert captured.parent == {"name": "Jon Tan", "phone": "+6591234567", "email": contact.email, "known": True}
    assert captured.expect == [{"type": "cancelled", "booking": "t1"}]
    saved = reviewed.create_from_conversation(conversation, title="Cancels by reference", expect=captured.expect)
    assert reviewed.to_scenario(saved).script[0] == "please cancel {ref.t1}"


def test_the_expected_end_state_is_prefilled_from_what_the_conversation_did(school):
    contact = ContactFactory(school=school, name="", phone="", email="")
    tuesday = weekday_ahead(school, 1)
    conversation = book_by_chat(school, contact, tuesday)
    booking = TourBooking.objects.get(contact=contact)
    talk(school, contact, "Could someone from admissions call me back about the fees? Tomorrow morning is best.",
         "yes please")

    captured = reviewed.capture(conversation)
    assert captured.parent["known"] is False  # a new parent: the concierge asked for (or was given) the details
    booked, callback, said = captured.expect
    assert booked == {"type": "booked", "date": tuesday.isoformat(), "time": "09:00", "child_name": "Mia",
                      "child_age": 5, "parent_name": "Jon Tan", "parent_phone": "+6591234567"}
    assert callback["type"] == "callback" and callback["parent_phone"] == "+6591234567"
    assert callback["best_time"] == "morning"
    assert said == {"type": "said", "phrases": ["{callback_ref}"]}
    assert booking.reference in " ".join(conversation.messages.values_list("text", flat=True))

    saved = reviewed.create_from_conversation(conversation, title="Books, then asks for a call",
                                              expect=[*captured.expect, {"type": "not_said", "text": "Grace"}])
    scenario = reviewed.to_scenario(saved)
    assert scenario.expect[0] == Booked(tuesday.isoformat(), "09:00", "Mia", 5, "Jon Tan", "+6591234567")
    assert isinstance(scenario.expect[1], CallbackRequested)
    assert scenario.told == (Said("{callback_ref}"), NotSaid("Grace"))
    assert scenario.goal.kind == "book" and scenario.goal.day == tuesday.isoformat()
    assert scenario.persona.child == "Mia" and scenario.persona.name == "Jon Tan"


@pytest.mark.parametrize(("expect", "message"), [
    ({"type": "booked"}, "a list of entries"),
    ([{"type": "flew"}], "the type must be one of"),
    ([{"type": "booked", "time": "09:00"}], "give date"),
    ([{"type": "booked", "date": "24/11", "time": "09:00"}], "YYYY-MM-DD"),
    ([{"type": "booked", "date": "2026-11-24", "time": "9am"}], "HH:MM"),
    ([{"type": "cancelled", "booking": "t9"}], "not one of the parent's tours"),
    ([{"type": "booked", "date": "2026-11-24", "time": "09:00", "colour": "red"}], "unknown field colour"),
    ([{"type": "callback", "best_time": "noonish"}], "best time is one of"),
    ([{"type": "not_said"}], "either a text or a pattern"),
    ([{"type": "not_said", "pattern": "(unclosed"}], "not a regular expression"),
])
def test_an_expected_end_state_that_cannot_be_read_says_why(expect, message):
    with pytest.raises(reviewed.ExpectationError, match=message):
        reviewed.clean_expectations(expect, [{"type": "booking", "key": "t1"}])


def test_expectations_become_the_checks_of_the_built_in_suite():
    entries = reviewed.clean_expectations([
        {"type": "booked", "date": "2026-11-24", "time": "09:00", "status": "cancelled",
         "moved_from": ["2026-11-23", "11:00"], "child_age": "5"},
        {"type": "cancelled", "booking": "t1", "reason": "~abroad"},
    ], [{"type": "booking", "key": "t1"}])
    assert reviewed._expectation(entries[0]) == Booked("2026-11-24", "09:00", child_age=5, status="cancelled",
                                                       moved_from=("2026-11-23", "11:00"))
    assert reviewed._expectation(entries[1]) == Cancelled("t1", "~abroad")
    assert reviewed.describe(entries[0]) == ("booked Tue 24 Nov 09:00, moved there from Mon 23 Nov 11:00, "
                                             "then cancelled")


# --- evaluate --saved -------------------------------------------------------------------------------------------------


def test_evaluate_runs_a_saved_scenario_next_to_the_built_in_ones_and_stores_its_result(school, tmp_path):
    contact = ContactFactory(school=school, name="", phone="", email="")
    saved = saved_from(book_by_chat(school, contact, weekday_ahead(school, 1)))

    path = tmp_path / "eval.json"
    printed = evaluate("--saved", "--scenario", "book-rich-message", "--k", "2", "--json", str(path))

    report = json.loads(path.read_text())
    assert set(report["flows"]) == {"booking", "reviewed"}
    row = next(s for s in report["scenarios"] if s["id"] == saved.scenario_id)
    assert row["passed_runs"] == 2 and row["pass_k"] == 1.0, row["results"][0]["failures"]
    [result] = ReviewScenarioResult.objects.filter(scenario=saved)
    assert (result.model, result.k, result.runs, result.passed_runs, result.pass_k) == ("offline/policy", 2, 2, 2,
                                                                                          1.0)
    assert result.failures == "" and result.transcript[0]["role"] == "parent"
    assert "Regression scenarios" in printed
    assert not School.objects.filter(slug__startswith=SLUG_PREFIX).exists()


def test_a_conversation_from_last_week_is_replayed_at_its_own_moment(school):
    """"Tomorrow at 2pm" on a Monday is a Tuesday that has passed by now: the replay's clock is that Monday's."""
    contact = ContactFactory(school=school, name="", phone="", email="")
    monday = weekday_ahead(school, 0) - dt.timedelta(days=21)
    moment = dt.datetime.combine(monday, dt.time(10), school.tz)
    with time_machine.travel(moment, tick=True):
        conversation = talk(school, contact, "Hello, we'd like to visit tomorrow at 2pm. Jon Tan, 91234567, for "
                                             "my son Leo who is 4", "yes please")
    saved = saved_from(conversation)
    assert saved.expect[0]["date"] == (monday + dt.timedelta(days=1)).isoformat()

    evaluate("--saved-only", "--k", "1")
    result = ReviewScenarioResult.objects.get(scenario=saved)
    assert result.passed, result.failures
    assert "tomorrow" in result.transcript[0]["text"]


def test_a_saved_scenario_fails_when_the_behaviour_it_captured_breaks_and_passes_once_it_is_restored(school,
                                                                                                     monkeypatch):
    """The Done-when of item 4: the booking tool stops booking (a regression in a change); evaluate --saved fails
    the reviewed conversation, with what failed; restored, it passes again. The console shows the three runs."""
    contact = ContactFactory(school=school, name="", phone="", email="")
    saved = saved_from(book_by_chat(school, contact, weekday_ahead(school, 1)))
    evaluate("--saved-only", "--k", "1")

    def broken_book_tour(**kwargs):
        raise BookingError("slot_full", "Sorry, that tour is full.", field="preferred_time")

    monkeypatch.setattr(booking_services, "book_tour", broken_book_tour)
    printed = evaluate("--saved-only", "--k", "1")
    monkeypatch.undo()
    evaluate("--saved-only", "--k", "1")

    first, broken, restored = ReviewScenarioResult.objects.filter(scenario=saved).order_by("run_at", "id")
    assert first.passed and restored.passed, (first.failures, restored.failures)
    assert not broken.passed and broken.passed_runs == 0
    assert "expected a new scheduled booking on" in broken.failures and "no such booking was made" in broken.failures
    assert "reviewed-" in printed and "no such booking was made" in printed
    assert ReviewScenario.objects.get(pk=saved.pk).results.count() == 3


def test_a_changed_expectation_fails_the_same_conversation(school):
    """The reviewer says the concierge should have booked 11:00: the real replay (09:00) fails, naming both."""
    contact = ContactFactory(school=school, name="", phone="", email="")
    day = weekday_ahead(school, 1)
    conversation = book_by_chat(school, contact, day)
    expect = reviewed.capture(conversation).expect
    expect[0] = {**expect[0], "time": "11:00"}
    saved = saved_from(conversation, expect=expect)

    evaluate("--scenario", saved.scenario_id, "--k", "1")
    result = ReviewScenarioResult.objects.get(scenario=saved)
    assert not result.passed
    assert "time='09:00' (wanted '11:00')" in result.failures and "unexpected new booking" in result.failures


def test_inactive_saved_scenarios_are_left_out_unless_named(school):
    contact = ContactFactory(school=school, name="", phone="", email="")
    saved = saved_from(talk(school, contact, "How long is a campus tour?"))
    ReviewScenario.objects.filter(pk=saved.pk).update(is_active=False)
    assert reviewed.select() == []
    assert [s.pk for s in reviewed.select([saved.scenario_id])] == [saved.pk]
    evaluate("--scenario", saved.scenario_id, "--k", "1")
    assert ReviewScenarioResult.objects.get(scenario=saved).passed


def test_the_saved_by_user_and_the_source_are_kept(school):
    user = UserFactory(username="rita")
    contact = ContactFactory(school=school, name="", phone="", email="")
    conversation = talk(school, contact, "How long is a campus tour?")
    saved = reviewed.create_from_conversation(conversation, title=" Tour length ", expect=[], user=user,
                                              note="Answered from the FAQ")
    assert (saved.title, saved.created_by, saved.conversation, saved.school) == ("Tour length", user, conversation,
                                                                                  school)
    assert saved.script == [{"text": "How long is a campus tour?", "at": 0.0, "burst": 0}]
