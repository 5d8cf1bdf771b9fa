"""Admin for conversations, messages, reasoning steps and the FAQ.

Conversations and what the agent did are a record: read-only here (reviewing and
rating belong to the staff console). The FAQ is the knowledge staff maintain.
"""

import json

from django.contrib import admin
from django.utils.html import format_html
from django.utils.text import Truncator

from chatbot.models import Conversation, FaqEntry, Message, ReasoningStep


def _pretty_json(value) -> str:
    if value in (None, "", {}, []):
        return "-"
    return format_html("<pre style='margin:0;white-space:pre-wrap'>{}</pre>",
                       json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True))


class ReadOnlyMixin:
    """A record of what happened: viewable, not editable, not deletable."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class MessageInline(ReadOnlyMixin, admin.TabularInline):
    model = Message
    extra = 0
    fields = ("created_at", "role", "text", "model", "latency_ms", "prompt_tokens", "completion_tokens", "cost")
    readonly_fields = fields
    show_change_link = True
    ordering = ("created_at", "id")


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ("id", "contact", "school", "channel", "status", "outcome", "started_at", "last_message_at",
                    "total_tokens", "total_cost", "rating")
    list_filter = ("channel", "status", "outcome", "rating", "school")
    search_fields = ("=id", "external_id", "contact__name", "contact__preferred_name", "summary")
    date_hierarchy = "started_at"
    list_select_related = ("contact", "school")
    inlines = (MessageInline,)
    fieldsets = (
        (None, {"fields": ("school", "contact", "channel", "external_id", "status", "outcome")}),
        ("Memory", {"fields": ("summary", "summary_until")}),
        ("Usage", {"fields": ("started_at", "last_message_at", "ended_at", "total_tokens", "total_cost")}),
        ("Review", {"fields": ("rating", "rating_note", "rated_by", "rated_at")}),
    )
    readonly_fields = ("school", "contact", "channel", "external_id", "status", "outcome", "summary", "summary_until",
                       "started_at", "last_message_at", "ended_at", "total_tokens", "total_cost", "rating",
                       "rating_note", "rated_by", "rated_at")


class ReasoningStepInline(ReadOnlyMixin, admin.TabularInline):
    model = ReasoningStep
    extra = 0
    fields = ("cycle", "position", "kind", "content", "tool_name", "arguments", "result", "latency_ms")
    readonly_fields = fields
    ordering = ("position",)

    @admin.display(description="Arguments")
    def arguments(self, obj: ReasoningStep) -> str:
        return _pretty_json(obj.tool_arguments)

    @admin.display(description="Result")
    def result(self, obj: ReasoningStep) -> str:
        return _pretty_json(obj.tool_result)


@admin.register(Message)
class MessageAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ("id", "short_text", "role", "conversation", "channel", "created_at", "model", "latency_ms",
                    "cost")
    list_filter = ("role", "channel", "model")
    search_fields = ("text", "=channel_message_id", "=conversation__id")
    date_hierarchy = "created_at"
    list_select_related = ("conversation__contact",)
    inlines = (ReasoningStepInline,)
    fields = ("conversation", "role", "channel", "text", "payload_display", "channel_message_id", "reply_to",
              "created_at", "processed_at", "delivered_at", "model", "latency_ms", "prompt_tokens",
              "completion_tokens", "cost")
    readonly_fields = fields

    @admin.display(description="Text")
    def short_text(self, obj: Message) -> str:
        return Truncator(obj.text).chars(80)

    @admin.display(description="Payload")
    def payload_display(self, obj: Message) -> str:
        return _pretty_json(obj.payload)


@admin.register(ReasoningStep)
class ReasoningStepAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ("id", "message_id", "cycle", "position", "kind", "tool_name", "short_content", "latency_ms",
                    "created_at")
    list_filter = ("kind", "tool_name", "model")
    search_fields = ("content", "tool_name", "=tool_call_id", "=message__id")
    date_hierarchy = "created_at"
    fields = ("message", "cycle", "position", "kind", "content", "tool_name", "tool_call_id", "arguments", "result",
              "model", "created_at", "latency_ms", "prompt_tokens", "completion_tokens")
    readonly_fields = fields

    @admin.display(description="Content")
    def short_content(self, obj: ReasoningStep) -> str:
        return Truncator(obj.content).chars(80)

    @admin.display(description="Arguments")
    def arguments(self, obj: ReasoningStep) -> str:
        return _pretty_json(obj.tool_arguments)

    @admin.display(description="Result")
    def result(self, obj: ReasoningStep) -> str:
        return _pretty_json(obj.tool_result)


@admin.register(FaqEntry)
class FaqEntryAdmin(admin.ModelAdmin):
    list_display = ("question", "school", "is_active", "updated_at")
    list_filter = ("is_active", "school")
    list_editable = ("is_active",)
    search_fields = ("question", "answer")
    list_select_related = ("school",)
    readonly_fields = ("updated_at",)
