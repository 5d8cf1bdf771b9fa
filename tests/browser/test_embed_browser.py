"""The widget on a school's own website: a page on another origin than the concierge, in a real browser.

The concierge runs on 127.0.0.1 (a live daphne); the school's website is a plain
HTTP server on 127.0.0.2 (listed in CHAT_ALLOWED_ORIGINS) or 127.0.0.3 (not
listed), neither in ALLOWED_HOSTS, whose page only carries the script tag.
"""

import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from channels.testing import ChannelsLiveServerTestCase
from django.db import connections
from django.test import override_settings
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from bookings.models import TourBooking
from crm.models import Contact
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_chat_browser import RECORD_SOCKETS, TAMPINES, ForkedDaphne
from tests.factories import SchoolFactory

WAIT = 20
REPLY_WAIT = 30

SCHOOL_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tampines Green: Admissions</title></head>
<body><h1>Visit Tampines Green</h1><button type="button" class="book" data-stc-open>Book a tour</button>
<script src="{concierge}/static/chatbot/widget.js" data-school="tampines" defer></script></body></html>
"""


class SchoolWebsite:
    """The school's website: one page embedding the concierge's widget, on its own host and port."""

    def __init__(self, host: str) -> None:
        self.concierge = ""  # the widget's origin, known once the live server runs
        site = self

        class Page(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = SCHOOL_PAGE.format(concierge=site.concierge).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                return None

        self.server = ThreadingHTTPServer((host, 0), Page)
        self.url = f"http://{host}:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.browser
@pytest.mark.usefixtures("chrome")
class TestWidgetOnTheSchoolsWebsite(ChannelsLiveServerTestCase):
    host = "127.0.0.1"
    serve_static = True
    ProtocolServerProcess = ForkedDaphne

    @classmethod
    def setUpClass(cls):
        cls.listed, cls.unlisted = SchoolWebsite("127.0.0.2"), SchoolWebsite("127.0.0.3")
        # Set before daphne is forked, so the live server has it.
        cls.embedding = override_settings(CHAT_ALLOWED_ORIGINS=[cls.listed.url])
        cls.embedding.enable()
        connections.close_all()  # no SQLite connection may cross the fork (see test_chat_browser.py)
        super().setUpClass()
        cls.listed.concierge = cls.unlisted.concierge = f"http://{cls.host}:{cls._port}"

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.embedding.disable()
        cls.listed.stop()
        cls.unlisted.stop()

    def _fixture_teardown(self):
        self.browser.get("about:blank")  # close the page's sockets before the flush
        super()._fixture_teardown()

    def wait(self, condition, timeout: float = WAIT, message: str = ""):
        try:
            return WebDriverWait(self.browser, timeout, poll_frequency=0.1,
                                 ignored_exceptions=(StaleElementReferenceException,)).until(condition)
        except TimeoutException:
            self.browser.save_screenshot(str(ARTIFACTS / f"failed-{self._testMethodName}.png"))
            raise AssertionError(message or "timed out") from None

    def find(self, selector: str):
        return self.browser.find_element(By.CSS_SELECTOR, selector)

    def find_all(self, selector: str):
        return self.browser.find_elements(By.CSS_SELECTOR, selector)

    def state(self) -> str:
        return self.find(".stc-root").get_attribute("data-state")

    def send(self, text: str) -> None:
        before = len(self.find_all(".stc-msg-assistant"))
        box = self.find(".stc-input")
        box.send_keys(text)
        box.send_keys(Keys.ENTER)
        self.wait(lambda d: len(self.find_all(".stc-msg-assistant")) > before, REPLY_WAIT, f"no reply to {text!r}")

    def test_a_parent_books_a_tour_from_the_listed_school_website(self):
        SchoolFactory(**TAMPINES)
        self.browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_SOCKETS})
        self.browser.get(self.listed.url)
        assert self.browser.title == "Tampines Green: Admissions"
        self.wait(lambda d: self.find_all(".stc-launcher"), message="the widget did not load from the concierge")
        self.find("button.book").click()
        self.wait(lambda d: self.state() == "open", message=f"no session; the widget is {self.state()!r}")
        socket_url = self.browser.execute_script("return window.__sockets[0].url")
        assert socket_url.startswith(f"ws://{self.host}:{self._port}/ws/chat/tampines/"), \
            "the socket goes to the concierge, not to the page's host"
        assert TAMPINES["name"] in self.find(".stc-title").get_attribute("textContent")

        self.send("Hello! Could we book a campus tour for next week?")
        self.wait(lambda d: self.find_all(".stc-buttons .stc-option"), message="no slot buttons")
        before = len(self.find_all(".stc-msg-assistant"))
        self.find_all(".stc-buttons .stc-option")[0].click()
        self.wait(lambda d: len(self.find_all(".stc-msg-assistant")) > before, REPLY_WAIT, "no reply to the slot")
        self.send("I'm Sarah Tan, my number is 9123 4567. My daughter Mei is 5.")
        for _ in range(2):  # the model may still want a yes
            if self.find_all(".stc-card-booking"):
                break
            self.send("Yes, please book it.")
        self.wait(lambda d: self.find_all(".stc-card-booking"), message="no booking card")
        booking = TourBooking.objects.get()
        self.browser.save_screenshot(str(ARTIFACTS / "embed-01-booking-confirmed.png"))

        # The calendar link is the concierge's, absolute, and downloads from any page.
        href = self.find(".stc-card-booking a.stc-card-action").get_attribute("href")
        assert href.startswith(f"{self.listed.concierge}/calendar/"), href
        with urllib.request.urlopen(href, timeout=10) as response:  # noqa: S310 - the live server's own URL
            assert response.headers["Content-Type"].startswith("text/calendar")
            assert booking.reference in response.read().decode()

        # The school website keeps the visitor: a reload shows the same conversation.
        self.browser.refresh()
        self.find("button.book").click()
        self.wait(lambda d: self.state() == "open" and self.find_all(".stc-card-booking"),
                  message="the history did not come back on the school's website")

    def test_a_website_not_listed_cannot_open_the_chat(self):
        SchoolFactory(**TAMPINES)
        self.browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_SOCKETS})
        self.browser.get(self.unlisted.url)
        self.wait(lambda d: self.find_all(".stc-launcher"), message="the widget did not load from the concierge")
        self.find("button.book").click()
        self.wait(lambda d: self.browser.execute_script(
            "return window.__sockets.length > 0 && window.__sockets[0].readyState === WebSocket.CLOSED"),
            message="the first handshake was not refused")
        assert self.state() in ("connecting", "reconnecting")
        assert not Contact.objects.exists(), "the consumer never ran: no visitor was created"
