"""A reply claims only what its turn did: the claims found in replies of every language, and what backs them."""

import datetime as dt

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings
from django.utils import translation

from bookings import services as bookings
from chatbot.agent.claims import claims_in, unbacked
from chatbot.agent.offline import replies as r
from chatbot.models import Message
from chatbot.services import receive
from tests.chatbot import scripted_model

TODAY = dt.date(2026, 11, 24)
SLOTS = [{"date": "2026-11-26", "time": "09:00"}, {"date": "2026-11-26", "time": "14:00"}]
TOURS = [{"date": "2026-11-27", "time": "09:00", "booking_id": "T-ABC123", "child_name": "Mia"},
         {"date": "2026-12-02", "time": "14:00", "booking_id": "T-XYZ789", "child_name": ""}]
DETAILS = {"child_name": "Mia", "child_age": 5, "date": "2026-11-26", "time": "09:00", "school": "Tampines Campus",
           "parent_name": "Priya Nair", "parent_phone": "+6591234567", "parent_email": "priya@example.com"}
BOOKED = {"booking_id": "T-NEW111", "confirmation_details": {**DETAILS, "duration_minutes": 45, "address": "1 Rd"}}
CALLBACK = {"callback_id": "C-CB1234", "details": {"parent_name": "Priya Nair", "parent_phone": "+6591234567",
                                                   "best_time_to_call": "morning", "due_date": "2026-11-25",
                                                   "topic": "fees"}}

# reply -> the claims it makes, as (kind, references named)
DONE = {
    "confirmed": (lambda: r.booking_confirmed(BOOKED, TODAY), {("booked", ("T-NEW111",))}),
    "open_day_booked": (lambda: r.booking_confirmed({**BOOKED, "confirmation_details": {
        **DETAILS, "event": "Open Morning"}}, TODAY), {("booked", ("T-NEW111",))}),
    "rescheduled": (lambda: r.rescheduled({"booking_id": "T-NEW222", "confirmation_details": DETAILS}, TODAY),
                    {("moved", ("T-NEW222",))}),
    "cancelled": (lambda: r.cancelled({"booking_id": "T-ABC123"}, TOURS[0], TODAY), {("cancelled", ("T-ABC123",))}),
    "cancelled_plain": (lambda: r.cancelled({"booking_id": "T-ABC123"}, None, TODAY, offer_new=False),
                        {("cancelled", ("T-ABC123",))}),
    "callback_done": (lambda: r.callback_done(CALLBACK, TODAY), {("callback", ())}),
    "callback_plain": (lambda: r.callback_done({"callback_id": "C-CB1234", "details": {
        "best_time_to_call": "anytime"}}, TODAY), {("callback", ())}),
    "waitlisted": (lambda: r.waitlisted({"waitlist_id": "W-WL1234", "place_in_line": 2, "hold_minutes": 240,
                                         "tour": {**SLOTS[0], "child_name": "Mia"}}, TODAY), {("waitlisted", ())}),
    "seat_declined": (r.seat_declined, {("declined", ())}),
    "corrected_name": (lambda: r.corrected({"status": "updated", "field": "parent_name", "new_value": "Jon"}, TODAY),
                       {("updated", ())}),
    "corrected_on_tour": (lambda: r.corrected({"status": "updated", "field": "child_name", "new_value": "Leo",
                                               "booking_updated": "T-ABC123"}, TODAY), {("updated", ("T-ABC123",))}),
}
# replies that change nothing: offers, read-backs, questions, summaries of what is already so, refusals
NOTHING = {
    "read_back": lambda: r.read_back_booking({"read_back": DETAILS}, TODAY),
    "read_back_move": lambda: r.read_back_move({"booking_id": "T-ABC123", "from": TOURS[0], "to": SLOTS[1]}, TODAY),
    "read_back_cancel": lambda: r.read_back_cancel({"booking_id": "T-XYZ789", "tour": TOURS[1]}, TODAY),
    "unconfirmed": lambda: r.unconfirmed(r.read_back_booking({"read_back": DETAILS}, TODAY)),
    "nothing_booked": r.nothing_booked,
    "kept": r.kept_booking_more,
    "what_to_change": r.what_to_change,
    "tours_one": lambda: r.tours_summary(TOURS[:1], TODAY),
    "tours_two": lambda: r.tours_summary(TOURS, TODAY),
    "welcome_back": lambda: r.welcome("Tampines Campus", "Priya", True, TOURS[:1], TODAY),
    "bye_tour": lambda: r.bye("Priya", TOURS, TODAY),
    "pending": lambda: r.booking_pending("2026-11-26", "09:00", TODAY),
    "start_another": lambda: r.start_booking("", "", True),
    "waitlist_offered": lambda: r.tool_error({"message": "That slot is full.", "waitlist": SLOTS[0]}, TODAY),
    "ask_callback": lambda: r.ask_callback(["parent_name", "parent_phone", "best_time_to_call"], True),
    "faq_unknown_offer": lambda: r.faq_unknown(True),
    "no_bookings": r.no_bookings,
    "which_cancel": lambda: r.which_tour(TOURS, "cancel", TODAY),
    "moving": lambda: r.join([r.moving(TOURS[0], TODAY), r.ask_new_slot(TOURS[0], TODAY)]),
    "already_cancelled": lambda: r.manage_error({"message": "Booking T-ABC123 is cancelled, not scheduled."},
                                                "cancel", TODAY),
    "not_changed": lambda: r.corrected({"status": "not_changed", "field": "preferred_date", "new_value": "2026-11-27",
                                        "use": "manage_tour_booking", "booking_id": "T-ABC123"}, TODAY),
    "open_days": lambda: r.open_days([{**SLOTS[0], "title": "Open Morning", "duration_minutes": 120,
                                       "seats_left": 1}], TODAY),
}
LANGUAGES = ["en", "zh-hans", "ms", "ta"]


