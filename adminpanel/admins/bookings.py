"""Admin for schools, closures, tour slots, bookings and callbacks.

Tours and callbacks change only through bookings.services: the admin actions
call the services, record what they did in the admin history, and report a
refusal (BookingError) to the user; the seat counts are never edited by hand.
Every time is the school's (adminpanel.schooltime), with the zone named.
"""

import datetime as dt

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from adminpanel.records import ReadOnlyMixin
from adminpanel.schooltime import SchoolTimeAdmin, show, time_column, zone_label
from bookings import callbacks, services, waitlist
from bookings.models import (
    WEEKDAY_NAMES,
    BookingChild,
    CallbackRequest,
    OpenDay,
    School,
    SchoolClosure,
    TourBooking,
    TourBookingMove,
    TourSlot,
    WaitlistEntry,
)
from crm.identity import format_phone
from plumbing.logging import mask_phone


def _run_service(modeladmin: admin.ModelAdmin, request, queryset: QuerySet, verb: str, call) -> None:
    """Call a service for each selected row, and write each change to the row's admin history; one success
    message, one error message per refusal."""
    done = 0
    for obj in queryset:
        try:
            call(obj)
        except services.BookingError as exc:
            modeladmin.message_user(request, f"{obj.reference}: {exc.message}", messages.ERROR)
        else:
            modeladmin.log_change(request, obj, f"{verb.capitalize()} (list action).")
            done += 1
    if done:
        noun = modeladmin.model._meta.verbose_name if done == 1 else modeladmin.model._meta.verbose_name_plural
        modeladmin.message_user(request, f"{done} {noun} {verb}.", messages.SUCCESS)


class SchoolClosureInline(admin.TabularInline):
    model = SchoolClosure
    extra = 0
    fields = ("date", "reason")
    ordering = ("date",)


@admin.register(School)
class SchoolAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "time_zone", "tour_times", "seats_per_tour", "max_advance_days",
                    "min_notice_hours", "closed_days", "is_active")
    list_filter = ("is_active", "time_zone")
    search_fields = ("name", "slug", "contact_email")
    prepopulated_fields = {"slug": ("name",)}
    inlines = (SchoolClosureInline,)
    fieldsets = (
        (None, {"fields": ("name", "slug", "is_active", "address", "contact_email", "contact_phone")}),
        ("Tours", {
            "fields": ("time_zone", "tour_start_times", "tour_duration_minutes", "seats_per_tour",
                       "max_people_per_booking", "max_advance_days", "min_notice_hours", "closed_weekdays",
                       "calling_hours_start", "calling_hours_end"),
            "description": "A seat on a tour is one family: one booking takes one seat, with all its children. "
                           "Cap how many people a family may bring with “max people per booking”.",
        }),
        ("Channels", {"fields": ("default_phone_region", "chatwoot_inbox_ids", "whatsapp_phone_number_id")}),
        ("Languages", {"fields": ("languages",)}),
        ("After the booking", {"fields": ("waitlist_hold_minutes", "after_tour_next_step", "pipedrive_stage_ids")}),
    )

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name == "languages":  # ticked, not typed as JSON
            return forms.MultipleChoiceField(
                choices=settings.LANGUAGES, widget=forms.CheckboxSelectMultiple, required=False,
                help_text="Parents writing in a language not ticked here are answered in English.")
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    @admin.display(description="Tour times")
    def tour_times(self, obj: School) -> str:
        return ", ".join(obj.tour_start_times)

    @admin.display(description="Closed on")
    def closed_days(self, obj: School) -> str:
        return ", ".join(WEEKDAY_NAMES[d][:3] for d in sorted(obj.closed_weekdays)) or "-"


@admin.register(SchoolClosure)
class SchoolClosureAdmin(admin.ModelAdmin):
    list_display = ("date", "weekday", "school", "reason")
    list_filter = ("school",)
    search_fields = ("reason", "school__name")
    date_hierarchy = "date"
    list_select_related = ("school",)

    @admin.display(description="Weekday")
    def weekday(self, obj: SchoolClosure) -> str:
        return WEEKDAY_NAMES[obj.date.weekday()]


