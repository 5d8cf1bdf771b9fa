"""Exports: JSONL with every message and step (an evaluation data set) and CSV, honouring the list's filters."""

import csv
import datetime as dt
import io
import json

import pytest
from django.core.handlers.asgi import ASGIRequest
from django.db import connection
from django.http import StreamingHttpResponse
from django.test.utils import CaptureQueriesContext

from adminpanel import exports
from bookings.models import TourBooking
from bookings.services import ChildDetails, book_tour
from chatbot.models import Channel
from plumbing.logging import mask_phone
from tests.adminpanel.conftest import LIST_URL, make_conversation

pytestmark = pytest.mark.filterwarnings("ignore:No directory at:UserWarning")
JSONL_URL = "/admin/chatbot/conversation/export.jsonl"
CSV_URL = "/admin/chatbot/conversation/export.csv"


def body(response) -> str:
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content).decode()


def jsonl(response) -> list[dict]:
    return [json.loads(line) for line in body(response).splitlines()]


def test_jsonl_export_honours_the_filters_and_carries_the_traces(reviewer_client, school):
    good = make_conversation(school, turns=2, rating="good", rating_note="Spot on", no_match=True)
    make_conversation(school, rating="bad")
    make_conversation(school)
    response = reviewer_client.get(JSONL_URL, {"rated": "good"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert "attachment" in response["Content-Disposition"] and ".jsonl" in response["Content-Disposition"]
    records = jsonl(response)
    assert [r["id"] for r in records] == [good.pk]
    record = records[0]
    assert record["rating"] == "good" and record["rating_note"] == "Spot on"
    assert record["contact"]["phone"] == mask_phone(good.contact.phone)
    assert good.contact.phone not in json.dumps(record)
    assert record["message_count"] == 4 and record["slowest_turn_ms"] == 1100
    roles = [m["role"] for m in record["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    answer = record["messages"][1]
    assert [s["kind"] for s in answer["steps"]] == ["think", "act", "observe", "answer"]
    assert answer["steps"][1]["tool_arguments"] == {"question": "Do you have a pool?"}
    assert answer["steps"][2]["tool_result"]["status"] == "no_match"
    assert answer["model"] == "gpt-4o-mini" and answer["latency_ms"] == 1000


def test_csv_export_has_one_row_per_conversation(reviewer_client, school):
    first = make_conversation(school, turns=3, channel=Channel.WHATSAPP, outcome="booked")
    second = make_conversation(school, channel=Channel.WHATSAPP, rating="bad", rating_note="=HYPERLINK(1)")
    make_conversation(school)
    response = reviewer_client.get(CSV_URL, {"channel__exact": "whatsapp"})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(body(response))))
    assert {int(r["id"]) for r in rows} == {first.pk, second.pk}
    by_id = {int(r["id"]): r for r in rows}
    assert by_id[first.pk]["messages"] == "6" and by_id[first.pk]["outcome"] == "booked"
    assert by_id[second.pk]["rating_note"] == "'=HYPERLINK(1)"  # no formula in a spreadsheet
    assert list(rows[0]) == list(exports.CSV_COLUMNS)


def test_both_exports_list_the_tours_booked_in_the_conversation_with_every_child(reviewer_client, school,
                                                                                 next_weekday):
    conversation = make_conversation(school, turns=2)
    earlier = book_tour(school=school, contact=conversation.contact, parent_name="Mei Tan", parent_phone="+6591234567",
                        child_name="Ana", child_age=4, local_date=next_weekday(school, 3), local_time=dt.time(9))
    TourBooking.objects.filter(pk=earlier.pk).update(created_at=conversation.started_at - dt.timedelta(days=2))
    family = book_tour(school=school, contact=conversation.contact, parent_name="Mei Tan",
                       parent_phone="+6591234567", local_date=next_weekday(school, 1), local_time=dt.time(9),
                       children=[ChildDetails("Leo", 5), ChildDetails("Mia", 5)], adults=2)

    [record] = jsonl(reviewer_client.get(JSONL_URL))
    assert record["tours"] == [{"reference": family.reference, "starts_at": exports._iso(family.starts_at, school),
                                "status": "scheduled", "adults": 2,
                                "children": [{"name": "Leo", "age": 5, "year_group": ""},
                                             {"name": "Mia", "age": 5, "year_group": ""}]}]
    [row] = csv.DictReader(io.StringIO(body(reviewer_client.get(CSV_URL))))
    assert row["tours"] == f"{family.reference} {exports._iso(family.starts_at, school)} scheduled: " \
                           "Leo (5) and Mia (5)"


def test_export_follows_the_search_too(reviewer_client, school):
    wanted = make_conversation(school, question="Is there a swimming pool?")
    make_conversation(school, question="What are the fees?")
    assert [r["id"] for r in jsonl(reviewer_client.get(JSONL_URL, {"q": "swimming"}))] == [wanted.pk]


def test_export_actions_export_the_selected_rows(reviewer_client, school):
    chosen = make_conversation(school)
    make_conversation(school)
    response = reviewer_client.post(LIST_URL, {"action": "export_jsonl", "_selected_action": [chosen.pk]})
    assert [r["id"] for r in jsonl(response)] == [chosen.pk]
    response = reviewer_client.post(LIST_URL, {"action": "export_csv", "_selected_action": [chosen.pk]})
    assert [int(r["id"]) for r in csv.DictReader(io.StringIO(body(response)))] == [chosen.pk]


def test_export_streams_in_chunks_with_constant_queries_per_chunk(school, monkeypatch):
    monkeypatch.setattr(exports, "CHUNK", 2)
    made = [make_conversation(school, turns=1 + i % 3) for i in range(5)]
    ids = [c.pk for c in reversed(made)]
    chunks = exports.jsonl_chunks(ids)
    with CaptureQueriesContext(connection) as first:
        next(chunks)
    with CaptureQueriesContext(connection) as second:
        next(chunks)
    assert len(first) == len(second) == 4  # conversations, the contacts' tours (+ their children), messages, steps
    assert sum(line.count("\n") for line in [next(chunks)]) == 1
    with pytest.raises(StopIteration):
        next(chunks)


def test_export_links_on_the_list_carry_the_filters(reviewer_client, school):
    make_conversation(school)
    content = reviewer_client.get(LIST_URL, {"rated": "unrated", "p": "1"}).content.decode()
    assert f"{JSONL_URL}?rated=unrated" in content and f"{CSV_URL}?rated=unrated" in content


def test_bad_filters_give_a_400(reviewer_client, school):
    assert reviewer_client.get(JSONL_URL, {"no_such_field__exact": "x"}).status_code == 400


def test_under_asgi_the_export_is_an_async_stream(rf, school):
    make_conversation(school)

    class FakeAsgiRequest(ASGIRequest):
        def __init__(self):
            pass

    response = exports.streaming_response(FakeAsgiRequest(), iter(["a\n", "b\n"]), kind="jsonl")
    assert response.is_async


def test_an_unauthorised_user_cannot_export(client, db, school):
    from tests.factories import UserFactory

    client.force_login(UserFactory(username="nobody"))  # staff without any permission
    assert client.get(JSONL_URL).status_code == 403
