"""Drill 2: the turn's PostgreSQL connection is terminated (pg_terminate_backend) at an exact point.

A second connection holds a lock the turn is about to need; the backend that
queues on it is the app's, and it is terminated mid-statement. Nothing is
mocked between the agent and the database.
"""

import datetime as dt

import pytest
from channels.db import database_sync_to_async
from django.db import OperationalError

from bookings import services as bookings
from bookings.models import TourBooking, TourSlot
from chatbot.models import Message, ReasoningStep
from chatbot.services import SORRY_TEXT, receive
from tests.factories import ContactFactory, SchoolFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ANSWER = "Here is your answer."


@pytest.fixture
def world(next_weekday):
    school = SchoolFactory(time_zone="Asia/Singapore")
    return school, ContactFactory(school=school), next_weekday(school, 1)


def _booking_call(day: dt.date, **more) -> tuple[str, dict]:
    """The model's book_tour call (`confirmed=True` once the parent agreed to its read-back)."""
    return ("book_tour", {"parent_name": "Mei Lin Tan", "parent_phone": "+6591234567", "child_name": "Tom",
                          "child_age": 5, "preferred_date": day.isoformat(), "preferred_time": "09:00", **more})


READ_BACK = "Shall I book Tuesday 09:00 for Tom?"
# A tool that writes: its round's steps are stored in its own hop, the turn's first write (a tool that only reads
# leaves its steps for the answer's write).
NOTE_THE_CHILD = ("update_context", {"field_to_update": "child_name", "new_value": "Tom"})


async def _read_back(school, contact, day, drill_model) -> None:
    """The first turn of a booking: the tool reads it back and books nothing; the parent's "yes please" follows."""
    drill_model.script = [{"tool_calls": [_booking_call(day)]}, {"content": READ_BACK}]
    await receive(school=school, contact=contact, channel="web", text="Book Tuesday 9am for Tom, I'm Mei Lin")
    assert (await database_sync_to_async(_outcome)(contact))["bookings"] == 0


def _outcome(contact) -> dict:
    parent = list(Message.objects.filter(conversation__contact=contact, role="user"))
    replies = list(Message.objects.filter(conversation__contact=contact, role="assistant").exclude(text=""))
    return {"unanswered": [m.text for m in parent if m.processed_at is None],
            "replies": [m.text for m in replies],
            "bookings": TourBooking.objects.filter(contact=contact).count(),
            "seats": sum(TourSlot.objects.values_list("seats_taken", flat=True))}


async def test_connection_dropped_before_anything_is_stored(world, drill_model, backend_killer):
    """The first reasoning step cannot be written: the turn fails, gives its message back, and is run again."""
    school, contact, _ = world
    drill_model.script = [
        lambda: backend_killer.arm("LOCK TABLE chatbot_reasoningstep IN SHARE MODE"),  # the THINK step waits...
        {"content": "Let me note that.", "tool_calls": [NOTE_THE_CHILD]},
        {"content": ANSWER},  # ...the retried turn
    ]
    await receive(school=school, contact=contact, channel="web", text="Do you serve lunch?")
    backend_killer.join()

    assert len(backend_killer.killed) == 1
    outcome = await database_sync_to_async(_outcome)(contact)
    assert outcome["unanswered"] == [] and outcome["replies"] == [ANSWER], "answered once, by the retried turn"


async def test_a_turn_that_keeps_failing_gives_up_honestly_and_loses_nothing(world, drill_model, backend_killer):
    """Dropped on both attempts: no endless retry, the parent is told, the message waits for the next turn."""
    school, contact, _ = world
    trap = lambda: backend_killer.arm("LOCK TABLE chatbot_reasoningstep IN SHARE MODE")  # noqa: E731
    drill_model.script = [trap, {"content": "Let me note that.", "tool_calls": [NOTE_THE_CHILD]},
                          trap, {"content": "Let me note that.", "tool_calls": [NOTE_THE_CHILD]}]
    with pytest.raises(OperationalError):
        await receive(school=school, contact=contact, channel="web", text="Do you serve lunch?")
    backend_killer.join()

    assert len(backend_killer.killed) == 2 and len(drill_model.calls) == 2, "two attempts, no more"
    outcome = await database_sync_to_async(_outcome)(contact)
    assert outcome["unanswered"] == ["Do you serve lunch?"], "given back, not lost"
    assert outcome["replies"] == [SORRY_TEXT], "and the parent knows"

    drill_model.script = [{"content": ANSWER}]
    await receive(school=school, contact=contact, channel="web", text="Hello?")
    outcome = await database_sync_to_async(_outcome)(contact)
    assert outcome["unanswered"] == [] and outcome["replies"] == [SORRY_TEXT, ANSWER]
    assert [m["content"] for m in drill_model.calls[-1] if m["role"] == "user"][-2:] == [
        "Do you serve lunch?", "Hello?"], "the next turn answers the waiting message too"


