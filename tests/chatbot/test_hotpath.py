"""The turn's hand-written statements (chatbot.hotpath) agree with the models and the selectors they stand in for."""

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.utils import timezone

from bookings import selectors as booking_selectors
from bookings import waitlist
from bookings.models import TourBooking, WaitlistEntry
from chatbot import hotpath
from chatbot.agent import prompt
from chatbot.models import Channel, Conversation, Message, ReasoningStep
from crm import services as crm
from tests.factories import (
    ChildFactory,
    ContactFactory,
    ConversationFactory,
    MessageFactory,
    SchoolFactory,
    TourBookingFactory,
    TourSlotFactory,
    WaitlistEntryFactory,
)

pytestmark = pytest.mark.django_db


def _message(conversation, minutes_ago: float, **fields) -> Message:
    message = MessageFactory(conversation=conversation, **fields)
    Message.objects.filter(pk=message.pk).update(created_at=timezone.now() - dt.timedelta(minutes=minutes_ago))
    return message


def test_a_claim_takes_the_unanswered_messages_of_the_conversation_with_the_oldest_once():
    school = SchoolFactory()
    contact = ContactFactory(school=school)
    web = ConversationFactory(school=school, contact=contact, channel=Channel.WEB)
    whatsapp = ConversationFactory(school=school, contact=contact, channel=Channel.WHATSAPP)
    handed_off = ConversationFactory(school=school, contact=contact, channel=Channel.CHATWOOT,
                                     status=Conversation.Status.HANDED_OFF)
    second, first = _message(web, 2), _message(web, 5)
    other = _message(whatsapp, 3)
    _message(handed_off, 9)  # staff's: never the bot's
    _message(web, 8, processed_at=timezone.now())  # answered already
    _message(web, 7, role=Message.Role.ASSISTANT)
    now = timezone.now()

    batch = hotpath.claim_batch(contact.pk, now).messages

    assert [m.pk for m in batch] == [first.pk, second.pk]
    assert all(isinstance(m, Message) and m.conversation_id == web.pk and m.text for m in batch)
    assert set(Message.objects.filter(processed_at=now).values_list("pk", flat=True)) == {first.pk, second.pk}
    assert [m.pk for m in hotpath.claim_batch(contact.pk, timezone.now()).messages] == [other.pk]
    assert hotpath.claim_batch(contact.pk, timezone.now()).messages == []
    assert not hotpath.has_unanswered(contact.pk)


def _upcoming(contact):
    return TourBookingFactory(school=contact.school, contact=contact)


def _past(contact):
    slot = TourSlotFactory(school=contact.school, starts_at=timezone.now() - dt.timedelta(days=2))
    return TourBookingFactory(school=contact.school, contact=contact, slot=slot)


def _cancelled(contact):
    return TourBookingFactory(school=contact.school, contact=contact, status=TourBooking.Status.CANCELLED)


def _waiting(contact):
    return WaitlistEntryFactory(slot=TourSlotFactory(school=contact.school), contact=contact)


def _offer_for_a_past_tour(contact):
    slot = TourSlotFactory(school=contact.school, starts_at=timezone.now() - dt.timedelta(hours=1))
    return WaitlistEntryFactory(slot=slot, contact=contact, status=WaitlistEntry.Status.OFFERED,
                                hold_expires_at=timezone.now() + dt.timedelta(minutes=30))


def _declined(contact):
    return WaitlistEntryFactory(slot=TourSlotFactory(school=contact.school), contact=contact,
                                status=WaitlistEntry.Status.DECLINED)


def _child(contact):
    return ChildFactory(contact=contact)


@pytest.mark.parametrize("make", [None, _upcoming, _past, _cancelled, _waiting, _offer_for_a_past_tour, _declined,
                                  _child])
