"""The offline policy reads its own earlier replies in every language as it reads its English ones.

Every reply function is rendered in each language; what the policy reads back
(what was asked, the listed slots and tours, the task a reply finished, the
read-back) must be what it reads from the English reply. A translation that drops
a marker phrase, or says one the English does not, fails here.
"""

import datetime as dt
import re

import pytest
from django.utils import translation

from chatbot import outreach
from chatbot.agent.offline import replies as r
from chatbot.agent.offline.reply_markers import asked_in, endings, options_in, read_back_in
from chatbot.agent.offline.understanding import asked_ages_of

TODAY = dt.date(2026, 11, 24)
SLOTS = [{"date": "2026-11-26", "time": "09:00"}, {"date": "2026-11-26", "time": "14:00"},
         {"date": "2027-01-05", "time": "11:00"}]
TOURS = [{"date": "2026-11-27", "time": "09:00", "booking_id": "T-ABC123", "child_name": "Mia"},
         {"date": "2026-12-02", "time": "14:00", "booking_id": "T-XYZ789", "child_name": ""}]
DETAILS = {"child_name": "Mia", "child_age": 5, "date": "2026-11-26", "time": "09:00", "school": "Tampines Campus",
           "parent_name": "Priya Nair", "parent_phone": "+6591234567", "parent_email": "priya@example.com"}

