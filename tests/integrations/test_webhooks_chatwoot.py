"""The Chatwoot agent-bot webhook, end to end: real HTTP to a fake Chatwoot on 127.0.0.1."""

import re
import time

import pytest

from bookings.models import TourBooking
from chatbot.models import Conversation, Message
from crm.models import Contact, ExternalCall, FailedTask
from tests.factories import SchoolFactory
from tests.integrations import payloads as p
from tests.integrations.conftest import SECRET
from tests.integrations.fakes import FakeChatwoot, start_server

pytestmark = [pytest.mark.django_db(transaction=True)]

MESSAGES = r"/api/v1/accounts/1/conversations/123/messages"
TYPING = "/api/v1/accounts/1/conversations/123/toggle_typing_status"


@pytest.fixture
def school():
    return SchoolFactory(chatwoot_inbox_ids=[p.INBOX_ID])


def post(client, payload, *, secret=SECRET, raw: bytes | None = None, **headers):
    body = raw if raw is not None else p.dumps(payload)
    return client.post(f"/webhooks/chatwoot/{secret}/", data=body, content_type="application/json", **headers)


def replies(conversation_ref: str = "1:123") -> list[Message]:
    return list(Message.objects.filter(conversation__external_id=conversation_ref, role=Message.Role.ASSISTANT)
                .exclude(text="").order_by("created_at", "id"))


def test_an_incoming_message_is_stored_and_answered_through_the_api(client, school, chatwoot, echo_model, turns):
    echo_model.delay = 2.5  # a slow model: Chatwoot must still get its 200 at once (it gives up after 5 s)
    started = time.monotonic()
    response = post(client, p.message_created("Hello, I'd like to visit", message_id=9001))
    assert response.status_code == 200 and response.json() == {"result": "dispatched"}
    assert time.monotonic() - started < 1.5, "the webhook must answer without waiting for the turn"
    assert not chatwoot.posted
    turns.settle()

    contact = Contact.objects.get(school=school)
    assert (contact.chatwoot_contact_id, contact.phone, contact.whatsapp_name) == ("42", "+6591234567", "Ana")
    conversation = Conversation.objects.get(contact=contact)
    assert (conversation.channel, conversation.external_id, conversation.status) == ("chatwoot", "1:123", "active")
    inbound = Message.objects.get(conversation=conversation, role="user")
    assert (inbound.text, inbound.channel_message_id) == ("Hello, I'd like to visit", "9001")

    [post_call] = chatwoot.posts()
    assert post_call.path == MESSAGES
    assert post_call.headers["api_access_token"] == "bot-token"
    assert post_call.json == {"content": "Answered: Hello, I'd like to visit", "message_type": "outgoing",
                              "private": False}
    status_check = chatwoot.calls("GET", r"/api/v1/accounts/1/conversations/123")
    assert status_check and status_check[0].headers["api_access_token"] == "bot-token"
    [reply] = replies()
    assert reply.delivered_at is not None
    assert reply.channel_message_id == str(chatwoot.posted[0]["id"])


# --- the typing indicator --------------------------------------------------------------------------
def typing_toggles(chatwoot, count: int, timeout: float = 10.0) -> list:
    """The toggles Chatwoot got, once `count` have arrived (they are sent in the background)."""
    deadline = time.monotonic() + timeout
    while len(chatwoot.typing()) < count:
        assert time.monotonic() < deadline, f"only {chatwoot.typing()} arrived"
        time.sleep(0.05)
    return chatwoot.typing()


