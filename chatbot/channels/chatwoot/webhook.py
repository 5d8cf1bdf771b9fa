"""`POST /webhooks/chatwoot/<secret>/`: Chatwoot agent-bot events (thin: authenticate, parse, hand over, answer).

The URL secret (CHATWOOT_WEBHOOK_SECRET) is required; when CHATWOOT_HMAC_SECRET is set the `X-Chatwoot-Signature`
must match too and the timestamp be fresh. The work behind a 200 is only "store the message and dispatch the
turn", so Chatwoot gets its answer in milliseconds, well inside its 5 s timeout; a 500 (database down) makes it
deliver again, which is safe: messages are de-duplicated on Chatwoot's message id. An unreadable event (one
message) is a dead letter and a 400 (chatbot/channels/inbound.py).
"""

import hmac
import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from chatbot.channels.chatwoot.inbound import handle_event, valid_signature
from chatbot.channels.inbound import Malformed, dead_letter, json_body, malformed
from chatbot.models import Channel
from plumbing.hops import database_hop

logger = logging.getLogger(__name__)


@csrf_exempt
async def chatwoot_webhook(request: HttpRequest, secret: str) -> HttpResponse:
    expected = settings.CHATWOOT_WEBHOOK_SECRET
    if not expected or not hmac.compare_digest(secret.encode(), expected.encode()):
        logger.warning("Chatwoot webhook called with a wrong URL secret from %s", request.META.get("REMOTE_ADDR"))
        return HttpResponse("Not found", status=404)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if settings.CHATWOOT_HMAC_SECRET and not valid_signature(
        request.body,
        request.headers.get("X-Chatwoot-Timestamp", ""),
        request.headers.get("X-Chatwoot-Signature", ""),
        settings.CHATWOOT_HMAC_SECRET,
    ):
        logger.warning(
            "Chatwoot webhook with a missing, wrong or stale signature (delivery %s)",
            request.headers.get("X-Chatwoot-Delivery", "-"),
        )
        return JsonResponse({"error": "invalid signature"}, status=401)
    payload = json_body(request)
    if payload is None:
        return JsonResponse({"error": "the body must be a JSON object"}, status=400)
    try:
        result = await handle_event(payload)
    except Malformed as problem:  # one event is one message: kept for staff, and refused
        await database_hop(dead_letter)(Channel.CHATWOOT, str(problem), payload)
        return malformed("Chatwoot", problem)
    logger.info("Chatwoot %s: %s", payload.get("event"), result)
    return JsonResponse({"result": result})