REPLIES = {
    "welcome": lambda: r.welcome("Tampines Campus", "Priya", False, TOURS[:1], TODAY),
    "welcome_back": lambda: r.welcome("", "", True, [], TODAY),
    "hello": lambda: r.hello("Priya"),
    "refuse_injection": r.refuse_injection,
    "refuse_offtopic": lambda: r.refuse_offtopic("Tampines Campus"),
    "refuse_short": lambda: r.refuse_offtopic("", short=True),
    "not_understood": r.not_understood,
    "help": r.help_text,
    "thanks": lambda: r.thanks("Priya"),
    "bye_tour": lambda: r.bye("", TOURS, TODAY),
    "bye": lambda: r.bye("Priya", [], TODAY),
    "noted": lambda: r.noted(""),
    "anything_else": r.anything_else,
    "no_problem": r.no_problem,
    "kept": r.kept_booking_more,
    "faq_unknown_offer": lambda: r.faq_unknown(True),
    "faq_unknown": lambda: r.faq_unknown(False),
    "faq_partly": lambda: r.faq_answer({"answers": [{"answer": "Fees are listed online."}],
                                        "unanswered": ["is there a bus?"]}, offer_callback=True),
    "corrected_name": lambda: r.corrected({"status": "updated", "field": "parent_name", "new_value": "Jon"}, TODAY),
    "corrected_child": lambda: r.corrected({"status": "updated", "field": "child_name", "new_value": "Leo",
                                            "booking_updated": "T-ABC123"}, TODAY),
    "corrected_age": lambda: r.corrected({"status": "updated", "field": "child_age", "new_value": 6}, TODAY),
    "corrected_date": lambda: r.corrected({"status": "updated", "field": "preferred_date",
                                           "new_value": "2026-11-27"}, TODAY),
    "corrected_email": lambda: r.corrected({"status": "updated", "field": "parent_email", "new_value": "a@b.co"},
                                           TODAY),
    "tours_none": lambda: r.tours_summary([], TODAY),
    "tours_one": lambda: r.tours_summary(TOURS[:1], TODAY),
    "tours_two": lambda: r.tours_summary(TOURS, TODAY),
    "slots": lambda: r.availability({"status": "success", "available_slots": SLOTS},
                                    {"date_range_start": "2026-11-26", "preferred_times": ["morning", "afternoon"]},
                                    TODAY),
    "slots_instead": lambda: r.availability({"status": "success", "available_slots": SLOTS},
                                            {"date_range_start": "2026-11-25", "date_range_end": "2026-11-30"},
                                            TODAY, "instead"),
    "soonest": lambda: r.availability({"status": "success", "available_slots": SLOTS},
                                      {"preferred_times": ["09:00"]}, TODAY),
    "no_slots": lambda: r.availability({"status": "success", "available_slots": []},
                                       {"date_range_start": "2026-11-26"}, TODAY),
    "alternatives": lambda: r.availability({"status": "no_match", "message": "No open tour slots from Thursday 26 "
                                            "November.", "alternatives": SLOTS}, {}, TODAY),
    "no_alternatives": lambda: r.availability({"status": "error"}, {"preferred_times": ["10:00"]}, TODAY),
    "ambiguous": lambda: r.ambiguous(SLOTS, TODAY),
    "bad_choice": lambda: r.bad_choice(3),
    "ask_child": lambda: r.ask_for(["child_name", "child_age"], "son"),
    "ask_child_they": lambda: r.ask_for(["child_name", "child_age"]),
    "ask_age": lambda: r.ask_for(["child_age", "parent_name"], "daughter", "Mia"),
    "ask_parent": lambda: r.ask_for(["parent_name", "parent_phone"]),
    "ask_phone": lambda: r.ask_for(["parent_phone"]),
    "ask_name_phone_child": lambda: r.ask_for(["child_name", "parent_phone"], "daughter"),
    "also": lambda: r.also(r.ask_for(["parent_name"])),
    "ask_when": r.ask_when,
    "start": lambda: r.start_booking("daughter", "", False),
    "start_another": lambda: r.start_booking("", "", True),
    "confirmed": lambda: r.booking_confirmed({"booking_id": "T-NEW111", "confirmation_details": {
        **DETAILS, "duration_minutes": 45, "address": "1 School Road"}}, TODAY),
    "pending": lambda: r.booking_pending("2026-11-26", "09:00", TODAY),
    "bad_phone": lambda: r.tool_error({"field": "parent_phone", "message": "too short"}, TODAY),
    "bad_email": lambda: r.tool_error({"field": "parent_email", "message": "no @"}, TODAY),
    "full": lambda: r.tool_error({"field": "preferred_time", "message": "That slot is full.",
                                  "alternatives": SLOTS}, TODAY),
    "bad_date": lambda: r.tool_error({"field": "preferred_date", "message": "We are closed then."}, TODAY),
    "rescheduled": lambda: r.rescheduled({"booking_id": "T-NEW222", "confirmation_details": DETAILS}, TODAY),
    "cancelled": lambda: r.cancelled({"booking_id": "T-ABC123"}, TOURS[0], TODAY),
    "cancelled_plain": lambda: r.cancelled({"booking_id": "T-ABC123"}, None, TODAY, offer_new=False),
    "options": lambda: r.options(SLOTS[:2], TODAY),
    "no_bookings": r.no_bookings,
    "which_cancel": lambda: r.which_tour(TOURS, "cancel", TODAY),
    "which_move": lambda: r.which_tour(TOURS, "reschedule", TODAY),
    "manage_alternatives": lambda: r.manage_error({"message": "That slot is full.", "alternatives": SLOTS},
                                                  "reschedule", TODAY),
    "manage_tours": lambda: r.manage_error({"message": "That is not your booking.", "your_bookings": TOURS},
                                           "cancel", TODAY),
    "manage_none": lambda: r.manage_error({}, "cancel", TODAY),
    "moving": lambda: r.join([r.moving(TOURS[0], TODAY), r.ask_new_slot(TOURS[0], TODAY)]),
    "ask_new_slot": lambda: r.ask_new_slot(None, TODAY),
    "callback_done": lambda: r.callback_done({"callback_id": "C-CB1234", "details": {
        "parent_name": "Priya Nair", "parent_phone": "+6591234567", "best_time_to_call": "morning",
        "due_date": "2026-11-25", "topic": "fees"}}, TODAY),
    "callback_done_plain": lambda: r.callback_done({"callback_id": "C-CB1234", "details": {
        "best_time_to_call": "anytime"}}, TODAY),
    "callback_failed": r.callback_failed,
    "callback_moved_on": lambda: r.callback_done({"callback_id": "C-CB1234", "details": {**CALLBACK, "topic": "fees"},
                                                  "moved_from": MOVED}, TODAY),
    "callback_rescheduled": lambda: r.callback_managed({"status": "success", "action": "rescheduled",
                                                        "callback_id": "C-CB1234", "details": CALLBACK,
                                                        "moved_from": MOVED}, TODAY),
    "callback_cancelled": lambda: r.callback_managed({"status": "success", "action": "cancelled",
                                                      "callback_id": "C-CB1234", "details": CALLBACK}, TODAY),
    "callback_new_time": lambda: r.callback_managed({"status": "missing_fields", "missing": ["new_time"],
                                                     "callback_id": "C-CB1234", "details": CALLBACK}, TODAY),
    "callback_which": lambda: r.callback_managed({"status": "missing_fields", "missing": ["callback_id"],
                                                  "action": "reschedule", "your_callbacks": [
                                                      {"callback_id": "C-CB1234", "due_date": "2026-11-30",
                                                       "window": "17:00-18:00"},
                                                      {"callback_id": "C-CB5678", "due_date": "2026-12-01",
                                                       "window": "09:00-12:00"}]}, TODAY),
    "callback_none": lambda: r.callback_managed({"status": "error", "message": "Sorry, I couldn't change that "
                                                 "call back.", "your_callbacks": []}, TODAY),
    "ask_callback": lambda: r.ask_callback(["parent_name", "parent_phone", "best_time_to_call"], True),
    "ask_callback_later": lambda: r.ask_callback(["parent_phone", "best_time_to_call"], False),
    "read_back": lambda: r.read_back_booking({"read_back": DETAILS}, TODAY),
    "read_back_move": lambda: r.read_back_move({"booking_id": "T-ABC123", "from": TOURS[0], "to": SLOTS[1]}, TODAY),
    "read_back_cancel": lambda: r.read_back_cancel({"booking_id": "T-XYZ789", "tour": TOURS[1]}, TODAY),
    "noted_details": lambda: r.noted_details({"child_name": "Ethan", "child_age": 5, "parent_phone": "+6598765432",
                                              "parent_name": "Priya Nair"}),
    "noted_age": lambda: r.noted_details({"child_age": 5}),
    "nothing_booked": r.nothing_booked,
    "read_back_family": lambda: r.read_back_booking({"read_back": {**DETAILS, "children": FAMILY}}, TODAY),
    "noted_family": lambda: r.noted_details({}, FAMILY),
    "ask_family_names": lambda: r.ask_family([], 2, ["child_name", "child_age", "parent_name"]),
    "ask_family_other": lambda: r.ask_family([{"name": "Leo"}], 2, ["child_name", "parent_phone"]),
    "ask_family_others": lambda: r.ask_family([{"name": "Leo"}], 3, ["child_name"]),
    "ask_family_age": lambda: r.ask_family([{"name": "Leo", "age": 5}, {"name": "Mia"}], 2, ["child_age"]),
    "ask_family_ages": lambda: r.ask_family([{"name": "Leo"}, {"name": "Mia"}], 2, ["child_age"]),
    "family_again": lambda: r.family_again(tuple(FAMILY)),
    "family_again_three": lambda: r.family_again((*FAMILY, {"name": "Jon"})),
    "what_to_change": r.what_to_change,
    "waitlist_offered": lambda: r.tool_error({"message": "That slot is full.", "alternatives": SLOTS,
                                              "waitlist": SLOTS[0]}, TODAY),
    "waitlist_offered_alone": lambda: r.tool_error({"message": "That slot is full.", "waitlist": SLOTS[0]}, TODAY),
    "waitlisted": lambda: r.waitlisted({"waitlist_id": "W-WL1234", "place_in_line": 2, "hold_minutes": 240,
                                        "tour": {**SLOTS[0], "child_name": "Mia"}}, TODAY),
    "ask_waitlist_tour": r.ask_waitlist_tour,
    "seat_declined": r.seat_declined,
    "seat_offer": lambda: outreach.offer_text({**SLOTS[0], "child_name": "Mia", "child_age": 5,
                                               "parent_name": "Priya Nair", "parent_phone": "+6591234567",
                                               "held_until_date": "2026-11-25", "held_until_time": "15:00",
                                               "school": "Tampines Campus"}),
    "rule_full": lambda: r.tool_error({"message": "The 09:00 tour on Thursday 26 November is fully booked.",
                                       "template": "The %(time)s tour on %(date)s is fully booked.",
                                       "params": {"time": "09:00", "date": "2026-11-26"},
                                       "alternatives": SLOTS[1:]}, TODAY),
    "rule_closed": lambda: r.availability({"status": "error", "message": "We don't run tours on Sundays.",
                                           "template": "We don't run tours on %(weekday)s.",
                                           "params": {"weekday": "2026-11-29"}, "alternatives": SLOTS}, {}, TODAY),
    "rule_which_child": lambda: r.corrected({"status": "error", "message": "This tour is for Leo and Mia: which "
                                             "child's age is that?", "params": {"names": "Leo and Mia"},
                                             "template": "This tour is for %(names)s: which child's age is that?"},
                                            TODAY),
    "rule_call_window": lambda: r.tool_error({"message": "We can schedule a call within the next 30 days.",
                                              "template": "We can schedule a call within the next %(days)s days.",
                                              "params": {"days": 30}}, TODAY),
    "seat_lapsed": lambda: outreach.lapsed_text({**SLOTS[0], "child_name": "Mia"}),
    "open_days": lambda: r.open_days([{**SLOTS[0], "title": "Open Morning", "duration_minutes": 120,
                                       "seats_left": 3}, {**SLOTS[2], "title": "", "duration_minutes": 90,
                                                          "seats_left": 0}], TODAY),
    "open_day": lambda: r.open_days([{**SLOTS[0], "title": "Open Morning", "duration_minutes": 120,
                                      "seats_left": 1}], TODAY),
    "no_open_days": r.no_open_days,
    "which_open_day": r.which_open_day,
    "read_back_open_day": lambda: r.read_back_booking({"read_back": {**DETAILS, "event": "Open Morning"}}, TODAY),
    "open_day_booked": lambda: r.booking_confirmed({"booking_id": "T-NEW111", "confirmation_details": {
        **DETAILS, "event": "Open Morning", "duration_minutes": 120}}, TODAY),
}
FAMILY = [{"name": "Leo", "age": 5}, {"name": "Mia"}]
CALLBACK = {"parent_name": "Priya Nair", "parent_phone": "+6591234567", "best_time_to_call": "window",
            "due_date": "2026-11-30", "window_start": "17:00", "window_end": "18:00"}