def test_the_parent_sees_typing_while_the_agent_works(client, school, chatwoot, echo_model, turns):
    echo_model.delay = 1.0
    post(client, p.message_created("Do you have tours on Friday?", message_id=9051))
    [on] = typing_toggles(chatwoot, 1)
    assert not chatwoot.posts(), "typing shows while the agent is still working, before the reply"
    assert (on.path, on.headers["api_access_token"], on.headers["Content-Type"], on.json) == (
        TYPING, "bot-token", "application/json", {"typing_status": "on"})
    turns.settle()
    on, off = typing_toggles(chatwoot, 2)
    assert (off.path, off.headers["api_access_token"], off.json) == (TYPING, "bot-token", {"typing_status": "off"})
    [reply] = replies()
    assert [c["content"] for c in chatwoot.posted] == [reply.text]
    assert list(ExternalCall.objects.values_list("key", flat=True)) == [f"chatwoot:message:{reply.pk}:0"], \
        "a typing toggle is not a message: nothing in the send ledger"


def test_a_failing_typing_indicator_never_fails_the_turn(client, school, chatwoot, echo_model, turns, caplog):
    chatwoot.fail_next = [("POST", TYPING, 500), ("POST", TYPING, 401)]
    post(client, p.message_created("hello"))
    turns.settle()
    typing_toggles(chatwoot, 2)
    [reply] = replies()
    assert reply.delivered_at is not None and [c["content"] for c in chatwoot.posted] == ["Answered: hello"]
    assert "typing indicator on in Chatwoot" in caplog.text and "typing indicator off in" in caplog.text
    assert not FailedTask.objects.exists(), "nothing retried, nothing dead-lettered"


def test_a_hanging_typing_call_does_not_hold_the_reply(client, school, chatwoot, echo_model, turns, caplog):
    chatwoot.slow_next = [("POST", TYPING, 5.0)]  # longer than the typing call waits
    post(client, p.message_created("hello"))
    turns.settle(timeout=40)
    inbound = Message.objects.get(role="user")
    [reply] = replies()
    assert (reply.created_at - inbound.created_at).total_seconds() < 2.5, "the turn did not wait for Chatwoot"
    assert reply.delivered_at is not None
    typing_toggles(chatwoot, 2, timeout=20)
    assert "typing indicator on in Chatwoot" in caplog.text and "ReadTimeout" in caplog.text


@pytest.fixture
def chatwoot_side_by_side(settings):
    """The fake Chatwoot on a server that answers requests concurrently, so a late request can overtake."""
    server = start_server(threaded=True)
    fake = FakeChatwoot().install(server)
    settings.CHATWOOT_URL, settings.CHATWOOT_API_TOKEN = server.url_for("/chatwoot"), fake.bot_token
    settings.CHATWOOT_USER_TOKEN, settings.CHATWOOT_WEBHOOK_SECRET = fake.user_token, SECRET
    yield fake
    server.clear()
    server.stop()


def test_typing_off_never_overtakes_a_slow_typing_on(client, school, chatwoot_side_by_side, echo_model, turns):
    chatwoot = chatwoot_side_by_side
    chatwoot.slow_next = [("POST", TYPING, 1.5)]  # the "on" is slow (within the typing timeout); the turn is not
    post(client, p.message_created("hello"))
    turns.settle()
    toggles = typing_toggles(chatwoot, 2)
    assert [t.json["typing_status"] for t in toggles] == ["on", "off"], "the parent would see typing forever"


# --- authentication and malformed input -------------------------------------------------------
def test_a_wrong_url_secret_is_404_and_nothing_is_stored(client, school, chatwoot, echo_model, caplog):
    response = post(client, p.message_created("hello"), secret="guessed")
    assert response.status_code == 404
    assert not Message.objects.exists() and not Contact.objects.exists()
    assert "wrong URL secret" in caplog.text
    assert not chatwoot.requests


def test_the_endpoint_is_off_without_a_configured_secret(client, school, chatwoot, settings):
    settings.CHATWOOT_WEBHOOK_SECRET = ""
    assert post(client, p.message_created("hello"), secret="").status_code == 404
    assert post(client, p.message_created("hello"), secret="anything").status_code == 404
    assert not Message.objects.exists()


