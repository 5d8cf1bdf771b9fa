"""A parent in a real browser: the full-page chat and the bubble, against a live daphne and the offline model.

Each state is saved as a PNG in test-artifacts/ (gitignored) for a look by eye.
"""

import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from asgiref.sync import SyncToAsync
from channels.testing import ChannelsLiveServerTestCase
from daphne.testing import DaphneProcess
from django.core.management.base import CommandError
from django.db import OperationalError, connections
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from bookings.models import TourBooking
from tests.browser.conftest import ARTIFACTS
from tests.factories import SchoolFactory

WAIT = 20
REPLY_WAIT = 30

RECORD_SOCKETS = """
(function () {
  var Native = window.WebSocket;
  window.__sockets = [];
  function Recording(url, protocols) {
    var socket = protocols === undefined ? new Native(url) : new Native(url, protocols);
    socket.__sent = [];
    var send = socket.send.bind(socket);
    socket.send = function (data) { socket.__sent.push(JSON.parse(data)); return send(data); };
    window.__sockets.push(socket);
    return socket;
  }
  Recording.prototype = Native.prototype;
  ["CONNECTING", "OPEN", "CLOSING", "CLOSED"].forEach(function (k) { Recording[k] = Native[k]; });
  window.WebSocket = Recording;
})();
"""

TAMPINES = {
    "slug": "tampines",
    "name": "Tampines Green International School",
    "address": "21 Tampines Avenue 9, Singapore 529770",
    "time_zone": "Asia/Singapore",
    "default_phone_region": "SG",
    "tour_start_times": ["09:00", "11:00", "14:00", "16:00"],
    "closed_weekdays": [5, 6],
}


class ForkedDaphne(DaphneProcess):
    """daphne forked from the test process, minus what cannot cross a fork.

    asgiref's process-wide single-thread executor (used by database_sync_to_async
    outside a request) keeps its dead worker thread after the fork and would
    never run anything: the child gets a fresh one.
    """

    def run(self):
        SyncToAsync.single_thread_executor = ThreadPoolExecutor(max_workers=1)
        super().run()


class BrowserChat(ChannelsLiveServerTestCase):
    """The live server and the page's helpers (tests/browser/test_streaming_browser.py uses them too)."""

    host = "127.0.0.1"  # in ALLOWED_HOSTS, so the websocket origin check passes
    serve_static = True
    ProtocolServerProcess = ForkedDaphne

    @classmethod
    def setUpClass(cls):
        # No SQLite connection may cross the fork into daphne: the child would share the parent's WAL
        # bookkeeping and, once the parent closes its connection, read a deleted WAL (stale data).
        connections.close_all()
        super().setUpClass()

    def _fixture_teardown(self):
        """Flush the database once the page's sockets are closed.

        The live server may still be touching a table for the open page; on PostgreSQL
        the flush's TRUNCATE can then deadlock with it. Leave the page first, retry once.
        """
        self.browser.get("about:blank")
        try:
            super()._fixture_teardown()
        except (OperationalError, CommandError):
            time.sleep(1)
            super()._fixture_teardown()

    # --- helpers -------------------------------------------------------------------

    def shot(self, name: str) -> None:
        self.browser.save_screenshot(str(ARTIFACTS / f"{name}.png"))

    def wait(self, condition, timeout: float = WAIT, message: str = ""):
        try:
            return WebDriverWait(self.browser, timeout, poll_frequency=0.1,
                                 ignored_exceptions=(StaleElementReferenceException,)).until(condition)
        except TimeoutException:
            self.shot(f"failed-{self._testMethodName}")
            raise AssertionError(f"{message or 'timed out waiting'}; log: {self._log_text()}") from None

    def _log_text(self) -> str:
        """The chat log as one string, read in one script call so a reply arriving meanwhile cannot stale it."""
        return self.browser.execute_script(
            "return Array.from(document.querySelectorAll('.stc-messages > *'))"
            ".map(e => e.innerText).join(' | ');")

    def find(self, selector: str):
        return self.browser.find_element(By.CSS_SELECTOR, selector)

    def find_all(self, selector: str):
        return self.browser.find_elements(By.CSS_SELECTOR, selector)

    def wait_connected(self) -> None:
        self.wait(lambda d: self.find(".stc-root").get_attribute("data-state") == "open",
                  message="the widget never got its session")

    def replies(self):
        return self.find_all(".stc-msg-assistant")

    def last_reply_text(self) -> str:
        return self.find_all(".stc-msg-assistant .stc-bubble")[-1].get_attribute("textContent")

    def bubble_texts(self) -> list[str]:
        return [e.get_attribute("textContent") for e in self.find_all(".stc-msg .stc-bubble")]

    def send(self, text: str, *, wait_reply: bool = True) -> str:
        before = len(self.replies())
        box = self.find(".stc-input")
        box.send_keys(text)
        box.send_keys(Keys.ENTER)
        if not wait_reply:
            return ""
        self.wait(lambda d: len(self.replies()) > before, REPLY_WAIT, f"no reply to {text!r}")
        return self.last_reply_text()


