"""Liveness and readiness endpoints for load balancers and orchestrators."""

import hmac
import ipaddress
import logging

from celery import current_app as celery_app
from django.conf import settings
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django_prometheus.exports import ExportToDjangoView

from plumbing.redis import get_redis, is_embedded

logger = logging.getLogger(__name__)


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
    """Database, Redis and the Celery broker are all reachable.

    The answer names the dependency that is down ("unavailable"), never the error itself: exception text can
    carry host names, user names and addresses. The error goes to the log.
    """
    checks: dict[str, str] = {}
    for name, check in (("database", _check_database), ("redis", _check_redis), ("broker", _check_broker)):
        try:
            checks[name] = check()
        except Exception as exc:  # any failure means "not ready"
            logger.warning("readyz: %s unavailable (%s: %s)", name, type(exc).__name__, exc)
            checks[name] = "unavailable"
    ready = all(value.startswith("ok") for value in checks.values())
    return JsonResponse({"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503)


def _metrics_allowed(request: HttpRequest) -> bool:
    token = settings.METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer ") and hmac.compare_digest(header[7:].strip().encode(), token.encode()):
        return True
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(allowed, strict=False) for allowed in settings.METRICS_ALLOWED_IPS)


@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus metrics, for a scraper with METRICS_TOKEN or from METRICS_ALLOWED_IPS; 404 for anyone else."""
    if not _metrics_allowed(request):
        raise Http404
    return ExportToDjangoView(request)
