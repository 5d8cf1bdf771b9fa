"""The booking rules and the only functions that change tours (call backs: bookings.callbacks).

The agent's tools, the admin desk and the seed command all call these, so a
rule lives in one place. Seats are taken inside the booking's transaction by a
conditional UPDATE on the slot row (see `TourSlot`): 50 parallel attempts at a
last seat give exactly one booking.
"""

import datetime as dt
from dataclasses import dataclass
from difflib import SequenceMatcher

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_noop

from bookings import selectors, signals
from bookings.intake import in_window, read_window
from bookings.models import (
    WEEKDAY_NAMES,
    BookingChild,
    School,
    SchoolClosure,
    TourBooking,
    TourBookingMove,
    TourSlot,
    WaitlistEntry,
    join_names,
)
from bookings.offers import offer_free_seats
from crm import services as crm
from crm.identity import InvalidContactDetail, normalise_email, normalise_phone

ALTERNATIVE_DAYS = 7
TIME_OF_DAY = {"morning": (0, 12), "afternoon": (12, 17), "evening": (17, 24)}


class BookingError(Exception):
    """A rule said no. `message` is written for the parent, in English; `alternatives` are open slots to offer.

    With `params`, the message given is a template (a catalogue message id, marked with gettext_noop) and
    `message` is it filled in English; `template` and `neutral_params` let a reply in another language say it
    in the parent's words (chatbot.agent.offline.replies.rule_message). Params are dates, times, numbers and
    text; a key "weekday" holds a date whose weekday is meant.
    """

    def __init__(self, code: str, message: str, *, params: dict | None = None, field: str = "",
                 alternatives: list["SlotView"] | None = None, waitlist: bool = False):
        self.template = message if params else ""
        self.params = params or {}
        message = message % {key: _in_english(key, value) for key, value in self.params.items()} if params else message
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.alternatives = alternatives or []
        self.waitlist = waitlist  # the slot is full and has a waitlist the parent can join

    @property
    def neutral_params(self) -> dict:
        """The params as JSON: dates ISO, times HH:MM."""
        return {key: value.isoformat() if isinstance(value, dt.date)
                else f"{value:%H:%M}" if isinstance(value, dt.time) else value for key, value in self.params.items()}


def _in_english(key: str, value) -> str:
    if key == "weekday":
        return f"{WEEKDAY_NAMES[value.weekday()]}s"
    if isinstance(value, dt.date):
        return describe_date(value)
    if isinstance(value, dt.time):
        return f"{value:%H:%M}"
    return str(value)


@dataclass(frozen=True)
class ChildDetails:
    """A child coming on a tour, as the parent gave them."""

    name: str
    age: int | None = None
    date_of_birth: dt.date | None = None
    year_group: str = ""


@dataclass(frozen=True)
class SlotView:
    """An open tour slot as a parent sees it, in the school's time zone."""

    starts_at: dt.datetime
    local_date: dt.date
    local_time: dt.time
    seats_left: int
    duration_minutes: int

    @property
    def label(self) -> str:
        return short_label(self.local_date, f"{self.local_time:%H:%M}")

    def as_dict(self) -> dict:
        return {
            "date": self.local_date.isoformat(),
            "weekday": WEEKDAY_NAMES[self.local_date.weekday()],
            "time": self.local_time.strftime("%H:%M"),
            "label": self.label,
            "seats_left": self.seats_left,
            "duration_minutes": self.duration_minutes,
        }


def short_label(day: dt.date, time: str) -> str:
    """"Wed 25 Nov, 09:00": a slot on a button (English)."""
    return f"{day:%a} {day.day} {day:%b}, {time}" if time else f"{day:%a} {day.day} {day:%b}"


def describe_date(day: dt.date) -> str:
    """"Wednesday 25 November 2026": dates always go out with their weekday."""
    return f"{WEEKDAY_NAMES[day.weekday()]} {day.day} {day:%B %Y}"


def local_now(school: School, now: dt.datetime | None = None) -> dt.datetime:
    return (now or timezone.now()).astimezone(school.tz)


