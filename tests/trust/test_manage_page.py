"""The parent's "change or cancel" page: the school's clock, the parent's language, the widget's look, and a 4xx
(never a 500) for a time that is no real date."""

import datetime as dt

import pytest

from bookings import services
from bookings.links import manage_path
from bookings.models import TourBooking
from tests.factories import ContactFactory

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:No directory at:UserWarning")]


@pytest.fixture
def booking(school, next_weekday):
    assert school.time_zone == "Asia/Singapore"
    return services.book_tour(school=school, contact=ContactFactory(school=school, language="zh-hans"),
                              parent_name="Wei Ling", parent_phone="+6591234567", child_name="Vera",
                              local_date=next_weekday(school, 1), local_time=dt.time(9))


def _when(page) -> str:
    html = page.content.decode()
    start = html.index('data-role="when">') + len('data-role="when">')
    return html[start:html.index("</dd>", start)]


@pytest.mark.attack("low")
@pytest.mark.parametrize("slot", ["9999-12-31T23:59:00-23:59", "0001-01-01T00:00:00+14:00", "not a time",
                                  "2026-12-09T11:00:00"])
def test_a_move_to_a_time_that_is_no_real_date_is_a_400(client, booking, slot):
    response = client.post(manage_path(booking.reference), {"action": "reschedule", "slot": slot})
    assert response.status_code == 400
    booking.refresh_from_db()
    assert booking.status == TourBooking.Status.SCHEDULED and booking.local_start.time() == dt.time(9)


@pytest.mark.attack("low")
def test_an_unknown_action_is_a_400(client, booking):
    assert client.post(manage_path(booking.reference), {"action": "delete everything"}).status_code == 400


@pytest.mark.attack("pages")
def test_times_are_on_the_schools_clock_also_after_a_move(client, booking, settings):
    settings.TIME_ZONE = "UTC"
    path = manage_path(booking.reference)
    page = client.get(path)
    assert "09:00" in _when(page) and "01:00" not in page.content.decode()
    eleven = next(s for s in services.next_open_slots(booking.school)
                  if s.starts_at.astimezone(booking.school.tz).time() == dt.time(11))
    moved = client.post(path, {"action": "reschedule", "slot": eleven.starts_at.isoformat()}, follow=True)
    html = moved.content.decode()
    assert "11:00" in _when(moved) and "03:00" not in html
    assert html.count("11:00") >= 2, "the confirmation and the tour's time agree"
    for option in html.split("<option")[1:]:
        value, label = option.split('value="')[1].split('"')[0], option.split(">")[1].split("<")[0]
        assert f"{dt.datetime.fromisoformat(value).astimezone(booking.school.tz):%H:%M}" in label


@pytest.mark.attack("pages")
def test_the_page_speaks_the_parents_language(client, booking):
    html = client.get(manage_path(booking.reference)).content.decode()
    assert '<html lang="zh-hans">' in html
    assert "取消我的参观" in html and "已预约" in html and "Cancel my tour" not in html
    assert "星期" in _when(client.get(manage_path(booking.reference)))


def test_a_language_the_school_does_not_offer_falls_back_to_english(client, booking):
    booking.school.languages = ["en", "ms"]
    booking.school.save()
    html = client.get(manage_path(booking.reference)).content.decode()
    assert "Cancel my tour" in html and '<html lang="en">' in html


@pytest.mark.attack("pages")
def test_the_page_has_the_widgets_look_and_a_favicon(client, booking):
    html = client.get(manage_path(booking.reference)).content.decode()
    assert "<style>" not in html, "styles come from a stylesheet (the Content-Security-Policy allows no inline ones)"
    for asset in ("/static/bookings/manage.css", "/static/favicon.svg"):
        assert asset in html
        assert client.get(asset).status_code == 200
    assert "--mg-accent: #0b6e69" in b"".join(client.get("/static/bookings/manage.css").streaming_content).decode()
    assert client.get("/favicon.ico", follow=True).status_code == 200
