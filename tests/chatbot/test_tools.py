"""The tools' answers to what parents ask, through the same entry point the loop uses."""

import datetime as dt

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from bookings import services as bookings
from bookings.intake import part_of_day
from bookings.models import TourBooking, TourSlot
from bookings.services import local_now
from chatbot.agent import tools
from chatbot.models import Message, ReasoningStep
from chatbot.services import receive
from tests.chatbot import scripted_model
from tests.chatbot.tool_calls import call
from tests.factories import ContactFactory, MessageFactory

pytestmark = [pytest.mark.django_db(transaction=True)]


def parent_says(ctx, text):
    """A later message from the parent, taken into the current turn (as the loop does with the turn's messages)."""
    message = MessageFactory(conversation=ctx.conversation, role=Message.Role.USER, text=text)
    ctx.turn_message_ids.add(message.pk)
    return message


def test_a_day_beyond_the_window_says_why_it_has_no_tours(ctx, school):
    far = local_now(school).date() + dt.timedelta(days=school.max_advance_days + 10)
    far += dt.timedelta(days=(7 - far.weekday()) % 7)  # a Monday: open, only too far ahead
    result = call(ctx, "check_availability", date_range_start=far.isoformat(), date_range_end=far.isoformat())
    assert result["status"] == "no_match"
    assert "30 days ahead" in result["message"]
    assert result["alternatives"]


def test_a_closed_day_is_refused_before_the_other_details_are_asked_for(ctx, next_weekday, school):
    sunday = next_weekday(school, 6)
    result = call(ctx, "book_tour", child_name="Mia", preferred_date=sunday.isoformat())
    assert result["status"] == "error" and result["field"] == "preferred_date"
    assert "Sundays" in result["message"]
    assert "preferred_date" not in ctx.active.collected and ctx.active.collected["children"] == [{"name": "Mia"}]


def test_a_good_day_still_asks_for_what_is_missing(ctx, next_weekday, school):
    tuesday = next_weekday(school, 1)
    result = call(ctx, "book_tour", child_name="Mia", preferred_date=tuesday.isoformat())
    assert result["status"] == "missing_fields"
    assert set(result["missing"]) == {"parent_name", "parent_phone", "child_age", "preferred_time"}


def _earlier_booking(school, contact, day):
    """A tour booked in an earlier chat: nothing of it is in this session's active context."""
    return bookings.book_tour(school=school, contact=contact, parent_name="Jon Tan", parent_phone="+6591234567",
                              child_name="Mia", child_age=5, local_date=day, local_time=dt.time(9))


def test_a_correction_by_reference_fixes_a_tour_booked_in_an_earlier_chat(ctx, next_weekday, school, contact):
    booking = _earlier_booking(school, contact, next_weekday(school, 1))
    result = call(ctx, "update_context", field_to_update="child_name", new_value="Miah",
                  booking_id=booking.reference.lower())
    booking.refresh_from_db()
    assert booking.child_name == "Miah"
    assert result["booking_updated"] == booking.reference and result["old_value"] == "Mia"
    assert "child_name" not in ctx.active.collected  # not a detail of a booking being collected


def test_a_booked_tours_date_is_not_changed_by_update_context_and_the_result_says_so(ctx, next_weekday, school,
                                                                                       contact):
    tuesday, friday = next_weekday(school, 1), next_weekday(school, 4)
    booking = _earlier_booking(school, contact, tuesday)
    for by_reference in (booking.reference, None):  # named, or the tour booked in this chat
        ctx.active.last_booking_id = booking.reference
        result = call(ctx, "update_context", field_to_update="preferred_date", new_value=friday.isoformat(),
                      booking_id=by_reference)
        booking.refresh_from_db()
        assert booking.local_start.date() == tuesday
        assert result["status"] == "not_changed" and result["use"] == "manage_tour_booking"
        assert result["booking_id"] == booking.reference and "Nothing was changed" in result["reason"]
        assert "preferred_date" not in ctx.active.collected


