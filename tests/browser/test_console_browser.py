"""Staff in a real browser. A reviewer: log in, open a conversation, unfold a reasoning step, rate it (click and
key), and see the rating in the list. An admissions officer: the desk of a Singapore school in its local time,
a tour cancelled, the booking's history. Screenshots go to test-artifacts/ (gitignored).
"""

import datetime as dt

import pytest
from django.contrib.staticfiles.testing import StaticLiveServerTestCase
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from adminpanel.management.commands.seed_demo import Command as SeedDemo
from bookings.callbacks import request_callback
from bookings.services import book_tour, local_now
from chatbot.models import Conversation
from tests.adminpanel.conftest import make_conversation
from tests.browser.conftest import ARTIFACTS
from tests.factories import ContactFactory, SchoolClosureFactory, SchoolFactory, UserFactory

WAIT = 15
PASSWORD = "correct-horse-battery"


@pytest.mark.browser
@pytest.mark.usefixtures("chrome")
class TestConsoleInTheBrowser(StaticLiveServerTestCase):
    host = "127.0.0.1"

    def setUp(self):
        seeder = SeedDemo()
        seeder.progress = lambda line: None
        groups = seeder.seed_groups()
        self.reviewer = UserFactory(username="rita")
        self.reviewer.groups.add(groups["Reviewer"])
        school = SchoolFactory(name="Tampines Green International School")
        self.older = make_conversation(school, turns=1, question="What are the fees for Year 1?")
        self.conversation = make_conversation(
            school, turns=2, no_match=True, question="Do you have a swimming pool?",
            model="gpt-4o-mini -> offline/policy", outcome="faq_only", total_tokens=480,
        )

    # --- helpers -------------------------------------------------------------------

    def shot(self, name: str) -> None:
        self.browser.save_screenshot(str(ARTIFACTS / f"console-{name}.png"))

    def wait(self, condition, message: str = ""):
        try:
            return WebDriverWait(self.browser, WAIT, poll_frequency=0.1,
                                 ignored_exceptions=(StaleElementReferenceException,)).until(condition)
        except TimeoutException:
            self.shot(f"failed-{self._testMethodName}")
            raise AssertionError(message or "timed out") from None

    def find(self, selector: str, within=None):
        return (within or self.browser).find_element(By.CSS_SELECTOR, selector)

    def find_all(self, selector: str, within=None):
        return (within or self.browser).find_elements(By.CSS_SELECTOR, selector)

    def log_in(self, username: str) -> None:
        self.browser.get(f"{self.live_server_url}/admin/")
        self.wait(lambda d: self.find_all("#id_username"), "no login form")
        self.find("#id_username").send_keys(username)
        self.find("#id_password").send_keys(PASSWORD)
        self.find("input[type=submit]").click()
        self.wait(lambda d: self.find_all(".console-cards"), "the console index did not open")

    def rating_status(self) -> str:
        return self.find("[data-role=status]").text

    # --- the review flow ----------------------------------------------------------------

    def test_reviewer_opens_a_conversation_unfolds_a_step_rates_it_and_sees_it_in_the_list(self):
        self.log_in("rita")
        self.find(".console-card[href$='/admin/chatbot/conversation/']").click()
        self.wait(lambda d: self.find_all("#result_list"), "no conversation list")
        rows = self.find_all("#result_list tbody tr")
        assert len(rows) == 2
        assert "unrated" in rows[0].text
        self.shot("01-list")

        self.find("#result_list tbody tr:first-child th a").click()
        self.wait(lambda d: self.find_all(".cr-transcript"), "the review page did not open")
        assert f"/{self.conversation.pk}/change/" in self.browser.current_url
        assert "Do you have a swimming pool? (0)" in self.find(".cr-transcript").text
        assert "gpt-4o-mini -> offline/policy" in self.find(".cr-role-assistant .cr-model").text

        # The reasoning is folded; a click opens the trace, another one step with its pretty JSON.
        trace = self.find(".cr-role-assistant .cr-trace")
        assert trace.get_attribute("open") is None
        act = self.find(".cr-step-act", trace)
        assert not act.is_displayed()
        self.find("summary", trace).click()
        assert act.is_displayed()
        arguments = self.find("[data-role=arguments]", act)
        assert not arguments.is_displayed()
        self.find("summary", act).click()
        self.wait(lambda d: arguments.is_displayed(), "the step did not unfold")
        assert '"question": "Do you have a swimming pool?"' in arguments.text
        observe = self.find(".cr-step-observe", trace)
        self.find("summary", observe).click()
        assert '"status": "no_match"' in self.find("[data-role=result]", observe).text
        self.shot("02-review-step-open")

        # One click rates with the note, without leaving the page.
        url = self.browser.current_url
        self.find("#cr-note").send_keys("Should have offered a callback.")
        self.find(".cr-btn-good").click()
        self.wait(lambda d: "Saved: Good by rita" in self.rating_status(), f"not saved: {self.rating_status()}")
        assert self.browser.current_url == url
        assert "Good" in self.find("[data-role=current]").text and "rita" in self.find("[data-role=current]").text
        assert self.find(".cr-btn-good").get_attribute("aria-pressed") == "true"
        self.shot("03-review-rated")

        # The keyboard: b rates bad (the note field must not have the focus).
        self.find(".cr-facts").click()
        self.find("body").send_keys("b")
        self.wait(lambda d: "Saved: Bad by rita" in self.rating_status(), f"b did nothing: {self.rating_status()}")
        saved = Conversation.objects.get(pk=self.conversation.pk)
        assert (saved.rating, saved.rating_note, saved.rated_by_id) == ("bad", "Should have offered a callback.",
                                                                       self.reviewer.pk)
        assert saved.rated_at is not None

        # n opens the next unrated conversation.
        self.find("body").send_keys("n")
        self.wait(lambda d: f"/{self.older.pk}/change/" in d.current_url, "n did not open the next unrated one")

        # And the list shows who rated what.
        self.browser.get(f"{self.live_server_url}/admin/chatbot/conversation/")
        self.wait(lambda d: self.find_all("#result_list"))
        row = self.find(f"#result_list tbody tr:has(a[href*='/{self.conversation.pk}/change/'])")
        assert "Bad" in row.text and "rita" in row.text
        self.find("a[href*='rated=bad']").click()
        self.wait(lambda d: "rated=bad" in d.current_url)
        assert len(self.find_all("#result_list tbody tr")) == 1
        self.shot("04-list-rated")


