"""Parents (contacts), their children, deals and activities, and the persistent context."""

from django.conf import settings
from django.db import models
from django.db.models import Q

# The persistent context of a contact (seed 000, "Persistent Context"): what
# survives across sessions and is mirrored to Chatwoot's contact attributes.
PERSISTENT_CONTEXT_FIELDS = (
    "parent_preferred_name",
    "parent_preferred_phone",
    "parent_preferred_email",
    "child_name",
    "child_dob",
    "child_enrollment_date_preferred",
    "pipedrive_person_id",
    "pipedrive_deal_id",
    "tour_booking_id",
    "tour_activity_id",
    "tour_scheduled_date",
    "tour_scheduled_time",
    "tour_booked_at",
    "tour_status",
    "callback_requested",
    "callback_id",
    "callback_preference",
    "callback_date",
    "callback_window",
    "callback_requested_at",
    "callback_activity_id",
)


class Contact(models.Model):
    """A parent, as one school knows them. Identity is per school.

    A contact is identified only by what a platform vouches for: the signed web
    visitor token (`web_visitor_id`), the Chatwoot contact id, or a WhatsApp
    number (`phone` with `phone_verified`). A phone or e-mail a parent types is a
    detail kept on the booking (and on the contact, unverified); it never joins
    two contacts. See docs/identity.md.
    """

    school = models.ForeignKey("bookings.School", on_delete=models.PROTECT, related_name="contacts")
    name = models.CharField(max_length=200, blank=True)
    preferred_name = models.CharField(max_length=100, blank=True)
    whatsapp_name = models.CharField(max_length=200, blank=True, help_text="Profile name on WhatsApp.")
    phone = models.CharField(max_length=32, blank=True, help_text="E.164, e.g. +6591234567.")
    phone_verified = models.BooleanField(
        default=False,
        help_text="A platform vouched for this number (the WhatsApp sender). A typed number never is, and only "
                  "a verified number identifies a contact (docs/identity.md).",
    )
    email = models.EmailField(blank=True)
    language = models.CharField(
        max_length=8, blank=True, choices=settings.LANGUAGES,
        help_text="The language the parent last wrote in (chatbot/language.py); replies use it.",
    )
    web_visitor_id = models.CharField(max_length=64, blank=True, help_text="Anonymous id of the web chat visitor.")
    chatwoot_contact_id = models.CharField(max_length=64, blank=True)
    pipedrive_person_id = models.BigIntegerField(null=True, blank=True)
    context = models.JSONField(default=dict, blank=True, help_text="Persistent context (seed 000).")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Only a number a platform vouched for is an identity; typed numbers may repeat (docs/identity.md).
            models.UniqueConstraint(fields=["school", "phone"], condition=Q(phone_verified=True) & ~Q(phone=""),
                                    name="contact_verified_phone_unique"),
            models.UniqueConstraint(
                fields=["school", "web_visitor_id"], condition=~Q(web_visitor_id=""), name="contact_visitor_unique"
            ),
            models.UniqueConstraint(
                fields=["school", "chatwoot_contact_id"],
                condition=~Q(chatwoot_contact_id=""),
                name="contact_chatwoot_unique",
            ),
        ]

    def __str__(self) -> str:
        return self.display_name

    @property
    def display_name(self) -> str:
        return self.preferred_name or self.name or self.whatsapp_name or f"Visitor #{self.pk}"


class Child(models.Model):
    contact = models.ForeignKey(Contact, on_delete=models.CASCADE, related_name="children")
    name = models.CharField(max_length=200)
    date_of_birth = models.DateField(null=True, blank=True)
    age = models.PositiveSmallIntegerField(null=True, blank=True)
    year_group = models.CharField(max_length=40, blank=True, help_text="Year group of entry, if the parent said.")
    preferred_enrolment_date = models.DateField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "children"
        constraints = [models.UniqueConstraint(fields=["contact", "name"], name="child_unique_per_contact")]

    def __str__(self) -> str:
        return self.name


class Deal(models.Model):
    """The admissions opportunity for one family, as in Pipedrive."""

    class Stage(models.TextChoices):
        ENQUIRY = "enquiry", "Enquiry"
        TOUR_BOOKED = "tour_booked", "Tour booked"
        CALLBACK = "callback", "Callback requested"
        TOURED = "toured", "Toured"
        APPLIED = "applied", "Applied"
        LOST = "lost", "Lost"

    contact = models.ForeignKey(Contact, on_delete=models.CASCADE, related_name="deals")
    title = models.CharField(max_length=300)
    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.ENQUIRY)
    is_open = models.BooleanField(default=True)
    pipedrive_deal_id = models.BigIntegerField(null=True, blank=True)
    pipedrive_stage = models.CharField(max_length=16, blank=True, help_text="The stage Pipedrive was last moved to.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["contact"], condition=Q(is_open=True), name="one_open_deal_per_contact")
        ]

    def __str__(self) -> str:
        return self.title


