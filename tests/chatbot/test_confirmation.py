"""Read-back before commit: what counts as the parent's yes, and when a read-back counts as confirmed."""

import pytest

from chatbot.agent import confirmation
from chatbot.models import Message
from tests.factories import ContactFactory, ConversationFactory, MessageFactory

pytestmark = [pytest.mark.django_db]


@pytest.mark.parametrize("text", [
    "Yes", "YES", "  yes  ", "yes!!", "y", "k", "yep, that's great", "Sure!", "okay", "alright", "Correct.",
    "Confirmed", "sounds good", "Perfect, thanks", "lovely, thank you", "please do", "go ahead", "absolutely",
    "that works", "that's correct", "Yes, that is right", "yes please, book it", "Yes please 🙂",
    "Yes please, and thank you so much", "Yes. See you then!",
])
def test_plain_yes(text):
    assert confirmation.says_yes(text)


@pytest.mark.parametrize("text", [
    "", "no", "nope", "nah", "not yet", "wait", "hmm", "yes but the 11th", "yes, actually make it 2pm",
    "okay but change the time", "yes sorry i meant thursday", "can we do Friday instead?", "what time is it?",
    "is parking available?", "Friday works", "yesterday works", "rightly so no",
    # a yes whose change of mind comes in the next sentence or line
    "Yes. But the 11th would be better",
    "Ok. Wait, no!",
    "Yes\nactually the 11th",
    # a request or counter-proposal that opens with a polite word
    "please make it 2pm",
    "sure, what about Friday?",
])
def test_not_a_plain_yes(text):
    assert not confirmation.says_yes(text)


ACTION = "book 2026-12-01, 09:00, Jon Tan, +6591234567, Mia, 5"


@pytest.fixture
def conversation():
    return ConversationFactory()


def _says(conversation, text, role=Message.Role.USER):
    return MessageFactory(conversation=conversation, role=role, text=text)


def _confirmed(conversation, read_back_after, latest_id, action=ACTION):
    read_back = {"actions": [ACTION], "after": read_back_after}
    return confirmation.confirmed(read_back, action, conversation.contact_id, latest_id)


def test_not_confirmed_before_any_later_message(conversation):
    asked = _says(conversation, "Mia, 5, Tuesday at 9, I'm Jon Tan 91234567")
    assert not _confirmed(conversation, asked.pk, asked.pk)


def test_a_yes_not_yet_taken_into_the_turn_does_not_count(conversation):
    asked = _says(conversation, "Mia, 5, Tuesday at 9")
    _says(conversation, "yes please")
    assert not _confirmed(conversation, asked.pk, asked.pk)


def test_not_confirmed_for_a_different_action(conversation):
    asked = _says(conversation, "cancel T-ABC123")
    yes = _says(conversation, "yes please")
    assert not _confirmed(conversation, asked.pk, yes.pk, action="cancel T-XYZ789")
    assert not _confirmed(conversation, asked.pk, yes.pk, action=ACTION.replace("09:00", "11:00"))


def test_the_latest_later_message_decides(conversation):
    asked = _says(conversation, "Mia, 5, Tuesday at 9")
    _says(conversation, "yes please")
    no = _says(conversation, "no, the afternoon")
    assert not _confirmed(conversation, asked.pk, no.pk)


def test_confirmed_after_yes_please(conversation):
    asked = _says(conversation, "Mia, 5, Tuesday at 9")
    _says(conversation, "Just to check before I book... Shall I book it?", role=Message.Role.ASSISTANT)
    yes = _says(conversation, "yes please")
    _says(conversation, "Booking it now.", role=Message.Role.ASSISTANT)  # the concierge's words are no answer
    assert _confirmed(conversation, asked.pk, yes.pk)
    assert _confirmed(conversation, asked.pk, yes.pk + 100)  # the latest of the turn is the parent's yes


def test_another_parents_yes_does_not_count(conversation):
    asked = _says(conversation, "Mia, 5, Tuesday at 9")
    other = ConversationFactory(school=conversation.school,
                                contact=ContactFactory(school=conversation.school))
    yes = _says(other, "yes please")
    assert not _confirmed(conversation, asked.pk, yes.pk)


@pytest.mark.parametrize("read_back", [{}, {"actions": [ACTION]}, {"actions": [ACTION], "after": "3"},
                                       {"actions": [ACTION], "after": None}])
def test_no_read_back_noted_is_never_confirmed(conversation, read_back):
    _says(conversation, "Mia, 5, Tuesday at 9")
    yes = _says(conversation, "yes please")
    assert not confirmation.confirmed(read_back, ACTION, conversation.contact_id, yes.pk)