def test_the_fact_hints_say_what_the_selectors_find(make):
    school = SchoolFactory()
    contact = ContactFactory(school=school)
    if make:
        make(contact)
    _message(ConversationFactory(school=school, contact=contact), 1)

    claims = [hotpath.claim_batch_with_history(contact.pk, timezone.now())]  # PostgreSQL: its statement
    _message(ConversationFactory(school=school, contact=contact), 1)
    claims.append(hotpath.claim_batch(contact.pk, timezone.now()))  # the ORM's

    assert [len(claim.messages) for claim in claims] == [1, 1]
    assert [claim.hints for claim in claims] == [hotpath.FactHints(
        has_upcoming_tours=booking_selectors.upcoming_bookings(contact).exists(),
        has_children=crm.children_of(contact).exists(),
        has_waitlist_entries=waitlist.waiting_or_offered(contact).exists(),
    )] * 2


def test_a_stored_message_is_the_conversations_latest_activity():
    conversation = ConversationFactory()
    message = hotpath.store_message(Message(conversation=conversation, role=Message.Role.USER, text="hello",
                                            channel=conversation.channel, payload={"a": [1]}))
    stored = Message.objects.get(pk=message.pk)
    assert (stored.text, stored.payload, stored.created_at) == ("hello", {"a": [1]}, message.created_at)
    conversation.refresh_from_db()
    assert conversation.last_message_at == message.created_at


def test_the_earlier_messages_are_the_answered_ones_not_summarised_and_not_this_turns():
    conversation = ConversationFactory()
    summarised = _message(conversation, 9, processed_at=timezone.now())
    conversation.summary_until = Message.objects.get(pk=summarised.pk).created_at
    asked = _message(conversation, 6, processed_at=timezone.now())
    answer = _message(conversation, 5, role=Message.Role.ASSISTANT)
    _message(conversation, 4, role=Message.Role.ASSISTANT, text="")  # a reply still being written
    _message(conversation, 3, processed_at=timezone.now(), handled_by_staff=True)
    _message(conversation, 2)  # not answered yet
    this_turn = _message(conversation, 1, processed_at=timezone.now())

    earlier = hotpath.earlier_messages(conversation, {this_turn.pk})

    assert [m.pk for m in earlier] == [asked.pk, answer.pk]


def test_the_history_reads_only_what_a_prompt_uses(django_assert_num_queries):
    conversation = ConversationFactory()
    asked = _message(conversation, 3, text="Do you run tours on Saturdays?", processed_at=timezone.now())
    _message(conversation, 2, role=Message.Role.ASSISTANT, text="Only on weekdays, I'm afraid.")
    this_turn = _message(conversation, 1, processed_at=timezone.now())

    earlier = hotpath.earlier_messages(conversation, {this_turn.pk})
    with django_assert_num_queries(0):  # a deferred field read by the prompt would cost a query each
        chat = prompt.history(conversation, earlier)
    with django_assert_num_queries(1):  # past the budget, the oldest are folded into the summary (saved)
        folded = prompt.history(conversation, earlier * 400)

    assert chat == [{"role": "user", "content": asked.text},
                    {"role": "assistant", "content": "Only on weekdays, I'm afraid."}]
    assert len(folded) < 800 and "Parent: Do you run tours on Saturdays?" in conversation.summary
    assert earlier[0].created_at == Message.objects.get(pk=asked.pk).created_at


def _steps(reply: Message, cycle: int, count: int) -> list[ReasoningStep]:
    return [ReasoningStep(message=reply, cycle=cycle, position=10 * cycle + i, kind=ReasoningStep.Kind.OBSERVE,
                          tool_name="t", tool_result={"status": "ok", "n": i}, created_at=timezone.now())
            for i in range(count)]


def _answer(reply: Message) -> None:
    reply.text, reply.prompt_tokens, reply.completion_tokens = "Here you are.", 12, 8
    reply.cost, reply.language, reply.payload = Decimal("0.5"), "en", {"blocks": []}


