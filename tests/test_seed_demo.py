"""seed_demo: idempotent, the demo users and groups, and the DEBUG guard on the demo password."""

import datetime as dt
import io
import os
import re
import shutil
import subprocess

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import CommandError

from adminpanel.management.commands.seed_demo import Command
from bookings.models import CallbackRequest, School, SchoolClosure, TourBooking, TourSlot
from chatbot.models import FaqEntry
from crm.models import Activity, Contact, Deal

DEMO_PASSWORD = "a-demo-password-from-the-environment"
COUNTED = (School, SchoolClosure, FaqEntry, TourSlot, TourBooking, CallbackRequest, Contact, Deal, Activity, Group)


def seed(*args: str) -> str:
    out = io.StringIO()
    call_command(Command(), *args, stdout=out)
    return out.getvalue()


def counts() -> dict[str, int]:
    found = {model.__name__: model.objects.count() for model in COUNTED}
    found["User"] = get_user_model().objects.count()
    return found


@pytest.fixture(autouse=True)
def _development_install(settings, monkeypatch):
    """A development install (pytest-django runs with DEBUG off) with the password `make run` keeps in .env.local."""
    settings.DEBUG = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; not what is tested
    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", DEMO_PASSWORD)


@pytest.mark.django_db
def test_running_twice_changes_nothing():
    seed()
    first = counts()
    faq_stamps = list(FaqEntry.objects.order_by("pk").values_list("updated_at", flat=True))
    seed()
    assert counts() == first
    assert list(FaqEntry.objects.order_by("pk").values_list("updated_at", flat=True)) == faq_stamps

    assert first["School"] == 2
    assert first["User"] == 3
    assert first["TourBooking"] >= 10  # the desk's default week (tests/adminpanel/test_desk.py checks each day)
    assert first["CallbackRequest"] == 7
    for school in School.objects.all():
        assert FaqEntry.objects.filter(school=school, is_active=True).count() >= 30
        assert SchoolClosure.objects.filter(school=school).exists()
    assert 2 <= FaqEntry.objects.filter(school__isnull=True).count() <= 3


@pytest.mark.django_db
def test_rerunning_keeps_what_staff_edited():
    seed()
    entry = FaqEntry.objects.filter(school__slug="tampines").first()
    entry.answer = "Edited by admissions."
    entry.is_active = False
    entry.save()
    school = School.objects.get(slug="riverside")
    school.tour_start_times = ["11:00"]
    school.save()

    seed()
    entry.refresh_from_db()
    school.refresh_from_db()
    assert (entry.answer, entry.is_active) == ("Edited by admissions.", False)
    assert school.tour_start_times == ["11:00"]


@pytest.mark.django_db
def test_the_two_schools_have_their_own_rules_and_content():
    seed()
    tampines, riverside = School.objects.get(slug="tampines"), School.objects.get(slug="riverside")
    assert (tampines.time_zone, tampines.default_phone_region, tampines.closed_weekdays) == ("Asia/Singapore", "SG",
                                                                                              [5, 6])
    assert (riverside.time_zone, riverside.default_phone_region, riverside.closed_weekdays) == ("Europe/London", "GB",
                                                                                                [6])
    assert riverside.whatsapp_phone_number_id == "100000000000002"
    assert (tampines.chatwoot_inbox_ids, riverside.chatwoot_inbox_ids) == ([1], [2])
    tampines_answers = set(FaqEntry.objects.filter(school=tampines).values_list("answer", flat=True))
    riverside_answers = set(FaqEntry.objects.filter(school=riverside).values_list("answer", flat=True))
    assert not tampines_answers & riverside_answers
    for school in (tampines, riverside):
        questions = set(FaqEntry.objects.filter(school__in=[school]).values_list("question", flat=True))
        questions |= set(FaqEntry.objects.filter(school__isnull=True).values_list("question", flat=True))
        for entry in FaqEntry.objects.filter(school=school, translation_of__isnull=True):
            assert entry.tags
            assert entry.related_topics and set(entry.related_topics) <= questions - {entry.question}
        for version in FaqEntry.objects.filter(school=school, translation_of__isnull=False):  # fees in zh, ms, ta
            assert version.translation_of.school == school and version.language != version.translation_of.language
        for booking in TourBooking.objects.filter(school=school):
            local = booking.local_start
            assert local.weekday() not in school.closed_weekdays
            assert local.strftime("%H:%M") in school.tour_start_times
            assert not SchoolClosure.objects.filter(school=school, date=local.date()).exists()