class Activity(models.Model):
    """A tour or a callback on a deal, as in Pipedrive."""

    class Kind(models.TextChoices):
        TOUR = "tour", "School tour"
        CALLBACK = "callback", "Callback"

    deal = models.ForeignKey(Deal, on_delete=models.CASCADE, related_name="activities")
    contact = models.ForeignKey(Contact, on_delete=models.CASCADE, related_name="activities")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    subject = models.CharField(max_length=300)
    due_at = models.DateTimeField(null=True, blank=True)
    due_date = models.DateField(null=True, blank=True)
    duration_minutes = models.PositiveSmallIntegerField(null=True, blank=True)
    note = models.TextField(blank=True)
    done = models.BooleanField(default=False)
    tour_booking = models.OneToOneField(
        "bookings.TourBooking", null=True, blank=True, on_delete=models.SET_NULL, related_name="activity"
    )
    callback = models.OneToOneField(
        "bookings.CallbackRequest", null=True, blank=True, on_delete=models.SET_NULL, related_name="activity"
    )
    pipedrive_activity_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "activities"

    def __str__(self) -> str:
        return self.subject


# --- External calls: the idempotency ledger and the dead letters --------------
#
# The idempotency ledger of external side effects, and the dead letters of tasks that gave up.
#
# Every outbound side effect (a reply posted to Chatwoot or WhatsApp, a note written
# to Pipedrive) has a deterministic key and one `ExternalCall` row. The row is
# claimed before the call and finished after it, so a retried or redelivered task
# never performs the same side effect twice. `FailedTask` is where a task lands
# when it ran out of retries or was refused (4xx): staff see it in the admin and
# can run it again.


class ExternalCall(models.Model):
    class System(models.TextChoices):
        CHATWOOT = "chatwoot", "Chatwoot"
        WHATSAPP = "whatsapp", "WhatsApp Cloud API"
        PIPEDRIVE = "pipedrive", "Pipedrive"

    class State(models.TextChoices):
        PENDING = "pending", "Pending (not sent yet)"
        IN_FLIGHT = "in_flight", "In flight"
        AMBIGUOUS = "ambiguous", "Outcome unknown, to be checked before any retry"
        DONE = "done", "Done"
        FAILED = "failed", "Refused by the other side"
        UNKNOWN = "unknown", "Given up: may or may not have happened"

    key = models.CharField(max_length=200, unique=True, help_text="Deterministic idempotency key.")
    system = models.CharField(max_length=16, choices=System.choices)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING, db_index=True)
    external_id = models.CharField(max_length=128, blank=True, help_text="The other side's id for what was created.")
    fingerprint = models.CharField(max_length=64, blank=True, help_text="Hash of the state last written (syncs).")
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "external call"

    def __str__(self) -> str:
        return f"{self.key} ({self.state})"


class FailedTask(models.Model):
    """A dead letter: a task that exhausted its retries, was refused, or lost track of its side effect."""

    class Reason(models.TextChoices):
        EXHAUSTED = "exhausted", "Retries exhausted"
        REJECTED = "rejected", "Refused (4xx), not retried"
        UNKNOWN_OUTCOME = "unknown_outcome", "Outcome unknown, not repeated"
        ERROR = "error", "Unexpected error"

    task_name = models.CharField(max_length=200, db_index=True)
    task_id = models.CharField(max_length=64, blank=True)
    signature = models.CharField(max_length=255, db_index=True, help_text="Task name and arguments.")
    args = models.JSONField(default=list, blank=True)
    kwargs = models.JSONField(default=dict, blank=True)
    reason = models.CharField(max_length=16, choices=Reason.choices)
    system = models.CharField(max_length=16, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    ledger_key = models.CharField(max_length=200, blank=True, help_text="The side effect it was about, if any.")
    error = models.TextField(blank=True)
    retries = models.PositiveSmallIntegerField(default=0)
    auto_retries = models.PositiveSmallIntegerField(
        default=0, help_text="Times the catch-up job tried it again on its own (Pipedrive syncs).")
    next_auto_retry_at = models.DateTimeField(
        null=True, blank=True, help_text="When the catch-up job tries it again (backoff while the system is down).")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "failed task"

    def __str__(self) -> str:
        return f"{self.task_name}{self.args} ({self.get_reason_display()})"

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None