def test_a_turn_without_tools_writes_its_reply_steps_and_totals_at_the_end():
    conversation = ConversationFactory(total_tokens=5)
    asked = _message(conversation, 1, processed_at=timezone.now())
    reply = Message(conversation=conversation, role=Message.Role.ASSISTANT, channel=conversation.channel,
                    reply_to=asked)
    _answer(reply)

    hotpath.finish_turn(reply, _steps(reply, 1, 2), conversation.pk, timezone.now(), Conversation.Outcome.BOOKED)

    stored = Message.objects.get(pk=reply.pk)
    assert (stored.text, stored.prompt_tokens, stored.completion_tokens, stored.cost, stored.reply_to_id,
            stored.payload) == ("Here you are.", 12, 8, Decimal("0.5"), asked.pk, {"blocks": []})
    assert [s.tool_result for s in ReasoningStep.objects.filter(message=reply).order_by("position")] == [
        {"status": "ok", "n": i} for i in range(2)]
    conversation.refresh_from_db()
    assert (conversation.total_tokens, conversation.total_cost, conversation.outcome) == (
        25, Decimal("0.5"), Conversation.Outcome.BOOKED)


def test_a_tool_cycle_stores_the_reply_row_with_its_steps_and_the_end_fills_it_in():
    conversation = ConversationFactory()
    reply = Message(conversation=conversation, role=Message.Role.ASSISTANT, channel=conversation.channel)

    hotpath.store_steps(reply, _steps(reply, 1, 3))  # the first cycle: the reply's row comes first
    first_id = reply.pk
    hotpath.store_steps(reply, _steps(reply, 2, 1))  # a later cycle: the same row
    assert Message.objects.get(pk=first_id).text == ""  # stored, not answered yet
    _answer(reply)
    hotpath.finish_turn(reply, _steps(reply, 3, 1), conversation.pk, timezone.now())

    assert reply.pk == first_id
    assert Message.objects.filter(conversation=conversation, role=Message.Role.ASSISTANT).count() == 1
    assert Message.objects.get(pk=reply.pk).text == "Here you are."
    assert list(ReasoningStep.objects.filter(message=reply).order_by("position").values_list("cycle", flat=True)) == [
        1, 1, 1, 2, 3]
    conversation.refresh_from_db()
    assert (conversation.total_tokens, conversation.outcome) == (20, "")


def test_a_tool_cycle_learns_with_its_steps_whether_a_message_arrived_meanwhile():
    conversation = ConversationFactory()
    reply = Message(conversation=conversation, role=Message.Role.ASSISTANT, channel=conversation.channel)

    assert hotpath.store_steps(reply, _steps(reply, 1, 1), unanswered_of=conversation.contact_id) is False
    _message(conversation, 0, text="one more question")  # arrived during the cycle: the next prompt says UNREAD
    assert hotpath.store_steps(reply, _steps(reply, 2, 1), unanswered_of=conversation.contact_id) is True
    assert ReasoningStep.objects.filter(message=reply).count() == 2  # stored either way


@pytest.mark.parametrize("stored_by_a_tool_cycle", [False, True])
def test_the_answer_is_not_stored_while_a_message_of_the_contact_waits(stored_by_a_tool_cycle):
    """`unless_unanswered`: a message that arrived while the model answered stops the turn's last write (the turn
    takes it in and answers everything together); nothing of the answer is written until none waits."""
    conversation = ConversationFactory(total_tokens=5)
    asked = _message(conversation, 2, processed_at=timezone.now())
    reply = Message(conversation=conversation, role=Message.Role.ASSISTANT, channel=conversation.channel,
                    reply_to=asked)
    if stored_by_a_tool_cycle:
        hotpath.store_steps(reply, _steps(reply, 1, 1))
    waiting = _message(conversation, 1, text="and one more thing")  # not processed
    _answer(reply)
    contact_id = conversation.contact_id

    assert not hotpath.finish_turn(reply, _steps(reply, 2, 1), conversation.pk, timezone.now(),
                                   unless_unanswered=contact_id)
    assert not Message.objects.filter(conversation=conversation, role=Message.Role.ASSISTANT).exclude(text="").exists()
    assert ReasoningStep.objects.filter(message__conversation=conversation, cycle=2).count() == 0
    assert Conversation.objects.get(pk=conversation.pk).total_tokens == 5

    Message.objects.filter(pk=waiting.pk).update(processed_at=timezone.now())
    assert hotpath.finish_turn(reply, _steps(reply, 2, 1), conversation.pk, timezone.now(),
                               unless_unanswered=contact_id)
    assert Message.objects.get(pk=reply.pk).text == "Here you are."
    assert ReasoningStep.objects.filter(message=reply, cycle=2).count() == 1
    assert Conversation.objects.get(pk=conversation.pk).total_tokens == 25