class TourSlotForm(forms.ModelForm):
    class Meta:
        model = TourSlot
        fields = ("capacity",)

    def clean_capacity(self) -> int:
        capacity = self.cleaned_data["capacity"]
        if self.instance.pk and capacity < self.instance.seats_taken + self.instance.seats_held:
            held = f" and {self.instance.seats_held} held for waitlist offers" if self.instance.seats_held else ""
            raise forms.ValidationError(
                f"{self.instance.seats_taken} seats are already taken{held}; cancel bookings before lowering capacity."
            )
        if capacity < 1:
            raise forms.ValidationError("A tour needs at least one seat.")
        return capacity


class CapacityThroughWaitlist:
    """A capacity change goes through bookings.waitlist.set_capacity: new seats are offered to the waitlist."""

    def save_model(self, request, obj: TourSlot, form, change: bool) -> None:
        if change and "capacity" in form.changed_data:
            waitlist.set_capacity(obj, obj.capacity)
        else:
            super().save_model(request, obj, form, change)


@admin.register(TourSlot)
class TourSlotAdmin(CapacityThroughWaitlist, SchoolTimeAdmin, admin.ModelAdmin):
    """Slots are created by the first booking of a tour; staff may only change the capacity."""

    form = TourSlotForm
    list_display = ("local_start", "school", "kind", "seats_taken", "seats_held", "capacity", "seats_left")
    list_filter = ("school", "kind")
    search_fields = ("school__name",)
    date_hierarchy = "starts_at"
    list_select_related = ("school",)
    readonly_fields = ("school", "local_start", "seats_taken", "seats_held")
    fields = ("school", "local_start", "capacity", "seats_taken", "seats_held")

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    local_start = time_column("starts_at", "Starts (school time)")

    @admin.display(description="Seats left")
    def seats_left(self, obj: TourSlot) -> int:
        return obj.seats_free


class OpenDayForm(forms.ModelForm):
    """Staff give the day and start time on the school's clock; stored in UTC."""

    date = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}))
    start_time = forms.TimeField(widget=forms.TimeInput(attrs={"type": "time"}), help_text="The school's time.")

    class Meta:
        model = OpenDay
        fields = ("school", "title", "duration_minutes", "capacity", "published")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["title"].required = self.fields["duration_minutes"].required = True
        if self.instance.pk:
            local = self.instance.starts_at.astimezone(self.instance.school.tz)
            self.initial.update(date=local.date(), start_time=local.time())

    def clean(self) -> dict:
        data = super().clean()
        school = data.get("school") or getattr(self.instance, "school", None)
        if school and data.get("date") and data.get("start_time"):
            self.instance.starts_at = dt.datetime.combine(data["date"], data["start_time"], school.tz)
            if self.instance.pk and data.get("capacity", 0) < self.instance.seats_taken + self.instance.seats_held:
                self.add_error("capacity", "Lower than the seats already taken or held.")
        return data


@admin.register(OpenDay)
class OpenDayAdmin(CapacityThroughWaitlist, SchoolTimeAdmin, admin.ModelAdmin):
    """Open days: group events with their own time, length and capacity that parents book in the chat."""

    form = OpenDayForm
    list_display = ("title", "local_start", "school", "duration_minutes", "seats_taken", "capacity", "published")
    list_filter = ("school", "published")
    list_select_related = ("school",)
    date_hierarchy = "starts_at"
    readonly_fields = ("seats_taken", "seats_held")

    local_start = time_column("starts_at", "Starts (school time)")

    def get_fields(self, request, obj=None):
        return ("school", "title", "date", "start_time", "duration_minutes", "capacity", "published",
                *(("seats_taken", "seats_held") if obj else ()))

    def has_delete_permission(self, request, obj=None) -> bool:
        return obj is None or not obj.seats_taken


