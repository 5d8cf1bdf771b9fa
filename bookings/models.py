"""Schools and their tour rules, tour slots, tour bookings and callback requests."""

import secrets
import zoneinfo

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q

WEEKDAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_REFERENCE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: easy to read aloud


def new_reference(prefix: str) -> str:
    """A short reference a parent can quote, e.g. "T-7KQ3XM"."""
    return f"{prefix}-" + "".join(secrets.choice(_REFERENCE_ALPHABET) for _ in range(6))


def validate_time_zone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(f"{value!r} is not a known time zone (e.g. Asia/Singapore).")


def validate_tour_times(value: list) -> None:
    if not isinstance(value, list) or not value:
        raise ValidationError("Give at least one tour start time, e.g. [\"09:00\", \"14:00\"].")
    for item in value:
        try:
            hours, minutes = str(item).split(":")
            if not (0 <= int(hours) < 24 and 0 <= int(minutes) < 60) or len(minutes) != 2:
                raise ValueError
        except ValueError:
            raise ValidationError(f"{item!r} is not a time as HH:MM.") from None


def validate_weekdays(value: list) -> None:
    if not isinstance(value, list) or any(not isinstance(d, int) or not 0 <= d <= 6 for d in value):
        raise ValidationError("Closed weekdays are numbers 0 (Monday) to 6 (Sunday).")


def validate_id_list(value: list) -> None:
    if not isinstance(value, list) or any(not isinstance(i, int) for i in value):
        raise ValidationError("Give a list of numeric ids, e.g. [3, 7].")