MOVED = {"date": "2026-11-28", "window_start": "17:00", "window_end": "18:00", "reasons": [
    {"code": "closed_weekday", "template": "The school is closed on %(weekday)s.", "params": {"weekday": "2026-11-28"}},
    {"code": "outside_calling_hours", "template": "We make calls between %(opens)s and %(closes)s.",
     "params": {"opens": "09:00", "closes": "18:00"}},
    {"code": "now_due", "template": "The call is now due on %(date)s between %(start)s and %(end)s.",
     "params": {"date": "2026-11-30", "start": "17:00", "end": "18:00"}}]}
LANGUAGES = ["zh-hans", "ms", "ta"]
# Latin words a Chinese or Tamil reply may carry: names, places and e-mails from the data, and the tool's own
# messages (tools answer in English; replies quote them).
DATA_WORDS = set(re.findall(r"[A-Za-z]{3,}", " ".join([
    str(DETAILS), str(TOURS), "T-NEW111 T-NEW222 C-CB1234 Priya Tampines Campus School Road Ethan Jon Leo fees",
    "W-WL1234 Open Morning",
    "That day is full. That slot is full. That is not your booking. We are closed then. too short no @",
    "Fees are listed online. is there a bus?", "Mia and"])))


def _render(name: str, language: str) -> str:
    with translation.override(language):
        return REPLIES[name]()


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", sorted(REPLIES))
def test_a_translated_reply_is_read_back_as_its_english(name, language):
    english, translated = _render(name, "en"), _render(name, language)
    if language in ("zh-hans", "ta"):  # no English left in a script that is not Latin
        assert set(re.findall(r"[A-Za-z]{3,}", translated)) <= DATA_WORDS, translated
    else:
        assert translated != english, translated
    assert asked_in(translated) == asked_in(english), (translated, english)
    assert options_in(translated, TODAY) == options_in(english, TODAY), translated
    assert endings(translated) == endings(english), translated
    assert bool(read_back_in(translated)) == bool(read_back_in(english)), translated


