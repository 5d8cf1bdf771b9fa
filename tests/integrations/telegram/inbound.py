"""Bot API updates in: `POST /webhooks/telegram/<school>/` with `{"update_id", "message": {"message_id", "chat":
{"id"}, "from": {"first_name"}, "text"}}`; the message stored through `receive()` and its turn dispatched."""

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from bookings.models import School
from chatbot.channels.inbound import Malformed, ident, json_body, malformed, obj, string
from chatbot.channels.worker import dispatch
from chatbot.services import receive
from crm.services import find_or_create_contact
from plumbing.hops import database_hop

NAME = "telegram"


def _contact(school: School, chat_id: str, name: str):
    # Telegram vouches for the chat id; this fake keeps it where the web visitor id goes (a real channel would
    # give it a column of its own).
    return find_or_create_contact(school=school, web_visitor_id=f"{NAME}:{chat_id}", name=name)


async def handle_update(school: School, update: dict) -> str:
    message = obj(update.get("message"), "message")
    chat_id = ident(obj(message.get("chat"), "chat").get("id"), "chat.id", 32)
    text = string(message.get("text"), "text").strip()
    if not chat_id or not text:
        return "ignored"
    contact = await database_hop(_contact)(school, chat_id, string(obj(message.get("from"), "from").get(
        "first_name"), "first_name"))
    received = await receive(school=school, contact=contact, channel=NAME, text=text,
                             channel_message_id=f"{chat_id}:{ident(message.get('message_id'), 'message_id', 20)}",
                             external_id=chat_id, run=False)
    if received.duplicate:
        return "duplicate"
    await dispatch(received.message.pk)
    return "dispatched"


@csrf_exempt
async def telegram_webhook(request: HttpRequest, school_slug: str) -> JsonResponse:
    school = await database_hop(School.objects.filter(slug=school_slug, is_active=True).first)()
    update = json_body(request)
    if school is None or update is None:
        return JsonResponse({"error": "unknown school or not a JSON object"}, status=400)
    try:
        return JsonResponse({"result": await handle_update(school, update)})
    except Malformed as problem:
        return malformed("Telegram", problem)