@pytest.mark.parametrize("stored_by_a_tool_cycle", [False, True])
def test_a_turn_whose_claim_was_taken_over_stores_nothing(stored_by_a_tool_cycle):
    """The fence: the answer is written only while every message the turn claimed still has the `processed_at`
    it set. Given back and claimed again by the turn that took over, the first turn's claim no longer holds:
    nothing of its answer is written (LostClaim), and what it still holds (a message it took in late) is given
    back; the turn that took over stores its answer."""
    conversation = ConversationFactory(total_tokens=5)
    asked = _message(conversation, 2)
    (claimed,) = hotpath.claim_batch(conversation.contact_id, timezone.now() - dt.timedelta(seconds=30)).messages
    late = _message(conversation, 1, processed_at=timezone.now() - dt.timedelta(seconds=20))  # taken in late
    claims = {claimed.pk: claimed.processed_at, late.pk: Message.objects.get(pk=late.pk).processed_at}
    stale = Message(conversation=conversation, role=Message.Role.ASSISTANT, channel=conversation.channel,
                    reply_to=asked)
    if stored_by_a_tool_cycle:
        hotpath.store_steps(stale, _steps(stale, 1, 1))
    _answer(stale)

    Message.objects.filter(pk=asked.pk).update(processed_at=None)  # given back by the take-over
    (again,) = hotpath.claim_batch(conversation.contact_id, timezone.now()).messages
    with pytest.raises(hotpath.LostClaim):
        hotpath.finish_turn(stale, _steps(stale, 2, 1), conversation.pk, timezone.now(),
                            Conversation.Outcome.BOOKED, claims=claims)
    assert not Message.objects.filter(conversation=conversation, role=Message.Role.ASSISTANT).exclude(text="").exists()
    assert not ReasoningStep.objects.filter(message__conversation=conversation, cycle=2).exists()
    assert Conversation.objects.values_list("total_tokens", "outcome").get(pk=conversation.pk) == (5, "")
    assert hotpath.give_back_claims(claims) == 1  # the late one, still held
    assert list(Message.objects.filter(role=Message.Role.USER, processed_at__isnull=True)) == [late]

    taker = Message(conversation=conversation, role=Message.Role.ASSISTANT, channel=conversation.channel,
                    reply_to=asked)
    _answer(taker)
    assert hotpath.finish_turn(taker, _steps(taker, 1, 1), conversation.pk, timezone.now(),
                               claims={again.pk: again.processed_at})
    assert list(Message.objects.filter(role=Message.Role.ASSISTANT).exclude(text="")) == [taker]
    assert Conversation.objects.get(pk=conversation.pk).total_tokens == 25


@pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement on PostgreSQL; step by step elsewhere")
def test_a_message_is_stored_in_the_open_conversation_only_while_it_is_current():
    now = timezone.now()
    current = ConversationFactory(last_message_at=now - dt.timedelta(minutes=5))
    stale = ConversationFactory(last_message_at=now - dt.timedelta(hours=3))

    def store(conversation, text):
        message = Message(role=Message.Role.USER, text=text, channel=conversation.channel, language="en")
        found = hotpath.store_in_open_conversation(message, conversation.school_id, conversation.contact_id, "",
                                                   now - dt.timedelta(hours=1))
        return found, message

    found, message = store(current, "hello again")
    assert found.pk == current.pk and found.contact.pk == current.contact_id and found.school.name
    stored = Message.objects.get(pk=message.pk)
    assert (stored.conversation_id, stored.text, stored.role) == (current.pk, "hello again", Message.Role.USER)
    assert Conversation.objects.get(pk=current.pk).last_message_at == stored.created_at

    found, message = store(stale, "anyone there?")  # past the idle timeout: the caller ends it and starts anew
    assert found.pk == stale.pk and message.pk is None
    assert not Message.objects.filter(conversation=stale).exists()

    nobody = ContactFactory(school=current.school)
    message = Message(role=Message.Role.USER, text="hi", channel=Channel.WEB, language="en")
    assert hotpath.store_in_open_conversation(message, current.school_id, nobody.pk, "", now) is None


