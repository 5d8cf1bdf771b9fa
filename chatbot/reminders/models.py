"""Tour reminders: each school's reminder settings, and the record of every reminder sent (or not).

A reminder is keyed on (booking, kind, the tour start it was for). A tour moved to a new time gets a new key,
so it is reminded again at its new time, whether the move made a new booking or moved the same one; the
unique constraint makes each reminder happen once, however many runners race for it.
"""

from django.core.exceptions import ValidationError
from django.db import models

# What a WhatsApp template's body placeholders ({{1}}, {{2}} ...) can be filled with, in the school's order.
TEMPLATE_FIELDS = ("parent_name", "child_name", "school_name", "tour_date", "tour_time", "reference", "address")
DEFAULT_TEMPLATE_FIELDS = ["parent_name", "child_name", "school_name", "tour_date", "tour_time"]


def default_hours_before() -> list[int]:
    return [24, 2]


def default_template_fields() -> list[str]:
    return list(DEFAULT_TEMPLATE_FIELDS)


def validate_hours_before(value: list) -> None:
    if not isinstance(value, list) or any(not isinstance(h, int) or not 1 <= h <= 168 for h in value):
        raise ValidationError("Give whole hours between 1 and 168, e.g. [24, 2] (the day before, two hours before).")
    if len(set(value)) != len(value):
        raise ValidationError("Each number of hours once.")


def validate_template_fields(value: list) -> None:
    if not isinstance(value, list) or any(field not in TEMPLATE_FIELDS for field in value):
        raise ValidationError(f"Each placeholder is one of: {', '.join(TEMPLATE_FIELDS)}.")


class ReminderSettings(models.Model):
    """How one school reminds families of their tours. A school without a row gets the defaults."""

    school = models.OneToOneField("bookings.School", on_delete=models.CASCADE, related_name="reminder_settings")
    enabled = models.BooleanField(default=True)
    hours_before = models.JSONField(
        default=default_hours_before, validators=[validate_hours_before],
        help_text="Hours before the tour to remind the family, e.g. [24, 2]: the day before and two hours before.")
    whatsapp_template = models.CharField(
        max_length=512, blank=True,
        help_text="Name of the approved WhatsApp template sent when the parent's last message is over 24 hours "
                  "old (free text is only allowed inside 24 hours). Empty: e-mail instead, or a staff note.")
    whatsapp_template_language = models.CharField(max_length=16, default="en",
                                                  help_text="The template's language code, e.g. en or en_US.")
    whatsapp_template_category = models.CharField(max_length=32, default="UTILITY",
                                                  help_text="The template's category (Chatwoot asks for it).")
    whatsapp_template_fields = models.JSONField(
        default=default_template_fields, blank=True, validators=[validate_template_fields],
        help_text="What fills the template's {{1}}, {{2}} ... in order; each one of: " + ", ".join(TEMPLATE_FIELDS))

    class Meta:
        verbose_name = verbose_name_plural = "reminder settings"

    def __str__(self) -> str:
        return f"Reminders of {self.school}"


class SentReminder(models.Model):
    """One reminder of one tour at one start time: claimed, then sent, skipped or failed (with a staff note)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Being sent"
        SENT = "sent", "Sent"
        SKIPPED = "skipped", "Not sent: the tour changed"
        FAILED = "failed", "Not delivered: see the staff note"

    class Via(models.TextChoices):
        NONE = "", "-"
        WHATSAPP_TEXT = "whatsapp_text", "WhatsApp message"
        WHATSAPP_TEMPLATE = "whatsapp_template", "WhatsApp template"
        CHATWOOT_TEXT = "chatwoot_text", "Chatwoot message"
        CHATWOOT_TEMPLATE = "chatwoot_template", "Chatwoot WhatsApp template"
        EMAIL = "email", "E-mail"

    booking = models.ForeignKey("bookings.TourBooking", on_delete=models.CASCADE, related_name="reminders")
    kind = models.CharField(max_length=16, help_text='Which reminder: hours before the tour, e.g. "24h".')
    tour_starts_at = models.DateTimeField(help_text="The tour start this reminder was for (UTC).")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    via = models.CharField(max_length=24, choices=Via.choices, blank=True, default=Via.NONE)
    message = models.ForeignKey("chatbot.Message", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+", help_text="The chat message that carried it, if any.")
    attempts = models.PositiveSmallIntegerField(default=1)
    staff_note = models.TextField(blank=True, help_text="Why the family was not reminded, and what to do.")
    detail = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["booking", "kind", "tour_starts_at"],
                                               name="one_reminder_per_booking_kind_start")]

    def __str__(self) -> str:
        return f"{self.kind} reminder of {self.booking_id} ({self.get_status_display()})"