def test_signed_deliveries_are_verified_when_a_signing_secret_is_set(client, school, chatwoot, echo_model, turns,
                                                                     settings):
    settings.CHATWOOT_HMAC_SECRET = "bot-signing-secret"
    good = p.message_created("signed hello", message_id=9101)
    body = p.dumps(good)
    assert post(client, good, raw=body, **p.chatwoot_headers(body, "bot-signing-secret")).status_code == 200

    forged = p.message_created("forged", message_id=9102)
    forged_body = p.dumps(forged)
    assert post(client, forged, raw=forged_body, **p.chatwoot_headers(forged_body, "not-the-secret")).status_code \
        == 401
    assert post(client, forged, raw=forged_body).status_code == 401  # unsigned
    stale = p.chatwoot_headers(forged_body, "bot-signing-secret", timestamp=int(time.time()) - 301)
    assert post(client, forged, raw=forged_body, **stale).status_code == 401
    tampered = p.chatwoot_headers(body, "bot-signing-secret")  # signature of another body
    assert post(client, forged, raw=forged_body, **tampered).status_code == 401
    turns.settle()
    assert list(Message.objects.filter(role="user").values_list("text", flat=True)) == ["signed hello"]


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2, 3]", b"", "\xff".encode("latin-1")])
def test_malformed_json_is_400_and_nothing_is_stored(client, school, chatwoot, raw):
    assert post(client, None, raw=raw).status_code == 400
    assert not Message.objects.exists() and not Conversation.objects.exists()


def test_get_is_not_allowed(client, chatwoot):
    assert client.get(f"/webhooks/chatwoot/{SECRET}/").status_code == 405


# --- idempotency, bursts, ignored events ------------------------------------------------------------
def test_the_same_event_delivered_three_times_gets_one_reply(client, school, chatwoot, echo_model, turns):
    event = p.message_created("Do you have tours on Friday?", message_id=9201)
    results = [post(client, event).json()["result"] for _ in range(3)]
    turns.settle()
    assert results.count("dispatched") == 1 and results.count("duplicate") == 2
    assert Message.objects.filter(role="user").count() == 1
    assert [m.text for m in replies()] == ["Answered: Do you have tours on Friday?"]
    assert len(chatwoot.posted) == 1


def test_a_burst_of_ten_messages_is_answered_once_each_in_order(client, school, chatwoot, echo_model, turns):
    texts = [f"fragment {n}" for n in range(10)]
    for n, text in enumerate(texts):  # back to back: about a second for all ten on a quiet machine
        assert post(client, p.message_created(text, message_id=9300 + n)).status_code == 200
    turns.settle()

    parent = list(Message.objects.filter(role="user").order_by("created_at", "id"))
    assert [m.text for m in parent] == texts and all(m.processed_at for m in parent)
    sent = replies()
    # Each fragment is taken by exactly one turn: turns run one at a time, and each parent message is taken
    # (processed_at) between the end of the previous turn's answer and the end of its own.
    ends = [reply.steps.get(kind="answer").created_at for reply in sent]
    for message in parent:
        owners = [k for k, end in enumerate(ends) if (k == 0 or ends[k - 1] < message.processed_at) and
                  message.processed_at <= end]
        assert len(owners) == 1, f"{message.text} taken by turns {owners}"
    echoed = [text for reply in sent for text in reply.text.removeprefix("Answered: ").split(" | ")]
    assert list(dict.fromkeys(echoed)) == texts, "every fragment reached the model, in order"
    assert sent and len(sent) < len(texts), "a burst is answered together"
    assert [c["content"] for c in chatwoot.posted] == [m.text for m in sent], "each reply posted once, in order"
    assert all(m.delivered_at for m in sent)


def test_a_message_arriving_during_the_last_cycle_is_answered_by_the_next_turn(client, school, chatwoot, echo_model,
                                                                              turns, settings):
    settings.LLM_MAX_CYCLES = 1
    echo_model.delay = 0.6
    post(client, p.message_created("first", message_id=9350))
    time.sleep(0.45)  # the turn is now waiting for the model, on its only cycle
    post(client, p.message_created("second", message_id=9351))
    turns.settle()
    assert [m.text for m in replies()] == ["Answered: first", "Answered: second"], \
        "not taken (and lost) by the turn that could no longer answer it"


