"""Parent messages that were the staff's to answer (issue 13, item 6: a clean handback).

`handled_by_staff` marks a parent's message that came while staff had the conversation, or that was still
unanswered when they took it over. The concierge leaves such messages out of the model's history, so after a
handback it answers only what the parent says from then on. Recorded conversations are marked from their
handoff and handback notes, so a conversation handed off before this change is handed back cleanly too.
"""

from django.db import migrations, models

BATCH = 500


def mark_recorded(apps, schema_editor):
    Message = apps.get_model("chatbot", "Message")
    handed = (Message.objects.filter(role="system", payload__has_key="handoff")
              .values_list("conversation_id", flat=True).distinct().order_by("conversation_id"))
    ids: list[int] = []
    for conversation_id in handed.iterator():
        with_staff, unanswered = False, []
        rows = (Message.objects.filter(conversation_id=conversation_id)
                .order_by("created_at", "id").values_list("id", "role", "payload"))
        for pk, role, payload in rows:
            payload = payload if isinstance(payload, dict) else {}
            if role == "user":
                (ids if with_staff else unanswered).append(pk)
            elif role == "assistant":
                unanswered = []
            elif role == "system" and "handoff" in payload:
                with_staff = True
                ids.extend(unanswered)
                unanswered = []
            elif role == "system" and "resumed" in payload:
                with_staff = False
        while len(ids) >= BATCH:
            Message.objects.filter(pk__in=ids[:BATCH]).update(handled_by_staff=True)
            ids = ids[BATCH:]
    Message.objects.filter(pk__in=ids).update(handled_by_staff=True)


class Migration(migrations.Migration):
    dependencies = [("chatbot", "0003_outcomes_from_final_state")]

    operations = [
        migrations.AddField(
            model_name="message",
            name="handled_by_staff",
            field=models.BooleanField(
                default=False,
                help_text="For a parent's message: it came while staff had the conversation, so it is theirs to "
                          "answer; the concierge never answers it, nor shows it to the model, after a handback.",
            ),
        ),
        migrations.RunPython(mark_recorded, migrations.RunPython.noop),
    ]