class School(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    time_zone = models.CharField(max_length=64, default="Asia/Singapore", validators=[validate_time_zone])
    address = models.CharField(max_length=300, blank=True)
    contact_email = models.EmailField(blank=True)
    contact_phone = models.CharField(max_length=32, blank=True)
    default_phone_region = models.CharField(
        max_length=2, default="SG", help_text="Region used to read phone numbers written without +country code."
    )
    tour_start_times = models.JSONField(
        default=list, validators=[validate_tour_times], help_text='Local start times, e.g. ["09:00", "14:00"].'
    )
    tour_duration_minutes = models.PositiveSmallIntegerField(default=60)
    seats_per_tour = models.PositiveSmallIntegerField(default=5, help_text="Families per tour.")
    max_advance_days = models.PositiveSmallIntegerField(default=30, help_text="How far ahead tours can be booked.")
    min_notice_hours = models.PositiveSmallIntegerField(default=24, help_text="Minimum notice before a tour.")
    closed_weekdays = models.JSONField(
        default=list, blank=True, validators=[validate_weekdays], help_text="0 = Monday ... 6 = Sunday."
    )
    chatwoot_inbox_ids = models.JSONField(
        default=list, blank=True, validators=[validate_id_list], help_text="Chatwoot inbox ids that route here."
    )
    whatsapp_phone_number_id = models.CharField(
        max_length=64, blank=True, help_text="WhatsApp Cloud API phone number id that routes here."
    )
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(seats_per_tour__gte=1), name="school_seats_at_least_one"),
            models.CheckConstraint(condition=Q(tour_duration_minutes__gte=1), name="school_duration_positive"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def tz(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.time_zone)


class SchoolClosure(models.Model):
    """A day the school gives no tours (public holiday, term break, event)."""

    school = models.ForeignKey(School, on_delete=models.CASCADE, related_name="closures")
    date = models.DateField()
    reason = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["date"]
        constraints = [models.UniqueConstraint(fields=["school", "date"], name="closure_unique_per_day")]

    def __str__(self) -> str:
        return f"{self.school.slug} closed {self.date} ({self.reason})"


class TourSlot(models.Model):
    """One tour at one start time; the row that carries the seat count.

    Seats are taken with a conditional UPDATE (`seats_taken < capacity`), which
    the database serialises per row; the CHECK constraint is the backstop.
    """

    school = models.ForeignKey(School, on_delete=models.CASCADE, related_name="slots")
    starts_at = models.DateTimeField()
    capacity = models.PositiveSmallIntegerField()
    seats_taken = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["starts_at"]
        constraints = [
            models.UniqueConstraint(fields=["school", "starts_at"], name="slot_unique_start"),
            models.CheckConstraint(condition=Q(seats_taken__lte=F("capacity")), name="slot_not_overbooked"),
        ]

    def __str__(self) -> str:
        local = self.starts_at.astimezone(self.school.tz)  # the school's clock, as everywhere staff read a time
        return f"{self.school.slug} {local:%Y-%m-%d %H:%M} {self.school.time_zone} ({self.seats_taken}/{self.capacity})"


class TourBooking(models.Model):
    class Status(models.TextChoices):
        SCHEDULED = "scheduled", "Scheduled"
        RESCHEDULED = "rescheduled", "Moved to another booking"
        CANCELLED = "cancelled", "Cancelled"
        COMPLETED = "completed", "Completed"
        NO_SHOW = "no_show", "No-show"

    reference = models.CharField(max_length=16, unique=True, editable=False)
    school = models.ForeignKey(School, on_delete=models.PROTECT, related_name="bookings")
    contact = models.ForeignKey("crm.Contact", on_delete=models.PROTECT, related_name="tour_bookings")
    slot = models.ForeignKey(TourSlot, on_delete=models.PROTECT, related_name="bookings")
    starts_at = models.DateTimeField(help_text="Stored in UTC; shown in the school's time zone.")
    parent_name = models.CharField(max_length=200)
    parent_phone = models.CharField(max_length=32)
    parent_email = models.EmailField(blank=True)
    child_name = models.CharField(max_length=200)
    child_age = models.PositiveSmallIntegerField(null=True, blank=True)
    child_date_of_birth = models.DateField(null=True, blank=True)
    special_requirements = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SCHEDULED, db_index=True)
    cancellation_reason = models.CharField(max_length=300, blank=True)
    replaces = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="replaced_by",
        help_text="The booking this one replaced when the parent rescheduled.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["starts_at"]
        indexes = [models.Index(fields=["school", "starts_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["contact", "slot"], condition=Q(status="scheduled"), name="one_live_booking_per_contact_slot"
            ),
            models.CheckConstraint(condition=Q(child_age__isnull=True) | Q(child_age__lte=25), name="child_age_sane"),
        ]

    def __str__(self) -> str:
        return f"{self.reference} {self.child_name} {self.local_start:%a %d %b %Y %H:%M} ({self.school.time_zone})"

    def save(self, *args, **kwargs) -> None:
        if not self.reference:
            self.reference = new_reference("T")
        super().save(*args, **kwargs)

    @property
    def local_start(self):
        return self.starts_at.astimezone(self.school.tz)


class CallbackRequest(models.Model):
    class BestTime(models.TextChoices):
        MORNING = "morning", "Morning"
        AFTERNOON = "afternoon", "Afternoon"
        EVENING = "evening", "Evening"
        ANYTIME = "anytime", "Any time"
        SPECIFIC = "specific", "A specific time"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        DONE = "done", "Done"

    reference = models.CharField(max_length=16, unique=True, editable=False)
    school = models.ForeignKey(School, on_delete=models.PROTECT, related_name="callbacks")
    contact = models.ForeignKey("crm.Contact", on_delete=models.PROTECT, related_name="callbacks")
    parent_name = models.CharField(max_length=200)
    parent_phone = models.CharField(max_length=32)
    best_time = models.CharField(max_length=16, choices=BestTime.choices, default=BestTime.ANYTIME)
    specific_time = models.TimeField(null=True, blank=True)
    topic = models.CharField(max_length=500, blank=True)
    due_date = models.DateField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN, db_index=True)
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="callbacks"
    )
    handled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["due_date", "created_at"]

    def __str__(self) -> str:
        return f"{self.reference} {self.parent_name} ({self.get_best_time_display()})"

    def save(self, *args, **kwargs) -> None:
        if not self.reference:
            self.reference = new_reference("C")
        super().save(*args, **kwargs)