@pytest.mark.browser
@pytest.mark.usefixtures("chrome")
class TestChatInTheBrowser(BrowserChat):
    # --- the full-page chat: a booking from start to finish ------------------------------

    def test_parent_books_a_tour_in_the_full_page_chat_and_sees_it_after_reload(self):
        SchoolFactory(**TAMPINES)
        self.browser.get(f"{self.live_server_url}/chat/tampines/")
        self.wait_connected()
        assert self.find(".stc-title").text == TAMPINES["name"]
        assert self.browser.switch_to.active_element == self.find(".stc-input")
        assert self.find(".stc-messages").get_attribute("aria-live") == "polite"
        self.shot("01-page-empty")

        # The reasoning is hidden until asked for; then the steps of each reply are there to read.
        toggle = self.find(".stc-reasoning-toggle")
        assert toggle.get_attribute("aria-pressed") == "false"
        toggle.click()
        assert toggle.get_attribute("aria-pressed") == "true"

        self.send("Hello! Could we book a campus tour for next week?")
        self.wait(lambda d: self.find_all(".stc-buttons .stc-option"), message="no slot buttons")
        steps = self.find_all(".stc-msg-assistant .stc-reasoning .stc-step")
        assert steps and any("check_availability" in s.get_attribute("textContent") for s in steps)
        self.wait(lambda d: all(s.is_displayed() for s in steps), message="the reasoning steps are not shown")
        self.shot("02-page-slots-with-reasoning")
        toggle.click()
        assert not any(s.is_displayed() for s in self.find_all(".stc-reasoning .stc-step"))

        # A slot button sends its value as the parent's message and retires the whole set.
        options = self.find_all(".stc-buttons .stc-option")
        chosen = options[min(2, len(options) - 1)]
        before = len(self.replies())
        chosen.click()
        assert all(not o.is_enabled() for o in options)
        self.wait(lambda d: len(self.replies()) > before, REPLY_WAIT, "no reply to the slot button")
        sent = self.find_all(".stc-msg-user .stc-bubble")[-1].get_attribute("textContent")
        assert sent == chosen.get_attribute("textContent")  # the words a person would: "Thu 26 Nov, 11:00"
        assert re.match(r"^[A-Z][a-z]{2} \d{1,2} [A-Z][a-z]{2}, \d{2}:\d{2}$", sent), sent
        self.shot("03-page-slot-chosen")

        self.send("I'm Sarah Tan, my number is 9123 4567. My daughter Mei is 5.")
        for _ in range(2):  # the model may still want a yes
            if self.find_all(".stc-card-booking"):
                break
            self.send("Yes, please book it.")
        self.wait(lambda d: self.find_all(".stc-card-booking"), message="no booking card")

        booking = TourBooking.objects.get()
        card = self.find(".stc-card-booking").get_attribute("textContent")
        assert self.find(".stc-card-booking .stc-reference").get_attribute("textContent") == booking.reference
        local = booking.local_start
        assert f"{local:%A} {local.day} {local:%B %Y}" in card
        assert f"{local:%H:%M}" in card
        assert "Mei" in card and TAMPINES["address"] in card
        calendar = self.find(".stc-card-booking a.stc-card-action")
        assert calendar.get_attribute("textContent") == "Add to calendar"
        assert calendar.get_attribute("href").startswith(f"{self.live_server_url}/calendar/")
        self.shot("04-page-booking-confirmed")

        # Reload: the same visitor, the same conversation, the whole history including the card.
        shown = self.bubble_texts()
        self.browser.refresh()
        self.wait_connected()
        self.wait(lambda d: self.find_all(".stc-card-booking"), message="the history lost the booking card")
        assert self.bubble_texts() == shown
        assert self.find(".stc-card-booking .stc-reference").get_attribute("textContent") == booking.reference
        assert all(not b.is_enabled() for b in self.find_all(".stc-buttons .stc-option"))
        self.shot("05-page-after-reload")

    # --- the parent's language ---------------------------------------------------------------

    def test_a_parent_writing_in_chinese_gets_the_widget_and_the_reply_in_chinese(self):
        SchoolFactory(**TAMPINES)
        self.browser.get(f"{self.live_server_url}/chat/tampines/")
        self.wait_connected()
        assert self.find(".stc-input").get_attribute("placeholder") == "Type your message\u2026"

        reply = self.send("你好！我想带女儿来参观学校，请问下周有空位吗？")
        assert re.search(r"[\u4e00-\u9fff]", reply) and "I can" not in reply, reply
        self.wait(lambda d: self.find(".stc-root").get_attribute("lang") == "zh-hans",
                  message="the widget did not switch to Chinese")
        assert self.find(".stc-input").get_attribute("placeholder") == "请输入您的信息\u2026"
        assert self.find(".stc-send").get_attribute("aria-label") == "发送信息"
        assert self.find(".stc-footer").text == "回复由AI助理撰写，并已根据学校资料核对。"
        assert self.find(".stc-status").text == "在线 · 几秒内回复"
        assert self.find(".stc-reasoning-label").get_attribute("textContent") == "显示推理过程"
        self.shot("05-page-in-chinese")

        # The same visitor comes back: the widget opens in Chinese at once, with the conversation.
        self.browser.refresh()
        self.wait_connected()
        self.wait(lambda d: self.find(".stc-root").get_attribute("lang") == "zh-hans",
                  message="the returning visitor's widget is not in Chinese")
        assert self.find(".stc-input").get_attribute("placeholder") == "请输入您的信息\u2026"
        assert reply in self.bubble_texts()

    def test_text_is_never_rendered_as_html_and_the_limit_is_enforced(self):
        SchoolFactory(**TAMPINES)
        self.browser.get(f"{self.live_server_url}/chat/tampines/")
        self.wait_connected()
        attack = '<img src=x onerror="window.__pwned=1"><b>bold</b>'
        self.send(attack)
        assert self.bubble_texts()[0] == attack
        assert not self.find_all(".stc-messages img") and not self.find_all(".stc-messages b")
        assert self.browser.execute_script("return window.__pwned === undefined")

        limit = int(self.find(".stc-input").get_attribute("maxlength"))
        assert limit > 0
        self.browser.execute_script(
            "var i = arguments[0]; i.value = 'x'.repeat(arguments[1] + 50); i.dispatchEvent(new Event('input'));",
            self.find(".stc-input"), limit)
        assert len(self.find(".stc-input").get_attribute("value")) == limit
        assert f"{limit} / {limit}" in self.find(".stc-counter").text
        self.shot("06-page-escaped-and-limit")

    def test_dropped_connection_reconnects_and_resends_the_unacknowledged_message_once(self):
        SchoolFactory(**TAMPINES)
        # Record every socket the page opens and every frame it sends.
        self.browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_SOCKETS})
        self.browser.get(f"{self.live_server_url}/chat/tampines/")
        self.wait_connected()

        # The message goes out, and the connection drops before its ack can come back.
        self.browser.execute_script("window.SchoolChat.send('Hello, do you have tours next week?');"
                                    "window.__sockets[0].close();")
        self.wait(lambda d: self.find(".stc-root").get_attribute("data-state") == "reconnecting",
                  message="the widget did not notice the drop")
        self.shot("10-page-reconnecting")
        self.wait_connected()
        self.wait(lambda d: len(self.replies()) == 1, REPLY_WAIT, "no reply after reconnecting")

        sockets = self.browser.execute_script("return window.__sockets.map(s => s.__sent)")
        assert len(sockets) == 2
        assert "visitor=" in self.browser.execute_script("return window.__sockets[1].url")
        first = [f for f in sockets[0] if f["type"] == "message"]
        again = [f for f in sockets[1] if f["type"] == "message"]
        assert len(first) == 1 and len(again) == 1
        assert again[0]["client_id"] == first[0]["client_id"]  # the server de-duplicates on it
        self.wait(lambda d: not self.find_all(".stc-msg-user[data-delivery='sending']"), message="never acked")
        assert self.bubble_texts().count("Hello, do you have tours next week?") == 1
        assert len(self.replies()) == 1
        self.shot("11-page-reconnected")

    def test_a_message_refused_by_the_limit_is_sent_again_by_itself_when_the_window_reopens(self):
        """The server refuses a message (`rate_limited`, `retry_after`): the widget says when it will send it, and
        sends it then, once, with the same client id; the parent does nothing."""
        SchoolFactory(**TAMPINES)
        self.browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_SOCKETS})
        self.browser.get(f"{self.live_server_url}/chat/tampines/")
        self.wait_connected()
        # The first send is answered as the limit answers it (the frame never reaches the server).
        self.browser.execute_script("""
          var socket = window.__sockets[0], send = socket.send;
          socket.send = function (data) {
            var frame = JSON.parse(data);
            socket.send = send;
            socket.__sent.push(frame);
            setTimeout(function () {
              socket.dispatchEvent(new MessageEvent('message', {data: JSON.stringify({type: 'error',
                code: 'rate_limited', client_id: frame.client_id, retry_after: 2,
                text: "You're sending messages very quickly. I'll send this one for you in a moment."})}));
            }, 50);
          };""")
        self.send("Do you have tours next week?", wait_reply=False)
        self.wait(lambda d: "Sending in" in self.find(".stc-msg-user").get_attribute("textContent"),
                  message="the widget did not say it will send it again")
        self.shot("12-page-held-by-the-limit")
        self.wait(lambda d: len(self.replies()) == 1, REPLY_WAIT, "not sent again by itself")
        sent = [f for f in self.browser.execute_script("return window.__sockets[0].__sent") if f["type"] == "message"]
        assert len(sent) == 2 and sent[0]["client_id"] == sent[1]["client_id"]
        assert self.bubble_texts().count("Do you have tours next week?") == 1
        assert not self.find_all(".stc-error"), "no error left for the parent to act on"

    def test_every_frame_and_block_type_renders_as_text(self):
        """Frames injected into the page's socket: typing, reasoning, queued, errors and the cards and chips."""
        SchoolFactory(**TAMPINES)
        self.browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_SOCKETS})
        self.browser.get(f"{self.live_server_url}/chat/tampines/")
        self.wait_connected()
        self.find(".stc-reasoning-toggle").click()

        def frame(payload: dict) -> None:
            self.browser.execute_script(
                "window.__sockets[0].dispatchEvent(new MessageEvent('message', {data: JSON.stringify(arguments[0])}));",
                payload)

        frame({"type": "typing", "active": True})
        assert self.find(".stc-typing").is_displayed()
        frame({"type": "reasoning_steps", "steps": [
            {"cycle": 1, "position": 0, "kind": "act", "content": "", "tool_name": "request_callback",
             "tool_arguments": {"parent_name": "<b>Sarah</b>"}, "tool_result": None, "latency_ms": None}]})
        frame({"type": "queued", "message_id": 999999, "text": "Got it. I'll answer this next."})
        frame({"type": "message", "id": 999998, "role": "assistant", "created_at": "2026-11-22T10:00:00+00:00",
               "steps": [{"cycle": 1, "position": 1, "kind": "answer", "content": "Done", "tool_name": "",
                          "tool_arguments": None, "tool_result": None, "latency_ms": 3}],
               "text": "Done <script>window.__pwned = 1</script>",
               "blocks": [
                   {"type": "callback_confirmation", "callback_id": "C-7KQ3XM", "parent_name": "Sarah <i>Tan</i>",
                    "parent_phone": "+6591234567", "best_time_to_call": "morning", "due_date": "2026-11-23",
                    "weekday": "Monday", "topic": "fees"},
                   {"type": "notice", "text": "Your tour T-ABC234 is cancelled."},
                   {"type": "chips", "options": [{"label": "What do the fees include?", "value": "x"}]},
                   {"type": "mystery", "text": "ignored"},
               ]})
        frame({"type": "error", "code": "bad_frame", "client_id": "", "text": "Send a JSON object."})

        assert not self.find(".stc-typing").is_displayed()
        reply = self.find(".stc-msg[data-id='999998']")
        assert self.find(".stc-msg[data-id='999998'] .stc-bubble").get_attribute("textContent") == (
            "Done <script>window.__pwned = 1</script>")
        assert "request_callback" in self.find(".stc-msg[data-id='999998'] .stc-reasoning").get_attribute(
            "textContent")  # the streamed steps moved under their reply
        callback = self.find(".stc-card-callback").get_attribute("textContent")
        assert "C-7KQ3XM" in callback and "Sarah <i>Tan</i>" in callback and "Monday 23 November 2026" in callback
        assert "T-ABC234 is cancelled" in self.find(".stc-notice").get_attribute("textContent")
        assert "I'll answer this next" in self.find(".stc-note-queued").get_attribute("textContent")
        assert self.find(".stc-note-error").get_attribute("textContent") == "Send a JSON object."
        assert not reply.find_elements(By.CSS_SELECTOR, "script, i, b")
        assert self.browser.execute_script("return window.__pwned === undefined")
        self.shot("12-page-frames-and-blocks")

        assert not self.find(".stc-welcome").is_displayed()
        self.find(".stc-related .stc-chip").click()  # a chip sends its label
        sent = self.browser.execute_script("return window.__sockets[0].__sent")
        assert {"type": "message", "text": "What do the fees include?"}.items() <= sent[-1].items()
        assert not self.find(".stc-related .stc-chip").is_enabled()

    # --- the bubble on the school's home page ---------------------------------------------

    def test_bubble_on_the_home_page_opens_from_the_keyboard_and_sends(self):
        SchoolFactory(**TAMPINES)
        self.browser.get(f"{self.live_server_url}/")
        assert TAMPINES["name"] in self.browser.title
        assert self.find_all("a[href='/chat/tampines/']")
        launcher = self.wait(lambda d: self.find_all(".stc-launcher"))[0]
        assert launcher.get_attribute("aria-expanded") == "false"
        assert not self.find(".stc-panel").is_displayed()
        self.shot("07-home-bubble-closed")

        launcher.send_keys(Keys.ENTER)  # a real <button>: Enter and Space open it
        self.wait(lambda d: self.find(".stc-panel").is_displayed(), message="Enter did not open the chat")
        assert launcher.get_attribute("aria-expanded") == "true"
        self.wait_connected()
        assert self.browser.switch_to.active_element == self.find(".stc-input")
        assert TAMPINES["name"] in self.find(".stc-title").get_attribute("textContent")

        reply = self.send("What time do your tours start?")
        assert reply
        self.shot("08-home-bubble-conversation")

        self.find(".stc-input").send_keys(Keys.ESCAPE)
        self.wait(lambda d: not self.find(".stc-panel").is_displayed(), message="Escape did not close the chat")
        assert self.browser.switch_to.active_element == launcher
        launcher.send_keys(Keys.SPACE)
        self.wait(lambda d: self.find(".stc-panel").is_displayed(), message="Space did not open the chat")
        assert len(self.replies()) == 1

        self.find(".stc-close").click()  # the page's own "Book a tour" buttons open it too
        self.wait(lambda d: not self.find(".stc-panel").is_displayed(), message="the close button did not close")
        self.find(".hero [data-stc-open]").click()
        self.wait(lambda d: self.find(".stc-panel").is_displayed(), message="data-stc-open did not open the chat")

    def test_bubble_fits_a_360px_phone(self):
        SchoolFactory(**TAMPINES)
        self.browser.set_window_size(360, 740)
        self.browser.get(f"{self.live_server_url}/")
        self.wait(lambda d: self.find_all(".stc-launcher"))[0].click()
        self.wait_connected()
        self.send("Hi, can I book a tour for next Tuesday morning?")
        width = self.browser.execute_script("return document.documentElement.clientWidth")
        panel = self.find(".stc-panel").rect
        assert panel["x"] >= 0 and panel["x"] + panel["width"] <= width + 1
        composer = self.find(".stc-send").rect
        assert composer["x"] + composer["width"] <= width + 1
        overflow = self.browser.execute_script(
            "return document.querySelector('.stc-messages').scrollWidth - "
            "document.querySelector('.stc-messages').clientWidth")
        assert overflow <= 0
        self.shot("09-phone-360")