@pytest.mark.django_db
def test_users_and_groups():
    output = seed()
    users = {user.username: user for user in get_user_model().objects.all()}
    admin, reviewer, admissions = users["admin"], users["reviewer"], users["admissions"]
    assert admin.is_superuser and admin.is_staff and admin.check_password(DEMO_PASSWORD)
    assert reviewer.is_staff and not reviewer.is_superuser and reviewer.check_password(DEMO_PASSWORD)
    assert admissions.is_staff and not admissions.is_superuser and admissions.check_password(DEMO_PASSWORD)
    assert list(reviewer.groups.values_list("name", flat=True)) == ["Reviewer"]
    assert list(admissions.groups.values_list("name", flat=True)) == ["Admissions"]

    assert reviewer.has_perms(["chatbot.view_conversation", "chatbot.change_conversation", "chatbot.view_message",
                               "chatbot.view_reasoningstep"])
    assert not reviewer.has_perm("chatbot.delete_conversation")
    assert not reviewer.has_perm("bookings.change_tourbooking")
    assert admissions.has_perms(["bookings.add_tourbooking", "bookings.change_tourbooking",
                                 "bookings.change_callbackrequest", "chatbot.change_faqentry", "chatbot.add_faqentry",
                                 "crm.change_contact", "crm.view_deal"])
    assert not admissions.has_perm("chatbot.change_conversation")

    assert "http://127.0.0.1:8000/admin/" in output
    assert f"username: admin       password: {DEMO_PASSWORD}" in output
    assert "http://127.0.0.1:8000/chat/tampines/" in output
    assert "http://127.0.0.1:8000/chat/riverside/" in output


@pytest.mark.django_db
def test_the_printed_links_use_the_base_url():
    output = seed("--base-url", "http://localhost:9000/")
    assert "Staff console: http://localhost:9000/admin/" in output
    assert "http://localhost:9000/chat/tampines/" in output and "http://localhost:9000/chat/riverside/" in output
    assert ":8000" not in output
    for wrong in ("localhost:9000", "ftp://localhost:9000", "http://localhost:port", "http://"):
        with pytest.raises(CommandError, match="is not a URL like"):
            seed("--base-url", wrong)


MAKE = shutil.which("make")


@pytest.mark.skipif(MAKE is None, reason="make is not installed")
@pytest.mark.parametrize(("variables", "url"), [((), "http://127.0.0.1:8000"),
                                                (("PORT=9000",), "http://127.0.0.1:9000"),
                                                (("HOST=0.0.0.0", "PORT=9000"), "http://127.0.0.1:9000"),
                                                (("HOST=localhost",), "http://localhost:8000")])
def test_make_run_passes_its_host_and_port(variables, url):
    """`make run PORT=9000` seeds (and prints) with the address it serves on: a dry run of the Makefile."""
    # Without what a calling make or the shell would pass down (`make test PORT=9000`, PORT in the environment).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "HOST", "PORT",
                                                            "BASE_URL")}
    dry_run = subprocess.run([MAKE, "-n", "run", *variables], cwd=settings.BASE_DIR, env=env,  # noqa: S603
                             capture_output=True, text=True, check=True).stdout
    assert f"manage.py seed_demo --base-url {url}\n" in dry_run
    assert f"Staff console:     {url}/admin/" in dry_run


@pytest.mark.django_db
def test_existing_password_is_kept_unless_reset():
    seed()
    admin = get_user_model().objects.get(username="admin")
    admin.set_password("changed-by-staff-42")
    admin.save()

    output = seed()
    admin.refresh_from_db()
    assert admin.check_password("changed-by-staff-42")
    assert "password: unchanged" in output

    seed("--reset-password")
    admin.refresh_from_db()
    assert admin.check_password(DEMO_PASSWORD)


@pytest.mark.django_db
def test_debug_off_needs_an_explicit_password(settings, monkeypatch):
    settings.DEBUG = False
    monkeypatch.delenv("DEMO_ADMIN_PASSWORD")
    with pytest.raises(CommandError, match="DEMO_ADMIN_PASSWORD"):
        seed()
    assert not School.objects.exists()
    assert not get_user_model().objects.exists()

    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", "a-long-production-secret")
    output = seed()
    assert get_user_model().objects.get(username="admin").check_password("a-long-production-secret")
    assert "a-long-production-secret" not in output


@pytest.mark.django_db
def test_without_a_password_a_development_install_gets_a_random_one_printed(monkeypatch):
    """No demo password is fixed in the repository (issue 12): each fresh install gets its own."""
    monkeypatch.delenv("DEMO_ADMIN_PASSWORD")
    output = seed()
    [printed] = re.findall(r"username: admin\s+password: (\S+)", output)
    assert len(printed) >= 16 and printed != "concierge-demo"
    assert get_user_model().objects.get(username="admin").check_password(printed)
    get_user_model().objects.all().delete()
    [again] = re.findall(r"username: admin\s+password: (\S+)", seed())
    assert again != printed


@pytest.mark.django_db
def test_the_demo_family_has_a_reminder_due_at_start_up():
    """`make run`: the embedded scheduler's first pass sends the demo tour's reminder (a Monday morning here)."""
    import time_machine

    from chatbot.reminders.services import due_reminders, send_due_reminders

    monday_10_singapore = dt.datetime(2027, 3, 1, 2, 0, tzinfo=dt.UTC)
    with time_machine.travel(monday_10_singapore, tick=False):
        seed()
        [demo] = TourBooking.objects.filter(parent_email="grace.lim@example.com")
        assert demo.starts_at - dt.timedelta(hours=24) <= monday_10_singapore < demo.starts_at
        assert [d.booking for d in due_reminders()] == [demo], "the demo tour, and only it, is due"
        assert send_due_reminders() == {"sent": 1}
        seed()
        assert TourBooking.objects.filter(parent_email="grace.lim@example.com").count() == 1, "one at a time"
