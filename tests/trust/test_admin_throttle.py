"""Issue 26 (low): 40 wrong admin passwords in a row met no delay and no lockout.

django-axes now counts failed logins per username and client address: past AXES_FAILURE_LIMIT (5) the pair is
locked out (HTTP 429, even with the right password) until staff unlock it or AXES_COOLOFF_MINUTES pass."""

import pytest
from axes.models import AccessAttempt
from django.core.management import call_command
from django.test import Client

from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db]

LOGIN = "/admin/login/?next=/admin/"
ATTACKER, COLLEAGUE = "203.0.113.7", "198.51.100.20"


def attempt(password: str, address: str = ATTACKER, username: str = "mrs-tan"):
    return Client(REMOTE_ADDR=address).post(LOGIN, {"username": username, "password": password})


def test_forty_wrong_passwords_lock_the_username_out_at_that_address(settings):
    UserFactory(username="mrs-tan")
    answers = [attempt(f"guess-{n}").status_code for n in range(40)]
    limit = settings.AXES_FAILURE_LIMIT
    assert answers[:limit - 1] == [200] * (limit - 1), "the login form again, with its error"
    assert set(answers[limit:]) == {429}, "locked out"
    assert attempt("correct-horse-battery").status_code == 429, "not even the right password gets through now"
    assert AccessAttempt.objects.get(username="mrs-tan", ip_address=ATTACKER).failures_since_start == 41

    # The stranger cannot lock the member of staff out from elsewhere.
    assert attempt("correct-horse-battery", address=COLLEAGUE).status_code == 302


def test_staff_unlock_a_locked_out_login(settings):
    UserFactory(username="mrs-tan")
    for n in range(settings.AXES_FAILURE_LIMIT):
        attempt(f"guess-{n}")
    assert attempt("correct-horse-battery").status_code == 429

    call_command("axes_reset_username", "mrs-tan")
    assert attempt("correct-horse-battery").status_code == 302, "unlocked: the right password logs in"


def test_the_access_attempts_are_in_the_admin_for_staff_to_unlock(settings):
    """Deleting the attempt in the admin is the other way to unlock."""
    UserFactory(username="mrs-tan")
    for n in range(settings.AXES_FAILURE_LIMIT):
        attempt(f"guess-{n}")
    head = UserFactory(username="head", is_superuser=True)
    client = Client()
    client.force_login(head)
    page = client.get("/admin/axes/accessattempt/")
    assert page.status_code == 200 and b"mrs-tan" in page.content
    locked = AccessAttempt.objects.get(username="mrs-tan")
    response = client.post(f"/admin/axes/accessattempt/{locked.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and not AccessAttempt.objects.exists()
    assert attempt("correct-horse-battery").status_code == 302
