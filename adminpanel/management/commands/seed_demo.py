"""`manage.py seed_demo`: two demo schools, their FAQ, staff users and a few example bookings.

Idempotent: a second run finds everything in place and changes nothing. Schools
and FAQ entries are only created when missing, so what staff edit in the console
survives `make run` (which seeds on every start); example tours and callbacks
fill the desk's default week and are only made for a school that has none in
the current week (a later start tops the demo up, the same week changes nothing).

The summary's URLs use `--base-url` (`make run` passes its HOST and PORT).
"""

import argparse
import datetime as dt
import itertools
import os
import secrets
from urllib.parse import urlsplit

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from adminpanel import demo_data
from adminpanel.desk import DEFAULT_DAYS
from bookings import callbacks
from bookings import services as bookings
from bookings.models import CallbackRequest, School, SchoolClosure, TourBooking
from chatbot.models import FaqEntry
from chatbot.services import save_faq_translations
from crm.services import find_or_create_contact

BASE_URL = "http://127.0.0.1:8000"  # what `manage.py runserver` and `make run` serve by default
HOLIDAY_HORIZON_DAYS = 60
ALL = ("add", "change", "delete", "view")

# The staff console's roles. On a conversation, "change" is rating it (the console edits nothing else);
# "view" reads transcripts, the dashboard and exports. The desk needs view/change on tour bookings and callbacks.
GROUP_PERMISSIONS = {
    "Reviewer": {  # reads conversations and rates them; no bookings, no callbacks, FAQ read-only
        "chatbot": {"conversation": ("view", "change"), "message": ("view",), "reasoningstep": ("view",),
                    "faqentry": ("view",), "reviewscenario": ("view", "add", "change"),
                    "reviewscenarioresult": ("view",)},
        "bookings": {"school": ("view",)},
    },
    "Admissions": {  # the desk (tours, callbacks), the FAQ, contacts; reads conversations without rating them
        "bookings": {"tourbooking": ALL, "callbackrequest": ALL, "schoolclosure": ALL, "tourslot": ("view",),
                     "school": ("view",), "bookingchild": ("view",), "tourbookingmove": ("view",)},
        "chatbot": {"faqentry": ALL, "conversation": ("view",), "message": ("view",), "reasoningstep": ("view",),
                    "reviewscenario": ("view",), "reviewscenarioresult": ("view",)},
        "crm": {"contact": ALL, "child": ALL, "deal": ALL, "activity": ALL},
    },
}
# username, group, superuser
# The family whose next tour `make run` reminds at start-up (a web-chat parent: the reminder is an e-mail).
REMINDER_DEMO_FAMILY = {"parent_name": "Grace Lim", "parent_phone": "+6591230099",
                        "parent_email": "grace.lim@example.com", "child_name": "Ethan", "child_age": 5}
DEMO_USERS = (("admin", None, True), ("reviewer", "Reviewer", False), ("admissions", "Admissions", False))