@pytest.mark.browser
@pytest.mark.usefixtures("chrome")
class TestDeskOfASingaporeSchool(StaticLiveServerTestCase):
    """An admissions officer works the desk of a school in Singapore (UTC+8): every time is the school's."""

    host = "127.0.0.1"

    def setUp(self):
        seeder = SeedDemo()
        seeder.progress = lambda line: None
        groups = seeder.seed_groups()
        officer = UserFactory(username="adam")
        officer.groups.add(groups["Admissions"])
        self.school = SchoolFactory(name="Tampines Green International School", time_zone="Asia/Singapore",
                                    closed_weekdays=[5, 6])
        today = local_now(self.school).date()
        day = today + dt.timedelta(days=2)
        while day.weekday() in self.school.closed_weekdays:
            day += dt.timedelta(days=1)
        closed = day + dt.timedelta(days=1)
        while closed.weekday() in self.school.closed_weekdays:
            closed += dt.timedelta(days=1)
        SchoolClosureFactory(school=self.school, date=closed, reason="Deepavali")
        self.closed = closed
        contact = ContactFactory(school=self.school)
        self.tour = book_tour(school=self.school, contact=contact, parent_name="Priya Raman",
                              parent_phone="+6591234567", child_name="Arjun", child_age=6, local_date=day,
                              local_time=dt.time(14))
        self.callback = request_callback(school=self.school, contact=ContactFactory(school=self.school),
                                         parent_name="Mei Ling Wong", parent_phone="+6593456789",
                                         due_date=today, topic="Scholarships")

    shot = TestConsoleInTheBrowser.shot
    wait = TestConsoleInTheBrowser.wait
    find = TestConsoleInTheBrowser.find
    find_all = TestConsoleInTheBrowser.find_all
    log_in = TestConsoleInTheBrowser.log_in

    def test_officer_sees_local_times_on_the_desk_cancels_a_tour_and_finds_it_in_the_history(self):
        assert self.tour.starts_at.astimezone(dt.UTC).strftime("%H:%M") == "06:00"  # what a UTC page would say
        self.log_in("adam")
        self.find(".console-card[href$='/admin/desk/']").click()
        self.wait(lambda d: self.find_all(".desk-school"), "the desk did not open")
        heading = self.find(".desk-school h2").text
        assert "times in Asia/Singapore (Singapore time)" in heading

        # The 14:00 tour is listed at 14:00, on its day; no time on the desk is the UTC one.
        times = [cell.text for cell in self.find_all("[data-role=tour-time]")]
        assert times == ["14:00"]
        row = self.find(f"tr:has(a[href$='/tourbooking/{self.tour.pk}/change/'])")
        assert "Arjun" in row.text and "06:00" not in self.find(".desk-school").text
        day = self.find(f".desk-day[data-date='{self.tour.local_start:%Y-%m-%d}']")
        assert "1 tour booking" in day.text

        # Closed days say why; the callback card has the number to call.
        closed = self.find(f".desk-day[data-date='{self.closed:%Y-%m-%d}'] [data-role=closed]")
        assert closed.text == "Closed: Deepavali"
        call = self.find("[data-role=call]")
        assert call.get_attribute("href") == "tel:+6593456789" and "+65 9345 6789" in call.text
        self.shot("desk-singapore")

        # The cancel form says 14:00 in its title and its body.
        self.find(f"a[href*='/desk/tours/{self.tour.pk}/cancel/']").click()
        self.wait(lambda d: self.find_all("#id_reason"), "the cancel form did not open")
        assert "at 14:00 Singapore time" in self.browser.title
        assert self.find("[data-role=tour-time]").text.endswith("at 14:00 Singapore time")
        assert "06:00" not in self.find("#content").text
        self.shot("desk-cancel-form")
        self.find("#id_reason").send_keys("The family has moved to Penang")
        self.find("input[type=submit]").click()
        self.wait(lambda d: self.find_all(".messagelist"), "no confirmation after cancelling")
        assert f"{self.tour.reference} cancelled" in self.find(".messagelist").text
        assert "Cancelled" in self.find(f"tr:has(a[href$='/tourbooking/{self.tour.pk}/change/'])").text

        # The booking page and its history: the school's time, the zone named, who cancelled it and why.
        self.find(f"a[href$='/tourbooking/{self.tour.pk}/change/']").click()
        self.wait(lambda d: self.find_all("[data-role=school-zone]"), "the booking page did not open")
        content = self.find("#content").text
        assert "14:00 Singapore time" in content and "06:00" not in content and "6 a.m." not in content
        self.find("a.historylink").click()
        self.wait(lambda d: self.find_all("#change-history"), "no history page")
        history = self.find("#change-history").text
        assert "adam" in history and "Cancelled on the desk" in history and "14:00 Singapore time" in history
        assert "The family has moved to Penang" in history
        self.shot("booking-history")
