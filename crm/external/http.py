"""HTTP calls to other systems, with failures sorted into "try again later" and "don't".

- `TransientError`: timeouts, connection errors, 429 and 5xx. Worth retrying with
  backoff. `maybe_delivered` is set when the request may have reached the other
  side (the response was lost), so a non-idempotent call must be checked before
  it is repeated.
- `PermanentError`: any other 4xx. Retrying cannot help; the reason is logged.
"""

import email.utils
import logging
import time
from typing import Self

import httpx
from django.conf import settings

from plumbing.logging import mask_text

logger = logging.getLogger(__name__)


def _rebuild(cls, text: str, state: dict) -> "ExternalError":
    error = cls.__new__(cls)
    Exception.__init__(error, text)
    error.__dict__.update(state)
    return error


class ExternalError(Exception):
    def __init__(self, system: str, message: str, *, status_code: int | None = None) -> None:
        super().__init__(f"{system}: {message}")
        self.system = system
        self.status_code = status_code

    def __reduce__(self):  # picklable with its attributes (Celery stores and logs task exceptions)
        return _rebuild, (self.__class__, str(self), dict(self.__dict__))


class TransientError(ExternalError):
    def __init__(self, system: str, message: str, *, status_code: int | None = None,
                 retry_after: float | None = None, maybe_delivered: bool = False) -> None:
        super().__init__(system, message, status_code=status_code)
        self.retry_after = retry_after
        self.maybe_delivered = maybe_delivered


class PermanentError(ExternalError):
    pass


def make_client(base_url: str, headers: dict[str, str], timeout: float | None = None) -> httpx.Client:
    timeout = timeout or settings.EXTERNAL_HTTP_TIMEOUT_SECONDS
    return httpx.Client(base_url=base_url, headers={"Accept": "application/json", **headers},
                        timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)))


class ApiClient:
    """Base of the platform clients: `with SomeClient() as client:` closes its connections (`self.http`)."""

    http: httpx.Client

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After") or response.headers.get("x-ratelimit-reset")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _reason(response: httpx.Response) -> str:
    try:
        body = response.json()
        text = body.get("error") or body.get("message") or body.get("errors") or body
        if isinstance(body.get("error"), dict):  # Graph API: {"error": {"message", "code", ...}}
            text = body["error"].get("message") or body["error"]
    except (ValueError, AttributeError):
        text = response.text
    return mask_text(str(text))[:300]


def call(client: httpx.Client, system: str, method: str, url: str, **kwargs) -> httpx.Response:
    """One request; returns the 2xx response or raises TransientError / PermanentError."""
    idempotent = method.upper() in ("GET", "PUT", "DELETE", "HEAD")
    try:
        response = client.request(method, url, **kwargs)
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
        raise TransientError(system, f"{method} {url} could not connect ({type(exc).__name__})") from exc
    except httpx.TransportError as exc:  # read/write timeouts, dropped connections: the request may have landed
        raise TransientError(system, f"{method} {url} failed mid-request ({type(exc).__name__})",
                             maybe_delivered=not idempotent) from exc
    if response.is_success:
        return response
    status = response.status_code
    reason = _reason(response)
    if status == 429 or status >= 500:
        raise TransientError(system, f"{method} {url} answered {status}: {reason}", status_code=status,
                             retry_after=_retry_after(response) if status == 429 else None)
    logger.warning("%s refused %s %s with %s: %s", system, method, url, status, reason)
    raise PermanentError(system, f"{method} {url} answered {status}: {reason}", status_code=status)