def _found(text: str) -> set[tuple[str, tuple[str, ...]]]:
    return {(c.kind, tuple(sorted(c.references))) for c in claims_in(text)}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", sorted(DONE))
def test_a_done_reply_claims_its_change_in_every_language(name, language):
    render, claims = DONE[name]
    with translation.override(language):
        text = render()
    assert _found(text) == claims, text


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", sorted(NOTHING))
def test_a_reply_that_changes_nothing_claims_nothing_in_every_language(name, language):
    with translation.override(language):
        text = NOTHING[name]()
    assert _found(text) == set(), text


@pytest.mark.parametrize("text, kind", [
    ("I've moved your tour to Friday at 11:00.", "moved"),
    ("Great news - your tour T-ABC123 has been rescheduled to Friday.", "moved"),
    ("All done, I have booked Mia's tour for Thursday.", "booked"),
    ("Your tour is confirmed for Thursday 26 November at 09:00 (T-NEW111).", "booked"),
    ("I've cancelled the Tuesday tour for you.", "cancelled"),
    ("I've arranged a call back from admissions tomorrow morning.", "callback"),
    ("I've added you to the waitlist for Thursday.", "waitlisted"),
    ("I've updated the phone number on your booking.", "updated"),
    ("好的，已为您改到周五上午11点。", "moved"),
    ("您的参观已取消。", "cancelled"),
    ("Lawatan anda telah ditempah untuk hari Khamis.", "booked"),
    ("உங்கள் சுற்றுப்பார்வை ரத்து செய்யப்பட்டது.", "cancelled"),
])
def test_a_models_own_wording_is_read_too(text, kind):
    assert kind in {c.kind for c in claims_in(text)}, text


@pytest.mark.parametrize("text", [
    "Shall I move your tour to Friday?",
    "I haven't moved anything yet: shall I?",
    "Your tour is on Thursday 26 November at 09:00 (T-ABC123).",
    "Tours can be booked up to 30 days ahead.",
    "Sorry, the 09:00 tour is booked out; the 11:00 one has seats.",
    'As for "has my tour been cancelled", I\'m not sure.',
    "我还没有为您取消。",
])
def test_questions_negations_and_restatements_claim_nothing(text):
    assert claims_in(text) == [], text


def test_a_claim_is_backed_only_by_the_same_change_with_the_reference_it_names():
    booked = ("book_tour", {"status": "success", "booking_id": "T-NEW111"})
    said = r.booking_confirmed(BOOKED, TODAY)
    assert unbacked(said, [booked]) == []
    assert [c.kind for c in unbacked(said, [])] == ["booked"]
    assert unbacked(said, [("book_tour", {"status": "confirm", "action": "book"})]), "a read-back books nothing"
    assert unbacked(said, [("book_tour", {"status": "success", "booking_id": "T-OTHER1"})]), "another tour"
    assert unbacked("Your tour T-NEW111 is on Thursday.", []) == []  # a repeat, no done-verb
    moved = unbacked("I've moved your tour to Friday.", [
        ("update_context", {"status": "not_changed", "field": "preferred_date", "use": "manage_tour_booking"})])
    assert [c.kind for c in moved] == ["moved"] and "did not do" in str(moved[0])
    assert unbacked("I've moved your tour to Friday.", [
        ("manage_tour_booking", {"status": "success", "action": "rescheduled", "booking_id": "T-ABC123"})]) == []


def test_an_faq_answer_quoted_in_the_reply_is_not_a_claim():
    answer = "Lunch is booked through the canteen app and is cancelled automatically on public holidays."
    assert unbacked(answer, [("get_faq_answer", {"status": "success", "answer": answer})]) == []
    assert unbacked(answer, []) != []


@pytest.mark.django_db(transaction=True)
def test_the_invariant_fails_a_turn_whose_reply_claims_a_move_it_did_not_make(school, contact, next_weekday,
                                                                              truthful_replies):
    """The conversation tests' invariant (tests/conftest.py) catches a model that says "moved" after update_context
    answered "not_changed"."""
    tour = next_weekday(school, 1)
    booking = bookings.book_tour(school=school, contact=contact, parent_name="Jon Tan", parent_phone="+6591234567",
                                 child_name="Mia", child_age=5, local_date=tour, local_time=dt.time(9))
    model = scripted_model.install()
    model.script = [{"tool_calls": [("update_context", {"field_to_update": "preferred_date", "new_value": "Friday",
                                                        "booking_id": booking.reference})]},
                    {"content": "All done: I've moved your tour to Friday."}]
    with override_settings(LLM_MODEL="scripted/test"):
        async_to_sync(receive)(school=school, contact=contact, channel="web", text="can we make it Friday instead?")
    reply = Message.objects.get(conversation__contact=contact, role=Message.Role.ASSISTANT)
    booking.refresh_from_db()
    assert booking.local_start.date() == tour and reply.text == "All done: I've moved your tour to Friday."
    assert [c.kind for c in truthful_replies.take()] == ["moved"]
