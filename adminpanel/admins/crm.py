"""Admin for contacts (parents), children, deals and activities. Times are the contact's school's
(adminpanel.schooltime), with the zone named."""

import json

from django.contrib import admin
from django.utils.html import format_html

from adminpanel.schooltime import SchoolTimeAdmin, time_column
from crm import services
from crm.models import Activity, Child, Contact, Deal
from plumbing.logging import mask_phone


def _pretty_json(value) -> str:
    return format_html("<pre class='console-json'>{}</pre>", json.dumps(value or {}, indent=2, ensure_ascii=False,
                                                                     sort_keys=True))


class ChildInline(admin.TabularInline):
    model = Child
    extra = 0
    fields = ("name", "age", "date_of_birth", "preferred_enrolment_date")


class DealInline(admin.TabularInline):
    model = Deal
    extra = 0
    fields = ("title", "stage", "is_open", "opened_at")
    readonly_fields = ("opened_at",)
    show_change_link = True

    opened_at = time_column("created_at", "Opened")


@admin.register(Contact)
class ContactAdmin(SchoolTimeAdmin, admin.ModelAdmin):
    list_display = ("display_name", "masked_phone", "email", "school", "has_web_chat", "has_chatwoot", "first_seen")
    list_filter = ("school", "language", "created_at")
    search_fields = ("name", "preferred_name", "whatsapp_name", "email", "phone", "=web_visitor_id",
                     "=chatwoot_contact_id")
    date_hierarchy = "created_at"
    list_select_related = ("school",)
    inlines = (ChildInline, DealInline)
    fieldsets = (
        (None, {"fields": ("school", "name", "preferred_name", "whatsapp_name", "phone", "email", "language")}),
        ("Identities", {"fields": ("web_visitor_id", "chatwoot_contact_id", "pipedrive_person_id")}),
        ("Persistent context", {"fields": ("context_display",)}),
        ("Timestamps", {"fields": ("first_seen", "updated_local")}),
    )
    # The context is written only through crm.services.update_persistent_context.
    readonly_fields = ("context_display", "first_seen", "updated_local", "web_visitor_id", "chatwoot_contact_id",
                       "pipedrive_person_id")

    first_seen = time_column("created_at", "First seen")
    updated_local = time_column("updated_at", "Last changed")

    @admin.display(description="Name", ordering="name")
    def display_name(self, obj: Contact) -> str:
        return obj.display_name

    @admin.display(description="Phone")
    def masked_phone(self, obj: Contact) -> str:
        return mask_phone(obj.phone)

    @admin.display(description="Web chat", boolean=True)
    def has_web_chat(self, obj: Contact) -> bool:
        return bool(obj.web_visitor_id)

    @admin.display(description="Chatwoot", boolean=True)
    def has_chatwoot(self, obj: Contact) -> bool:
        return bool(obj.chatwoot_contact_id)

    @admin.display(description="Context")
    def context_display(self, obj: Contact) -> str:
        return _pretty_json(obj.context)


@admin.register(Child)
class ChildAdmin(admin.ModelAdmin):
    list_display = ("name", "age", "date_of_birth", "preferred_enrolment_date", "contact")
    search_fields = ("name", "contact__name", "contact__preferred_name")
    list_filter = ("contact__school",)
    list_select_related = ("contact",)
    raw_id_fields = ("contact",)


class ActivityInline(admin.TabularInline):
    model = Activity
    extra = 0
    fields = ("kind", "subject", "due_at", "due_date", "done", "tour_booking", "callback")
    readonly_fields = ("kind", "tour_booking", "callback")
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False  # activities come from bookings and callbacks


@admin.register(Deal)
class DealAdmin(SchoolTimeAdmin, admin.ModelAdmin):
    list_display = ("title", "contact", "stage", "is_open", "pipedrive_deal_id", "opened_at")
    list_filter = ("stage", "is_open", "contact__school")
    search_fields = ("title", "contact__name", "contact__preferred_name", "contact__email")
    date_hierarchy = "created_at"
    list_select_related = ("contact__school",)
    raw_id_fields = ("contact",)
    readonly_fields = ("pipedrive_deal_id", "pipedrive_stage", "opened_at", "updated_local")
    inlines = (ActivityInline,)
    school_filter_parameter = "contact__school__id__exact"
    actions = ("mark_applied",)

    opened_at = time_column("created_at", "Opened")
    updated_local = time_column("updated_at", "Last changed")

    def save_model(self, request, obj: Deal, form, change: bool) -> None:
        """A stage changed here moves the deal in Pipedrive too (crm.services.move_deal_stage)."""
        super().save_model(request, obj, form, change)
        if change and "stage" in form.changed_data:
            services.move_deal_stage(obj, obj.stage)

    @admin.action(description="Mark applied (the family has applied)", permissions=["change"])
    def mark_applied(self, request, queryset) -> None:
        for deal in queryset:
            services.move_deal_stage(deal, Deal.Stage.APPLIED)
            self.log_change(request, deal, "Marked applied (list action).")
        self.message_user(request, f"{queryset.count()} deal(s) marked applied.")


@admin.register(Activity)
class ActivityAdmin(SchoolTimeAdmin, admin.ModelAdmin):
    list_display = ("subject", "kind", "due", "done", "contact", "deal", "logged_at")
    list_filter = ("kind", "done", "contact__school")
    search_fields = ("subject", "note", "contact__name", "tour_booking__reference", "callback__reference")
    date_hierarchy = "created_at"
    list_select_related = ("contact__school", "deal")
    raw_id_fields = ("deal", "contact", "tour_booking", "callback")
    readonly_fields = ("kind", "tour_booking", "callback", "pipedrive_activity_id", "logged_at", "updated_local")
    school_filter_parameter = "contact__school__id__exact"

    logged_at = time_column("created_at", "Logged")
    updated_local = time_column("updated_at", "Last changed")
    _due_at = time_column("due_at", "Due")

    def has_add_permission(self, request) -> bool:
        return False  # activities come from bookings and callbacks

    @admin.display(description="Due (school time)", ordering="due_at")
    def due(self, obj: Activity):
        if obj.due_at:
            return self._due_at(obj)
        return obj.due_date or "-"

from crm.external import admin as external_admin  # noqa: E402, F401 (dead letters and the call ledger)
