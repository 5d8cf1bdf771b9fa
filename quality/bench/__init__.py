"""`manage.py bench`: how fast and how safe the concierge is, measured beside a baseline in the same run.

One module per benchmark; each exposes `NAME`, `TITLE` and `run(ctx) -> Result`
(see `quality.bench.common`). Every benchmark creates its own data under a
dedicated school (slug `bench-...`) and deletes it afterwards; the demo schools
are never touched. Servers it needs (daphne, Celery) are subprocesses on
127.0.0.1 that are always stopped before the benchmark returns.
"""

BENCHMARKS = (
    "turn_overhead",
    "concurrency",
    "scale_out",
    "prompt_growth",
    "booking_race",
    "memory",
    "console",
    "streaming",
)


def module_for(name: str):
    from importlib import import_module

    return import_module(f"quality.bench.{name}")