def test_outgoing_echoes_and_private_notes_are_ignored(client, school, chatwoot, echo_model, turns):
    ours = p.message_created("Answered: hello", message_type="outgoing", sender=p.agent_bot())
    note = p.message_created("Family visited last year", message_type="outgoing", private=True,
                             sender=p.agent_user())
    activity = p.message_created("Conversation was marked open", message_type="activity", sender=p.agent_bot())
    template = p.message_created("Template", message_type="template", sender=p.agent_bot())
    for event in (ours, note, activity, template):
        assert post(client, event).status_code == 200
    assert [post(client, e).json()["result"] for e in (ours, note)] == ["ignored: our own reply",
                                                                       "ignored: private note"]
    turns.settle()
    assert not Message.objects.exists()
    assert not chatwoot.requests


def test_unknown_inbox_is_ignored(client, school, chatwoot):
    assert post(client, p.message_created("hello", inbox_id=99)).json()["result"].startswith("ignored")
    assert not Message.objects.exists()


# --- handoff -------------------------------------------------------------------------------------
def _our_conversation() -> Conversation:
    return Conversation.objects.get(external_id="1:123")


def test_an_open_conversation_is_the_staffs_and_the_bot_stays_silent(client, school, chatwoot, echo_model, turns):
    assert post(client, p.message_created("hello?", status="open")).json()["result"].startswith("stored")
    assert post(client, p.message_created("anyone there?", status="pending")).json()["result"].startswith("stored")
    turns.settle()
    conversation = _our_conversation()
    assert conversation.status == Conversation.Status.HANDED_OFF
    assert conversation.outcome == Conversation.Outcome.HANDED_OFF
    assert Message.objects.filter(role="user", processed_at__isnull=False).count() == 2
    assert not chatwoot.posted and not echo_model.turns

    # Staff hand it back (Chatwoot >= 4.13 tells the bot): the bot answers again.
    assert post(client, p.status_changed("pending", previous="open")).json()["result"] == "bot resumed"
    post(client, p.message_created("I'd like a tour"))
    turns.settle()
    assert _our_conversation().status == Conversation.Status.ACTIVE
    [reply] = replies()
    assert reply.reply_to.text == "I'd like a tour", "messages meant for staff are not answered by the bot"
    assert [c["content"] for c in chatwoot.posted] == [reply.text]


def test_a_staff_reply_in_chatwoot_hands_the_conversation_off(client, school, chatwoot, echo_model, turns):
    post(client, p.message_created("hello"))
    turns.settle()
    staff = p.message_created("Hi Ana, Mrs Tan here. I'll take it from here.", message_type="outgoing",
                              sender=p.agent_user(), message_id=9400)
    assert post(client, staff).json()["result"] == "handed off: staff replied"
    conversation = _our_conversation()
    assert conversation.status == Conversation.Status.HANDED_OFF
    assert Message.objects.get(channel_message_id="9400").role == Message.Role.STAFF
    [toggle] = chatwoot.calls("POST", r"/api/v1/accounts/1/conversations/123/toggle_status")
    assert toggle.json == {"status": "open"} and toggle.headers["api_access_token"] == "bot-token"

    post(client, p.message_created("thanks!", status="open"))
    turns.settle()
    assert len(chatwoot.posted) == 1, "only the first answer: the bot is silent after the staff reply"


def test_asking_for_a_person_hands_off_with_a_notice(client, school, chatwoot, echo_model, turns):
    assert post(client, p.message_created("Can I talk to a real person please?")).json()["result"].startswith("stored")
    turns.settle()
    assert _our_conversation().status == Conversation.Status.HANDED_OFF
    assert not echo_model.turns, "no agent turn for a handoff request"
    calls = [(c.method, c.path) for c in chatwoot.requests if "contacts" not in c.path]
    assert calls == [("POST", MESSAGES), ("POST", "/api/v1/accounts/1/conversations/123/toggle_status")], \
        "the notice goes out while the conversation is still the bot's, then it is opened for the team"
    assert "admissions team" in chatwoot.posted[0]["content"]
    assert chatwoot.status["123"] == "open"


