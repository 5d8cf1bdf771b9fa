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
from chatbot.models import Conversation, Message
from crm.models import Contact
from quality.bench.common import percentile
from quality.bench.counting import RoundTrips

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
    per_turn = turn["per_turn"]
    assert per_turn["round_trips"] == sum(per_turn[kind] for kind in (
        "statements", "transaction_control", "savepoints", "health_checks", "prepares", "pipeline_syncs"))
    assert per_turn["commits"] > 0 and per_turn["thread_hops"] > 0
    # The web channel is loaded: typing, steps and the reply reach the contact's listening socket.
    assert turn["channel_layer_frames_per_turn"] > 0
    assert turn["frames_received"] == turn["frames_sent"] > 0

    growth = benchmarks["prompt_growth"]["figures"]
    assert growth["growth_ratio"] > 0 and growth["growth_ratio_uncompressed"] > 0
    assert len(growth["per_turn_compressed"]) == growth["messages"] == 12
    assert all(tokens > 0 for tokens in growth["per_turn_compressed"] + growth["per_turn_uncompressed"])
    assert growth["hosted_median_prompt_tokens"] > 0 and growth["tool_schema_tokens_per_call"] > 0
    assert growth["empty_replies"] == 0
    assert growth["booking_completed"] is True and growth["booking_model_calls"] > growth["booking_messages"]
    assert growth["tokens_per_completed_booking"] == (growth["booking_prompt_tokens"]
                                                      + growth["booking_completion_tokens"]) > 0

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

    from plumbing.redis import get_redis

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


def test_round_trips_tell_statements_transaction_control_and_commits_apart():
    """One atomic write (BEGIN, UPDATE, COMMIT), one autocommit write (commits on its own), one read."""
    from django.db import transaction

    school = School.objects.create(slug="counted", name="Counted")
    with RoundTrips() as trips:
        trips.reset()
        with transaction.atomic():
            School.objects.filter(pk=school.pk).update(name="Counted once")
        School.objects.filter(pk=school.pk).update(name="Counted twice")
        assert School.objects.get(pk=school.pk).name == "Counted twice"
        counts = trips.reset()
    assert counts.statements == 3
    assert counts.transaction_control == 2
    assert counts.commits == 2
    assert counts.savepoints == counts.health_checks == 0
    assert counts.round_trips == 5


def test_round_trips_count_savepoints_and_thread_hops():
    from asgiref.sync import async_to_sync, sync_to_async
    from django.db import transaction

    def nested():
        with transaction.atomic(), transaction.atomic():
            return School.objects.count()

    async def hop_twice():
        await sync_to_async(nested)()
        await sync_to_async(nested)()

    with RoundTrips() as trips:
        async_to_sync(hop_twice)()
        counts = trips.reset()
    assert counts.savepoints == 4  # SAVEPOINT + RELEASE SAVEPOINT, twice
    assert counts.thread_hops >= 2
    assert counts.statements == 2


def test_the_langgraph_peer_needs_postgres_and_is_no_product_dependency():
    from pathlib import Path

    from django.conf import settings as django_settings
    from django.db import connection

    requirements = "".join(p.read_text().lower() for p in Path(django_settings.BASE_DIR, "requirements").glob("*.txt"))
    assert "langgraph" not in requirements
    if connection.vendor == "postgresql":
        pytest.skip("on PostgreSQL --peer installs and runs LangGraph (the full bench run, docs/benchmarks.md)")
    report = _bench("--only", "turn_overhead", "--peer")
    assert report["benchmarks"]["turn_overhead"]["status"] == "skipped"
    assert "PostgreSQL" in report["benchmarks"]["turn_overhead"]["reason"]
