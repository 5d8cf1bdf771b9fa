"""Recompute the outcome of recorded conversations from their final state (chatbot.outcomes).

Before, the outcome was the "most significant" thing that ever happened, so a conversation that booked, then
cancelled and asked for a callback read "Booked". Only conversations with a successful booking, move, cancel
or callback can change; handed-off ones stay handed off. The steps are read once, in order, in chunks.
"""

from collections import defaultdict

from django.db import migrations

from chatbot.outcomes import ACTS, fold, of_call

CONSEQUENTIAL_TOOLS = [*ACTS, "manage_tour_booking"]
BATCH = 500


def recompute(apps, schema_editor):
    ReasoningStep = apps.get_model("chatbot", "ReasoningStep")
    Conversation = apps.get_model("chatbot", "Conversation")
    steps = (
        ReasoningStep.objects.filter(kind="observe", tool_name__in=CONSEQUENTIAL_TOOLS)
        .order_by("message__conversation_id", "message__created_at", "message_id", "position")
        .values_list("message__conversation_id", "tool_name", "tool_result")
    )
    happened = defaultdict(list)
    for conversation_id, tool_name, result in steps.iterator(chunk_size=2000):
        happened[conversation_id].append(of_call(tool_name, result))
    by_outcome = defaultdict(list)
    for conversation_id, calls in happened.items():
        outcome = fold("", calls)
        if outcome:
            by_outcome[outcome].append(conversation_id)
    for outcome, ids in by_outcome.items():
        for start in range(0, len(ids), BATCH):
            (Conversation.objects.filter(pk__in=ids[start:start + BATCH])
             .exclude(outcome="handed_off").exclude(status="handed_off").exclude(outcome=outcome)
             .update(outcome=outcome))


class Migration(migrations.Migration):

    dependencies = [
        ("chatbot", "0002_review_queue_and_outcome_labels"),
    ]

    operations = [
        migrations.RunPython(recompute, migrations.RunPython.noop),
    ]
