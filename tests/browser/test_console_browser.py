"""A reviewer in a real browser: log in, open a conversation, unfold a reasoning step, rate it (click and key),
and see the rating in the list. Screenshots go to test-artifacts/ (gitignored).
"""

import pytest
from django.contrib.staticfiles.testing import StaticLiveServerTestCase
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from adminpanel.management.commands.seed_demo import Command as SeedDemo
from chatbot.models import Conversation
from tests.adminpanel.conftest import make_conversation
from tests.browser.conftest import ARTIFACTS
from tests.factories import SchoolFactory, UserFactory

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
            return WebDriverWait(self.browser, WAIT, poll_frequency=0.1).until(condition)
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
