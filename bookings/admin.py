"""Admin for schools, closures, tour slots, bookings and callbacks.

Tours and callbacks change only through bookings.services: the admin actions
call the services and report a refusal (BookingError) to the user, and the seat
counts are never edited by hand.
"""

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from bookings import services
from bookings.models import WEEKDAY_NAMES, CallbackRequest, School, SchoolClosure, TourBooking, TourSlot
from config.logging import mask_phone


def _local(school: School, value):
    return timezone.localtime(value, school.tz).strftime("%a %d %b %Y, %H:%M") if value else "-"


def _run_service(modeladmin: admin.ModelAdmin, request, queryset: QuerySet, verb: str, call) -> None:
    """Call a service for each selected row; one success message, one error message per refusal."""
    done = 0
    for obj in queryset:
        try:
            call(obj)
        except services.BookingError as exc:
            modeladmin.message_user(request, f"{obj.reference}: {exc.message}", messages.ERROR)
        else:
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
class TourSlotAdmin(admin.ModelAdmin):
    """Slots are created by the first booking of a tour; staff may only change the capacity."""

    form = TourSlotForm
    list_display = ("local_start", "school", "seats_taken", "capacity", "seats_left")
    list_filter = ("school",)
    search_fields = ("school__name",)
    date_hierarchy = "starts_at"
    list_select_related = ("school",)
    readonly_fields = ("school", "starts_at", "local_start", "seats_taken")
    fields = ("school", "starts_at", "local_start", "capacity", "seats_taken")

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="Starts (school time)", ordering="starts_at")
    def local_start(self, obj: TourSlot) -> str:
        return _local(obj.school, obj.starts_at)

    @admin.display(description="Seats left")
    def seats_left(self, obj: TourSlot) -> int:
        return obj.capacity - obj.seats_taken


@admin.register(TourBooking)
class TourBookingAdmin(admin.ModelAdmin):
    """Bookings are made, moved and cancelled through the booking service; here staff read and act."""

    list_display = ("reference", "local_start", "child_name", "child_age", "parent_name", "masked_phone", "school",
                    "status", "created_at")
    list_filter = ("status", "school", "starts_at")
    search_fields = ("=reference", "child_name", "parent_name", "parent_email", "parent_phone")
    date_hierarchy = "starts_at"
    list_select_related = ("school",)
    ordering = ("-starts_at",)
    actions = ("cancel_bookings", "mark_completed", "mark_no_show")
    fieldsets = (
        (None, {"fields": ("reference", "status", "desk_links", "school", "local_start", "starts_at", "slot",
                           "contact")}),
        ("Family", {"fields": ("parent_name", "parent_phone", "parent_email", "child_name", "child_age",
                               "child_date_of_birth", "special_requirements")}),
        ("History", {"fields": ("replaces", "cancellation_reason", "cancelled_at", "created_at", "updated_at")}),
    )
    readonly_fields = ("reference", "status", "desk_links", "school", "local_start", "starts_at", "slot", "contact",
                       "parent_name",
                       "parent_phone", "parent_email", "child_name", "child_age", "replaces", "cancellation_reason",
                       "cancelled_at", "created_at", "updated_at")

    def has_add_permission(self, request) -> bool:
        return False  # a booking takes a seat: book through the concierge or the booking service

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # cancel instead, so the seat is released and the CRM follows

    @admin.display(description="Tour (school time)", ordering="starts_at")
    def local_start(self, obj: TourBooking) -> str:
        return _local(obj.school, obj.starts_at)

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
class CallbackRequestAdmin(admin.ModelAdmin):
    list_display = ("reference", "due_date", "best_time", "specific_time", "parent_name", "masked_phone", "school",
                    "status", "assigned_to", "created_at")
    list_filter = ("status", "best_time", "school", "due_date")
    search_fields = ("=reference", "parent_name", "parent_phone", "topic")
    date_hierarchy = "due_date"
    list_select_related = ("school", "assigned_to")
    actions = ("assign_to_me", "mark_done")
    fields = ("reference", "status", "school", "contact", "parent_name", "parent_phone", "best_time",
              "specific_time", "due_date", "topic", "assigned_to", "handled_at", "created_at")
    # Only the assignee is edited here: the rest mirrors the CRM activity and changes through the services.
    readonly_fields = ("reference", "status", "school", "contact", "parent_name", "parent_phone", "best_time",
                       "specific_time", "due_date", "topic", "handled_at", "created_at")

    def has_add_permission(self, request) -> bool:
        return False  # callbacks are requested through the concierge or the booking service

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="Phone")
    def masked_phone(self, obj: CallbackRequest) -> str:
        return mask_phone(obj.parent_phone)

    @admin.action(description="Assign selected callbacks to me")
    def assign_to_me(self, request, queryset: QuerySet[CallbackRequest]) -> None:
        _run_service(self, request, queryset, "assigned to you",
                     lambda callback: services.assign_callback(callback=callback, user=request.user))

    @admin.action(description="Mark selected callbacks as done")
    def mark_done(self, request, queryset: QuerySet[CallbackRequest]) -> None:
        _run_service(self, request, queryset.filter(status=CallbackRequest.Status.OPEN).select_related("contact"),
                     "marked done", lambda callback: services.complete_callback(callback=callback, user=request.user))
