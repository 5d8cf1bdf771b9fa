"""The review queue: unrated conversations assigned to reviewers, filtered (outcome, model fallback, handoff,
low rating) and worked through with the keyboard flow (`n` stays within the filtered queue)."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.messages import get_messages
from django.urls import reverse

from adminpanel import services
from chatbot.models import Conversation
from tests.adminpanel.conftest import LIST_URL, conversation_url, make_conversation

pytestmark = pytest.mark.filterwarnings("ignore:No directory at:UserWarning")
NEXT_UNRATED = "/admin/chatbot/conversation/next-unrated/"


def listed(client, **params) -> set[int]:
    response = client.get(LIST_URL, params)
    assert response.status_code == 200
    return {c.pk for c in response.context["cl"].result_list}


def test_assign_to_a_reviewer_from_the_list_and_find_it_in_their_queue(head_client, head, reviewer, reviewer_client,
                                                                       school):
    first, second, other = (make_conversation(school) for _ in range(3))
    response = head_client.post(LIST_URL, {"action": "assign_to_reviewer", "reviewer": reviewer.pk,
                                           "_selected_action": [first.pk, second.pk]})
    assert response.status_code == 302
    assert set(Conversation.objects.filter(reviewer=reviewer).values_list("pk", flat=True)) == {first.pk, second.pk}
    assert Conversation.objects.get(pk=first.pk).reviewer_assigned_at is not None
    entry = LogEntry.objects.get(object_id=str(first.pk), content_type__model="conversation")
    assert (entry.user, entry.change_message) == (head, "Assigned for review to rita.")

    assert listed(reviewer_client, reviewer="me", rated="unrated") == {first.pk, second.pk}
    assert listed(head_client, reviewer=str(reviewer.pk)) == {first.pk, second.pk}
    assert listed(head_client, reviewer="none") == {other.pk}
    content = reviewer_client.get("/admin/").content.decode()
    assert "2 in your queue" in content


def test_only_a_reviewer_can_be_given_conversations(head_client, admissions, school):
    conversation = make_conversation(school)
    response = head_client.post(LIST_URL, {"action": "assign_to_reviewer", "reviewer": admissions.pk,
                                           "_selected_action": [conversation.pk]})
    assert Conversation.objects.get(pk=conversation.pk).reviewer is None
    assert "Choose a reviewer" in str(list(get_messages(response.wsgi_request))[0])
    with pytest.raises(services.AssignError):
        services.assign_reviewer(Conversation.objects.filter(pk=conversation.pk), reviewer=admissions, by=admissions)


def test_assign_to_me_and_take_out_of_the_queue(reviewer_client, reviewer, school):
    conversation = make_conversation(school)
    reviewer_client.post(LIST_URL, {"action": "assign_to_me", "_selected_action": [conversation.pk]})
    assert Conversation.objects.get(pk=conversation.pk).reviewer == reviewer
    reviewer_client.post(LIST_URL, {"action": "unassign", "_selected_action": [conversation.pk]})
    assert Conversation.objects.get(pk=conversation.pk).reviewer is None


def test_the_review_page_puts_it_in_my_queue(reviewer_client, reviewer, school):
    conversation = make_conversation(school)
    content = reviewer_client.get(conversation_url(conversation)).content.decode()
    assert "Put in my queue" in content
    take = reverse("admin:chatbot_conversation_take", args=[conversation.pk])
    assert reviewer_client.get(take).status_code == 405
    response = reviewer_client.post(take)
    assert response.status_code == 302 and response.url == conversation_url(conversation)
    assert Conversation.objects.get(pk=conversation.pk).reviewer == reviewer
    content = reviewer_client.get(conversation_url(conversation)).content.decode()
    assert "Put in my queue" not in content and "<strong>rita</strong>" in content


def test_admissions_can_read_but_not_take_conversations(admissions_client, school):
    conversation = make_conversation(school)
    assert "Put in my queue" not in admissions_client.get(conversation_url(conversation)).content.decode()
    take = reverse("admin:chatbot_conversation_take", args=[conversation.pk])
    assert admissions_client.post(take).status_code == 403


def test_filters_outcome_fallback_handoff_and_low_rating(head_client, school):
    fell_back = make_conversation(school, model="gpt-4o-mini -> offline/policy")
    first_model = make_conversation(school, model="gpt-4o-mini", outcome="booked")
    handed = make_conversation(school, status="handed_off", outcome="handed_off")
    bad = make_conversation(school, rating="bad", outcome="callback")
    assert listed(head_client, fallback="yes") == {fell_back.pk}
    assert fell_back.pk not in listed(head_client, fallback="no")
    assert listed(head_client, outcome__exact="booked") == {first_model.pk}
    assert listed(head_client, handed_off="yes") == {handed.pk}
    assert listed(head_client, rated="bad") == {bad.pk}
    content = head_client.get(LIST_URL).content.decode()
    for choice in ("Moved", "Answered", "Abandoned", "Fell back to the offline model", "Assigned to me"):
        assert choice in content, choice


def test_n_walks_the_filtered_queue(reviewer_client, reviewer, school):
    """Open my queue, rate and press n: the next one is the next unrated conversation of my queue, not of all."""
    import datetime as dt

    from django.utils import timezone

    now = timezone.now()
    mine_newer = make_conversation(school, started_at=now - dt.timedelta(hours=1))
    not_mine = make_conversation(school, started_at=now - dt.timedelta(hours=2))
    mine_older = make_conversation(school, started_at=now - dt.timedelta(hours=3))
    Conversation.objects.filter(pk__in=[mine_newer.pk, mine_older.pk]).update(reviewer=reviewer)

    queue = "reviewer=me&rated=unrated"
    response = reviewer_client.get(NEXT_UNRATED, {"_changelist_filters": queue})
    assert urlsplit(response.url).path == conversation_url(mine_newer)
    page = reviewer_client.get(response.url)
    next_url = page.context["next_unrated_url"]
    assert urlsplit(next_url).path == conversation_url(mine_older)
    assert parse_qs(urlsplit(next_url).query)["_changelist_filters"] == [queue]

    # Rating with "then open the next unrated" keeps to the queue too, and skips what is not mine.
    rate = reverse("admin:chatbot_conversation_rate", args=[mine_older.pk])
    response = reviewer_client.post(f"{rate}?_changelist_filters={queue.replace('&', '%26')}",
                                    {"rating": "good", "next": "unrated"})
    found = reviewer_client.get(response.url)
    assert urlsplit(found.url).path == conversation_url(mine_newer)
    assert not_mine.pk not in listed(reviewer_client, reviewer="me", rated="unrated")


def test_the_list_offers_my_queue(reviewer_client, school):
    make_conversation(school)
    content = reviewer_client.get(LIST_URL).content.decode()
    assert 'href="/admin/chatbot/conversation/?reviewer=me&amp;rated=unrated"' in content