def test_status_events_end_and_reopen_sessions(client, school, chatwoot, echo_model, turns):
    post(client, p.message_created("hello"))
    turns.settle()
    assert post(client, p.legacy_event("conversation_opened", "open")).json()["result"] == "handed off"
    assert post(client, p.status_changed("open")).json()["result"] == "handed off"  # idempotent
    assert post(client, p.legacy_event("conversation_resolved", "resolved")).json()["result"] == "ended"
    assert _our_conversation().status == Conversation.Status.ENDED
    # A new message after "resolved" reopens it as pending in Chatwoot: a new session for us.
    post(client, p.message_created("one more question"))
    turns.settle()
    assert Conversation.objects.filter(external_id="1:123").count() == 2
    assert chatwoot.posted[-1]["content"] == "Answered: one more question"


def test_a_conversation_opened_while_the_bot_was_thinking_gets_no_reply(client, school, chatwoot, echo_model, turns):
    chatwoot.status["123"] = "open"  # a human took it before the reply went out
    post(client, p.message_created("hello"))
    turns.settle()
    assert not chatwoot.posted
    assert _our_conversation().status == Conversation.Status.HANDED_OFF
    reply = Message.objects.get(role="assistant")
    assert reply.delivered_at is None


def test_two_failed_turns_in_a_row_hand_off(client, school, chatwoot, turns, settings):
    from chatbot.agent.loop import GIVE_UP_TEXT
    from tests.chatbot import scripted_model

    model = scripted_model.install()
    settings.LLM_MODEL, settings.LLM_MAX_CYCLES, settings.CHAT_BURST_WINDOW_SECONDS = "scripted/test", 1, 0
    model.script = [{"tool_calls": [("check_availability", {})]}, {"tool_calls": [("check_availability", {})]}]
    post(client, p.message_created("blah"))
    turns.settle()
    assert _our_conversation().status == Conversation.Status.ACTIVE
    post(client, p.message_created("blah blah"))
    turns.settle()
    assert _our_conversation().status == Conversation.Status.HANDED_OFF
    contents = [c["content"] for c in chatwoot.posted]
    assert contents[:2] == [GIVE_UP_TEXT, GIVE_UP_TEXT] and "admissions team" in contents[2]
    assert chatwoot.status["123"] == "open"


def test_a_reply_that_only_reads_like_giving_up_is_not_a_failed_turn(school):
    """Giving up is marked in the reply's data by the loop; the words alone (a model may say them) are not."""
    from chatbot import handoff
    from chatbot.agent.loop import GIVE_UP_TEXT
    from tests.factories import ContactFactory, ConversationFactory, MessageFactory

    conversation = ConversationFactory(school=school, contact=ContactFactory(school=school), channel="chatwoot")
    parent = MessageFactory(conversation=conversation, role="user", text="hi")
    for _ in range(2):
        MessageFactory(conversation=conversation, role="assistant", text=GIVE_UP_TEXT, payload={"blocks": []})
    assert not handoff.hand_off_after_failures(parent.pk)
    assert Conversation.objects.get(pk=conversation.pk).status == Conversation.Status.ACTIVE

    MessageFactory(conversation=conversation, role="assistant", text="Sorry.", payload={"blocks": [], "gave_up": True})
    MessageFactory(conversation=conversation, role="assistant", text="Sorry again.",
                   payload={"blocks": [], "gave_up": True})
    assert handoff.hand_off_after_failures(parent.pk)