def tour_times(school: School) -> list[dt.time]:
    return sorted(dt.time.fromisoformat(t) for t in school.tour_start_times)


def _matches_preference(start: dt.time, preferred_times: list[str] | None) -> bool:
    if not preferred_times:
        return True
    for pref in preferred_times:
        pref = pref.strip().lower()
        if pref in TIME_OF_DAY:
            low, high = TIME_OF_DAY[pref]
            if low <= start.hour < high:
                return True
        elif pref in ("any", "anytime", "any time"):
            return True
        elif (window := read_window(pref)) is not None:
            if in_window(start.strftime("%H:%M"), *window):
                return True
        else:
            try:
                if dt.time.fromisoformat(pref) == start:
                    return True
            except ValueError:
                continue
    return False


def _bookable_window(school: School, now: dt.datetime | None) -> tuple[dt.datetime, dt.date]:
    """Earliest bookable start (minimum notice) and the last bookable day (advance limit)."""
    current = local_now(school, now)
    earliest = current + dt.timedelta(hours=school.min_notice_hours)
    last_day = current.date() + dt.timedelta(days=school.max_advance_days)
    return earliest, last_day


def available_slots(
    school: School,
    start: dt.date,
    end: dt.date,
    preferred_times: list[str] | None = None,
    *,
    now: dt.datetime | None = None,
) -> list[SlotView]:
    """Open slots between two local dates (inclusive), honouring every rule."""
    earliest, last_day = _bookable_window(school, now)
    start = max(start, earliest.date())
    end = min(end, last_day)
    if start > end:
        return []
    taken, closed_days = selectors.seats_gone_and_closures(school, start, end)
    times = [t for t in tour_times(school) if _matches_preference(t, preferred_times)]
    slots = []
    day = start
    while day <= end:
        if day.weekday() not in school.closed_weekdays and day not in closed_days:
            for start_time in times:
                starts_at = dt.datetime.combine(day, start_time, school.tz)
                if starts_at < earliest:
                    continue
                capacity, seats_taken = taken.get(starts_at, (school.seats_per_tour, 0))
                if seats_taken < capacity:
                    slots.append(
                        SlotView(starts_at, day, start_time, capacity - seats_taken, school.tour_duration_minutes)
                    )
        day += dt.timedelta(days=1)
    return slots


def next_open_slots(school: School, after: dt.date | None = None, *, now: dt.datetime | None = None) -> list[SlotView]:
    """The open slots of the next 7 days (from `after`, or from today), for "nothing matches" answers.

    If that week has nothing open, the first 7 days after it that do.
    """
    earliest, last_day = _bookable_window(school, now)
    start = max(after or earliest.date(), earliest.date())
    slots = available_slots(school, start, start + dt.timedelta(days=ALTERNATIVE_DAYS - 1), now=now)
    if not slots and start <= last_day:
        later = available_slots(school, start, last_day, now=now)
        if later:
            first = later[0].local_date
            slots = [s for s in later if s.local_date < first + dt.timedelta(days=ALTERNATIVE_DAYS)]
    return slots


def open_around(school: School, day: dt.date, *, now: dt.datetime | None = None) -> list[SlotView]:
    """For a day with no tours (a closed weekday, a closure): the open slots of the nearest open day before it and
    of the nearest after it (a Saturday asked for: the Friday before and the Monday after), else the next ones."""
    earlier = available_slots(school, day - dt.timedelta(days=ALTERNATIVE_DAYS), day - dt.timedelta(days=1), now=now)
    later = next_open_slots(school, after=day + dt.timedelta(days=1), now=now)
    before = [s for s in earlier if s.local_date == earlier[-1].local_date] if earlier else []
    after = [s for s in later if s.local_date == later[0].local_date] if later else []
    return before + after if before else later


def open_days(school: School, *, now: dt.datetime | None = None) -> list[TourSlot]:
    """The school's published open days still ahead, soonest first (full ones too: they can say so)."""
    return list(TourSlot.objects.filter(school=school, kind=TourSlot.Kind.OPEN_DAY, published=True,
                                        starts_at__gt=now or timezone.now()).select_related("school"))


