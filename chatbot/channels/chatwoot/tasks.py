"""Chatwoot's Celery tasks: the calls to its API that must not be lost (a reply, a handoff, the context write-back).

Their names are the ones queued and stored before the channels were packages ("chatbot.tasks.<name>"): queued
tasks and failed-task records keep working.
"""

import logging

from celery import shared_task

from chatbot.channels import outbound
from chatbot.channels.chatwoot.client import ChatwootClient, configured, contacts_configured, split_external_id
from chatbot.channels.chatwoot.context import context_for_chatwoot
from chatbot.channels.chatwoot.sender import ChatwootSender
from chatbot.models import Conversation
from crm.external.tasks import ExternalTask

logger = logging.getLogger(__name__)


@shared_task(base=ExternalTask, bind=True, name="chatbot.tasks.deliver_chatwoot_message")
def deliver_chatwoot_message(self, message_id: int) -> str:
    """Post one stored reply to its Chatwoot conversation (idempotent: see chatbot.channels.outbound)."""
    if not configured():
        return "skipped: Chatwoot is not configured"
    return outbound.deliver_with(ChatwootClient, ChatwootSender, message_id)


@shared_task(base=ExternalTask, bind=True, name="chatbot.tasks.chatwoot_hand_off")
def chatwoot_hand_off(self, conversation_id: int, notice_id: int | None, reopen_platform: bool) -> str:
    """Tell the parent (optional notice), then set the Chatwoot conversation to `open` for the team."""
    if not configured():
        return "skipped: Chatwoot is not configured"
    conversation = Conversation.objects.get(pk=conversation_id)
    account, number = split_external_id(conversation.external_id)
    with ChatwootClient() as client:
        if notice_id:
            outbound.deliver(notice_id, ChatwootSender(client))
        if reopen_platform:
            status = client.toggle_status(account, number, "open")
            logger.info("Chatwoot conversation %s handed to the team (now %s)", conversation.external_id, status)
    return "handed off"


@shared_task(base=ExternalTask, bind=True, name="chatbot.tasks.chatwoot_push_contact_context")
def chatwoot_push_contact_context(self, conversation_id: int) -> str:
    """Session end: merge the contact's persistent context into its Chatwoot custom attributes."""
    if not contacts_configured():
        return "skipped: no Chatwoot user token"
    conversation = Conversation.objects.select_related("contact").get(pk=conversation_id)
    contact = conversation.contact
    attributes = context_for_chatwoot(contact)
    if not contact.chatwoot_contact_id or not attributes:
        return "nothing to write"
    account, _ = split_external_id(conversation.external_id)
    with ChatwootClient() as client:
        client.merge_contact_attributes(account, contact.chatwoot_contact_id, attributes)
    return f"wrote {len(attributes)} attribute(s)"