def test_update_context_says_where_a_value_went_and_nothing_when_it_was_so_already(ctx, next_weekday, school,
                                                                                  contact):
    result = call(ctx, "update_context", field_to_update="child_name", new_value="Mia")
    assert (result["status"], result["saved_to"]) == ("updated", ["collected"])
    assert call(ctx, "update_context", field_to_update="child_name", new_value="Mia")["status"] == "not_changed"

    booking = _earlier_booking(school, contact, next_weekday(school, 1))
    result = call(ctx, "update_context", field_to_update="parent_phone", new_value="+6591234567",
                  booking_id=booking.reference)
    assert result["status"] == "not_changed", "the tour has that number already"
    result = call(ctx, "update_context", field_to_update="parent_phone", new_value="+6598765432",
                  booking_id=booking.reference)
    booking.refresh_from_db()
    assert booking.parent_phone == "+6598765432"
    assert result["saved_to"] == [f"booking {booking.reference}"] and result["booking_updated"] == booking.reference

    result = call(ctx, "update_context", field_to_update="preferred_name", new_value="Jonny")
    contact.refresh_from_db()
    assert (result["status"], result["saved_to"], contact.preferred_name) == ("updated", ["contact"], "Jonny")
    assert call(ctx, "update_context", field_to_update="preferred_name", new_value="Jonny")["status"] == "not_changed"


def test_book_tour_asks_first_when_the_child_already_has_a_tour_coming_up(ctx, next_weekday, school, contact):
    booking = _earlier_booking(school, contact, next_weekday(school, 1))
    thursday = next_weekday(school, 3).isoformat()
    details = {"parent_name": "Jon Tan", "parent_phone": "+6591234567", "child_age": 5,
               "preferred_date": thursday, "preferred_time": "11:00"}
    result = call(ctx, "book_tour", child_name="mia", **details)
    assert result["status"] == "has_upcoming_tour" and "Nothing is booked yet" in result["message"]
    assert [b["booking_id"] for b in result["your_bookings"]] == [booking.reference]
    assert result["requested"]["date"] == thursday and ctx.active.upcoming_tour_asked == booking.reference
    assert TourBooking.objects.filter(contact=contact).count() == 1 and not ctx.active.read_back

    result = call(ctx, "book_tour", another_tour=True)  # "both, please": the read-back, from what was collected
    assert result["status"] == "confirm" and result["read_back"]["child_name"] == "mia"
    assert ctx.active.another_tour and not ctx.active.upcoming_tour_asked


def test_a_siblings_tour_is_read_back_without_the_question(ctx, next_weekday, school, contact):
    _earlier_booking(school, contact, next_weekday(school, 1))
    result = call(ctx, "book_tour", parent_name="Jon Tan", parent_phone="+6591234567", child_name="Sam",
                  child_age=7, preferred_date=next_weekday(school, 3).isoformat(), preferred_time="11:00")
    assert result["status"] == "confirm" and result["read_back"]["child_name"] == "Sam"


def test_a_correction_by_reference_cannot_touch_someone_elses_tour(ctx, next_weekday, school):
    theirs = _earlier_booking(school, ContactFactory(school=school), next_weekday(school, 1))
    result = call(ctx, "update_context", field_to_update="child_name", new_value="Miah",
                  booking_id=theirs.reference)
    theirs.refresh_from_db()
    assert result["status"] == "error" and theirs.reference in result["message"]
    assert theirs.child_name == "Mia"


def test_moving_a_tour_uses_up_the_slots_offered(ctx, next_weekday, school, contact):
    booking = _earlier_booking(school, contact, next_weekday(school, 1))
    friday = next_weekday(school, 4)
    assert call(ctx, "check_availability", date_range_start=friday.isoformat())["status"] == "success"
    assert ctx.active.slots_shown
    move = {"booking_id": booking.reference, "action": "reschedule", "new_date": friday.isoformat(),
            "new_time": "11:00"}
    result = call(ctx, "manage_tour_booking", **move)
    assert result["status"] == "confirm"
    assert (result["to"]["date"], result["to"]["time"], result["from"]["child_name"]) == (friday.isoformat(),
                                                                                          "11:00", "Mia")
    booking.refresh_from_db()
    assert booking.status == "scheduled" and not booking.moves.exists()
    parent_says(ctx, "yes please")
    result = call(ctx, "manage_tour_booking", **move, confirmed=True)
    assert result["status"] == "success" and ctx.active.slots_shown == []
    assert result["booking_id"] == booking.reference and booking.moves.count() == 1


def _full_booking(day, time="09:00"):
    return {"parent_name": "Jon Tan", "parent_phone": "+65 9123 4567", "child_name": "Mia", "child_age": 5,
            "preferred_date": day.isoformat(), "preferred_time": time}


def _booked(contact):
    return TourBooking.objects.filter(contact=contact)