def find_open_day(school: School, day: dt.date, start_time: dt.time | None = None, *,
                  now: dt.datetime | None = None) -> TourSlot:
    """The open day on that local day (at that time, if given), or a BookingError listing the open days."""
    found = [event for event in open_days(school, now=now)
             if event.starts_at.astimezone(school.tz).date() == day
             and (start_time is None or event.starts_at.astimezone(school.tz).time() == start_time)]
    if len(found) != 1:
        if start_time:
            raise BookingError("no_open_day", gettext_noop("There's no open day on %(date)s at %(time)s."),
                               params={"date": day, "time": start_time}, field="preferred_date")
        raise BookingError("no_open_day", gettext_noop("There's no open day on %(date)s."), params={"date": day},
                           field="preferred_date")
    if found[0].seats_free <= 0:
        raise BookingError("slot_full", gettext_noop("The open day on %(date)s is fully booked."),
                           params={"date": day}, field="preferred_date")
    return found[0]


def check_day(school: School, day: dt.date, *, now: dt.datetime | None = None) -> None:
    """BookingError if no tour can be booked on that day at all (past, closed, holiday, too far ahead)."""
    current = local_now(school, now)
    _, last_day = _bookable_window(school, now)
    if day < current.date():
        raise BookingError("past_date", gettext_noop("%(date)s has already passed."), params={"date": day},
                           field="preferred_date", alternatives=next_open_slots(school, now=now))
    if day.weekday() in school.closed_weekdays:
        raise BookingError("closed_weekday", gettext_noop("We don't run tours on %(weekday)s."),
                           params={"weekday": day}, field="preferred_date",
                           alternatives=open_around(school, day, now=now))
    closure = SchoolClosure.objects.filter(school=school, date=day).first()
    if closure:
        template = (gettext_noop("The school is closed on %(date)s (%(reason)s).") if closure.reason
                    else gettext_noop("The school is closed on %(date)s."))
        raise BookingError("closed_day", template, params={"date": day, **({"reason": closure.reason}
                                                                           if closure.reason else {})},
                           field="preferred_date", alternatives=open_around(school, day, now=now))
    if day > last_day:
        raise BookingError(
            "beyond_window",
            gettext_noop("Tours can be booked up to %(days)s days ahead, so until %(last_date)s."),
            params={"days": school.max_advance_days, "last_date": last_day}, field="preferred_date",
            alternatives=next_open_slots(school, after=last_day - dt.timedelta(days=6), now=now),
        )


def check_slot(school: School, day: dt.date, start_time: dt.time, *, now: dt.datetime | None = None) -> dt.datetime:
    """The aware start of a requested tour, or a BookingError saying which rule it breaks."""
    check_day(school, day, now=now)
    if start_time not in tour_times(school):
        listed = ", ".join(t.strftime("%H:%M") for t in tour_times(school))
        raise BookingError("not_a_tour_time", gettext_noop("Tours start at %(times)s; %(time)s isn't one of them."),
                           params={"times": listed, "time": start_time}, field="preferred_time",
                           alternatives=_nearest(available_slots(school, day, day, now=now), start_time)
                           or next_open_slots(school, after=day, now=now))
    starts_at = dt.datetime.combine(day, start_time, school.tz)
    earliest, _ = _bookable_window(school, now)
    if starts_at < earliest:
        raise BookingError(
            "too_soon", gettext_noop("Tours need at least %(hours)s hours' notice."),
            params={"hours": school.min_notice_hours}, field="preferred_date",
            alternatives=next_open_slots(school, now=now),
        )
    return starts_at


def _nearest(slots: list[SlotView], start_time: dt.time) -> list[SlotView]:
    """The open slots whose start is nearest to a time that is no tour start ("half 3ish": the 16:00 tour; "10":
    the 09:00 and the 11:00)."""
    def gap(slot: SlotView) -> int:
        return abs((slot.local_time.hour - start_time.hour) * 60 + slot.local_time.minute - start_time.minute)

    nearest = min(map(gap, slots), default=0)
    return [slot for slot in slots if gap(slot) == nearest]


