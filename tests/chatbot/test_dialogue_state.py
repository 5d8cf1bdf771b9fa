"""The dialogue state: what a reply asked and offered, kept as data from what was sent, for every model.

The offline policy's reply functions declare what they ask and offer while they write the text (in every
language alike); a hosted model's state is what the turn's tools left open. The buttons are the state's options,
and a hosted model confirms a read-back by saying so in its call, never by a word list.
"""

import datetime as dt

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings
from django.utils import translation

from bookings.models import TourBooking
from chatbot.agent import blocks, dialogue
from chatbot.agent.memory import ActiveContext
from chatbot.agent.offline import replies
from chatbot.models import Message
from chatbot.services import receive
from tests.chatbot import scripted_model
from tests.factories import ContactFactory

LANGUAGES = ("en", "zh-hans", "ms", "ta")
TODAY = dt.date(2026, 11, 22)
SLOTS = [{"date": "2026-11-24", "time": "09:00", "label": "Tue 24 Nov, 09:00"},
         {"date": "2026-11-24", "time": "14:00", "label": "Tue 24 Nov, 14:00"}]
TOURS = [{"booking_id": "T-AAAA11", "date": "2026-11-25", "time": "09:00", "child_name": "Mia"},
         {"booking_id": "T-BBBB22", "date": "2026-11-27", "time": "11:00", "child_name": "Leo"}]
REPLIES = {  # a reply function, and the state it must leave in every language
    "ask_for": (lambda: replies.ask_for(["child_age", "parent_name"], "", "Mia"),
                {"asked": ["child_age", "parent_name"], "ages_of": ["Mia"], "options": []}),
    "ask_family": (lambda: replies.ask_family([{"name": "Noor"}, {"name": "Adam"}], 2, ["child_age"]),
                   {"asked": ["child_age"], "ages_of": ["Noor", "Adam"], "options": []}),
    "availability": (lambda: replies.availability({"status": "success", "available_slots": SLOTS},
                                                  {"date_range_start": "2026-11-24"}, TODAY),
                     {"asked": ["choice"], "ages_of": [], "options": SLOTS}),
    "which_tour": (lambda: replies.which_tour(TOURS, "cancel", TODAY),
                   {"asked": ["which_tour"], "ages_of": [], "options": TOURS}),
    "read_back": (lambda: replies.read_back_cancel({"booking_id": "T-AAAA11", "tour": TOURS[0]}, TODAY),
                  {"asked": ["read_back"], "ages_of": [], "options": []}),
    "callback": (lambda: replies.ask_callback(["parent_phone", "best_time_to_call"], first=True),
                 {"asked": ["parent_phone", "call_time"], "ages_of": [], "options": []}),
    "waitlist": (lambda: replies.waitlist_offer({"date": "2026-11-24", "time": "09:00"}, TODAY),
                 {"asked": ["offer_waitlist"], "ages_of": [], "options": []}),
    "thanks": (lambda: replies.thanks("Jon"), {"asked": [], "ages_of": [], "options": []}),
}


def _options(items: list[dict]) -> list[dict]:
    return [{k: i[k] for k in ("date", "time", "booking_id") if i.get(k)} for i in items]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", sorted(REPLIES))
def test_a_reply_declares_what_it_asks_and_offers_in_every_language(name, language):
    write, expected = REPLIES[name]
    with translation.override(language), replies.recording() as declared:
        text = write()
    assert text.strip()
    assert (declared.asked, declared.ages_of, declared.options) == (
        expected["asked"], expected["ages_of"], _options(expected["options"]))


def test_the_state_round_trips_through_the_prompt_as_a_model_reads_it():
    state = dialogue.after_reply(
        dialogue.DialogueState(), dialogue.Declared(asked=["choice"], about="book", options=_options(SLOTS)),
        [("check_availability", {"status": "success", "available_slots": SLOTS})], 1, blocks.slot_label,
        still_awaited=False)
    read = dialogue.DialogueState.from_prompt_dict(state.as_prompt_dict())
    assert read.asked == ["choice"] and read.about == "book"
    assert [(o.position, o.date, o.time) for o in read.options] == [(1, "2026-11-24", "09:00"),
                                                                    (2, "2026-11-24", "14:00")]
    assert state.as_prompt_dict()["options"] == ["1. Tue 2026-11-24 09:00", "2. Tue 2026-11-24 14:00"]


