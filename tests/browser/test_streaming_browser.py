"""A hosted model's answer in a real browser: the widget shows it as it is written, then the reply in its place.

daphne is forked with the settings of a hosted model (LLM_MODEL=openai/..., LLM_API_BASE at the local stand-in
in this process, `quality.bench.standin`), so the turn streams through litellm's own client.
"""

import pytest
from django.test import override_settings

from chatbot.models import Message
from quality.bench.standin import Say, StandIn
from tests.browser.test_chat_browser import REPLY_WAIT, TAMPINES, BrowserChat
from tests.factories import SchoolFactory

ANSWER = ("We have tours on Tuesday at nine and on Thursday at two in the afternoon; each takes about an hour "
          "and ends with time for your questions. Which one suits you?")


@pytest.mark.browser
@pytest.mark.usefixtures("chrome")
class TestStreamedAnswerInTheBrowser(BrowserChat):
    @classmethod
    def setUpClass(cls):
        cls.stand_in = StandIn([Say(ANSWER, seconds=2.0)]).__enter__()
        cls.hosted = override_settings(LLM_MODEL="openai/standin", LLM_API_BASE=cls.stand_in.api_base,
                                       LLM_API_KEY="sk-local", CHAT_BURST_WINDOW_SECONDS=0)
        cls.hosted.enable()  # before daphne is forked: it answers with the hosted model
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.hosted.disable()
        cls.stand_in.__exit__(None, None, None)

    def draft_text(self) -> str:
        drafts = self.find_all(".stc-msg-draft .stc-bubble")
        return drafts[0].get_attribute("textContent") if drafts else ""

    def test_the_answer_shows_as_it_is_written_and_the_reply_takes_its_place(self):
        SchoolFactory(**TAMPINES)
        self.browser.get(f"{self.live_server_url}/chat/tampines/")
        self.wait_connected()
        box = self.find(".stc-input")
        box.send_keys("Which days can we visit?\n")

        partial = self.wait(lambda d: (text := self.draft_text()) and text != ANSWER and text, REPLY_WAIT,
                            "no draft while the answer was written")
        assert ANSWER.startswith(partial)
        assert self.find(".stc-msg-draft").get_attribute("aria-hidden") == "true"  # read once, as the reply
        self.shot("stream-01-draft")

        self.wait(lambda d: not self.find_all(".stc-msg-draft") and self.replies(), REPLY_WAIT, "no reply")
        [reply] = self.replies()
        assert reply.find_element("css selector", ".stc-bubble").get_attribute("textContent") == ANSWER
        assert not self.find_all(".stc-replaced")  # the reply is the text shown: nothing to say
        assert Message.objects.get(role="assistant").text == ANSWER
        self.shot("stream-02-reply")
