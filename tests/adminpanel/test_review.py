"""Conversation review: the list, the transcript page with its reasoning, rating, and who may do what."""

import datetime as dt
import re

import pytest
from django.contrib.admin.models import LogEntry
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bookings.models import School
from chatbot.models import Channel, Conversation, Message
from plumbing.logging import mask_phone
from tests.adminpanel.conftest import LIST_URL, book, conversation_url, make_conversation
from tests.factories import ContactFactory, MessageFactory, SchoolFactory

pytestmark = pytest.mark.filterwarnings("ignore:No directory at:UserWarning")


def listed(response) -> list[int]:
    return [c.pk for c in response.context["cl"].result_list]


# --- the list ---------------------------------------------------------------------------------


def test_list_shows_the_review_columns(head_client, school):
    conversation = make_conversation(school, turns=3, latencies=[900, 4200, 1300], outcome="booked",
                                     total_tokens=1234, rating="good")
    response = head_client.get(LIST_URL)
    assert response.status_code == 200
    row = response.context["cl"].result_list[0]
    assert row.message_count == 6
    assert row.slowest_turn_ms == 4200
    content = response.content.decode()
    assert mask_phone(conversation.contact.phone) in content
    assert conversation.contact.phone not in content
    for text in ("4,200 ms", "Booked", "1,234", "cr-badge cr-good", school.name, "Web chat"):
        assert text in content, text
    headers = [str(h["text"]).capitalize() for h in response.context["result_headers"]]
    for header in ("Started", "School", "Channel", "Contact", "Messages", "Outcome", "Tokens", "Cost",
                   "Slowest turn", "Rating"):
        assert header in headers


def test_list_queries_do_not_grow_with_rows(head_client, school):
    make_conversation(school, turns=2)
    head_client.get(LIST_URL)
    with CaptureQueriesContext(connection) as few:
        assert head_client.get(LIST_URL).status_code == 200
    other = SchoolFactory()
    for i in range(12):
        make_conversation(school if i % 2 else other, turns=1 + i % 3, rating="bad" if i % 3 else "",
                          channel=Channel.WHATSAPP)
    with CaptureQueriesContext(connection) as many:
        response = head_client.get(LIST_URL)
    assert response.context["cl"].result_count == 13
    assert len(many) == len(few), [q["sql"] for q in many.captured_queries]


def test_list_query_budget(head_client, school, django_assert_max_num_queries):
    for i in range(30):
        make_conversation(school, turns=1 + i % 4)
    head_client.get(LIST_URL)
    with django_assert_max_num_queries(9):  # 8, and the schools' time zones (the zone the list is read in)
        head_client.get(LIST_URL, {"q": "pool", "rated": "unrated", "channel__exact": "web"})


@pytest.mark.parametrize(("params", "expected"), [
    ({"rated": "good"}, {"good", "handed"}),
    ({"rated": "bad"}, {"bad", "whatsapp"}),
    ({"rated": "unrated"}, {"unrated"}),
    ({"outcome__exact": "booked"}, {"booked"}),
    ({"outcome__exact": "faq_only"}, {"faq"}),
    ({"handed_off": "yes"}, {"handed"}),
    ({"channel__exact": "whatsapp"}, {"whatsapp"}),
    ({"status__exact": "ended"}, {"good"}),
])
def test_list_filters(head_client, school, params, expected):
    made = {
        "good": make_conversation(school, rating="good", outcome="booked", status="ended"),
        "bad": make_conversation(school, rating="bad", outcome="faq_only"),
        "unrated": make_conversation(school, outcome="callback"),
        "handed": make_conversation(school, rating="good", status="handed_off", outcome="handed_off"),
        "whatsapp": make_conversation(school, rating="bad", channel=Channel.WHATSAPP, outcome="abandoned"),
    }
    made["booked"], made["faq"] = made["good"], made["bad"]
    response = head_client.get(LIST_URL, params)
    assert set(listed(response)) == {made[name].pk for name in expected}