def tour_slot(school: School, starts_at: dt.datetime) -> TourSlot:
    """The row of the school's regular tour at that start, created on first use."""
    slot, _ = TourSlot.objects.get_or_create(school=school, starts_at=starts_at, kind=TourSlot.Kind.TOUR,
                                             defaults={"capacity": school.seats_per_tour})
    return slot


def _take_seat(school: School, slot: TourSlot, *, now: dt.datetime | None) -> TourSlot:
    """Take one free seat in the slot (not one held for a waitlist offer), inside the caller's transaction;
    BookingError when full."""
    taken = TourSlot.objects.filter(pk=slot.pk, seats_taken__lt=F("capacity") - F("seats_held")).update(
        seats_taken=F("seats_taken") + 1
    )
    if not taken:
        local = slot.starts_at.astimezone(school.tz)
        others = [s for s in next_open_slots(school, after=local.date(), now=now) if s.starts_at != slot.starts_at]
        raise BookingError("slot_full", gettext_noop("The %(time)s tour on %(date)s is fully booked."),
                           params={"time": local.time(), "date": local.date()}, field="preferred_time",
                           alternatives=others, waitlist=True)
    return slot


def _take_held_seat(offer: WaitlistEntry, now: dt.datetime | None) -> TourSlot:
    """Turn the seat held for a waitlist offer into a taken seat; BookingError when the offer is no longer live."""
    TourSlot.objects.select_for_update().filter(pk=offer.slot_id).first()  # the slot, then the offer (waitlist.py)
    locked = WaitlistEntry.objects.select_for_update().get(pk=offer.pk)
    if locked.status != WaitlistEntry.Status.OFFERED or locked.hold_expires_at <= (now or timezone.now()):
        raise BookingError("offer_expired", gettext_noop("Sorry, the seat we were holding for you is no longer held."))
    moved = TourSlot.objects.filter(pk=locked.slot_id, seats_held__gt=0).update(
        seats_held=F("seats_held") - 1, seats_taken=F("seats_taken") + 1)
    if not moved:  # the CHECK constraint and the offer's row lock make this unreachable; never book without a seat
        raise BookingError("offer_expired", gettext_noop("Sorry, the seat we were holding for you is no longer held."))
    return locked.slot


def _release_seat(slot_id: int, now: dt.datetime | None = None) -> None:
    """Free one seat, and offer it to the slot's waitlist (in the same transaction, under the slot's lock)."""
    TourSlot.objects.filter(pk=slot_id, seats_taken__gt=0).update(seats_taken=F("seats_taken") - 1)
    offer_free_seats(slot_id, now=now)


def _clean_details(school: School, parent_name: str, parent_phone: str, parent_email: str,
                   children: list["ChildDetails"]) -> tuple[str, str, str]:
    named = bool(children) and all((child.name or "").strip() for child in children)
    missing = [name for name, value in (("parent_name", parent_name), ("parent_phone", parent_phone))
               if not (value or "").strip()] + ([] if named else ["child_name"])
    if missing:
        raise BookingError("missing_fields", f"Still needed: {', '.join(missing)}.", field=missing[0])
    try:
        phone = normalise_phone(parent_phone, school.default_phone_region)
        email = normalise_email(parent_email) if parent_email else ""
    except InvalidContactDetail as exc:
        raise BookingError(f"invalid_{exc.field.removeprefix('parent_')}", exc.message, field=exc.field) from None
    return parent_name.strip(), phone, email