# --- faults: retries, refusals, dead letters, a task that dies mid-way ---------------------------------------
def test_chatwoot_500_then_200_delivers_the_reply_once(client, school, chatwoot, echo_model, turns):
    chatwoot.fail_next = [("POST", MESSAGES, 500)]
    post(client, p.message_created("hello"))
    turns.settle()
    assert len(chatwoot.posts()) == 2, "the 500 was retried"
    assert [c["content"] for c in chatwoot.posted] == ["Answered: hello"], "and the reply exists once"
    [reply] = replies()
    assert reply.delivered_at is not None
    call = ExternalCall.objects.get(key=f"chatwoot:message:{reply.pk}:0")
    assert (call.state, call.attempts, call.external_id) == ("done", 2, str(chatwoot.posted[0]["id"]))
    assert not FailedTask.objects.exists()


def test_a_4xx_is_not_retried_and_leaves_a_dead_letter(client, school, chatwoot, echo_model, turns):
    chatwoot.fail_next = [("POST", MESSAGES, 422)]
    post(client, p.message_created("hello"))
    turns.settle()
    assert len(chatwoot.posts()) == 1
    [failed] = FailedTask.objects.all()
    assert (failed.task_name, failed.reason, failed.status_code) == (
        "chatbot.tasks.deliver_chatwoot_message", "rejected", 422)
    assert replies()[0].delivered_at is None


def test_exhausted_retries_leave_a_dead_letter_staff_can_retry(client, school, chatwoot, echo_model, turns,
                                                               admin_client):
    chatwoot.down = True
    post(client, p.message_created("hello"))
    turns.settle()
    [failed] = FailedTask.objects.all()
    assert failed.reason == "exhausted" and failed.retries == 8
    page = admin_client.get("/admin/crm/failedtask/")
    assert page.status_code == 200 and "deliver_chatwoot_message" in page.content.decode()

    chatwoot.down = False
    response = admin_client.post("/admin/crm/failedtask/",
                                 {"action": "retry", "_selected_action": [failed.pk]})
    assert response.status_code == 302
    assert [c["content"] for c in chatwoot.posted] == ["Answered: hello"]
    failed.refresh_from_db()
    assert failed.resolved_at is not None


class Crash(BaseException):
    """The worker process dies (SIGKILL, OOM): nothing after this point runs."""


def _crash_after_post(monkeypatch):
    from crm.external import ledger

    real_finish = ledger.finish
    crashed = []

    def finish(attempt, *args, **kwargs):
        if not crashed:
            crashed.append(attempt.row.key)
            raise Crash
        return real_finish(attempt, *args, **kwargs)

    monkeypatch.setattr(ledger, "finish", finish)
    return crashed


def _reply_waiting_for_delivery(school):
    from tests.factories import ContactFactory, ConversationFactory, MessageFactory

    conversation = ConversationFactory(school=school, contact=ContactFactory(school=school), channel="chatwoot",
                                       external_id="1:123")
    return MessageFactory(conversation=conversation, role="assistant", text="Your tour is booked.",
                          payload={"blocks": []})


@pytest.mark.parametrize("can_check", [True, False])
def test_a_send_task_that_dies_after_posting_is_not_posted_twice(school, chatwoot, monkeypatch, settings,
                                                                 can_check):
    from chatbot.channels.chatwoot.tasks import deliver_chatwoot_message
    from crm.models import ExternalCall

    reply = _reply_waiting_for_delivery(school)
    crashed = _crash_after_post(monkeypatch)
    with pytest.raises(Crash):
        deliver_chatwoot_message.apply(args=[reply.pk])
    assert crashed and len(chatwoot.posted) == 1

    # Redelivered at once (acks_late): the claim is fresh, so it waits instead of posting again.
    deliver_chatwoot_message.apply(args=[reply.pk])
    assert len(chatwoot.posted) == 1
    FailedTask.objects.all().delete()

    # Later, the claim has expired: the outcome is unknown, so Chatwoot is checked before anything is posted.
    ExternalCall.objects.update(claimed_at=reply.created_at.replace(year=2000))
    if not can_check:
        settings.CHATWOOT_USER_TOKEN = ""
    deliver_chatwoot_message.apply(args=[reply.pk])
    assert len(chatwoot.posted) == 1, "never posted twice"
    reply.refresh_from_db()
    call = ExternalCall.objects.get()
    if can_check:
        assert call.state == "done" and call.external_id == str(chatwoot.posted[0]["id"])
        assert reply.delivered_at is not None
        assert chatwoot.calls("GET", MESSAGES)[0].headers["api_access_token"] == "user-token"
    else:
        assert call.state == "unknown" and reply.delivered_at is None
        assert FailedTask.objects.get().reason == "unknown_outcome"