@admin.register(WaitlistEntry)
class WaitlistEntryAdmin(SchoolTimeAdmin, admin.ModelAdmin):
    """Who waits for which full tour, in the order seats are offered; staff move families up or down."""

    list_display = ("reference", "tour", "position", "child_name", "parent_name", "masked_phone", "status",
                    "held_until", "school")
    list_filter = ("status", "school")
    search_fields = ("=reference", "child_name", "parent_name")
    list_select_related = ("school", "slot")
    ordering = ("slot__starts_at", "position")
    actions = ("move_up", "move_down", "withdraw")
    readonly_fields = ("reference", "school", "slot", "contact", "position", "parent_name", "parent_phone",
                       "parent_email", "child_name", "child_age", "status", "offered_at", "hold_expires_at",
                       "booking")

    held_until = time_column("hold_expires_at", "Held until")

    def lookup_allowed(self, lookup: str, value, request=None) -> bool:
        return lookup == "slot__id__exact" or super().lookup_allowed(lookup, value, request)  # the desk's link

    @admin.display(description="Tour (school time)", ordering="slot__starts_at")
    def tour(self, obj: WaitlistEntry) -> str:
        return show(obj.slot.starts_at, obj)

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="Phone")
    def masked_phone(self, obj: WaitlistEntry) -> str:
        return mask_phone(obj.parent_phone)

    @admin.action(description="Move up the waitlist", permissions=["change"])
    def move_up(self, request, queryset) -> None:
        _run_service(self, request, queryset, "moved up", lambda e: waitlist.move(e, -1))

    @admin.action(description="Move down the waitlist", permissions=["change"])
    def move_down(self, request, queryset) -> None:
        _run_service(self, request, queryset, "moved down", lambda e: waitlist.move(e, +1))

    @admin.action(description="Take off the waitlist (an offer is passed on)", permissions=["change"])
    def withdraw(self, request, queryset) -> None:
        _run_service(self, request, queryset, "taken off the waitlist", waitlist.withdraw)