def test_book_tour_reads_back_and_books_only_after_a_later_yes(ctx, next_weekday, school, contact):
    tuesday = next_weekday(school, 1)
    first = call(ctx, "book_tour", **_full_booking(tuesday))
    assert first["status"] == "confirm" and first["action"] == "book"
    assert (first["read_back"]["date"], first["read_back"]["time"], first["read_back"]["child_name"]) == (
        tuesday.isoformat(), "09:00", "Mia")
    again = call(ctx, "book_tour", **_full_booking(tuesday), confirmed=True)  # the same turn: no skipping it
    assert again["status"] == "confirm"
    assert not _booked(contact).exists()
    parent_says(ctx, "no, wait")
    assert call(ctx, "book_tour", **_full_booking(tuesday), confirmed=False)["status"] == "confirm"
    assert not _booked(contact).exists()
    parent_says(ctx, "yes please")
    done = call(ctx, "book_tour", **_full_booking(tuesday), confirmed=True)
    assert done["status"] == "success"
    booking = _booked(contact).get()
    assert booking.reference == done["booking_id"]
    assert (booking.local_start.date(), booking.local_start.time(), booking.child_name) == (tuesday, dt.time(9), "Mia")
    assert ctx.active.read_back == {}


def test_a_yes_that_adds_an_email_confirms_the_booking_and_records_it(ctx, next_weekday, school, contact):
    tuesday = next_weekday(school, 1)
    assert call(ctx, "book_tour", **_full_booking(tuesday))["status"] == "confirm"
    parent_says(ctx, "yes pls. email is lina.tan@example.com if u need it")
    done = call(ctx, "book_tour", **_full_booking(tuesday), parent_email="lina.tan@example.com", confirmed=True)
    assert done["status"] == "success", done
    assert _booked(contact).get().parent_email == "lina.tan@example.com"


def test_a_changed_time_after_the_read_back_is_read_back_again(ctx, next_weekday, school, contact):
    tuesday = next_weekday(school, 1)
    assert call(ctx, "book_tour", **_full_booking(tuesday, "09:00"))["status"] == "confirm"
    parent_says(ctx, "yes please")  # a yes to 09:00...
    changed = call(ctx, "book_tour", **_full_booking(tuesday, "11:00"), confirmed=True)  # ...is no yes to 11:00
    assert changed["status"] == "confirm" and changed["read_back"]["time"] == "11:00"
    assert not _booked(contact).exists()
    parent_says(ctx, "that's right")
    assert call(ctx, "book_tour", **_full_booking(tuesday, "11:00"), confirmed=True)["status"] == "success"
    assert _booked(contact).get().local_start.time() == dt.time(11)


def test_cancelling_needs_the_parents_yes(ctx, next_weekday, school, contact):
    booking = _earlier_booking(school, contact, next_weekday(school, 1))
    cancel = {"booking_id": booking.reference, "action": "cancel", "cancellation_reason": "we moved"}
    first = call(ctx, "manage_tour_booking", **cancel)
    assert first["status"] == "confirm" and first["action"] == "cancel"
    assert (first["tour"]["date"], first["tour"]["time"], first["tour"]["child_name"]) == (
        booking.local_start.date().isoformat(), "09:00", "Mia")
    assert call(ctx, "manage_tour_booking", **cancel)["status"] == "confirm"  # same turn
    booking.refresh_from_db()
    assert booking.status == "scheduled" and TourSlot.objects.get(pk=booking.slot_id).seats_taken == 1
    parent_says(ctx, "ok go ahead. pls make sure the wed one is cancelled ya")  # a yes in everyday words
    assert call(ctx, "manage_tour_booking", **cancel, confirmed=True)["status"] == "success"
    booking.refresh_from_db()
    assert booking.status == "cancelled" and booking.cancellation_reason == "we moved"
    assert TourSlot.objects.get(pk=booking.slot_id).seats_taken == 0


def test_rescheduling_needs_the_parents_yes(ctx, next_weekday, school, contact):
    booking = _earlier_booking(school, contact, next_weekday(school, 1))
    thursday = next_weekday(school, 3)
    move = {"booking_id": booking.reference, "action": "reschedule", "new_date": thursday.isoformat(),
            "new_time": "14:00"}
    first = call(ctx, "manage_tour_booking", **move)
    assert first["status"] == "confirm" and first["action"] == "reschedule"
    assert (first["from"]["time"], first["to"]["date"], first["to"]["time"]) == ("09:00", thursday.isoformat(), "14:00")
    assert call(ctx, "manage_tour_booking", **move)["status"] == "confirm"  # same turn
    booking.refresh_from_db()
    assert booking.status == "scheduled" and not booking.moves.exists()
    parent_says(ctx, "ok go ahead")
    result = call(ctx, "manage_tour_booking", **move, confirmed=True)
    assert result["status"] == "success" and result["booking_id"] == booking.reference
    assert "previous_booking_id" not in result and booking.reference in result["message"]
    booking.refresh_from_db()
    assert booking.status == "scheduled" and booking.moves.count() == 1 and TourBooking.objects.count() == 1
    assert (booking.local_start.date(), booking.local_start.time()) == (thursday, dt.time(14))


