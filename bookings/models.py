"""Schools and their tour rules, tour slots, tour bookings and callback requests."""

import datetime as dt
import re
import secrets
import zoneinfo

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy, pgettext

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


FALLBACK_LANGUAGE = "en"


def all_languages() -> list[str]:
    return [code for code, _ in settings.LANGUAGES]


def validate_languages(value: list) -> None:
    known = all_languages()
    if not isinstance(value, list) or any(code not in known for code in value):
        raise ValidationError(f"Use language codes from {', '.join(known)}.")


def validate_id_list(value: list) -> None:
    if not isinstance(value, list) or any(not isinstance(i, int) for i in value):
        raise ValidationError("Give a list of numeric ids, e.g. [3, 7].")


FUNNEL_STAGES = ("enquiry", "tour_booked", "callback", "toured", "applied", "lost")  # crm.Deal.Stage values


def validate_stage_ids(value: dict) -> None:
    if not isinstance(value, dict) or any(k not in FUNNEL_STAGES or not isinstance(v, int) for k, v in value.items()):
        raise ValidationError(f"Map stages ({', '.join(FUNNEL_STAGES)}) to numeric Pipedrive stage ids.")


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
    seats_per_tour = models.PositiveSmallIntegerField(
        default=5, help_text="Families per tour: one booking is one family and takes one seat, however many "
                             "children and adults come with it.",
    )
    max_people_per_booking = models.PositiveSmallIntegerField(
        null=True, blank=True,
        help_text="The most people one family may bring (children and adults together); empty: no limit.",
    )
    max_advance_days = models.PositiveSmallIntegerField(default=30, help_text="How far ahead tours can be booked.")
    min_notice_hours = models.PositiveSmallIntegerField(default=24, help_text="Minimum notice before a tour.")
    closed_weekdays = models.JSONField(
        default=list, blank=True, validators=[validate_weekdays], help_text="0 = Monday ... 6 = Sunday."
    )
    calling_hours_start = models.TimeField(
        default=dt.time(9), help_text="Admissions make call backs from this local time, on the days the school is "
                                      "open (not its closed weekdays or closures).",
    )
    calling_hours_end = models.TimeField(default=dt.time(18), help_text="...and until this local time.")
    chatwoot_inbox_ids = models.JSONField(
        default=list, blank=True, validators=[validate_id_list], help_text="Chatwoot inbox ids that route here."
    )
    whatsapp_phone_number_id = models.CharField(
        max_length=64, blank=True, help_text="WhatsApp Cloud API phone number id that routes here."
    )
    languages = models.JSONField(
        default=all_languages, blank=True, validators=[validate_languages],
        help_text="Languages parents are answered in; any other is answered in English.",
    )
    waitlist_hold_minutes = models.PositiveIntegerField(
        default=240, help_text="How long a freed seat is held for the next family on its waitlist."
    )
    after_tour_next_step = models.TextField(
        blank=True,
        help_text="Sent with the thank-you after a family's tour (e.g. how to apply). Empty: a thank-you only.",
    )
    pipedrive_stage_ids = models.JSONField(
        default=dict, blank=True, validators=[validate_stage_ids],
        help_text='Pipedrive stage id of each admissions stage, e.g. {"enquiry": 1, "tour_booked": 2, '
                  '"toured": 3, "applied": 4}. A stage left out is not moved in Pipedrive.',
    )
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(seats_per_tour__gte=1), name="school_seats_at_least_one"),
            models.CheckConstraint(condition=Q(tour_duration_minutes__gte=1), name="school_duration_positive"),
            models.CheckConstraint(condition=Q(max_people_per_booking__isnull=True) | Q(max_people_per_booking__gte=2),
                                   name="school_max_people_at_least_two"),
            models.CheckConstraint(condition=Q(calling_hours_start__lt=F("calling_hours_end")),
                                   name="school_calling_hours_ordered"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def tz(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.time_zone)

    def language_for(self, code: str | None) -> str:
        """`code` if the school offers it (a language of settings.LANGUAGES), else English, every school's
        fallback: the language a parent is answered in, and their pages are shown in."""
        return code if code and code in (self.languages or []) and code in all_languages() else FALLBACK_LANGUAGE


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
    """One tour (or open day) at one start time; the row that carries the seat count.

    Seats are taken with a conditional UPDATE (`seats_taken + seats_held < capacity`),
    which the database serialises per row; the CHECK constraint is the backstop.
    `seats_held` are seats freed and held for a family offered them from the
    waitlist (bookings.waitlist): nobody else can take them meanwhile.
    """

    class Kind(models.TextChoices):
        TOUR = "tour", "Campus tour"
        OPEN_DAY = "open_day", "Open day"

    school = models.ForeignKey(School, on_delete=models.CASCADE, related_name="slots")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.TOUR)
    title = models.CharField(max_length=200, blank=True, help_text="An open day's name, e.g. \"Spring open day\".")
    duration_minutes = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="An open day's length; tours last the school's tour duration."
    )
    published = models.BooleanField(default=True, help_text="An open day parents can see and book.")
    starts_at = models.DateTimeField()
    capacity = models.PositiveSmallIntegerField()
    seats_taken = models.PositiveSmallIntegerField(default=0)
    seats_held = models.PositiveSmallIntegerField(default=0, help_text="Seats held for waitlist offers.")

    class Meta:
        ordering = ["starts_at"]
        constraints = [
            models.UniqueConstraint(fields=["school", "starts_at", "kind"], name="slot_unique_start_kind"),
            models.CheckConstraint(condition=Q(seats_taken__lte=F("capacity") - F("seats_held")),
                                   name="slot_not_overbooked_with_holds"),
        ]

    def __str__(self) -> str:
        local = self.starts_at.astimezone(self.school.tz)  # the school's clock, as everywhere staff read a time
        what = f" {self.title or self.get_kind_display()}" if self.kind == self.Kind.OPEN_DAY else ""
        return (f"{self.school.slug}{what} {local:%Y-%m-%d %H:%M} {self.school.time_zone} "
                f"({self.seats_taken}/{self.capacity})")

    @property
    def seats_free(self) -> int:
        return self.capacity - self.seats_taken - self.seats_held

    @property
    def minutes(self) -> int:
        return self.duration_minutes or self.school.tour_duration_minutes