def test_the_english_reading_is_what_the_policy_relies_on():
    """The markers see what they must in English, so the comparison above compares something."""
    assert {"parent_name", "parent_phone"} <= asked_in(_render("ask_parent", "en"))
    assert "read_back" in asked_in(_render("read_back", "en"))
    assert [o["booking_id"] for o in options_in(_render("which_cancel", "en"), TODAY)] == ["T-ABC123", "T-XYZ789"]
    assert options_in(_render("slots", "en"), TODAY)[2] == {"date": "2027-01-05", "time": "11:00", "booking_id": None}
    assert [(e.reference, e.cancelled) for e in endings(_render("cancelled", "en"))] == [("T-ABC123", True)]
    assert [e.reference for e in endings(_render("rescheduled", "en"))] == ["T-NEW222"]
    assert "family_again" in asked_in(_render("family_again", "en"))
    assert {"child_name", "child_age"} <= asked_in(_render("ask_family_names", "en"))


@pytest.mark.parametrize("language", ["en", *LANGUAGES])
def test_the_children_whose_age_was_asked_are_read_back_in_every_language(language):
    with translation.override(language):
        one = r.ask_family([{"name": "Leo"}, {"name": "Mia", "age": 5}], 2, ["child_age"])
        both = r.ask_family([{"name": "Leo"}, {"name": "Mia"}], 2, ["child_age"])
    assert asked_ages_of(one) == ("Leo",), one
    assert asked_ages_of(both) == ("Leo", "Mia"), both


def test_unconfirmed_repeats_the_read_back_in_the_language():
    with translation.override("ms"):
        read_back = r.read_back_booking({"read_back": DETAILS}, TODAY)
        again = r.unconfirmed(read_back_in(f"Terima kasih. {read_back}"))
    assert again.startswith("Sebelum anda pergi") and again.endswith(read_back)
