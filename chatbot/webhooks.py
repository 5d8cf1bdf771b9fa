"""Webhook endpoints (thin): authenticate, parse, hand over, answer at once.

- `POST /webhooks/chatwoot/<secret>/`: Chatwoot agent-bot events. The URL secret
  (CHATWOOT_WEBHOOK_SECRET) is required; when CHATWOOT_HMAC_SECRET is set the
  `X-Chatwoot-Signature` must match too and the timestamp be fresh.
- `GET|POST /webhooks/whatsapp/`: the WhatsApp Cloud API verification handshake
  and events signed with `X-Hub-Signature-256`.

The work behind a 200 is only "store the message and dispatch the turn", so the
platform gets its answer in milliseconds; the reply goes out later through the
platform's API. A 500 (database down) makes Chatwoot and Meta deliver again,
which is safe: messages are de-duplicated on the platform's message id.

Malformed input is never a 500 (chatbot/channels/inbound.py): text is cleaned of
what no column stores (NUL, lone surrogates); a body that is not a JSON object, or
a WhatsApp delivery whose envelope is wrong, is a 400; one unreadable message of a
WhatsApp batch is a dead letter while the others are stored (200); an unreadable
Chatwoot event (one message) is a dead letter and a 400.
"""

import hmac
import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from chatbot import safejson
from chatbot.channels import chatwoot, whatsapp
from chatbot.channels.inbound import Malformed, clean, dead_letter
from chatbot.models import Channel
from plumbing.hops import database_hop

logger = logging.getLogger(__name__)


def _json_body(request: HttpRequest) -> dict | None:
    """The body as a JSON object, its text storable (inbound.clean); None (a 400) for anything else, over-deep
    nesting included."""
    try:
        payload = safejson.loads(request.body)
    except safejson.MalformedJSON:
        return None
    return clean(payload) if isinstance(payload, dict) else None


def _malformed(channel: str, problem: Malformed) -> JsonResponse:
    logger.warning("%s webhook: malformed payload (%s)", channel, problem)
    return JsonResponse({"error": f"malformed payload: {problem}"}, status=400)


@csrf_exempt
async def chatwoot_webhook(request: HttpRequest, secret: str) -> HttpResponse:
    expected = settings.CHATWOOT_WEBHOOK_SECRET
    if not expected or not hmac.compare_digest(secret.encode(), expected.encode()):
        logger.warning("Chatwoot webhook called with a wrong URL secret from %s", request.META.get("REMOTE_ADDR"))
        return HttpResponse("Not found", status=404)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if settings.CHATWOOT_HMAC_SECRET and not chatwoot.valid_signature(
        request.body, request.headers.get("X-Chatwoot-Timestamp", ""),
        request.headers.get("X-Chatwoot-Signature", ""), settings.CHATWOOT_HMAC_SECRET,
    ):
        logger.warning("Chatwoot webhook with a missing, wrong or stale signature (delivery %s)",
                       request.headers.get("X-Chatwoot-Delivery", "-"))
        return JsonResponse({"error": "invalid signature"}, status=401)
    payload = _json_body(request)
    if payload is None:
        return JsonResponse({"error": "the body must be a JSON object"}, status=400)
    try:
        result = await chatwoot.handle_event(payload)
    except Malformed as problem:  # one event is one message: kept for staff, and refused
        await database_hop(dead_letter)(Channel.CHATWOOT, str(problem), payload)
        return _malformed("Chatwoot", problem)
    logger.info("Chatwoot %s: %s", payload.get("event"), result)
    return JsonResponse({"result": result})


@csrf_exempt
async def whatsapp_webhook(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        mode, token = request.GET.get("hub.mode"), request.GET.get("hub.verify_token", "")
        expected = settings.WHATSAPP_VERIFY_TOKEN
        if mode == "subscribe" and expected and hmac.compare_digest(token.encode(), expected.encode()):
            return HttpResponse(request.GET.get("hub.challenge", ""), content_type="text/plain")
        logger.warning("WhatsApp verification with a wrong verify token")
        return HttpResponse("Forbidden", status=403)
    if request.method != "POST":
        return HttpResponseNotAllowed(["GET", "POST"])
    if not whatsapp.valid_signature(request.body, request.headers.get("X-Hub-Signature-256", ""),
                                    settings.WHATSAPP_APP_SECRET):
        logger.warning("WhatsApp webhook with a missing or wrong X-Hub-Signature-256")
        return HttpResponse("Forbidden", status=403)
    payload = _json_body(request)
    if payload is None:
        return JsonResponse({"error": "the body must be a JSON object"}, status=400)
    if payload.get("object") != "whatsapp_business_account":
        return JsonResponse({"result": "ignored"})
    try:
        results = await whatsapp.handle_payload(payload)
    except Malformed as problem:  # the envelope itself: nothing in it can be read
        return _malformed("WhatsApp", problem)
    if results:
        logger.info("WhatsApp delivery: %s", ", ".join(results))
    return JsonResponse({"results": results})