class TourBooking(models.Model):
    """One family's seat on one tour. It keeps its reference for life: a move changes its slot in place and
    leaves a `TourBookingMove`. Its children are `BookingChild` rows."""

    class Status(models.TextChoices):
        # Shown to the parent on the manage page too: translated.
        SCHEDULED = "scheduled", gettext_lazy("Scheduled")
        RESCHEDULED = "rescheduled", "Moved to another booking (before moves kept the reference)"
        CANCELLED = "cancelled", gettext_lazy("Cancelled")
        COMPLETED = "completed", gettext_lazy("Completed")
        NO_SHOW = "no_show", gettext_lazy("No-show")

    reference = models.CharField(max_length=16, unique=True, editable=False)
    school = models.ForeignKey(School, on_delete=models.PROTECT, related_name="bookings")
    contact = models.ForeignKey("crm.Contact", on_delete=models.PROTECT, related_name="tour_bookings")
    slot = models.ForeignKey(TourSlot, on_delete=models.PROTECT, related_name="bookings")
    starts_at = models.DateTimeField(help_text="Stored in UTC; shown in the school's time zone.")
    parent_name = models.CharField(max_length=200)
    parent_phone = models.CharField(max_length=32)
    parent_email = models.EmailField(blank=True)
    child_name = models.CharField(
        "children", max_length=200,
        help_text="The children's names as one line (\"Leo and Mia\"), written from the booking's children.",
    )
    adults = models.PositiveSmallIntegerField(default=1, help_text="Adults coming with the children.")
    special_requirements = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SCHEDULED, db_index=True)
    cancellation_reason = models.CharField(max_length=300, blank=True)
    replaces = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="replaced_by",
        help_text="The booking this one replaced, for tours moved before a move kept the reference.",
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
            models.CheckConstraint(condition=Q(adults__gte=1), name="booking_at_least_one_adult"),
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

    @property
    def children_label(self) -> str:
        """"Leo (5) and Mia (3)": every child with their age, for staff and read-backs."""
        return join_names([child.label for child in self.children.all()]) or self.child_name


