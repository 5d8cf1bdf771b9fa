from django.contrib import admin

from adminpanel.schooltime import SchoolTimeAdmin, time_column
from chatbot.reminders.models import ReminderSettings, SentReminder


@admin.register(ReminderSettings)
class ReminderSettingsAdmin(admin.ModelAdmin):
    list_display = ("school", "enabled", "hours_before", "whatsapp_template", "whatsapp_template_language")
    list_select_related = ("school",)
    list_filter = ("enabled",)
    fieldsets = (
        (None, {"fields": ("school", "enabled", "hours_before")}),
        ("WhatsApp outside the 24-hour window", {
            "description": "WhatsApp delivers free text only within 24 hours of the parent's last message. "
                           "Later reminders use this approved template; without one they go by e-mail, or "
                           "become a staff note.",
            "fields": ("whatsapp_template", "whatsapp_template_language", "whatsapp_template_category",
                       "whatsapp_template_fields")}),
    )


@admin.register(SentReminder)
class SentReminderAdmin(SchoolTimeAdmin, admin.ModelAdmin):
    """Every reminder: sent how, skipped because the tour changed, or not delivered with a staff note."""

    list_display = ("booking", "kind", "tour_start", "status", "via", "staff_note", "sent")
    list_filter = ("status", "via", "kind", "booking__school")
    search_fields = ("booking__reference", "booking__parent_name")
    list_select_related = ("booking__school",)
    school_filter_parameter = "booking__school__id__exact"
    readonly_fields = ("booking", "kind", "tour_starts_at", "status", "via", "message", "attempts", "staff_note",
                       "detail", "created_at", "sent_at")

    tour_start = time_column("tour_starts_at", "tour start")
    sent = time_column("sent_at", "sent")

    def has_add_permission(self, request) -> bool:
        return False