def test_list_filters_by_school_and_date(head_client, school):
    other = SchoolFactory()
    recent = make_conversation(school)
    old = make_conversation(other, started_at=timezone.now() - dt.timedelta(days=40))
    assert listed(head_client.get(LIST_URL, {"school__id__exact": other.pk})) == [old.pk]
    week_ago = str(timezone.now().replace(hour=0, minute=0, second=0, microsecond=0) - dt.timedelta(days=7))
    assert listed(head_client.get(LIST_URL, {"started_at__gte": week_ago})) == [recent.pk]


def test_search_by_name_phone_reference_and_message_text(head_client, school, tuesday):
    mei = ContactFactory(school=school, name="Mei Lin Tan", phone="+6591112222")
    by_mei = make_conversation(school, contact=mei)
    booking = book(school, tuesday, contact=ContactFactory(school=school, name="Omar Said"))
    by_omar = make_conversation(school, contact=booking.contact)
    about_bus = make_conversation(school, question="Is there a school bus from Pasir Ris?")
    MessageFactory(conversation=about_bus, text="extra words", role="assistant")

    assert listed(head_client.get(LIST_URL, {"q": "mei lin"})) == [by_mei.pk]
    assert listed(head_client.get(LIST_URL, {"q": "9111 2222"})) == [by_mei.pk]
    assert listed(head_client.get(LIST_URL, {"q": booking.reference.lower()})) == [by_omar.pk]
    assert listed(head_client.get(LIST_URL, {"q": "pasir ris"})) == [about_bus.pk]  # no duplicate rows
    assert listed(head_client.get(LIST_URL, {"q": '"school bus"'})) == [about_bus.pk]
    assert listed(head_client.get(LIST_URL, {"q": "nothing-like-this"})) == []


def test_anonymous_gets_the_login_page(client, school):
    conversation = make_conversation(school)
    for url in (LIST_URL, conversation_url(conversation), conversation_url(conversation, "rate"),
                "/admin/chatbot/conversation/export.jsonl", "/admin/dashboard/", "/admin/desk/"):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response.url.startswith("/admin/login/"), url
    response = client.post(conversation_url(conversation, "rate"), {"rating": "good"})
    assert response.status_code == 302 and response.url.startswith("/admin/login/")
    conversation.refresh_from_db()
    assert conversation.rating == ""


# --- the transcript page ------------------------------------------------------------------------


def test_detail_shows_the_chat_and_each_turns_reasoning(head_client, school):
    conversation = make_conversation(school, turns=2, model="gpt-4o-mini -> offline/policy", no_match=True,
                                     question="Do you have a swimming pool?")
    Message.objects.create(conversation=conversation, role=Message.Role.STAFF, text="Tour moved by staff.",
                           channel=conversation.channel)
    response = head_client.get(conversation_url(conversation))
    assert response.status_code == 200
    content = response.content.decode()
    assert "Do you have a swimming pool? (0)" in content and "Answer 1" in content
    assert "Tour moved by staff." in content
    assert content.count("class=\"cr-trace\"") == 2  # one folded trace per concierge turn
    assert content.count("<details class=\"cr-step cr-step-") == 8
    kinds = re.findall(r"cr-step cr-step-(\w+)", content)
    assert kinds[:4] == ["think", "act", "observe", "answer"]
    assert "&quot;question&quot;: &quot;Do you have a swimming pool?&quot;" in content  # pretty JSON arguments
    assert "&quot;status&quot;: &quot;no_match&quot;" in content  # and results
    assert '{\n  &quot;question&quot;' in content  # indented
    assert "gpt-4o-mini -&gt; offline/policy" in content and "cr-fallback" in content
    assert "1000 ms" in content and "90+10 tok" in content  # latency and tokens per step
    assert mask_phone(conversation.contact.phone) in content
    assert conversation.contact.phone not in content


