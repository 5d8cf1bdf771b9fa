"""`manage.py bench --quick`: the in-process benchmarks run end to end and report sane figures.

No timing thresholds: only that each figure is there, has the right shape, and that the safety figures
(seats sold, errors) are exact. The benchmarks that start servers (concurrency, scale_out, memory) are
exercised by the full run documented in docs/benchmarks.md.
"""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bookings.models import School
from chatbot.bench.common import RoundTrips, percentile
from chatbot.models import Conversation, Message
from crm.models import Contact

pytestmark = [pytest.mark.django_db(transaction=True)]


def _bench(*args: str) -> dict:
    out = StringIO()
    call_command("bench", "--quick", "--json", "--no-progress", *args, stdout=out)
    return json.loads(out.getvalue())


def test_quick_bench_reports_sane_figures():
    report = _bench("--only", "turn_overhead,prompt_growth,booking_race")
    benchmarks = report["benchmarks"]
    assert set(benchmarks) == {"turn_overhead", "prompt_growth", "booking_race"}
    assert {b["status"] for b in benchmarks.values()} == {"ok"}, benchmarks

    turn = benchmarks["turn_overhead"]["figures"]
    assert turn["turns"] == 15 and turn["errors"] == 0
    assert 0 < turn["turn_p50_ms"] <= turn["turn_p99_ms"]
    assert turn["floor_p50_ms"] > 0 and turn["overhead_p50_ratio"] > 0
    assert turn["queries_per_turn"] > 0 and turn["redis_commands_per_turn"] > 0
    assert turn["tool_calls"] > 0

    growth = benchmarks["prompt_growth"]["figures"]
    assert growth["growth_ratio"] > 0 and growth["growth_ratio_uncompressed"] > 0
    assert len(growth["per_turn_compressed"]) == growth["messages"] == 12
    assert all(tokens > 0 for tokens in growth["per_turn_compressed"] + growth["per_turn_uncompressed"])
    assert growth["hosted_median_prompt_tokens"] > 0 and growth["tool_schema_tokens_per_call"] > 0
    assert growth["empty_replies"] == 0

    race = benchmarks["booking_race"]["figures"]
    assert race["seats_sold"] == race["seats_available"] == race["seat_counters"] == race["booking_rows"] > 0
    assert race["sold_ratio"] == 1.0
    assert race["errors"] == 0
    assert race["refused_slot_full"] == race["threads"] - race["seats_sold"]

    assert report["machine"]["nproc"] >= 1


def test_the_bench_leaves_no_data_behind():
    before = (School.objects.count(), Contact.objects.count(), Conversation.objects.count(), Message.objects.count())
    _bench("--only", "booking_race")
    assert (School.objects.count(), Contact.objects.count(), Conversation.objects.count(),
            Message.objects.count()) == before
    assert not School.objects.filter(slug__startswith="bench-").exists()


def test_unknown_benchmark_is_refused():
    with pytest.raises(CommandError, match="Unknown benchmark"):
        call_command("bench", "--only", "nope", stdout=StringIO())


def test_scale_out_says_why_it_is_skipped_without_postgres_and_redis(settings):
    settings.REDIS_URL = ""
    report = _bench("--only", "scale_out")
    assert report["benchmarks"]["scale_out"]["status"] == "skipped"
    assert "PostgreSQL" in report["benchmarks"]["scale_out"]["reason"]


def test_table_output_lists_each_benchmark():
    out = StringIO()
    call_command("bench", "--quick", "--no-progress", "--only", "booking_race", stdout=out)
    assert "booking_race" in out.getvalue() and "seats sold / available" in out.getvalue()


def test_round_trips_counts_queries_and_redis_commands_then_restores_the_clients():
    from django.db import connection

    from config.redis import get_redis

    with RoundTrips() as trips:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        get_redis().ping()
        get_redis().set("bench:test", "1")
    assert trips.queries == 1 and trips.redis == 2
    get_redis().ping()
    assert trips.redis == 2


def test_percentile():
    assert percentile([], 0.5) == 0.0
    assert percentile([3, 1, 2], 0.5) == 2
    assert percentile([0, 10], 0.99) == pytest.approx(9.9)