def join_names(names: list[str]) -> str:
    """"Leo", "Leo and Mia", "Leo, Mia and Sam"."""
    names = [name for name in names if name]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def said_names(names: list[str]) -> str:
    """The names joined in the active language, as a parent reads them ("Leo和Mia", "Leo dan Mia", "Leo மற்றும்
    Mia"); `join_names` is the stored, English form."""
    names = [name for name in names if name]
    if len(names) < 2:
        return "".join(names)
    return pgettext("a list", "%(items)s and %(last)s") % {
        "items": pgettext("a list separator", ", ").join(names[:-1]), "last": names[-1]}


def split_names(joined: str) -> list[str]:
    """The names `join_names` joined ("Leo, Mia and Sam" -> ["Leo", "Mia", "Sam"]), e.g. to join them in another
    language."""
    return [name for name in re.split(r",\s*|\s+and\s+", joined or "") if name.strip()]


class BookingChild(models.Model):
    """A child coming on a booked tour: the contact's child in the CRM, with the details as given for this tour.

    The name, age and year group are kept on the booking as they were when it was made (a child is 4 at a
    tour in March and 5 by the autumn; a correction on one tour does not rewrite another's history); the link
    to `crm.Child` is what makes a returning family's children known.
    """

    booking = models.ForeignKey(TourBooking, on_delete=models.CASCADE, related_name="children")
    child = models.ForeignKey("crm.Child", on_delete=models.PROTECT, related_name="tour_places")
    position = models.PositiveSmallIntegerField(default=0, help_text="The order the parent named them in.")
    name = models.CharField(max_length=200)
    age = models.PositiveSmallIntegerField(null=True, blank=True)
    date_of_birth = models.DateField(null=True, blank=True)
    year_group = models.CharField(max_length=40, blank=True, help_text="Year group of entry, if the parent said.")

    class Meta:
        ordering = ["booking", "position"]
        verbose_name_plural = "children on the tour"
        constraints = [
            models.UniqueConstraint(fields=["booking", "child"], name="booking_child_once"),
            models.CheckConstraint(condition=Q(age__isnull=True) | Q(age__lte=25), name="booking_child_age_sane"),
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        return f"{self.name} ({self.age})" if self.age is not None else self.name


class TourBookingMove(models.Model):
    """One move of a booked tour, for staff: the booking kept its reference and changed slot."""

    booking = models.ForeignKey(TourBooking, on_delete=models.CASCADE, related_name="moves")
    from_starts_at = models.DateTimeField()
    to_starts_at = models.DateTimeField()
    moved_at = models.DateTimeField(auto_now_add=True)
    previous_reference = models.CharField(
        max_length=16, blank=True, help_text="The reference the tour had before, for moves made before one "
                                             "reference was kept for life.",
    )

    class Meta:
        ordering = ["booking", "moved_at", "pk"]

    def __str__(self) -> str:
        local = self.to_starts_at.astimezone(self.booking.school.tz)  # the school's clock, as staff read it
        return f"{self.booking.reference} moved to {local:%a %d %b %Y %H:%M}"


class CallbackRequest(models.Model):
    """A call admissions owe a parent: due on a local day the school is open, within a window of its calling
    hours (`window_start`-`window_end`, the school's local times). `best_time` says how the parent put it; the
    window is what staff work to. When the school moved it (a closed day, outside calling hours, already past),
    `asked_for` keeps what the parent asked for and why it moved."""

    class BestTime(models.TextChoices):
        MORNING = "morning", "Morning"
        AFTERNOON = "afternoon", "Afternoon"
        EVENING = "evening", "Evening"
        ANYTIME = "anytime", "Any time"
        SPECIFIC = "specific", "A specific time"
        WINDOW = "window", "A time window (after, before or between times)"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        DONE = "done", "Done"
        CANCELLED = "cancelled", "Cancelled by the parent"

    reference = models.CharField(max_length=16, unique=True, editable=False)
    school = models.ForeignKey(School, on_delete=models.PROTECT, related_name="callbacks")
    contact = models.ForeignKey("crm.Contact", on_delete=models.PROTECT, related_name="callbacks")
    parent_name = models.CharField(max_length=200)
    parent_phone = models.CharField(max_length=32)
    best_time = models.CharField(max_length=16, choices=BestTime.choices, default=BestTime.ANYTIME)
    specific_time = models.TimeField(null=True, blank=True)
    topic = models.CharField(max_length=500, blank=True)
    due_date = models.DateField(help_text="The school's local day the call is due.")
    window_start = models.TimeField(default=dt.time(9), help_text="Call from this local time (the school's zone).")
    window_end = models.TimeField(default=dt.time(18), help_text="Call before this local time (the school's zone).")
    asked_for = models.JSONField(
        default=dict, blank=True,
        help_text="When the call is due at another time than the parent asked: what they asked for "
                  "(date, window_start, window_end) and why it moved (reason, message).",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN, db_index=True)
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="callbacks"
    )
    handled_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["due_date", "window_start", "created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(window_start__lt=F("window_end")), name="callback_window_ordered"),
        ]

    def __str__(self) -> str:
        return f"{self.reference} {self.parent_name} ({self.window_label})"

    def save(self, *args, **kwargs) -> None:
        if not self.reference:
            self.reference = new_reference("C")
        super().save(*args, **kwargs)

    @property
    def window_label(self) -> str:
        """"Mon 30 Nov 2026, 17:00-18:00": the day and window, in the school's local time."""
        return f"{self.due_date:%a %d %b %Y}, {self.window_start:%H:%M}-{self.window_end:%H:%M}"


