"""Admin for schools, closures, tour slots, bookings and callbacks.

Tours and callbacks change only through bookings.services: the admin actions
call the services, record what they did in the admin history, and report a
refusal (BookingError) to the user; the seat counts are never edited by hand.
Every time is the school's (adminpanel.schooltime), with the zone named.
"""

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from adminpanel.schooltime import SchoolTimeAdmin, time_column
from bookings import services
from bookings.models import WEEKDAY_NAMES, CallbackRequest, School, SchoolClosure, TourBooking, TourSlot
from config.logging import mask_phone
from crm.identity import format_phone


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
        ("Tours", {"fields": ("time_zone", "tour_start_times", "tour_duration_minutes", "seats_per_tour",
                              "max_advance_days", "min_notice_hours", "closed_weekdays")}),
        ("Channels", {"fields": ("default_phone_region", "chatwoot_inbox_ids", "whatsapp_phone_number_id")}),
    )

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
        if self.instance.pk and capacity < self.instance.seats_taken:
            raise forms.ValidationError(
                f"{self.instance.seats_taken} seats are already taken; cancel bookings before lowering capacity."
            )
        if capacity < 1:
            raise forms.ValidationError("A tour needs at least one seat.")
        return capacity


@admin.register(TourSlot)
class TourSlotAdmin(SchoolTimeAdmin, admin.ModelAdmin):
    """Slots are created by the first booking of a tour; staff may only change the capacity."""

    form = TourSlotForm
    list_display = ("local_start", "school", "seats_taken", "capacity", "seats_left")
    list_filter = ("school",)
    search_fields = ("school__name",)
    date_hierarchy = "starts_at"
    list_select_related = ("school",)
    readonly_fields = ("school", "local_start", "seats_taken")
    fields = ("school", "local_start", "capacity", "seats_taken")

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    local_start = time_column("starts_at", "Starts (school time)")

    @admin.display(description="Seats left")
    def seats_left(self, obj: TourSlot) -> int:
        return obj.capacity - obj.seats_taken


@admin.register(TourBooking)
class TourBookingAdmin(SchoolTimeAdmin, admin.ModelAdmin):
    """Bookings are made, moved and cancelled through the booking service; here staff read and act."""

    list_display = ("reference", "local_start", "child_name", "child_age", "parent_name", "masked_phone", "school",
                    "status", "booked_at")
    list_filter = ("status", "school", "starts_at")
    search_fields = ("=reference", "child_name", "parent_name", "parent_email", "parent_phone")
    date_hierarchy = "starts_at"
    list_select_related = ("school",)
    ordering = ("-starts_at",)
    actions = ("cancel_bookings", "mark_completed", "mark_no_show")
    fieldsets = (
        (None, {"fields": ("reference", "status", "desk_links", "school", "local_start", "slot", "contact")}),
        ("Family", {"fields": ("parent_name", "parent_phone", "parent_email", "child_name", "child_age",
                               "child_date_of_birth", "special_requirements")}),
        ("History", {"fields": ("replaces", "cancellation_reason", "cancelled_local", "booked_at", "updated_local")}),
    )
    readonly_fields = ("reference", "status", "desk_links", "school", "local_start", "slot", "contact",
                       "parent_name", "parent_phone", "parent_email", "child_name", "child_age", "replaces",
                       "cancellation_reason", "cancelled_local", "booked_at", "updated_local")

    def has_add_permission(self, request) -> bool:
        return False  # a booking takes a seat: book through the concierge or the booking service

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # cancel instead, so the seat is released and the CRM follows

    local_start = time_column("starts_at", "Tour (school time)")
    booked_at = time_column("created_at", "Booked at")
    updated_local = time_column("updated_at", "Last changed")
    cancelled_local = time_column("cancelled_at", "Cancelled at")

    @admin.display(description="Phone")
    def masked_phone(self, obj: TourBooking) -> str:
        return mask_phone(obj.parent_phone)

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


@admin.register(CallbackRequest)
class CallbackRequestAdmin(SchoolTimeAdmin, admin.ModelAdmin):
    """Those who handle callbacks (change permission: Admissions) see the number in full, with a click-to-call
    link; anyone who may only read them sees it masked."""

    list_display = ("reference", "due_date", "best_time", "specific_time_local", "parent_name", "masked_phone",
                    "school", "status", "assigned_to", "requested_at")
    list_filter = ("status", "best_time", "school", "due_date")
    search_fields = ("=reference", "parent_name", "parent_phone", "topic")
    date_hierarchy = "due_date"
    list_select_related = ("school", "assigned_to")
    actions = ("assign_to_me", "mark_done")
    fields = ("reference", "status", "school", "contact", "parent_name", "masked_phone", "best_time",
              "specific_time_local", "due_date", "topic", "assigned_to", "handled_local", "requested_at")
    # Only the assignee is edited here: the rest mirrors the CRM activity and changes through the services.
    readonly_fields = ("reference", "status", "school", "contact", "parent_name", "masked_phone", "phone_to_call",
                       "best_time", "specific_time_local", "due_date", "topic", "handled_local", "requested_at")

    requested_at = time_column("created_at", "Requested at")
    handled_local = time_column("handled_at", "Handled at")

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
                     lambda callback: services.assign_callback(callback=callback, user=request.user))

    @admin.action(description="Mark selected callbacks as done")
    def mark_done(self, request, queryset: QuerySet[CallbackRequest]) -> None:
        _run_service(self, request, queryset.filter(status=CallbackRequest.Status.OPEN).select_related("contact"),
                     "marked done", lambda callback: services.complete_callback(callback=callback, user=request.user))
