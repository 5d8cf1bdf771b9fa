"""`GET|POST /webhooks/whatsapp/`: the WhatsApp Cloud API verification handshake, and events signed with
`X-Hub-Signature-256` (HMAC-SHA256 of the raw body with the App Secret).

Thin: authenticate, parse, hand over, answer at once. A body that is not a JSON object, or a delivery whose
envelope is wrong, is a 400; one unreadable message of a batch is a dead letter while the others are stored (200).
A 500 (database down) makes Meta deliver again, which is safe: messages are de-duplicated on their id.
"""

import hashlib
import hmac
import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from chatbot.channels.inbound import Malformed, json_body, malformed
from chatbot.channels.whatsapp.inbound import handle_payload

logger = logging.getLogger(__name__)


def valid_signature(body: bytes, header: str, secret: str) -> bool:
    if not header or not secret:
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header.strip())


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
    if not valid_signature(request.body, request.headers.get("X-Hub-Signature-256", ""), settings.WHATSAPP_APP_SECRET):
        logger.warning("WhatsApp webhook with a missing or wrong X-Hub-Signature-256")
        return HttpResponse("Forbidden", status=403)
    payload = json_body(request)
    if payload is None:
        return JsonResponse({"error": "the body must be a JSON object"}, status=400)
    if payload.get("object") != "whatsapp_business_account":
        return JsonResponse({"result": "ignored"})
    try:
        results = await handle_payload(payload)
    except Malformed as problem:  # the envelope itself: nothing in it can be read
        return malformed("WhatsApp", problem)
    if results:
        logger.info("WhatsApp delivery: %s", ", ".join(results))
    return JsonResponse({"results": results})
