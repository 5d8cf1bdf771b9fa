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
"""

import hmac
import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from chatbot import safejson
from chatbot.channels import chatwoot, whatsapp

logger = logging.getLogger(__name__)


def _json_body(request: HttpRequest) -> dict | None:
    """The body as a JSON object; None (a 400) for anything else, over-deep nesting included."""
    try:
        payload = safejson.loads(request.body)
    except safejson.MalformedJSON:
        return None
    return payload if isinstance(payload, dict) else None


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
    result = await chatwoot.handle_event(payload)
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
    results = await whatsapp.handle_payload(payload)
    if results:
        logger.info("WhatsApp delivery: %s", ", ".join(results))
    return JsonResponse({"results": results})
