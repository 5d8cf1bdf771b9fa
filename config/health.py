"""Liveness and readiness endpoints for load balancers and orchestrators."""

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from config.celery import app as celery_app
from config.redis import get_redis, is_embedded


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """The process is up and serving requests."""
    return JsonResponse({"status": "ok"})


def _check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return "ok"


def _check_redis() -> str:
    get_redis().ping()
    return "ok (embedded)" if is_embedded() else "ok"


def _check_broker() -> str:
    if celery_app.conf.task_always_eager:
        return "ok (eager)"
    with celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
    return "ok"


@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    """Database, Redis and the Celery broker are all reachable."""
    checks: dict[str, str] = {}
    for name, check in (("database", _check_database), ("redis", _check_redis), ("broker", _check_broker)):
        try:
            checks[name] = check()
        except Exception as exc:  # any failure means "not ready", with the reason shown
            checks[name] = f"error: {exc.__class__.__name__}: {exc}"
    ready = all(value.startswith("ok") for value in checks.values())
    return JsonResponse({"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503)
