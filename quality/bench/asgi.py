"""The ASGI app the bench serves with daphne: the project's own `config.asgi`, plus the bench models.

    BENCH_SLOW_MODEL=1 LLM_MODEL=benchslow/1s daphne quality.bench.asgi:application

With `BENCH_SLOW_MODEL=1` the `benchslow/<n>s` provider is registered (see `quality.bench.models`), so the
server answers every turn after n seconds without any network. Nothing else differs from production.
"""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()  # the bench models import the agent's, whose modules import the apps' models

if os.environ.get("BENCH_SLOW_MODEL") == "1":  # before config.asgi, whose warm-up loads the model's client
    from quality.bench.models import register_slow

    register_slow()

from config.asgi import application  # noqa: E402

__all__ = ["application"]