def test_a_move_to_the_tours_own_slot_changes_nothing_and_says_so(ctx, next_weekday, school, contact):
    """"is that still on?", "see you wed" read as a move to the same slot: no read-back of a move from 09:00 to
    09:00, nothing to confirm, nothing moved."""
    booking = _earlier_booking(school, contact, next_weekday(school, 1))
    same = {"booking_id": booking.reference, "action": "reschedule",
            "new_date": booking.local_start.date().isoformat(), "new_time": "9am"}
    result = call(ctx, "manage_tour_booking", **same)
    assert result["status"] == "no_change" and "nothing was changed" in result["message"]
    assert result["confirmation_details"]["time"] == "09:00"
    parent_says(ctx, "ok")
    assert call(ctx, "manage_tour_booking", **same, confirmed=True)["status"] == "no_change"
    booking.refresh_from_db()
    assert not booking.moves.exists()


def test_availability_keeps_the_part_of_day_asked_for_earlier(ctx, next_weekday, school):
    tuesday = next_weekday(school, 1)
    assert call(ctx, "check_availability", preferred_times=["afternoon"])["status"] == "success"
    result = call(ctx, "check_availability", date_range_start=tuesday.isoformat())
    assert result["status"] == "success"
    slots = result["available_slots"]
    assert slots and {s["date"] for s in slots} == {tuesday.isoformat()}
    assert {part_of_day(s["time"]) for s in slots} == {"afternoon"}


@pytest.fixture
def scripted():
    model = scripted_model.install()
    with override_settings(LLM_MODEL="scripted/test", CHAT_BURST_WINDOW_SECONDS=0):
        yield model


def test_a_hosted_model_calling_book_tour_twice_in_one_turn_cannot_book(scripted, next_weekday, school, contact):
    tuesday = next_weekday(school, 1)
    details = _full_booking(tuesday)
    scripted.script = [{"tool_calls": [("book_tour", details)]}, {"tool_calls": [("book_tour", details)]},
                       {"content": "Booked!"}]
    text = f"Book Mia (5) on {tuesday.isoformat()} at 9am, I'm Jon Tan +65 9123 4567. Yes, go ahead"
    async_to_sync(receive)(school=school, contact=contact, channel="web", text=text)
    observed = ReasoningStep.objects.filter(message__conversation__contact=contact, kind="observe",
                                            tool_name="book_tour").order_by("position")
    results = [step.tool_result for step in observed]
    assert [r["status"] for r in results] == ["confirm", "confirm"]
    assert not _booked(contact).exists()


# --- families ------------------------------------------------------------------------------------------------------


def test_a_family_is_booked_with_every_child_after_the_read_back(ctx, next_weekday, school, contact):
    """A hosted model may send the whole list, then one child's age on its own, as the parent gives them."""
    tuesday = next_weekday(school, 1)
    first = call(ctx, "book_tour", parent_name="Ana Lim", parent_phone="81234567",
                 children=[{"name": "Leo", "age": "5"}, {"name": "Mia", "year_group": "Nursery"}])
    assert first["status"] == "missing_fields" and "child_age" in first["missing"]
    assert first["collected"]["children"] == [{"name": "Leo", "age": 5}, {"name": "Mia", "year_group": "Nursery"}]
    call(ctx, "book_tour", child_name="Mia", child_age=3)
    details = {"preferred_date": tuesday.isoformat(), "preferred_time": "11:00"}
    read_back = call(ctx, "book_tour", **details)
    assert read_back["status"] == "confirm" and read_back["read_back"]["child_name"] == "Leo and Mia"
    assert [c["name"] for c in read_back["read_back"]["children"]] == ["Leo", "Mia"]
    assert not TourBooking.objects.exists()
    parent_says(ctx, "yes please")
    done = call(ctx, "book_tour", **details, confirmed=True)
    assert done["status"] == "success", done
    booking = TourBooking.objects.get(reference=done["booking_id"])
    assert [(c.name, c.age, c.year_group) for c in booking.children.all()] == [("Leo", 5, ""), ("Mia", 3, "Nursery")]
    assert done["confirmation_details"]["children"] == [{"name": "Leo", "age": 5},
                                                        {"name": "Mia", "age": 3, "year_group": "Nursery"}]
    assert TourSlot.objects.get().seats_taken == 1  # one family, one seat