async def test_connection_dropped_inside_the_booking_transaction(world, drill_model, backend_killer):
    """The booking's seat UPDATE is killed: rolled back whole, the tool says so, the model books again: one booking."""
    school, contact, day = world
    slot = await database_sync_to_async(lambda: TourSlot.objects.create(
        school=school, starts_at=bookings.check_slot(school, day, dt.time(9)), capacity=5))()
    await _read_back(school, contact, day, drill_model)
    drill_model.script = [
        lambda: backend_killer.arm("SELECT 1 FROM bookings_tourslot WHERE id = %s FOR NO KEY UPDATE", (slot.pk,)),
        {"tool_calls": [_booking_call(day, confirmed=True)]},
        {"tool_calls": [_booking_call(day, confirmed=True)]},  # the tool answered "something went wrong": again
        {"content": "Booked: Tuesday 09:00."},
    ]
    await receive(school=school, contact=contact, channel="web", text="yes please")
    backend_killer.join()

    assert len(backend_killer.killed) == 1
    outcome = await database_sync_to_async(_outcome)(contact)
    assert outcome == {"unanswered": [], "replies": [READ_BACK, "Booked: Tuesday 09:00."], "bookings": 1, "seats": 1}
    results = await database_sync_to_async(lambda: list(ReasoningStep.objects.filter(
        kind="observe", tool_name="book_tour").order_by("position").values_list("tool_result__status", flat=True)))()
    assert results[-2:] == ["error", "success"], "the trace shows the failed attempt honestly"


async def test_connection_dropped_while_the_reply_is_stored(world, drill_model, backend_killer, settings,
                                                            truthful_replies):
    """The reply and the conversation's totals are one write: killed there, neither is kept, and the rerun turn
    answers once. Its booking call finds the tour already booked, so there is still one booking and one seat."""
    school, contact, day = world
    settings.LLM_MAX_CYCLES = 2  # the answer comes on the last cycle, where no late messages are read
    conversation_lock = "SELECT 1 FROM chatbot_conversation WHERE contact_id = %s FOR NO KEY UPDATE"
    await _read_back(school, contact, day, drill_model)
    calls_before = len(drill_model.calls)
    drill_model.script = [
        {"tool_calls": [_booking_call(day, confirmed=True)]},
        lambda: backend_killer.arm(conversation_lock, (contact.pk,)),
        {"content": "Booked: Tuesday 09:00."},  # stored with the reply that is rolled back
        {"tool_calls": [_booking_call(day, confirmed=True)]},  # the rerun turn
        {"content": "You're booked for Tuesday 09:00."},
    ]
    await receive(school=school, contact=contact, channel="web", text="yes please")
    backend_killer.join()

    assert len(backend_killer.killed) == 1
    outcome = await database_sync_to_async(_outcome)(contact)
    assert outcome == {"unanswered": [], "replies": [READ_BACK, "You're booked for Tuesday 09:00."], "bookings": 1,
                       "seats": 1}
    assert len(drill_model.calls) - calls_before == 4, "the turn was run a second time"
    # The rerun's "booked" is the first run's booking (its reply rolled back, its booking kept): true in the
    # database, but not made by the turn that says it, so the invariant notices it, and this drill takes it.
    assert [claim.kind for claim in truthful_replies.take()] == ["booked"]

    drill_model.script = [{"content": "You're welcome."}]
    await receive(school=school, contact=contact, channel="web", text="Thanks!")
    outcome = await database_sync_to_async(_outcome)(contact)
    assert outcome["unanswered"] == [] and outcome["replies"][-1] == "You're welcome.", "the next turn works"