class OpenDayManager(models.Manager):
    def get_queryset(self):
        return super().get_queryset().filter(kind=TourSlot.Kind.OPEN_DAY)


class OpenDay(TourSlot):
    """An open day: a group event with its own time, length and capacity, booked like a tour (the staff view)."""

    objects = OpenDayManager()

    class Meta:
        proxy = True
        ordering = ["starts_at"]

    def save(self, *args, **kwargs) -> None:
        self.kind = TourSlot.Kind.OPEN_DAY
        super().save(*args, **kwargs)


class WaitlistEntry(models.Model):
    """A family waiting for a seat on a full tour; offered a freed seat in `position` order.

    An offer holds one of the slot's seats (`TourSlot.seats_held`) until `hold_expires_at`;
    offers are made under the slot's row lock, so one freed seat is offered to one family.
    """

    class Status(models.TextChoices):
        WAITING = "waiting", "Waiting"
        OFFERED = "offered", "Seat offered"
        ACCEPTED = "accepted", "Accepted (booked)"
        DECLINED = "declined", "Declined"
        EXPIRED = "expired", "Offer expired"
        WITHDRAWN = "withdrawn", "Withdrawn"

    reference = models.CharField(max_length=16, unique=True, editable=False)
    school = models.ForeignKey(School, on_delete=models.CASCADE, related_name="waitlist")
    slot = models.ForeignKey(TourSlot, on_delete=models.CASCADE, related_name="waitlist")
    contact = models.ForeignKey("crm.Contact", on_delete=models.CASCADE, related_name="waitlist_entries")
    position = models.PositiveIntegerField(help_text="Lower is offered first; staff reorder it.")
    parent_name = models.CharField(max_length=200)
    parent_phone = models.CharField(max_length=32)
    parent_email = models.EmailField(blank=True)
    child_name = models.CharField(max_length=200)
    child_age = models.PositiveSmallIntegerField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.WAITING, db_index=True)
    offered_at = models.DateTimeField(null=True, blank=True)
    hold_expires_at = models.DateTimeField(null=True, blank=True)
    booking = models.OneToOneField(TourBooking, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="waitlist_entry", help_text="The tour booked from the offer.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slot__starts_at", "position", "id"]
        verbose_name_plural = "waitlist entries"
        constraints = [
            models.UniqueConstraint(fields=["contact", "slot"], condition=Q(status__in=["waiting", "offered"]),
                                    name="one_live_waitlist_entry_per_contact_slot"),
            models.CheckConstraint(condition=~Q(status="offered") | Q(hold_expires_at__isnull=False),
                                   name="offer_has_hold_expiry"),
        ]

    def __str__(self) -> str:
        return f"{self.reference} {self.child_name} ({self.get_status_display()})"

    def save(self, *args, **kwargs) -> None:
        if not self.reference:
            self.reference = new_reference("W")
        super().save(*args, **kwargs)
