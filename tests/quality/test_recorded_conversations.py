"""Conversations held with a capable model through model-bridge, replayed through the real product over HTTP.

Each recording (quality/evaluation/recorded/) is a parent's messages and a model's answers, written by someone who
saw only the requests; the replay serves those answers from a local OpenAI-compatible server to the real hosted
path (litellm, prompt, tool schemas, tools) and grades the database at the end.
"""

import json

import pytest

from quality.evaluation import recorded

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("recording", recorded.recordings(), ids=lambda r: r.name)
def test_a_recorded_conversation_ends_right_in_the_database(recording):
    result = recorded.replay(recording)
    transcript = "\n".join(f"> {reply}" for reply in result.replies)
    assert result.answers_used == len(recording.answers), (
        f"the product asked the model {result.answers_used} times, the recording has {len(recording.answers)}\n"
        + transcript)
    assert result.passed, "\n".join(result.failures) + "\n" + transcript


def test_a_wrong_end_state_fails_the_grade():
    """The grade can fail: the same replay against an expectation the conversation did not meet."""
    recording = recorded.recordings()[0]
    recording.expect = {**recording.expect, "tour_count": 7}
    result = recorded.replay(recording)
    assert not result.passed and "expected 7" in result.failures[0]


def test_the_replay_follows_the_references_the_tools_give_now():
    recording = recorded.Recording(
        name="x", title="", moment=recorded.dt.datetime(2026, 11, 27, tzinfo=recorded.dt.UTC), phone="", parent_name="",
        turns=[], answers=[{"calls": [{"name": "check_availability", "arguments": {}}]},
                           {"calls": [{"name": "manage_tour_booking", "arguments": {"booking_id": "T-OLD111"}}]}],
        references=[[], ["T-OLD111"]])
    model = recorded._Model(recording)
    model.answer({"messages": [{"role": "user", "content": "hi"}]})
    answer = model.answer({"messages": [{"role": "tool", "content": json.dumps({"booking_id": "T-NEW222"})}]})
    call = answer["choices"][0]["message"]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"booking_id": "T-NEW222"}
    with pytest.raises(LookupError):
        model.answer({"messages": []})


def test_a_tour_at_another_time_fails_the_grade():
    """The time check can fail: the weekend-then-move replay against the time the tour was moved away from."""
    recording = next(r for r in recorded.recordings() if r.name == "weekend_asked_then_move")
    recording.expect = {**recording.expect, "at": {"Ethan": "Monday 16:00"}}
    result = recorded.replay(recording)
    assert result.failures == ["tour for Ethan: at Monday 11:00, expected Monday 16:00"]