def test_detail_queries_do_not_grow_with_messages(head_client, school, django_assert_max_num_queries):
    make_conversation(school, started_at=timezone.now() - dt.timedelta(days=1))  # an older unrated one for both
    short = make_conversation(school, turns=1)
    long = make_conversation(school, turns=15)
    head_client.get(conversation_url(short))
    with CaptureQueriesContext(connection) as few:
        head_client.get(conversation_url(short))
    with CaptureQueriesContext(connection) as many:
        head_client.get(conversation_url(long))
    assert len(many) == len(few), [q["sql"] for q in many.captured_queries]
    with django_assert_max_num_queries(14):
        head_client.get(conversation_url(long))


def test_detail_reads_school_contact_and_rater_with_the_conversation(head_client, school):
    conversation = make_conversation(school, turns=2, rating="good")
    head_client.get(conversation_url(conversation))
    with CaptureQueriesContext(connection) as queries:
        assert head_client.get(conversation_url(conversation)).status_code == 200
    lone = [q["sql"] for q in queries.captured_queries
            if re.match(r'SELECT .* FROM "(bookings_school|crm_contact)" WHERE', q["sql"])]
    assert lone == []


def test_detail_links_newer_older_and_next_unrated(head_client, school):
    now = timezone.now()
    oldest = make_conversation(school, started_at=now - dt.timedelta(hours=5))
    rated = make_conversation(school, started_at=now - dt.timedelta(hours=4), rating="good")
    middle = make_conversation(school, started_at=now - dt.timedelta(hours=3))
    newest = make_conversation(school, started_at=now - dt.timedelta(hours=1))
    context = head_client.get(conversation_url(middle)).context
    assert context["newer_url"].endswith(f"/{newest.pk}/change/")
    assert context["older_url"].endswith(f"/{rated.pk}/change/")
    assert context["next_unrated_url"].endswith(f"/{oldest.pk}/change/")  # skips the rated one
    context = head_client.get(conversation_url(oldest)).context
    assert context["older_url"] == ""
    assert context["next_unrated_url"].endswith(f"/{newest.pk}/change/")  # wraps to the newest


def test_neighbours_stay_within_the_lists_filters(head_client, school):
    now = timezone.now()
    web_old = make_conversation(school, started_at=now - dt.timedelta(hours=5))
    make_conversation(school, started_at=now - dt.timedelta(hours=4), channel=Channel.WHATSAPP)
    web_new = make_conversation(school, started_at=now - dt.timedelta(hours=3))
    filters = "channel__exact=web"
    context = head_client.get(conversation_url(web_new), {"_changelist_filters": filters}).context
    assert f"/{web_old.pk}/change/" in context["older_url"]
    assert "_changelist_filters=channel__exact%3Dweb" in context["older_url"]
    response = head_client.get("/admin/chatbot/conversation/next-unrated/", {"_changelist_filters": filters})
    assert f"/{web_new.pk}/change/" in response.url


# --- rating --------------------------------------------------------------------------------------


