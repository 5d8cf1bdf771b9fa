"""Admin for conversations, messages, reasoning steps and the FAQ.

Conversations and what the agent did are a record: read-only, except the rating
(the review pages live in adminpanel/review.py). The FAQ is the knowledge staff maintain.
Times are the conversation's school's (adminpanel.schooltime), with the zone named.
"""

import json

from django.contrib import admin
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.html import format_html
from django.utils.text import Truncator

from adminpanel.forms import FaqEntryForm
from adminpanel.records import ContactDetailsMaskedMixin, ReadOnlyMixin
from adminpanel.review import ConversationAdmin
from adminpanel.schooltime import SchoolTimeAdmin, time_column
from chatbot.models import Conversation, FaqEntry, Message, ReasoningStep, RejectedInbound


def _pretty_json(value) -> str:
    if value in (None, "", {}, []):
        return "-"
    return format_html("<pre class='console-json'>{}</pre>",
                       json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True))


class StepJsonMixin(ContactDetailsMaskedMixin):
    """A reasoning step's content, tool arguments and result, readable, with contact details as the viewer may see
    them."""

    @admin.display(description="Content")
    def content_shown(self, obj: ReasoningStep) -> str:
        return self.shown(obj.content, obj.message.conversation.school)

    @admin.display(description="Arguments")
    def arguments(self, obj: ReasoningStep) -> str:
        return _pretty_json(self.shown(obj.tool_arguments, obj.message.conversation.school))

    @admin.display(description="Result")
    def result(self, obj: ReasoningStep) -> str:
        return _pretty_json(self.shown(obj.tool_result, obj.message.conversation.school))


# Conversations are reviewed and rated in the staff console (adminpanel/review.py).
admin.site.register(Conversation, ConversationAdmin)


class ReasoningStepInline(StepJsonMixin, ReadOnlyMixin, admin.TabularInline):
    model = ReasoningStep
    extra = 0
    fields = ("cycle", "position", "kind", "content_shown", "tool_name", "arguments", "result", "latency_ms")
    readonly_fields = fields
    ordering = ("position",)


@admin.register(Message)
class MessageAdmin(ContactDetailsMaskedMixin, SchoolTimeAdmin, ReadOnlyMixin, admin.ModelAdmin):
    list_display = ("id", "short_text", "role", "language", "conversation", "channel", "sent_at", "model",
                    "latency_ms", "cost")
    list_filter = ("role", "language", "channel", "model")
    search_fields = ("text", "=channel_message_id", "=conversation__id")
    date_hierarchy = "created_at"
    list_select_related = ("conversation__contact", "conversation__school")
    school_filter_parameter = "conversation__school__id__exact"
    sent_at = time_column("created_at", "Sent (school time)")
    inlines = (ReasoningStepInline,)
    fields = ("conversation", "role", "language", "channel", "text_shown", "payload_display", "channel_message_id",
              "reply_to", "created_at", "processed_at", "delivered_at", "model", "latency_ms", "prompt_tokens",
              "completion_tokens", "cost")
    readonly_fields = fields

    @admin.display(description="Text")
    def short_text(self, obj: Message) -> str:
        return Truncator(self.shown(obj.text, obj.conversation.school)).chars(80)

    @admin.display(description="Text")
    def text_shown(self, obj: Message) -> str:
        return self.shown(obj.text, obj.conversation.school)

    @admin.display(description="Payload")
    def payload_display(self, obj: Message) -> str:
        return _pretty_json(self.shown(obj.payload, obj.conversation.school))


@admin.register(ReasoningStep)
class ReasoningStepAdmin(SchoolTimeAdmin, StepJsonMixin, ReadOnlyMixin, admin.ModelAdmin):
    list_display = ("id", "message_id", "cycle", "position", "kind", "tool_name", "short_content", "latency_ms",
                    "at")
    list_filter = ("kind", "tool_name", "model")
    search_fields = ("content", "tool_name", "=tool_call_id", "=message__id")
    date_hierarchy = "created_at"
    list_select_related = ("message__conversation__school",)
    school_filter_parameter = "message__conversation__school__id__exact"
    at = time_column("created_at", "At (school time)")
    fields = ("message", "cycle", "position", "kind", "content_shown", "tool_name", "tool_call_id", "arguments",
              "result", "model", "created_at", "latency_ms", "prompt_tokens", "completion_tokens")
    readonly_fields = fields

    @admin.display(description="Content")
    def short_content(self, obj: ReasoningStep) -> str:
        return Truncator(self.shown(obj.content, obj.message.conversation.school)).chars(80)


@admin.register(RejectedInbound)
class RejectedInboundAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """Dead letters of the webhooks: messages of a delivery that could not be read (the rest was stored)."""

    list_display = ("created_at", "channel", "reason")
    list_filter = ("channel",)
    date_hierarchy = "created_at"
    fields = ("created_at", "channel", "reason", "received")
    readonly_fields = fields

    @admin.display(description="As received")
    def received(self, obj: RejectedInbound) -> str:
        return _pretty_json(obj.item)


@admin.register(FaqEntry)
class FaqEntryAdmin(SchoolTimeAdmin, admin.ModelAdmin):
    """Staff edit the FAQ per school; the agent's index rebuilds itself when an entry changes.

    The add form takes its initial values from the query string (?question=...&school=<id>), which is how
    the dashboard's "FAQ had no answer" list creates an entry in one step; `from=dashboard` returns there.
    """

    form = FaqEntryForm
    list_display = ("question", "school_column", "language", "short_answer", "is_active", "updated_local")
    list_display_links = ("question",)
    list_filter = ("is_active", "language", ("school", admin.RelatedOnlyFieldListFilter))
    list_editable = ("is_active",)
    search_fields = ("question", "answer")
    list_select_related = ("school",)
    readonly_fields = ("updated_local",)
    fields = ("school", "language", "translation_of", "question", "answer", "tags", "related_topics", "is_active",
              "updated_local")
    actions = ("activate", "deactivate")
    updated_local = time_column("updated_at", "Updated")

    @admin.display(description="School", ordering="school__name")
    def school_column(self, obj: FaqEntry) -> str:
        return obj.school.name if obj.school else "Every school"

    @admin.display(description="Answer")
    def short_answer(self, obj: FaqEntry) -> str:
        return Truncator(obj.answer).chars(90)

    @admin.action(description="Activate selected entries", permissions=["change"])
    def activate(self, request, queryset) -> None:
        self._set_active(request, queryset, True)

    @admin.action(description="Deactivate selected entries", permissions=["change"])
    def deactivate(self, request, queryset) -> None:
        self._set_active(request, queryset, False)

    def _set_active(self, request, queryset, active: bool) -> None:
        # updated_at moves too: that is how the FAQ index notices the change.
        count = queryset.exclude(is_active=active).update(is_active=active, updated_at=timezone.now())
        word = "activated" if active else "deactivated"
        self.message_user(request, f"{count} FAQ entr{'y' if count == 1 else 'ies'} {word}.")

    def response_add(self, request, obj, post_url_continue=None):
        if request.GET.get("from") == "dashboard" and "_continue" not in request.POST \
                and "_addanother" not in request.POST:
            self.message_user(request, f"FAQ entry “{obj}” added; the concierge answers it from now on.")
            return redirect("admin:dashboard")
        return super().response_add(request, obj, post_url_continue)
