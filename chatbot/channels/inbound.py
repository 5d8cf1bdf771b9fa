"""Reading a platform's webhook payload defensively: every field read is checked against its documented shape.

A signed delivery can still carry what no database column takes (NUL, a lone UTF-16 surrogate) or a field of
another type than the platform documents. Text is cleaned (`clean`: NUL dropped, a lone surrogate becomes U+FFFD)
and stored; a field of the wrong type or an id longer than its column is `Malformed`: that message is kept as a
dead letter (`RejectedInbound`, in the admin) and the rest of its delivery is stored as usual.
"""

import hashlib
import json
import logging
import re
from typing import Any

from django.http import HttpRequest, JsonResponse

from chatbot import safejson
from chatbot.models import RejectedInbound

logger = logging.getLogger(__name__)

_UNSTORABLE = re.compile(r"\x00|[\ud800-\udfff]")


class Malformed(ValueError):
    """A field whose type or length is not what the platform documents."""


def json_body(request: HttpRequest) -> dict | None:
    """A webhook's body as a JSON object, its text storable (`clean`); None (a 400) for anything else, over-deep
    nesting included."""
    try:
        payload = safejson.loads(request.body)
    except safejson.MalformedJSON:
        return None
    return clean(payload) if isinstance(payload, dict) else None


def malformed(platform: str, problem: Malformed) -> JsonResponse:
    """The 400 of a webhook whose payload does not have the shape its platform documents."""
    logger.warning("%s webhook: malformed payload (%s)", platform, problem)
    return JsonResponse({"error": f"malformed payload: {problem}"}, status=400)


def clean(value: Any) -> Any:
    """`value` with every string (keys too) storable: NUL removed, a lone surrogate replaced by U+FFFD."""
    if isinstance(value, str):
        return _UNSTORABLE.sub(lambda m: "" if m.group() == "\x00" else "\ufffd", value)
    if isinstance(value, dict):
        return {clean(key): clean(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clean(item) for item in value]
    return value


def storable(value: str) -> bool:
    """Whether a database column can take `value` as it is (no NUL, no lone surrogate)."""
    return not _UNSTORABLE.search(value)


def obj(value: Any, what: str) -> dict:
    """An object field (absent: empty)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Malformed(f"{what} is not an object")
    return value


def items(value: Any, what: str) -> list:
    """A list field (absent: empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise Malformed(f"{what} is not a list")
    return value


def objects(value: Any, what: str) -> list[dict]:
    """A list of objects (absent: empty)."""
    found = items(value, what)
    for item in found:
        obj(item, f"an item of {what}")
    return found


def string(value: Any, what: str) -> str:
    """A text field (absent: empty); numbers are read as their digits."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise Malformed(f"{what} is not text")
    return str(value)


def ident(value: Any, what: str, limit: int) -> str:
    """An id (a number or a string; absent: empty) that fits its column of `limit` characters."""
    found = string(value, what)
    if len(found) > limit:
        raise Malformed(f"{what} is longer than {limit} characters")
    return found


def dead_letter(channel: str, reason: str, item: Any) -> None:
    """Keep a message that could not be read, for staff to see (the admin's "rejected inbound messages"); the
    same message delivered again is kept once."""
    item = clean(item)
    fingerprint = hashlib.sha256(json.dumps(item, sort_keys=True, default=str).encode()).hexdigest()
    RejectedInbound.objects.get_or_create(channel=channel, fingerprint=fingerprint,
                                          defaults={"reason": reason[:300], "item": item})