def test_a_send_task_that_dies_before_posting_posts_on_the_rerun(school, chatwoot, monkeypatch):
    from chatbot.channels.chatwoot import client as channel
    from chatbot.channels.chatwoot.tasks import deliver_chatwoot_message

    reply = _reply_waiting_for_delivery(school)
    real_post = channel.ChatwootClient.post_message
    monkeypatch.setattr(channel.ChatwootClient, "post_message", lambda *a, **k: (_ for _ in ()).throw(Crash()))
    with pytest.raises(Crash):
        deliver_chatwoot_message.apply(args=[reply.pk])
    monkeypatch.setattr(channel.ChatwootClient, "post_message", real_post)
    ExternalCall.objects.update(claimed_at=reply.created_at.replace(year=2000))
    deliver_chatwoot_message.apply(args=[reply.pk])
    assert [c["content"] for c in chatwoot.posted] == ["Your tour is booked."]


# --- structured replies: slot choices --------------------------------------------------------------------
def _offer_slots(client, settings, chatwoot, turns) -> dict:
    """The offline policy (the product's own model) offers tour times; returns the input_select message posted."""
    settings.LLM_MODEL, settings.CHAT_BURST_WINDOW_SECONDS = "offline/policy", 0
    conversation = ["Hi, I'd like to book a school tour", "My son Tom is 5", "I'm Ana Lim",
                    "Which times are free next week?"]
    for n, text in enumerate(conversation):
        post(client, p.message_created(text, message_id=9500 + n))
        turns.settle()
        offers = [m for m in chatwoot.posted if m["content_type"] == "input_select"]
        if offers:
            return offers[-1]
    raise AssertionError(f"no slots offered: {[m['content'] for m in chatwoot.posted]}")


def test_slot_choices_go_out_as_input_select_with_readable_unique_titles(client, school, chatwoot, turns,
                                                                         settings):
    offer = _offer_slots(client, settings, chatwoot, turns)
    items = offer["content_attributes"]["items"]
    titles = [item["title"] for item in items]
    assert 2 <= len(items) <= 10 and len(set(titles)) == len(titles)
    assert all(len(title) <= 20 for title in titles), "WhatsApp button titles are at most 20 characters"
    assert all(re.fullmatch(r"(Mon|Tue|Wed|Thu|Fri) \d{1,2} [A-Z][a-z]{2}, \d{2}:\d{2}", t) for t in titles)
    assert all(i["value"] == i["title"] for i in items)  # a tap sends the words a person would, not ISO dates
    [call] = [c for c in chatwoot.posts() if c.json.get("content_type") == "input_select"]
    assert call.json == {"content": offer["content"], "message_type": "outgoing", "private": False,
                         "content_type": "input_select", "content_attributes": {"items": items}}


def test_a_whatsapp_tap_comes_back_as_the_title_and_books_that_slot(client, school, chatwoot, turns, settings):
    offer = _offer_slots(client, settings, chatwoot, turns)
    choice = offer["content_attributes"]["items"][1]
    # Chatwoot's WhatsApp inbox turns the tapped button into a new incoming message whose content is the TITLE.
    post(client, p.message_created(choice["title"], message_id=9600,
                                   content_attributes={"in_reply_to_external_id": "wamid.OUT1"}))
    turns.settle()
    assert "Just to check" in chatwoot.posted[-1]["content"] and not TourBooking.objects.exists()  # read back first
    post(client, p.message_created("yes please", message_id=9601))
    turns.settle()
    booking = TourBooking.objects.get()
    local = booking.local_start
    assert f"{local:%a} {local.day} {local:%b}, {local:%H:%M}" == choice["title"]
    assert booking.reference in chatwoot.posted[-1]["content"]