class BookingChildInline(admin.TabularInline):
    """The children on the tour, as given when it was booked (read-only: the concierge and the desk write them)."""

    model = BookingChild
    fields = ("name", "age", "date_of_birth", "year_group", "child")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class TourBookingMoveInline(SchoolTimeAdmin, admin.TabularInline):
    """Every move of the tour: it kept its reference, the history stays here."""

    model = TourBookingMove
    fields = ("moved_local", "from_local", "to_local", "previous_reference")
    readonly_fields = fields
    extra = 0
    can_delete = False
    verbose_name_plural = "moves (the reference stayed the same)"

    moved_local = time_column("moved_at", "Moved at")
    from_local = time_column("from_starts_at", "From (school time)")
    to_local = time_column("to_starts_at", "To (school time)")

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(TourBooking)
class TourBookingAdmin(SchoolTimeAdmin, admin.ModelAdmin):
    """Bookings are made, moved and cancelled through the booking service; here staff read and act."""

    list_display = ("reference", "local_start", "children_label", "parent_name", "masked_phone", "school",
                    "status", "moved", "booked_at")
    list_filter = ("status", "school", "starts_at")
    search_fields = ("=reference", "child_name", "parent_name", "parent_email", "parent_phone",
                     "=moves__previous_reference")
    date_hierarchy = "starts_at"
    list_select_related = ("school",)
    ordering = ("-starts_at",)
    inlines = (BookingChildInline, TourBookingMoveInline)
    actions = ("cancel_bookings", "mark_completed", "mark_no_show")
    fieldsets = (
        (None, {"fields": ("reference", "status", "desk_links", "school", "local_start", "slot", "contact")}),
        ("Family", {"fields": ("parent_name", "parent_phone", "parent_email", "children_label", "adults",
                               "special_requirements")}),
        ("History", {"fields": ("replaces", "cancellation_reason", "cancelled_local", "booked_at", "updated_local")}),
    )
    readonly_fields = ("reference", "status", "desk_links", "school", "local_start", "slot", "contact",
                       "parent_name", "parent_phone", "parent_email", "children_label", "adults", "replaces",
                       "cancellation_reason", "cancelled_local", "booked_at", "updated_local")

    def has_add_permission(self, request) -> bool:
        return False  # a booking takes a seat: book through the concierge or the booking service

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # cancel instead, so the seat is released and the CRM follows

    local_start = time_column("starts_at", "Tour (school time)")
    booked_at = time_column("created_at", "Booked at")
    updated_local = time_column("updated_at", "Last changed")
    cancelled_local = time_column("cancelled_at", "Cancelled at")

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("children", "moves")

    @admin.display(description="Phone")
    def masked_phone(self, obj: TourBooking) -> str:
        return mask_phone(obj.parent_phone)

    @admin.display(description="Children")
    def children_label(self, obj: TourBooking) -> str:
        return obj.children_label

    @admin.display(description="Moves")
    def moved(self, obj: TourBooking) -> int:
        return len(obj.moves.all())

    @admin.display(description="Change")
    def desk_links(self, obj: TourBooking) -> str:
        """The desk's forms: cancel with a reason, reschedule (both tell the parent)."""
        if obj.status != TourBooking.Status.SCHEDULED or obj.starts_at <= timezone.now():
            return "-"
        return format_html(
            '<a class="button" href="{}">Reschedule</a> <a class="button" href="{}">Cancel with a reason</a>',
            reverse("admin:desk_tour_reschedule", args=[obj.pk]), reverse("admin:desk_tour_cancel", args=[obj.pk]),
        )

    @admin.action(description="Cancel selected tours (releases the seats)")
    def cancel_bookings(self, request, queryset: QuerySet[TourBooking]) -> None:
        reason = f"Cancelled by {request.user.get_username()} in the admin"
        _run_service(self, request, queryset.select_related("school", "contact"), "cancelled",
                     lambda booking: services.cancel_tour(booking=booking, reason=reason))

    @admin.action(description="Mark selected tours as completed")
    def mark_completed(self, request, queryset: QuerySet[TourBooking]) -> None:
        _run_service(self, request, queryset.select_related("school", "contact"), "marked completed",
                     lambda booking: services.record_tour_outcome(booking=booking,
                                                                  status=TourBooking.Status.COMPLETED))

    @admin.action(description="Mark selected tours as no-show")
    def mark_no_show(self, request, queryset: QuerySet[TourBooking]) -> None:
        _run_service(self, request, queryset.select_related("school", "contact"), "marked no-show",
                     lambda booking: services.record_tour_outcome(booking=booking, status=TourBooking.Status.NO_SHOW))


class _ReadOnly(ReadOnlyMixin, admin.ModelAdmin):
    """Rows the booking service writes: staff read them here and act on the booking."""


@admin.register(BookingChild)
class BookingChildAdmin(_ReadOnly):
    """Every child on every tour: who is coming, as the parent gave them."""

    list_display = ("name", "age", "year_group", "booking", "child")
    list_select_related = ("booking__school", "child")
    search_fields = ("name", "=booking__reference", "booking__parent_name")


@admin.register(TourBookingMove)
class TourBookingMoveAdmin(SchoolTimeAdmin, _ReadOnly):
    """Every move of every tour; each tour kept its reference."""

    list_display = ("booking", "from_local", "to_local", "moved_local", "previous_reference")
    list_select_related = ("booking__school",)
    search_fields = ("=booking__reference", "=previous_reference")
    date_hierarchy = "moved_at"

    moved_local = time_column("moved_at", "Moved at")
    from_local = time_column("from_starts_at", "From (school time)")
    to_local = time_column("to_starts_at", "To (school time)")


