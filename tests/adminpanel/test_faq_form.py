"""The FAQ form: tags as a comma-separated line and related topics picked from the other questions, not raw JSON
boxes; and the favicon every page links to."""

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

from chatbot.models import FaqEntry
from tests.factories import FaqEntryFactory, SchoolFactory

pytestmark = pytest.mark.filterwarnings("ignore:No directory at:UserWarning")
ADD = "/admin/chatbot/faqentry/add/"


@pytest.fixture
def entries(school):
    other = SchoolFactory(name="Other School")
    return {
        "fees": FaqEntryFactory(school=school, question="What are the fees?", tags=["fees", "tuition"],
                                related_topics=["Is there a bus?"]),
        "bus": FaqEntryFactory(school=school, question="Is there a bus?"),
        "privacy": FaqEntryFactory(school=None, question="How do you use my data?"),
        "elsewhere": FaqEntryFactory(school=other, question="Do you teach Welsh?"),
    }


def test_the_change_form_has_a_tag_line_and_a_topic_picker(admissions_client, entries):
    fees = entries["fees"]
    response = admissions_client.get(reverse("admin:chatbot_faqentry_change", args=[fees.pk]))
    content = response.content.decode()
    assert 'name="tags" value="fees, tuition"' in content
    assert "[&quot;" not in content  # no JSON anywhere on the form
    assert 'class="selectfilter"' in content  # the admin's two-list selector
    form = response.context["adminform"].form
    labels = dict(form.fields["related_topics"].choices)
    assert labels == {"Is there a bus?": "Is there a bus?",  # its own school's: no need to say
                      "How do you use my data?": "How do you use my data? (every school)"}
    assert form.initial["related_topics"] == ["Is there a bus?"]


def test_saving_turns_the_line_into_a_list_and_keeps_the_chosen_topics(admissions_client, entries):
    fees = entries["fees"]
    response = admissions_client.post(reverse("admin:chatbot_faqentry_change", args=[fees.pk]), {
        "school": fees.school_id, "question": fees.question, "answer": "From $1,000 a term.",
        "tags": " fees,Tuition , fees, bursary ,,", "related_topics": ["How do you use my data?", "Is there a bus?"],
        "is_active": "on",
    })
    assert response.status_code == 302, response.context["adminform"].form.errors
    fees.refresh_from_db()
    assert fees.tags == ["fees", "Tuition", "bursary"]
    assert fees.related_topics == ["How do you use my data?", "Is there a bus?"]


def test_an_entry_for_every_school_names_no_school_zone(admissions_client, entries):
    content = admissions_client.get(reverse("admin:chatbot_faqentry_change",
                                            args=[entries["privacy"].pk])).content.decode()
    assert "Times on this page" not in content
    content = admissions_client.get(reverse("admin:chatbot_faqentry_change", args=[entries["fees"].pk])).content
    assert b"Times on this page are the school's: Asia/Singapore (Singapore time)." in content


def test_a_question_of_another_school_is_refused(admissions_client, entries):
    fees = entries["fees"]
    response = admissions_client.post(reverse("admin:chatbot_faqentry_change", args=[fees.pk]), {
        "school": fees.school_id, "question": fees.question, "answer": fees.answer, "tags": "",
        "related_topics": ["Do you teach Welsh?"], "is_active": "on",
    })
    assert response.status_code == 200
    assert "related_topics" in response.context["adminform"].form.errors
    assert FaqEntry.objects.get(pk=fees.pk).related_topics == ["Is there a bus?"]


def test_a_topic_whose_entry_is_gone_stays_visible_until_removed(admissions_client, entries):
    fees = entries["fees"]
    entries["bus"].delete()
    form = admissions_client.get(reverse("admin:chatbot_faqentry_change", args=[fees.pk])).context["adminform"].form
    assert dict(form.fields["related_topics"].choices)["Is there a bus?"] == "Is there a bus? (no such entry)"


def test_favicon_is_linked_on_the_console_and_the_chat_pages(client, admissions_client, school):
    assert finders.find("favicon.svg")
    for page in (client.get("/admin/login/"), admissions_client.get("/admin/"),
                 client.get(reverse("chatbot:chat", args=[school.slug]))):
        assert page.status_code == 200
        assert 'rel="icon" href="/static/favicon.svg"' in page.content.decode()