def test_a_school_cap_on_people_is_said_to_the_parent(ctx, next_weekday, school):
    school.max_people_per_booking = 3
    school.save()
    children = [{"name": n, "age": 4} for n in ("Ava", "Ben", "Cal")]
    result = call(ctx, "book_tour", parent_name="Ana Lim", parent_phone="81234567", children=children,
                  preferred_date=next_weekday(school, 2).isoformat(), preferred_time="09:00")
    assert result["status"] == "error" and result["code"] == "too_many_people"
    assert "up to 3 people" in result["message"]


def test_an_unreadable_date_of_birth_is_refused_with_a_sentence(ctx):
    result = call(ctx, "book_tour", children=[{"name": "Leo", "date_of_birth": "last spring"}])
    assert result["status"] == "error" and "last spring" in result["message"]


def test_the_prompt_shows_a_returning_familys_children(ctx, next_weekday, school, contact):
    from chatbot.agent.prompt import contact_facts

    bookings.book_tour(school=school, contact=contact, parent_name="Jon", parent_phone="+6591234567",
                       children=[bookings.ChildDetails("Leo", 5), bookings.ChildDetails("Mia")],
                       local_date=next_weekday(school, 1), local_time=dt.time(9))
    facts = contact_facts(contact)
    assert facts["children"] == ["Leo (5)", "Mia"]
    assert facts["upcoming_tours"][0].endswith("Leo and Mia")


def test_every_model_call_of_every_conversation_is_offered_every_tool_in_one_order(school, contact, next_weekday):
    model = scripted_model.install()
    model.script = [{"tool_calls": [("check_availability", {})]}, {"content": "Here are the slots."},
                    {"content": "Grandma is welcome too."}]
    with override_settings(LLM_MODEL="scripted/test"):
        async_to_sync(receive)(school=school, contact=contact, channel="web", text="Hi, any tours next week?")
        bookings.book_tour(school=school, contact=contact, parent_name="Mei Tan", parent_phone="+6591234567",
                           child_name="Ana", child_age=4, local_date=next_weekday(school, 3), local_time=dt.time(9))
        async_to_sync(receive)(school=school, contact=contact, channel="web", text="can we also bring grandma?")
    assert len(model.tools) == 3
    assert all(offered == model.tools[0] for offered in model.tools)  # a new parent, a tool round, a booked one
    assert model.tools[0] == list(tools.TOOLS)


def test_a_tool_that_cannot_apply_says_why(ctx):
    result = call(ctx, "manage_tour_booking", booking_id="", action="reschedule")
    assert result["status"] == "error" and result["code"] == "no_upcoming_tours"
    assert result["your_bookings"] == [] and result["suggest"] == "book_tour"
    result = call(ctx, "manage_tour_booking", booking_id="T-7KQ3XM", action="cancel")
    assert result["status"] == "error" and result["suggest"] == "book_tour" and "T-7KQ3XM" in result["message"]
    assert call(ctx, "check_unread_messages") == {"has_unread": False, "messages": []}
    assert call(ctx, "answer_seat_offer", answer="accept")["status"] == "error"


def test_a_correction_after_the_chats_tour_was_cancelled_goes_only_into_the_details(ctx, next_weekday, school,
                                                                                   contact):
    booking = _earlier_booking(school, contact, next_weekday(school, 1))
    bookings.cancel_tour(booking=booking, reason="")
    ctx.active.last_booking_id = booking.reference
    result = call(ctx, "update_context", field_to_update="child_name", new_value="Miah")
    booking.refresh_from_db()
    assert (result["status"], result["saved_to"], booking.child_name) == ("updated", ["collected"], "Mia")
    result = call(ctx, "update_context", field_to_update="child_name", new_value="Miah",
                  booking_id=booking.reference)
    assert result["status"] == "error", "a cancelled tour named by reference is refused, not said to be changed"


def test_a_day_and_month_just_gone_is_called_past_not_too_far_ahead(ctx, school):
    gone = local_now(school).date() - dt.timedelta(days=5)
    said = f"{gone.day} {gone:%B}"  # "22 November": the day just gone, not next year's
    result = call(ctx, "check_availability", date_range_start=said, date_range_end=said)
    assert result["status"] == "no_match"
    assert "already passed" in result["message"] and "days ahead" not in result["message"]
    assert result["alternatives"]
