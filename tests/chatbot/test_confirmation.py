"""Read-back before commit: the offline policy's reading of a yes, and the structure every model goes through."""

import pytest

from chatbot.agent import confirmation
from chatbot.agent.offline.understanding import says_yes


@pytest.mark.parametrize("text", [
    "Yes", "YES", "  yes  ", "yes!!", "y", "k", "yep, that's great", "Sure!", "okay", "alright", "Correct.",
    "Confirmed", "sounds good", "Perfect, thanks", "lovely, thank you", "please do", "go ahead", "absolutely",
    "that works", "that's correct", "Yes, that is right", "yes please, book it", "Yes please 🙂",
    "Yes please, and thank you so much", "Yes. See you then!",
])
def test_plain_yes(text):
    assert says_yes(text)


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
    assert not says_yes(text)



ACTION = "book 2026-12-01, 09:00, Jon Tan, +6591234567, Mia, 5"
READ_BACK = {"actions": [ACTION], "after": 10}  # read back after the parent's message 10


def test_confirmed_when_read_back_earlier_the_parent_wrote_since_and_the_model_says_they_agreed():
    assert confirmation.confirmed(READ_BACK, ACTION, 11, parent_agreed=True)


def test_the_models_judgement_decides_whether_the_message_was_a_yes():
    assert not confirmation.confirmed(READ_BACK, ACTION, 11, parent_agreed=False)


def test_not_confirmed_before_the_parent_wrote_again():
    """In the turn that read it back (or with no later message) no judgement can confirm it: no skipping."""
    assert not confirmation.confirmed(READ_BACK, ACTION, 10, parent_agreed=True)
    assert not confirmation.confirmed(READ_BACK, ACTION, 9, parent_agreed=True)


def test_not_confirmed_for_a_different_action():
    assert not confirmation.confirmed(READ_BACK, "cancel T-XYZ789", 11, parent_agreed=True)
    assert not confirmation.confirmed(READ_BACK, ACTION.replace("09:00", "11:00"), 11, parent_agreed=True)


@pytest.mark.parametrize("read_back", [{}, {"actions": [ACTION]}, {"actions": [ACTION], "after": "3"},
                                       {"actions": [ACTION], "after": None}])
def test_no_read_back_noted_is_never_confirmed(read_back):
    assert not confirmation.confirmed(read_back, ACTION, 11, parent_agreed=True)