def test_a_hosted_models_state_is_what_its_tools_left_open():
    missing = {"status": "missing_fields", "missing": ["child_name", "preferred_time"]}
    state = dialogue.after_reply(dialogue.DialogueState(), None, [("book_tour", missing)], 1, lambda s: s["label"],
                                 still_awaited=False)
    assert (state.asked, state.about, state.options) == (["child_name", "when"], "book", [])
    confirm = {"status": "confirm", "action": "cancel", "booking_id": "T-AAAA11", "message": "Nothing has changed"}
    state = dialogue.after_reply(state, None, [("manage_tour_booking", confirm)], 1, lambda s: s["label"],
                                 still_awaited=True)
    assert state.asked == ["read_back"] and state.about == "cancel"
    assert state.awaiting == [{"tool": "manage_tour_booking", "action": "cancel", "booking_id": "T-AAAA11"}]
    done = {"status": "success", "action": "cancelled", "booking_id": "T-AAAA11", "message": "Cancelled."}
    state = dialogue.after_reply(state, None, [("manage_tour_booking", done)], 1, lambda s: s["label"],
                                 still_awaited=False)
    assert state.done == [{"action": "cancelled", "reference": "T-AAAA11"}] and state.awaiting == []
    assert state.since_done == 0 and state.answered == []


def test_only_what_changed_the_database_counts_as_done():
    observations = [("book_tour", {"status": "confirm", "booking_id": "T-X"}),
                    ("update_context", {"status": "updated", "field": "parent_name"}),
                    ("request_callback", {"status": "success", "callback_id": "C-123"})]
    assert dialogue.done_in(observations) == [{"action": "updated", "reference": ""},
                                              {"action": "callback_requested", "reference": "C-123"}]
    state = dialogue.after_reply(dialogue.DialogueState(since_done=3), None, observations[:2], 1, blocks.slot_label,
                                 still_awaited=True)
    assert state.done == [] and state.since_done == 4, "a detail noted finishes no task"


# --- through the real loop ------------------------------------------------------------------------

pytestmark_db = pytest.mark.django_db(transaction=True)


def _latest_reply(contact) -> Message:
    return Message.objects.filter(conversation__contact=contact, role="assistant").latest("id")


def _state(school, contact) -> dialogue.DialogueState:
    return ActiveContext.load(school.pk, contact.pk).dialogue


@pytestmark_db
def test_the_offline_reply_leaves_its_options_and_its_buttons_are_the_same(school, next_weekday):
    day = next_weekday(school, 1)
    contact = ContactFactory(school=school, name="", phone="", email="")
    with override_settings(LLM_MODEL="offline/policy", CHAT_BURST_WINDOW_SECONDS=0):
        async_to_sync(receive)(school=school, contact=contact, channel="web",
                               text=f"hi, a tour for my son Leo, 4, on {day:%A} {day.day} {day:%B} please")
    reply = _latest_reply(contact)
    state = _state(school, contact)
    assert "choice" in state.asked and state.options, (reply.text, state)
    buttons = [b for b in reply.payload["blocks"] if b["type"] == "buttons"]
    assert [o["label"] for o in buttons[0]["options"]] == [o.label for o in state.options]
    assert all(f"\n{o.position}. " in reply.text for o in state.options), reply.text  # the text lists the same


@pytestmark_db
def test_a_hosted_model_confirms_a_read_back_in_its_call_and_its_yes_is_not_overruled(school, next_weekday):
    """"ok go ahead. pls make sure the wed one is cancelled ya" is a yes: the model says so, the tool commits."""
    tuesday = next_weekday(school, 1)
    model = scripted_model.install()
    contact = ContactFactory(school=school)
    details = {"parent_name": "Lina Tan", "parent_phone": "+65 9123 4567", "child_name": "Mia", "child_age": 5,
               "preferred_date": tuesday.isoformat(), "preferred_time": "09:00"}
    with override_settings(LLM_MODEL="scripted/test", CHAT_BURST_WINDOW_SECONDS=0):
        model.script = [{"tool_calls": [("book_tour", {**details, "confirmed": True})]},  # cannot skip the read-back
                        {"content": "Just to check: Mia on Tuesday at 09:00. Shall I book it?"}]
        async_to_sync(receive)(school=school, contact=contact, channel="web", text="book Mia, 5, tuesday 9am")
        assert not TourBooking.objects.filter(contact=contact).exists()
        assert _state(school, contact).asked == ["read_back"]
        model.script = [{"tool_calls": [("book_tour", {**details, "parent_email": "lina.tan@example.com",
                                                       "confirmed": True})]},
                        {"content": "Booked!"}]
        async_to_sync(receive)(school=school, contact=contact, channel="web",
                               text="yes pls. email is lina.tan@example.com if u need it")
    booking = TourBooking.objects.get(contact=contact)
    assert booking.parent_email == "lina.tan@example.com"
    state = _state(school, contact)
    assert state.done == [{"action": "booked", "reference": booking.reference}] and state.awaiting == []