def clean_children(school: School, children: list[ChildDetails], adults: int = 1) -> list[ChildDetails]:
    """The children of one booking (named: see `_clean_details`), with sensible ages, each once, within the
    school's cap on people."""
    cleaned: list[ChildDetails] = []
    for child in children:
        name = " ".join((child.name or "").split())
        if child.age is not None and not 1 <= child.age <= 19:
            raise BookingError("invalid_age",
                               gettext_noop("A child's age of %(age)s doesn't look right for a school tour."),
                               params={"age": child.age}, field="child_age")
        if any(c.name.lower() == name.lower() for c in cleaned):
            continue  # "Leo (5) and Leo" is one Leo
        cleaned.append(ChildDetails(name, child.age, child.date_of_birth, (child.year_group or "").strip()))
    if adults < 1:
        raise BookingError("invalid_adults", gettext_noop("At least one adult comes with the children."),
                           field="adults")
    cap = school.max_people_per_booking
    if cap and len(cleaned) + adults > cap:
        raise BookingError(
            "too_many_people",
            f"Each family may bring up to {cap} people to a tour, children and adults together; this booking "
            f"would be {len(cleaned) + adults} ({len(cleaned)} {'child' if len(cleaned) == 1 else 'children'} "
            f"and {adults} {'adult' if adults == 1 else 'adults'}).",
            field="children",
        )
    return cleaned


def _set_children(booking: TourBooking, children: list[ChildDetails]) -> None:
    """The booking's children, each the contact's child in the CRM; `child_name` is their names on one line."""
    known = crm.remember_children(booking.contact, [(c.name, c.age, c.date_of_birth, c.year_group) for c in children])
    booking.children.all().delete()
    BookingChild.objects.bulk_create(
        BookingChild(booking=booking, child=record, position=index, name=c.name, age=c.age,
                     date_of_birth=c.date_of_birth, year_group=c.year_group)
        for index, (c, record) in enumerate(zip(children, known, strict=True))
    )
    booking.child_name = join_names([c.name for c in children])[:200]


def book_tour(
    *,
    school: School,
    contact,
    parent_name: str,
    parent_phone: str,
    parent_email: str = "",
    children: list[ChildDetails] | None = None,
    child_name: str = "",
    child_age: int | None = None,
    child_date_of_birth: dt.date | None = None,
    adults: int = 1,
    local_date: dt.date,
    local_time: dt.time,
    special_requirements: str = "",
    event: TourSlot | None = None,
    offer: WaitlistEntry | None = None,
    now: dt.datetime | None = None,
) -> TourBooking:
    """Book one seat on a tour for one family (one or more children; `child_name`/`child_age` is the
    one-child shorthand), with its CRM records.

    `event`: an open day's slot instead of the regular tour at local_date/local_time.
    `offer`: a waitlist offer being accepted: its held seat is taken (the notice rule does not apply).
    """
    children = children or [ChildDetails(child_name, child_age, child_date_of_birth)]
    parent_name, phone, email = _clean_details(school, parent_name, parent_phone, parent_email, children)
    children = clean_children(school, children, adults)
    fixed = offer.slot if offer else event
    if fixed is not None:
        starts_at = fixed.starts_at
        if starts_at <= (now or timezone.now()) or (event and not event.published):
            raise BookingError("past_date", gettext_noop("That tour can no longer be booked."), field="preferred_date")
    else:
        starts_at = check_slot(school, local_date, local_time, now=now)
    try:
        with transaction.atomic():
            if offer:
                slot = _take_held_seat(offer, now)
            else:
                slot = _take_seat(school, event or tour_slot(school, starts_at), now=now)
            booking = TourBooking.objects.create(
                school=school, contact=contact, slot=slot, starts_at=starts_at,
                parent_name=parent_name, parent_phone=phone, parent_email=email, adults=adults,
                child_name=join_names([c.name for c in children])[:200],
                special_requirements=(special_requirements or "").strip(),
            )
            _set_children(booking, children)
            crm.fill_contact_details(contact, phone=phone, email=email, name=parent_name)
            crm.record_tour_booked(booking)
            if offer:
                WaitlistEntry.objects.filter(pk=offer.pk).update(
                    status=WaitlistEntry.Status.ACCEPTED, booking=booking, updated_at=timezone.now())
    except IntegrityError:
        raise BookingError("already_booked", gettext_noop("You already have a place on that tour."),
                           field="preferred_time") from None
    return booking