class Command(BaseCommand):
    help = "Create the demo schools, FAQ entries, staff users and groups, and a few example bookings."

    def add_arguments(self, parser):
        parser.add_argument(
            "--reset-password", action="store_true",
            help="Set the demo users' password even if the users already exist.",
        )
        parser.add_argument(
            "--base-url", type=base_url, default=BASE_URL,
            help=f"Where the site is served, for the printed links (default {BASE_URL}).",
        )

    def handle(self, *args, reset_password: bool = False, base_url: str = BASE_URL, **options):
        password = demo_password()
        with transaction.atomic():
            specs = demo_data.schools()
            schools = [self.seed_school(spec) for spec in specs]
            self.seed_global_faqs()
            groups = self.seed_groups()
            users = self.seed_users(password, groups, reset_password)
            for school, spec in zip(schools, specs, strict=True):
                self.seed_examples(school, spec)
            self.seed_reminder_demo(schools)
        self.print_summary(schools, users, password, base_url)

    # --- schools -----------------------------------------------------------------

    def seed_school(self, spec: dict) -> School:
        """Created once; later runs leave a school (and its FAQ entries) as staff have edited them.

        `spec` is a demo school as adminpanel.demo_data gives it."""
        school = School.objects.filter(slug=spec["school"]["slug"]).first()
        if school is None:
            school = School(**spec["school"])
            school.full_clean()
            school.save()
            self.progress(f"School {school.slug}: created")
        else:
            self.progress(f"School {school.slug}: exists, left as it is")
        self.seed_closures(school, spec)
        self.seed_faqs(school, spec["faqs"], demo_data.global_faqs())
        return school

    def seed_closures(self, school: School, spec: dict) -> None:
        today = bookings.local_now(school).date()
        horizon = today + dt.timedelta(days=HOLIDAY_HORIZON_DAYS)
        holidays = [h for h in spec["holidays"] if today <= h["date"] <= horizon]
        for holiday in holidays:
            SchoolClosure.objects.update_or_create(school=school, date=holiday["date"],
                                                   defaults={"reason": holiday["reason"]})
        reason = spec["staff_day"]["reason"]
        if not SchoolClosure.objects.filter(school=school, reason=reason, date__gte=today).exists():
            day = today + dt.timedelta(days=spec["staff_day"]["in_days"])
            taken = {h["date"] for h in holidays}
            while day.weekday() in school.closed_weekdays or day in taken:
                day += dt.timedelta(days=1)
            SchoolClosure.objects.update_or_create(school=school, date=day, defaults={"reason": reason})
        upcoming = SchoolClosure.objects.filter(school=school, date__gte=today).count()
        self.progress(f"  closures: {upcoming} upcoming")

    # --- FAQ -----------------------------------------------------------------------

    def seed_faqs(self, school: School | None, entries: list[dict], shared: list[dict]) -> None:
        questions = {entry["key"]: entry["question"] for entry in [*entries, *shared]}
        created = 0
        translated = 0
        for entry in entries:
            faq_entry, new = FaqEntry.objects.get_or_create(
                school=school,
                question=entry["question"],
                defaults={
                    "answer": entry["answer"],
                    "tags": entry["tags"],
                    "related_topics": [questions[key] for key in entry["related"]],
                },
            )
            created += new
            translated += save_faq_translations(faq_entry, entry.get("translations", {}))
        self.progress(f"  FAQ entries: {len(entries)} ({created} created, {translated} new translations)")

    def seed_global_faqs(self) -> None:
        self.progress("Entries for every school:")
        self.seed_faqs(None, demo_data.global_faqs(), [])

    # --- staff -------------------------------------------------------------------

    def seed_groups(self) -> dict[str, Group]:
        for label in ("bookings", "chatbot", "crm"):
            create_permissions(apps.get_app_config(label), verbosity=0)
        groups = {}
        for name, by_app in GROUP_PERMISSIONS.items():
            group, _ = Group.objects.get_or_create(name=name)
            codenames = [(app, f"{action}_{model}") for app, models in by_app.items()
                         for model, actions in models.items() for action in actions]
            permissions = [Permission.objects.get(content_type__app_label=app, codename=codename)
                           for app, codename in codenames]
            group.permissions.set(permissions)
            groups[name] = group
            self.progress(f"Group {name}: {len(permissions)} permissions")
        return groups

    def seed_users(self, password: str, groups: dict[str, Group], reset_password: bool) -> dict[str, bool]:
        """Returns, per username, whether its password is now the demo password."""
        user_model = get_user_model()
        password_set = {}
        for username, group_name, superuser in DEMO_USERS:
            user, created = user_model.objects.get_or_create(
                username=username,
                defaults={"email": f"{username}@concierge.example", "is_staff": True, "is_superuser": superuser},
            )
            if not (user.is_staff and user.is_superuser == superuser):
                user.is_staff, user.is_superuser = True, superuser
                user.save(update_fields=["is_staff", "is_superuser"])
            if created or reset_password:
                user.set_password(password)
                user.save(update_fields=["password"])
            if group_name:
                user.groups.add(groups[group_name])
            password_set[username] = created or reset_password
            state = "created" if created else ("password reset" if reset_password else "exists, password unchanged")
            self.progress(f"User {username}: {state}")
        return password_set

    # --- example families ------------------------------------------------------------

    def seed_examples(self, school: School, spec: dict) -> None:
        """Fill the desk's default week: tours on every open day (today's included), a few callbacks due around
        today. Added when the school has none in this week (so a later `make run` tops the demo up); a second
        run the same week changes nothing."""
        today = bookings.local_now(school).date()
        window = [today + dt.timedelta(days=i) for i in range(DEFAULT_DAYS)]
        start = dt.datetime.combine(window[0], dt.time.min, school.tz)
        end = dt.datetime.combine(window[-1] + dt.timedelta(days=1), dt.time.min, school.tz)
        if TourBooking.objects.filter(school=school, starts_at__gte=start, starts_at__lt=end).exists():
            self.progress(f"{school.slug}: has tours this week already, no examples added")
        else:
            self.seed_week_of_tours(school, spec, window)
        open_callbacks = CallbackRequest.objects.filter(school=school, status=CallbackRequest.Status.OPEN,
                                                        due_date__lte=window[-1])
        if open_callbacks.exists():
            self.progress(f"{school.slug}: has callbacks due this week already, no examples added")
        else:
            self.seed_callbacks(school, spec, today)

    def seed_week_of_tours(self, school: School, spec: dict, window: list[dt.date]) -> None:
        closed = set(SchoolClosure.objects.filter(school=school, date__in=window).values_list("date", flat=True))
        days = [day for day in window if day.weekday() not in school.closed_weekdays and day not in closed]
        times = bookings.tour_times(school)
        families = itertools.cycle(spec["families"])
        made: list[list[TourBooking]] = []
        for number, day in enumerate(days):
            booked = []
            for slot in range(min(demo_data.DESK_TOURS_PER_DAY, len(times))):
                at = times[(number + slot * 2) % len(times)] if len(times) > 2 else times[slot]
                family = dict(next(families))
                family["children"] = [bookings.ChildDetails(**child) for child in family.get("children", [])]
                contact = find_or_create_contact(school=school, phone=family["parent_phone"],
                                                 email=family["parent_email"], name=family["parent_name"])
                starts_at = dt.datetime.combine(day, at, school.tz)
                booked_when = starts_at - dt.timedelta(hours=school.min_notice_hours + 24)  # booked in good time
                try:
                    booking = bookings.book_tour(school=school, contact=contact, local_date=day, local_time=at,
                                                 now=booked_when, **family)
                except bookings.BookingError as exc:
                    self.progress(self.style.WARNING(f"{school.slug}: example booking refused: {exc.message}"))
                    continue
                booked.append(booking)
                self.progress(f"{school.slug}: booked {booking.reference} for {booking.child_name} on "
                              f"{bookings.describe_date(day)} at {at:%H:%M}")
            made.append(booked)
        self.vary_outcomes(school, made)

    def vary_outcomes(self, school: School, made: list[list[TourBooking]]) -> None:
        """What a real week looks like: a tour already given today, one cancelled, one moved."""
        now = timezone.now()
        tours = [booking for day in made for booking in day]
        given = next((b for b in tours if b.starts_at <= now), None)
        if given:
            bookings.record_tour_outcome(booking=given, status=TourBooking.Status.COMPLETED)
            self.progress(f"{school.slug}: {given.reference} marked completed")
        later = [b for b in tours if b.starts_at > now + dt.timedelta(hours=school.min_notice_hours + 24)]
        if len(later) >= 2:
            cancelled = bookings.cancel_tour(booking=later[0], reason="The family chose another school")
            self.progress(f"{school.slug}: {cancelled.reference} cancelled")
            moving = later[-1]
            local = moving.local_start
            for at in bookings.tour_times(school):
                if at == local.time():
                    continue
                try:
                    moved = bookings.reschedule_tour(booking=moving, new_date=local.date(), new_time=at)
                except bookings.BookingError:
                    continue
                self.progress(f"{school.slug}: {moving.reference} moved to {at:%H:%M} as {moved.reference}")
                break

    def seed_reminder_demo(self, schools: list[School]) -> None:
        """A family booked (a day ago) on the next open tour of the demo schools, so that `make run`'s embedded
        scheduler sends its reminder (an e-mail, printed by the console backend) within a minute when that
        tour is within a day. One at a time: a later run books another once it has passed."""
        now = timezone.now()
        if TourBooking.objects.filter(parent_email=REMINDER_DEMO_FAMILY["parent_email"], starts_at__gt=now,
                                      status=TourBooking.Status.SCHEDULED).exists():
            return
        candidates = [(starts_at, school) for school in schools if (starts_at := self.next_open_tour(school, now))]
        if not candidates:
            return
        starts_at, school = min(candidates, key=lambda pair: pair[0])
        local = starts_at.astimezone(school.tz)
        booked_when = min(now, starts_at - dt.timedelta(hours=school.min_notice_hours + 24))
        contact = find_or_create_contact(school=school, phone=REMINDER_DEMO_FAMILY["parent_phone"],
                                         email=REMINDER_DEMO_FAMILY["parent_email"],
                                         name=REMINDER_DEMO_FAMILY["parent_name"])
        try:
            booking = bookings.book_tour(school=school, contact=contact, local_date=local.date(),
                                         local_time=local.time(), now=booked_when, **REMINDER_DEMO_FAMILY)
        except bookings.BookingError as exc:
            self.progress(self.style.WARNING(f"{school.slug}: reminder demo booking refused: {exc.message}"))
            return
        TourBooking.objects.filter(pk=booking.pk).update(created_at=booked_when)  # booked then, as `now` says
        due = "due now" if starts_at - now <= dt.timedelta(hours=24) else "sent a day before it"
        self.progress(f"{school.slug}: demo tour {booking.reference} on {bookings.describe_date(local.date())} at "
                      f"{local:%H:%M}, its reminder is {due}")

    @staticmethod
    def next_open_tour(school: School, now: dt.datetime) -> dt.datetime | None:
        """The school's next tour start (an open day, a tour time, a seat left) from a few minutes from now."""
        today = bookings.local_now(school, now).date()
        for day in (today + dt.timedelta(days=n) for n in range(8)):
            starts = [dt.datetime.combine(day, at, school.tz) for at in bookings.tour_times(school)]
            open_starts = {slot.starts_at for slot in bookings.available_slots(
                school, day, day, now=min(starts) - dt.timedelta(hours=school.min_notice_hours + 24))}
            later = sorted(s for s in open_starts if s > now + dt.timedelta(minutes=5))
            if later:
                return later[0]
        return None

    def seed_callbacks(self, school: School, spec: dict, today: dt.date) -> None:
        for request in spec["callbacks"]:
            request = dict(request)
            due = today + dt.timedelta(days=request.pop("due_in_days", 0))
            while due < today and not callbacks.is_open_for_calls(school, due):  # an overdue one: an open day
                due -= dt.timedelta(days=1)
            if request.get("specific_time"):
                request["specific_time"] = dt.time.fromisoformat(request["specific_time"])
            # asked before the calls of its day began (an overdue one came earlier), so its window was still ahead
            asked = dt.datetime.combine(due, school.calling_hours_start, school.tz) - dt.timedelta(hours=1)
            contact = find_or_create_contact(school=school, phone=request["parent_phone"],
                                             name=request["parent_name"])
            try:
                callback = callbacks.request_callback(school=school, contact=contact, due_date=due, now=asked,
                                                     **request)
            except bookings.BookingError as exc:
                self.progress(self.style.WARNING(f"{school.slug}: example callback refused: {exc.message}"))
                continue
            self.progress(f"{school.slug}: callback {callback.reference} for {callback.parent_name} "
                          f"due {callback.due_date:%a %d %b}")

    # --- output ----------------------------------------------------------------------

    def progress(self, line: str) -> None:
        self.stdout.write(line)

    def print_summary(self, schools: list[School], users: dict[str, bool], password: str, base: str) -> None:
        shown = password if settings.DEBUG else "(the value of DEMO_ADMIN_PASSWORD)"
        lines = ["", "Demo ready.", f"  Staff console: {base}{reverse('admin:index')}"]
        for username, group_name, _ in DEMO_USERS:
            role = group_name or "superuser"
            if users[username]:
                lines.append(f"  {role:<11} username: {username:<11} password: {shown}")
            else:
                lines.append(f"  {role:<11} username: {username:<11} password: unchanged "
                             "(existing user: the DEMO_ADMIN_PASSWORD it was created with, `make run` keeps it "
                             "in .env.local; --reset-password sets it again)")
        for school in schools:
            lines.append(f"  Chat, {school.name}: {base}{reverse('chatbot:chat', args=[school.slug])}")
        self.stdout.write(self.style.SUCCESS("\n".join(lines)))


def base_url(value: str) -> str:
    """An http(s) URL with a host, without the trailing slash (the printed paths start with one)."""
    try:
        parts = urlsplit(value)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # a port that is not a number, or out of range
        valid = False
    if not valid:
        raise argparse.ArgumentTypeError(f"{value!r} is not a URL like http://127.0.0.1:8000")
    return value.rstrip("/")


def demo_password() -> str:
    """DEMO_ADMIN_PASSWORD; on a development install without one, a fresh random password (printed once).

    No password is fixed in the repository: `make run` keeps a random one in .env.local (config/local_env.py).
    """
    password = os.environ.get("DEMO_ADMIN_PASSWORD", "")
    if password:
        return password
    if not settings.DEBUG:
        raise CommandError(
            "DEBUG is off, so seed_demo will not invent a password for staff users. "
            "Set DEMO_ADMIN_PASSWORD to the password the demo users should have."
        )
    return secrets.token_urlsafe(12)
