"""A Content-Security-Policy on the chat page, the manage page and the admin: scripts, styles and sockets from
this site only, no inline script or style, no framing. (tests/browser runs the widget and the console under it.)"""

import re

import pytest

from bookings.links import manage_path
from tests.factories import TourBookingFactory

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:No directory at:UserWarning")]


def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in (p.strip() for p in header.split(";")) if part}


def assert_strict(response) -> None:
    found = policy(response)
    for directive in ("default-src", "script-src", "style-src", "connect-src"):
        assert found[directive] == ["'self'"], (directive, found)
    assert found["object-src"] == ["'none'"] and found["frame-ancestors"] == ["'none'"]
    html = response.content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "an inline script would be blocked"
    assert "<style" not in html and ' style="' not in html, "an inline style would be blocked"


@pytest.mark.attack("low")
def test_the_chat_page_has_a_strict_policy(client, school):
    assert_strict(client.get(f"/chat/{school.slug}/"))


@pytest.mark.attack("low")
def test_the_manage_page_has_a_strict_policy(client, school):
    booking = TourBookingFactory(school=school)
    assert_strict(client.get(manage_path(booking.reference)))


@pytest.mark.attack("low")
def test_the_admin_has_a_strict_policy(admin_client, school):
    for path in ("/admin/login/", "/admin/", "/admin/chatbot/conversation/", "/admin/bookings/tourbooking/"):
        response = admin_client.get(path, follow=True)
        assert response.status_code == 200, path
        assert policy(response)["script-src"] == ["'self'"], path