def reschedule_tour(
    *, booking: TourBooking, new_date: dt.date, new_time: dt.time, now: dt.datetime | None = None
) -> TourBooking:
    """Move a tour; it keeps its reference. The new seat is taken before the old one is released, in one
    transaction under row locks (the booking, then both slots in id order), and the move is kept as history.

    Returns the same booking, now at the new time (`moves.last()` says where it was)."""
    school = booking.school
    _ensure_changeable(booking, now)
    starts_at = check_slot(school, new_date, new_time, now=now)
    if starts_at == booking.starts_at:
        raise BookingError("same_slot", gettext_noop("Your tour is already at that time."), field="new_time")
    try:
        with transaction.atomic():
            locked = (TourBooking.objects.select_for_update(of=("self",)).select_related("school", "contact")
                      .get(pk=booking.pk))  # the booking row only: never the school's or the contact's
            if locked.status != TourBooking.Status.SCHEDULED:
                raise BookingError("not_scheduled",
                                   f"Booking {locked.reference} is {locked.get_status_display().lower()}.")
            # Lock both seat rows in id order: two parents swapping tours at once must not deadlock.
            target = tour_slot(school, starts_at)
            list(TourSlot.objects.select_for_update(no_key=True).filter(pk__in=[locked.slot_id, target.pk])
                 .order_by("pk"))
            slot = _take_seat(school, target, now=now)  # book the new seat first...
            _release_seat(locked.slot_id, now)  # ...then release the old one (offered to its waitlist)
            move = TourBookingMove.objects.create(booking=locked, from_starts_at=locked.starts_at,
                                                  to_starts_at=starts_at)
            locked.slot, locked.starts_at = slot, starts_at
            locked.save(update_fields=["slot", "starts_at", "updated_at"])
            crm.record_tour_moved(locked, move.from_starts_at)
    except IntegrityError:
        raise BookingError("already_booked", gettext_noop("You already have a place on that tour."),
                           field="new_time") from None
    return locked


def cancel_tour(*, booking: TourBooking, reason: str = "", now: dt.datetime | None = None) -> TourBooking:
    """Cancel a tour and free its seat."""
    _ensure_changeable(booking, now)
    with transaction.atomic():
        locked = TourBooking.objects.select_for_update().get(pk=booking.pk)
        if locked.status != TourBooking.Status.SCHEDULED:
            raise BookingError("not_scheduled", f"Booking {locked.reference} is already "
                                                f"{locked.get_status_display().lower()}.")
        _release_seat(locked.slot_id, now)
        locked.status = TourBooking.Status.CANCELLED
        locked.cancellation_reason = (reason or "").strip()[:300]
        locked.cancelled_at = timezone.now()
        locked.save(update_fields=["status", "cancellation_reason", "cancelled_at", "updated_at"])
        crm.record_tour_cancelled(locked)
    return locked


def record_tour_outcome(*, booking: TourBooking, status: str) -> TourBooking:
    """Staff mark a scheduled tour completed or no-show."""
    if status not in (TourBooking.Status.COMPLETED, TourBooking.Status.NO_SHOW):
        raise BookingError("invalid_status", "A tour outcome is either completed or no-show.")
    with transaction.atomic():
        locked = TourBooking.objects.select_for_update().get(pk=booking.pk)
        if locked.status != TourBooking.Status.SCHEDULED:
            raise BookingError("not_scheduled", f"Booking {locked.reference} is {locked.get_status_display().lower()}.")
        locked.status = status
        locked.save(update_fields=["status", "updated_at"])
        crm.record_tour_outcome(locked)
        transaction.on_commit(lambda: signals.tour_outcome_recorded.send(sender=TourBooking, booking=locked))
    return locked


CORRECTABLE_FIELDS = ("parent_name", "parent_phone", "parent_email", "child_name", "child_age", "special_requirements",
                      "children")