@admin.register(CallbackRequest)
class CallbackRequestAdmin(SchoolTimeAdmin, admin.ModelAdmin):
    """Those who handle callbacks (change permission: Admissions) see the number in full, with a click-to-call
    link; anyone who may only read them sees it masked."""

    list_display = ("reference", "due_date", "call_window", "best_time", "parent_name", "masked_phone",
                    "school", "status", "assigned_to", "requested_at")
    list_filter = ("status", "best_time", "school", "due_date")
    search_fields = ("=reference", "parent_name", "parent_phone", "topic")
    date_hierarchy = "due_date"
    list_select_related = ("school", "assigned_to")
    actions = ("assign_to_me", "mark_done")
    fields = ("reference", "status", "school", "contact", "parent_name", "masked_phone", "best_time",
              "specific_time_local", "due_date", "call_window", "moved_because", "topic", "assigned_to",
              "handled_local", "cancelled_local", "requested_at")
    # Only the assignee is edited here: the rest mirrors the CRM activity and changes through the services.
    readonly_fields = ("reference", "status", "school", "contact", "parent_name", "masked_phone", "phone_to_call",
                       "best_time", "specific_time_local", "due_date", "call_window", "moved_because", "topic",
                       "handled_local", "cancelled_local", "requested_at")

    requested_at = time_column("created_at", "Requested at")
    handled_local = time_column("handled_at", "Handled at")
    cancelled_local = time_column("cancelled_at", "Cancelled at")

    @admin.display(description="Call between (school time)", ordering="window_start")
    def call_window(self, obj: CallbackRequest) -> str:
        """The window on its due day, in the school's zone (window times are the school's local times)."""
        start = dt.datetime.combine(obj.due_date, obj.window_start, obj.school.tz)
        return format_html('<span title="{}">{}&ndash;{} {}</span>', obj.school.time_zone,
                           f"{obj.window_start:%H:%M}", f"{obj.window_end:%H:%M}", zone_label(obj.school, start))

    @admin.display(description="Moved from what was asked")
    def moved_because(self, obj: CallbackRequest) -> str:
        return (obj.asked_for or {}).get("message") or "-"

    def _calls(self, request) -> bool:
        return self.has_change_permission(request)

    def get_list_display(self, request):
        shown = super().get_list_display(request)
        return [("phone_to_call" if name == "masked_phone" else name) for name in shown] if self._calls(request) \
            else shown

    def get_fields(self, request, obj=None):
        shown = super().get_fields(request, obj)
        return [("phone_to_call" if name == "masked_phone" else name) for name in shown] if self._calls(request) \
            else shown

    def has_add_permission(self, request) -> bool:
        return False  # callbacks are requested through the concierge or the booking service

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="Phone")
    def masked_phone(self, obj: CallbackRequest) -> str:
        return mask_phone(obj.parent_phone)

    @admin.display(description="Phone")
    def phone_to_call(self, obj: CallbackRequest) -> str:
        return format_html('<a href="tel:{}" class="desk-call" title="Call {}">&#9742; {}</a>', obj.parent_phone,
                           obj.parent_name, format_phone(obj.parent_phone))

    @admin.display(description="Specific time (school time)", ordering="specific_time")
    def specific_time_local(self, obj: CallbackRequest) -> str:
        return obj.specific_time.strftime("%H:%M") if obj.specific_time else "-"

    @admin.action(description="Assign selected callbacks to me")
    def assign_to_me(self, request, queryset: QuerySet[CallbackRequest]) -> None:
        _run_service(self, request, queryset, "assigned to you",
                     lambda callback: callbacks.assign_callback(callback=callback, user=request.user))

    @admin.action(description="Mark selected callbacks as done")
    def mark_done(self, request, queryset: QuerySet[CallbackRequest]) -> None:
        _run_service(self, request, queryset.filter(status=CallbackRequest.Status.OPEN).select_related("contact"),
                     "marked done", lambda callback: callbacks.complete_callback(callback=callback, user=request.user))