def test_reviewer_rates_with_a_note_in_one_post(reviewer_client, reviewer, school):
    conversation = make_conversation(school)
    before = timezone.now()
    response = reviewer_client.post(conversation_url(conversation, "rate"),
                                    {"rating": "bad", "note": "Offered a Saturday tour."},
                                    HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    body = response.json()
    assert body["rating"] == "bad" and body["rated_by"] == "rita" and "cr-bad" in body["badge"]
    conversation.refresh_from_db()
    assert (conversation.rating, conversation.rating_note, conversation.rated_by) == (
        "bad", "Offered a Saturday tour.", reviewer)
    assert conversation.rated_at >= before
    assert LogEntry.objects.filter(object_id=str(conversation.pk), user=reviewer).exists()

    page = reviewer_client.get(conversation_url(conversation)).content.decode()
    assert "cr-badge cr-bad" in page and "rita ·" in page and "Offered a Saturday tour." in page
    assert "rita" in reviewer_client.get(LIST_URL).content.decode()  # who rated, in the list


def test_rating_without_javascript_redirects_back(reviewer_client, school):
    conversation = make_conversation(school)
    response = reviewer_client.post(conversation_url(conversation, "rate"), {"rating": "good", "note": ""})
    assert response.status_code == 302 and response.url.endswith(f"/{conversation.pk}/change/")
    other = make_conversation(school, started_at=conversation.started_at - dt.timedelta(hours=1))
    response = reviewer_client.post(conversation_url(other, "rate"), {"rating": "good", "next": "unrated"})
    assert response.url.endswith("/next-unrated/")
    conversation.refresh_from_db()
    assert conversation.rating == "good"


def test_clearing_and_invalid_ratings(reviewer_client, reviewer, school):
    conversation = make_conversation(school, rating="good", rated_by=reviewer, rated_at=timezone.now())
    url = conversation_url(conversation, "rate")
    assert reviewer_client.post(url, {"rating": "meh"}, HTTP_ACCEPT="application/json").status_code == 400
    assert reviewer_client.post(url, {"rating": ""}, HTTP_ACCEPT="application/json").status_code == 200
    conversation.refresh_from_db()
    assert (conversation.rating, conversation.rated_by, conversation.rated_at) == ("", None, None)
    assert reviewer_client.get(url).status_code == 405


def test_rating_is_csrf_protected(reviewer, school):
    conversation = make_conversation(school)
    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer)
    response = client.post(conversation_url(conversation, "rate"), {"rating": "good"})
    assert response.status_code == 403
    conversation.refresh_from_db()
    assert conversation.rating == ""
    page = client.get(conversation_url(conversation))
    token = page.cookies["csrftoken"].value
    response = client.post(conversation_url(conversation, "rate"), {"rating": "good"}, HTTP_X_CSRFTOKEN=token,
                           HTTP_ACCEPT="application/json")
    assert response.status_code == 200


def test_admissions_reads_but_cannot_rate(admissions_client, school):
    conversation = make_conversation(school)
    page = admissions_client.get(conversation_url(conversation))
    assert page.status_code == 200
    assert "data-role=\"rate-form\"" not in page.content.decode()
    response = admissions_client.post(conversation_url(conversation, "rate"), {"rating": "good"},
                                      HTTP_ACCEPT="application/json")
    assert response.status_code == 403
    assert admissions_client.post(conversation_url(conversation), {"rating": "good"}).status_code == 403
    conversation.refresh_from_db()
    assert conversation.rating == ""
    actions = [name for name, _ in admissions_client.get(LIST_URL).context["action_form"].fields["action"].choices]
    assert "rate_good" not in actions and "export_jsonl" in actions


def test_nothing_but_the_rating_changes(reviewer_client, school):
    conversation = make_conversation(school, outcome="booked")
    assert reviewer_client.get(conversation_url(conversation, "delete")).status_code == 403
    assert reviewer_client.get("/admin/chatbot/conversation/add/").status_code == 403
    reviewer_client.post(conversation_url(conversation), {"rating": "good", "outcome": "cancelled",
                                                          "summary": "changed"})
    conversation.refresh_from_db()
    assert (conversation.outcome, conversation.summary, conversation.rating) == ("booked", "", "good")


def test_bulk_rating_actions(reviewer_client, reviewer, school):
    first, second, third = (make_conversation(school) for _ in range(3))
    response = reviewer_client.post(LIST_URL, {"action": "rate_good", "_selected_action": [first.pk, second.pk]},
                                    follow=True)
    assert "2 conversations rated good." in response.content.decode()
    for conversation in (first, second):
        conversation.refresh_from_db()
        assert conversation.rating == "good" and conversation.rated_by == reviewer and conversation.rated_at
    reviewer_client.post(LIST_URL, {"action": "rate_bad", "_selected_action": [third.pk]})
    reviewer_client.post(LIST_URL, {"action": "clear_rating", "_selected_action": [first.pk]})
    assert Conversation.objects.get(pk=third.pk).rating == "bad"
    cleared = Conversation.objects.get(pk=first.pk)
    assert (cleared.rating, cleared.rated_by, cleared.rated_at) == ("", None, None)


