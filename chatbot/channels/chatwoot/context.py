"""The contact's persistent context and Chatwoot's custom attributes: read at session start, written back at the end."""

import logging

from chatbot.channels.chatwoot.client import ChatwootClient, contacts_configured
from chatbot.channels.inbound import clean
from chatbot.models import Message
from crm.external.http import ExternalError
from crm.models import PERSISTENT_CONTEXT_FIELDS, Contact
from crm.services import trusted_context, update_persistent_context

logger = logging.getLogger(__name__)

# Persistent-context fields a person may correct in Chatwoot: Chatwoot's value wins at session start.
# The rest (tour, callback, Pipedrive ids) are written by our booking flow: ours wins.
CHATWOOT_WINS = ("parent_preferred_name", "parent_preferred_phone", "parent_preferred_email", "child_name",
                 "child_dob", "child_enrollment_date_preferred")  # fmt: skip


def _clean_attributes(attributes: dict) -> dict:
    return {k: v for k, v in (attributes or {}).items() if k in PERSISTENT_CONTEXT_FIELDS and v not in (None, "")}


def merge_into_context(contact: Contact, attributes: dict) -> dict:
    """Session start: Chatwoot's custom attributes into the contact's persistent context (see CHATWOOT_WINS).

    A website visitor can set them: only what crm.services.trusted_context takes is read (clean details, and a
    tour or call back only when it is this contact's own)."""
    incoming = trusted_context(contact, clean(attributes) if isinstance(attributes, dict) else {}, CHATWOOT_WINS)
    current = Contact.objects.values_list("context", flat=True).get(pk=contact.pk) or {}
    changes = {
        k: v
        for k, v in incoming.items()
        if (k in CHATWOOT_WINS and current.get(k) != v) or current.get(k) in (None, "")
    }
    if changes:
        update_persistent_context(contact, **changes)
    return changes


def load_contact_context(message_id: int, data: dict) -> None:
    """Read the contact's custom attributes (API when a user token is set, else the webhook's copy) and merge."""
    message = Message.objects.select_related("conversation__contact").filter(pk=message_id).first()
    if message is None:
        return
    attributes = data.get("attributes") or {}
    if contacts_configured() and data.get("contact_id"):
        try:
            with ChatwootClient(timeout=3.0) as client:
                attributes = client.contact_attributes(str(data["account_id"]), str(data["contact_id"]))
        except ExternalError as exc:
            logger.warning("could not read Chatwoot contact %s, using the webhook's copy: %s", data["contact_id"], exc)
    merge_into_context(message.conversation.contact, attributes)


def context_for_chatwoot(contact: Contact) -> dict:
    """Session end: what goes back to the contact's custom attributes (merged there, never replacing)."""
    return _clean_attributes(contact.context or {})