def test_a_web_widget_option_submission_is_the_parents_next_message(client, school, chatwoot, turns, settings):
    offer = _offer_slots(client, settings, chatwoot, turns)
    choice = offer["content_attributes"]["items"][0]
    submission = p.message_updated_submission(offer["id"], choice["title"], choice["value"])
    assert post(client, submission).json()["result"] == "dispatched"
    assert post(client, submission).json()["result"] == "duplicate"
    turns.settle()
    assert Message.objects.filter(role="user", text=choice["value"]).count() == 1
    post(client, p.message_created("yes please", message_id=9601))
    turns.settle()
    booking = TourBooking.objects.get()
    local = booking.local_start
    assert f"{local:%a} {local.day} {local:%b}, {local:%H:%M}" == choice["value"]


def test_other_message_updates_are_ignored(client, school, chatwoot):
    update = p.message_created("edited", message_type="incoming")
    update["event"] = "message_updated"
    assert post(client, update).json()["result"] == "ignored: not an option submission"
    assert not Message.objects.exists()


def test_the_web_widget_opening_greets_once(client, school, chatwoot):
    assert post(client, p.webwidget_triggered()).json()["result"] == "greeted"
    assert post(client, p.webwidget_triggered()).json()["result"].startswith("ignored")
    assert post(client, p.webwidget_triggered(conversation_id=None)).json()["result"] == "ignored: no conversation yet"
    [greeting] = chatwoot.posted
    assert greeting["content"].startswith("Hello! I'm the") and school.name in greeting["content"]


# --- persistent context: contact custom attributes ----------------------------------------------------------------
def test_context_is_read_at_session_start_and_merged_back_at_session_end(client, school, chatwoot, echo_model,
                                                                          turns):
    chatwoot.contacts["42"] = {"parent_preferred_name": "Ana María", "child_name": "Leo", "tour_status": "cancelled",
                               "vip": "yes"}
    contact = Contact.objects.create(school=school, chatwoot_contact_id="42", phone="+6591234567",
                                     context={"child_name": "Leonardo", "tour_status": "scheduled"})
    post(client, p.message_created("hello"))
    turns.settle()
    [read] = chatwoot.calls("GET", r"/api/v1/accounts/1/contacts/42")
    assert read.headers["api_access_token"] == "user-token"
    contact.refresh_from_db()
    assert contact.context["parent_preferred_name"] == "Ana María"
    assert contact.context["child_name"] == "Leo", "a correction made in Chatwoot wins"
    assert contact.context["tour_status"] == "scheduled", "booking state is ours"
    assert "vip" not in contact.context

    assert post(client, p.legacy_event("conversation_resolved", "resolved")).json()["result"] == "ended"
    [write] = chatwoot.calls("PUT", r"/api/v1/accounts/1/contacts/42")
    assert write.headers["api_access_token"] == "user-token"
    assert write.json == {"custom_attributes": {"parent_preferred_name": "Ana María", "child_name": "Leo",
                                                "tour_status": "scheduled"}}
    assert chatwoot.contacts["42"]["vip"] == "yes", "merged, never replaced"


def test_without_a_user_token_the_webhook_copy_is_used_and_nothing_is_written(client, school, chatwoot, echo_model,
                                                                             turns, settings):
    settings.CHATWOOT_USER_TOKEN = ""
    sender = p.contact_sender(attributes={"child_name": "Mia"})
    post(client, p.message_created("hello", sender=sender))
    turns.settle()
    assert Contact.objects.get().context["child_name"] == "Mia"
    post(client, p.legacy_event("conversation_resolved", "resolved"))
    assert not chatwoot.calls(path=r".*/contacts/.*")