def test_the_open_conversation_comes_with_its_school_and_contact():
    conversation = ConversationFactory(external_id="1:42")
    ConversationFactory(school=conversation.school, contact=conversation.contact, status=Conversation.Status.ENDED)

    found = hotpath.open_conversation(conversation.school_id, conversation.contact_id, Channel.WEB, "1:42")

    assert found.pk == conversation.pk
    assert (found.school.name, found.contact.name) == (conversation.school.name, conversation.contact.name)
    assert hotpath.open_conversation(conversation.school_id, conversation.contact_id, Channel.WEB, "9:9") is None


@pytest.mark.skipif(connection.vendor == "postgresql", reason="PostgreSQL reads the history with the claim")
def test_the_first_turn_of_a_conversation_it_started_reads_no_history(monkeypatch):
    """The caller's message opened the conversation: nothing in it can have been answered, so the turn does not
    read earlier messages; the next turn of the same conversation does."""
    from chatbot.services import _open_turn, store_received

    contact = ContactFactory()
    reads = []
    original = hotpath.earlier_messages
    monkeypatch.setattr(hotpath, "earlier_messages", lambda *args: reads.append(args) or original(*args))

    first = store_received(contact.school, contact, Channel.WEB, "hello", new_contact=True)
    opened = _open_turn(contact.school_id, contact.pk, first)
    assert first.started_conversation and [m.pk for m in opened.batch] == [first.message.pk] and reads == []

    second = store_received(contact.school, contact, Channel.WEB, "are you there?")
    assert second.conversation.pk == first.conversation.pk
    _open_turn(contact.school_id, contact.pk, second)
    assert not second.started_conversation and len(reads) == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement on PostgreSQL only")
def test_the_claim_reads_the_history_a_prompt_would_read():
    """`claim_batch_with_history`: the batch, and the same earlier messages as `earlier_messages` (answered ones,
    not staff-handled ones, none folded into the summary, not the batch), in one statement."""
    conversation = ConversationFactory()
    _message(conversation, 50, text="folded long ago", processed_at=timezone.now())
    conversation.summary, conversation.summary_until = "Parent: folded long ago", timezone.now() - dt.timedelta(
        minutes=45)
    conversation.save()
    kept = [_message(conversation, 30, text="Do you have a bus?", processed_at=timezone.now()),
            _message(conversation, 29, text="Yes, to most estates.", role=Message.Role.ASSISTANT)]
    _message(conversation, 20, text="for staff only", processed_at=timezone.now(), handled_by_staff=True)
    waiting = [_message(conversation, 2, text="and the fees?"), _message(conversation, 1, text="and lunch?")]

    claim = hotpath.claim_batch_with_history(conversation.contact_id, timezone.now())
    batch, earlier = claim.messages, claim.earlier

    assert [m.pk for m in batch] == [m.pk for m in waiting] and all(m.processed_at for m in batch)
    assert [m.pk for m in earlier] == [m.pk for m in kept]
    assert [m.pk for m in earlier] == [m.pk for m in hotpath.earlier_messages(conversation, {m.pk for m in batch})]
    assert [(m.role, m.text) for m in earlier] == [(m.role, m.text) for m in kept]
    assert claim.hints == hotpath.FactHints(has_upcoming_tours=False, has_children=False, has_waitlist_entries=False)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's synchronous_commit")
@pytest.mark.django_db(transaction=True)
def test_only_the_claims_own_commit_skips_waiting_for_the_disk():
    """The claim sets `synchronous_commit` off for its own statement: the next statement (a parent's message
    being stored, say) commits durably again."""
    conversation = ConversationFactory()
    _message(conversation, 1, text="hello")

    claim = hotpath.claim_batch_with_history(conversation.contact_id, timezone.now())

    assert len(claim.messages) == 1
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