def correct_booking_details(*, booking: TourBooking, now: dt.datetime | None = None, **fields) -> TourBooking:
    """Fix details of a scheduled tour after the fact ("it's Anna, not Ana"); the slot is unchanged.

    `child_name` / `child_age` correct the tour's only child; on a tour for several children a corrected name
    replaces the one spelt most like it, and an age needs `child` (the name of the child it belongs to).
    `children` (ChildDetails) are the children coming, as the parent says them now: one already on the tour
    (by name) takes what is given of it, a new one joins the tour (a sibling brought along), within the school's
    cap on people."""
    which = fields.pop("child", None)
    unknown = set(fields) - set(CORRECTABLE_FIELDS)
    if unknown:
        raise BookingError("invalid_field", f"These can't be changed on a booking: {', '.join(sorted(unknown))}.")
    _ensure_changeable(booking, now)
    given = {k: v for k, v in fields.items() if v not in (None, "")}
    previous = {name: getattr(booking, name) for name in ("parent_name", "parent_phone", "parent_email",
                                                          "child_name", "special_requirements")}
    merged = {**previous, **{k: v for k, v in given.items() if k in previous}}
    children = [ChildDetails(c.name, c.age, c.date_of_birth, c.year_group) for c in booking.children.all()]
    renamed = None
    if "child_name" in given or "child_age" in given:
        index = _child_meant(children, which or given.get("child_name"), "child_age" in given and not which)
        child = children[index]
        children[index] = ChildDetails(str(given.get("child_name") or child.name).strip(),
                                       given.get("child_age", child.age), child.date_of_birth, child.year_group)
        renamed = (child.name, children[index].name) if children[index].name != child.name else None
    for child in given.get("children") or []:
        known = next((i for i, c in enumerate(children) if c.name.lower() == child.name.strip().lower()), None)
        if known is None:
            children.append(child)
        else:
            was = children[known]
            children[known] = ChildDetails(was.name, was.age if child.age is None else child.age,
                                           child.date_of_birth or was.date_of_birth, child.year_group or was.year_group)
    parent_name, phone, email = _clean_details(booking.school, merged["parent_name"], merged["parent_phone"],
                                               merged["parent_email"], children)
    children = clean_children(booking.school, children, booking.adults)
    with transaction.atomic():
        if renamed:
            crm.rename_child(booking.contact, *renamed)
        TourBooking.objects.filter(pk=booking.pk).update(
            parent_name=parent_name, parent_phone=phone, parent_email=email, updated_at=timezone.now(),
            special_requirements=(merged["special_requirements"] or "").strip(),
        )
        booking.parent_name, booking.parent_phone, booking.parent_email = parent_name, phone, email
        booking.special_requirements = (merged["special_requirements"] or "").strip()
        _set_children(booking, children)
        TourBooking.objects.filter(pk=booking.pk).update(child_name=booking.child_name)
        crm.record_tour_details_corrected(booking, previous)
    return booking


def _child_meant(children: list[ChildDetails], name: str | None, age_only: bool) -> int:
    """Which of a tour's children a correction is about: the only one, the one named, or the one spelt most
    like the new name."""
    if len(children) == 1:
        return 0
    if age_only:
        names = join_names([c.name for c in children])
        raise BookingError("which_child", gettext_noop("This tour is for %(names)s: which child's age is that?"),
                           params={"names": names}, field="child")
    lowered = str(name or "").strip().lower()
    for index, child in enumerate(children):
        if child.name.lower() == lowered:
            return index
    return max(range(len(children)), key=lambda i: SequenceMatcher(None, children[i].name.lower(), lowered).ratio())


def _ensure_changeable(booking: TourBooking, now: dt.datetime | None) -> None:
    if booking.status != TourBooking.Status.SCHEDULED:
        raise BookingError("not_scheduled",
                           f"Booking {booking.reference} is {booking.get_status_display().lower()}, not scheduled.")
    if booking.starts_at <= (now or timezone.now()):
        raise BookingError("tour_passed", gettext_noop("The tour %(reference)s has already taken place."),
                           params={"reference": booking.reference})
