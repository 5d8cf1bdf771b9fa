"""Human handoff: when staff take a conversation over, and when they give it back.

A conversation is handed off when the parent asks for a person, when the agent
fails twice in a row, or when a staff member answers in Chatwoot (or opens the
conversation there). Then `Conversation.status` is `handed_off` (shown in the
admin), the bot stays silent, and the channel tells its platform (Chatwoot:
status `open`). Messages that arrive meanwhile, and any still unanswered when
staff took over, are stored for the record, marked processed and
`handled_by_staff`: they are the staff's to answer. When staff hand the
conversation back (`resume_bot`), the concierge answers only what the parent
says from then on: staff-handled messages are never answered, swept up or shown
to the model again, and the outcome stays "handed off" unless the concierge then
books, moves, cancels or takes a callback (chatbot.outcomes).
"""

import re

from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy

from chatbot.channels.registry import observer_for, staffed
from chatbot.language import reply_language
from chatbot.models import Conversation, Message

HANDOFF_TEXT = gettext_lazy("I'm passing you to a member of our admissions team, who will reply here as soon as "
                            "they can. Thank you for your patience!")

_ASKS_FOR_PERSON = re.compile(
    r"""\b(?:speak|talk|chat|connect\s+me|put\s+me\s+through)\s+(?:to|with)\s+(?:a|an|the|your|some)?\s*
        (?:real\s+|live\s+|actual\s+)?(?:human|person|people|some\s?one|somebody|staff|agent|representative|operator
           |admissions|teacher|member\s+of\s+(?:staff|the\s+team)|office|principal|registrar)\b
      | \b(?:real|live|actual)\s+(?:human|person|agent)\b
      | \bhuman\s+(?:agent|being|please)\b
      | \b(?:operator|representative)\s+please\b
    """,
    re.IGNORECASE | re.VERBOSE,
)


def asks_for_person(text: str) -> bool:
    return bool(_ASKS_FOR_PERSON.search(text or ""))


def hand_off(conversation: Conversation, reason: str, *, notify_parent: bool = False,
             reopen_platform: bool = True) -> bool:
    """Give the conversation to staff; False if it already was. The channel hears about it after commit."""
    with transaction.atomic():
        locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
        if locked.status == Conversation.Status.HANDED_OFF:
            return False
        now = timezone.now()
        Conversation.objects.filter(pk=locked.pk).update(status=Conversation.Status.HANDED_OFF,
                                                         outcome=Conversation.Outcome.HANDED_OFF, last_message_at=now)
        conversation.status, conversation.outcome = Conversation.Status.HANDED_OFF, Conversation.Outcome.HANDED_OFF
        Message.objects.filter(conversation=locked, role=Message.Role.USER, processed_at__isnull=True).update(
            processed_at=now, handled_by_staff=True)
        Message.objects.create(conversation=locked, role=Message.Role.SYSTEM, channel=locked.channel,
                               text=f"Handed off to staff: {reason}.", payload={"handoff": reason})
        notice = None
        if notify_parent:
            spoken = reply_language(locked.school, locked.contact)
            with translation.override(spoken):
                text = str(HANDOFF_TEXT)
            notice = Message.objects.create(conversation=locked, role=Message.Role.ASSISTANT, channel=locked.channel,
                                            text=text, language=spoken,
                                            payload={"blocks": [], "handoff_notice": True})
        transaction.on_commit(lambda: observer_for(conversation.channel).handed_off(
            conversation, notice, reopen_platform=reopen_platform))
    return True


def resume_bot(conversation: Conversation, reason: str) -> bool:
    """Staff gave the conversation back to the bot; False if it was not handed off."""
    with transaction.atomic():
        updated = Conversation.objects.filter(pk=conversation.pk, status=Conversation.Status.HANDED_OFF).update(
            status=Conversation.Status.ACTIVE, last_message_at=timezone.now())
        if updated:
            conversation.status = Conversation.Status.ACTIVE
            Message.objects.create(conversation=conversation, role=Message.Role.SYSTEM, channel=conversation.channel,
                                   text=f"Handed back to the concierge: {reason}.", payload={"resumed": reason})
    return bool(updated)


def record_turn_failure(message_id: int) -> None:
    """A turn crashed: leave a trace in the conversation (the sweeper will try the message again)."""
    message = Message.objects.filter(pk=message_id).select_related("conversation").first()
    if message is not None:
        Message.objects.create(conversation=message.conversation, role=Message.Role.SYSTEM, channel=message.channel,
                               text="The concierge failed to answer this turn.", payload={"turn_failed": True})


def _is_failure(message: Message) -> bool:
    """A reply where the loop gave up (marked by it, chatbot.agent.loop.GaveUp), or a crashed turn's trace."""
    return bool(message.payload.get("gave_up") or message.payload.get("turn_failed"))


def hand_off_after_failures(message_id: int) -> bool:
    """After a turn: two failed turns in a row in a staffed channel hand the conversation to staff."""
    message = Message.objects.filter(pk=message_id).select_related("conversation").first()
    if message is None:
        return False
    conversation = message.conversation
    if not staffed(conversation.channel) or conversation.status != Conversation.Status.ACTIVE:
        return False
    outcomes = [m for m in conversation.messages.filter(role__in=[Message.Role.ASSISTANT, Message.Role.SYSTEM])
                .exclude(text="").order_by("-created_at", "-id")[:10]
                if m.role == Message.Role.ASSISTANT or m.payload.get("turn_failed")][:2]
    if len(outcomes) == 2 and all(_is_failure(m) for m in outcomes):
        return hand_off(conversation, "the concierge could not help twice in a row", notify_parent=True)
    return False


def route_inbound(message: Message, platform_status: str | None = None) -> bool:
    """For a parent's message just stored: True if the bot answers it, False if it is the staff's."""
    conversation = Conversation.objects.get(pk=message.conversation_id)
    if conversation.status == Conversation.Status.HANDED_OFF:
        Message.objects.filter(pk=message.pk, processed_at__isnull=True).update(processed_at=timezone.now(),
                                                                                handled_by_staff=True)
        return False
    if platform_status in ("open", "snoozed"):
        hand_off(conversation, f"the conversation is {platform_status} in Chatwoot", reopen_platform=False)
        return False
    if staffed(conversation.channel) and asks_for_person(message.text):
        hand_off(conversation, "the parent asked for a person", notify_parent=True)
        return False
    return True