def test_keyboard_shortcuts_and_the_rating_form_are_on_the_page(reviewer_client, school):
    conversation = make_conversation(school)
    content = reviewer_client.get(conversation_url(conversation)).content.decode()
    assert "adminpanel/console.js" in content
    assert 'data-key="g"' in content and 'data-key="b"' in content and "data-next-unrated-url" in content
    assert "csrfmiddlewaretoken" in content and "name=\"note\"" in content


def test_index_links_the_console(head_client, reviewer_client, school):
    make_conversation(school)
    content = head_client.get("/admin/").content.decode()
    for link in ("/admin/dashboard/", "/admin/desk/", "/admin/chatbot/conversation/"):
        assert link in content
    assert "1 unrated" in content
    content = reviewer_client.get("/admin/").content.decode()
    assert "/admin/desk/" not in content and "/admin/dashboard/" in content


def test_schools_of_the_list_filter_are_one_query(head_client):
    for _ in range(5):
        SchoolFactory()
    with CaptureQueriesContext(connection) as queries:
        head_client.get(LIST_URL)
    school_rows = [q["sql"] for q in queries.captured_queries if 'FROM "bookings_school"' in q["sql"]]
    # one for the filter's choices, one for the zone the list is read in (SELECT DISTINCT time_zone)
    assert sum("DISTINCT" not in sql for sql in school_rows) == 1 and len(school_rows) == 2
    assert School.objects.count() == 5


def test_json_of_steps_is_escaped(head_client, school):
    conversation = make_conversation(school, question="<script>alert(1)</script>")
    content = head_client.get(conversation_url(conversation)).content.decode()
    assert "<script>alert(1)</script>" not in content
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in content


def test_a_long_conversation_is_shown_a_page_at_a_time(head_client, school, monkeypatch):
    from adminpanel import selectors

    monkeypatch.setattr(selectors, "TRANSCRIPT_PAGE", 4)
    conversation = make_conversation(school, turns=3)  # 6 messages: two pages
    first = head_client.get(conversation_url(conversation))
    assert [m.text for m in first.context["transcript"]][:2] == ["Do you have a pool? (0)", "Answer 0"]
    assert len(first.context["transcript"]) == 4 and first.context["later_url"] == "?page=2"
    second = head_client.get(conversation_url(conversation), {"page": 2})
    assert [m.text for m in second.context["transcript"]] == ["Do you have a pool? (2)", "Answer 2"]
    assert second.context["earlier_url"] == "?page=1" and second.context["later_url"] == ""
    assert head_client.get(conversation_url(conversation), {"page": "x"}).context["transcript_page"] == 1


def test_staff_see_each_messages_language_and_filter_by_it(head_client, school):
    chinese = make_conversation(school, question="我想预约参观")
    Message.objects.filter(conversation=chinese, role="user").update(language="zh-hans")
    Message.objects.filter(conversation=chinese, role="assistant").update(language="zh-hans")
    malay = make_conversation(school, question="Boleh saya tempah lawatan?")
    Message.objects.filter(conversation=malay, role="user").update(language="ms")
    english = make_conversation(school)
    Message.objects.filter(conversation=english, role="user").update(language="en")

    assert listed(head_client.get(LIST_URL, {"language": "zh-hans"})) == [chinese.pk]
    assert listed(head_client.get(LIST_URL, {"language": "ms"})) == [malay.pk]
    assert set(listed(head_client.get(LIST_URL))) == {chinese.pk, malay.pk, english.pk}
    page = head_client.get(conversation_url(chinese)).content.decode()
    assert page.count('data-role="language" lang="zh-hans"') == Message.objects.filter(conversation=chinese).count()
