"""Messages to a parent that no message of theirs asked for: what staff did, a seat offered from the waitlist (and
its hold running out), the follow-up after a tour. Each is stored on the parent's latest conversation (so it is
in the transcript and, for the concierge's own words, in the agent's history) and handed to that channel's
observer.
"""

import logging

from asgiref.sync import async_to_sync
from django.core.mail import EmailMessage
from django.utils import translation
from django.utils.translation import gettext as _

from bookings import callbacks, signals, waitlist
from bookings.models import TourBooking, WaitlistEntry
from bookings.services import BookingError
from chatbot.agent.dialogue import DialogueState
from chatbot.agent.memory import ActiveContext
from chatbot.agent.offline import replies
from chatbot.channels.registry import observer_for, spec_for
from chatbot.dates import human_slot
from chatbot.language import reply_language
from chatbot.models import Conversation, Message
from chatbot.selectors import inside_whatsapp_window, latest_conversation
from chatbot.services import store_outbound
from crm.identity import format_phone
from crm.models import Contact
from plumbing.logging import mask_email

logger = logging.getLogger(__name__)


def tell_contact(contact_id: int, text: str, *, role: str = Message.Role.ASSISTANT, subject: str = "",
                 email: str = "") -> Message | None:
    """Store `text` on the contact's latest conversation and deliver it on that conversation's channel.

    On WhatsApp (directly or through Chatwoot) more than 24 hours after the parent's last message, free text
    would be refused: it goes by e-mail (`email`, else the contact's) with `subject`, or, with no address,
    staff get a call-back request to tell the family (see `_outside_the_window`). A delivery failure is
    logged, never raised: what the message reports has happened. Returns None when the parent has never
    chatted (nothing to answer into)."""
    conversation = latest_conversation(contact_id)
    if conversation is None:
        logger.info("no conversation to reach contact %s through", contact_id)
        return None
    message = store_outbound(conversation, text, role=role)
    if spec_for(conversation.channel).messaging_window and not inside_whatsapp_window(conversation):
        _outside_the_window(conversation, message, subject, email or conversation.contact.email)
        return message
    try:
        async_to_sync(observer_for(conversation.channel).reply)(conversation, message)
    except Exception:  # the channel is down or refuses: staff see the message in the transcript
        logger.exception("could not deliver message %s on %s", message.pk, conversation.channel)
    return message


def _outside_the_window(conversation: Conversation, message: Message, subject: str, email: str) -> None:
    """Reach a WhatsApp parent whose last message is over 24 hours old: by e-mail, else through staff."""
    school, contact = conversation.school, conversation.contact
    if email:
        body = replies.join([message.text, _("You can answer on WhatsApp as usual.")])
        try:
            EmailMessage(subject=subject or _("A message from %(school)s") % {"school": school.name}, body=body,
                         to=[email], reply_to=[school.contact_email] if school.contact_email else None).send()
        except OSError:  # the mail server is down: staff are asked instead
            logger.exception("could not e-mail message %s to %s", message.pk, mask_email(email))
        else:
            _mark(message, "email")
            logger.info("message %s e-mailed to %s (WhatsApp's 24 hours had passed)", message.pk, mask_email(email))
            return
    phone = contact.phone
    try:
        callback = callbacks.request_callback(
            school=school, contact=contact, parent_name=contact.name or contact.whatsapp_name or phone,
            parent_phone=phone, topic=f"Please tell the family (WhatsApp's 24 hours had passed, no e-mail "
                                      f"address): {message.text}"[:500])
    except BookingError as exc:
        logger.error("message %s reached nobody: no e-mail address and no call back (%s)", message.pk, exc.message)
        _mark(message, "undelivered")
        return
    _mark(message, "staff_call_back", callback.reference)
    logger.info("message %s: WhatsApp's 24 hours had passed and no e-mail address; call back %s for staff",
                message.pk, callback.reference)


def _mark(message: Message, delivered_by: str, callback: str = "") -> None:
    """Note on the stored message how it reached the parent (the transcript shows it)."""
    message.payload = {**message.payload, "delivered_by": delivered_by, **({"callback": callback} if callback else {})}
    Message.objects.filter(pk=message.pk).update(payload=message.payload)


def offer_text(offer: dict) -> str:
    """The seat offer, which is also its read-back: a "yes" to it books the tour (chatbot/agent/tools/waitlist.py).
    In the language active at the call (see `_in_their_language`)."""
    values = {**offer, "child": offer["child_name"], "phone": format_phone(offer["parent_phone"]),
              "age": f" ({offer['child_age']})" if offer.get("child_age") is not None else "",
              "label": human_slot(offer["date"], offer["time"]),
              "held_until": human_slot(offer["held_until_date"], offer["held_until_time"])}
    return replies.join([
        _("Good news: a seat has opened on the campus tour on %(label)s at %(school)s, the one you're on the "
          "waitlist for.") % values,
        _("I'm holding it for %(child)s%(age)s until %(held_until)s.") % values,
        _("The booking will be under %(parent_name)s on %(phone)s.") % values,
        _("Shall I book it? (If you'd rather not, just say no and it goes to the next family.)"),
    ])


def _awaiting_answer(sent: Message | None, school_id: int, contact_id: int, ask: str) -> None:
    """The dialogue state after a message that asks the parent something (`dialogue.ASKS`): what the
    conversation now waits for, as a reply of the concierge would leave it."""
    if sent is not None:
        active = ActiveContext.load(school_id, contact_id)
        active.dialogue = DialogueState(asked=[ask], about="book")
        active.save()


def _in_their_language(contact_id: int):
    """The parent's language for a message they did not ask for (chatbot.language.reply_language)."""
    contact = Contact.objects.select_related("school").get(pk=contact_id)
    return translation.override(reply_language(contact.school, contact))


def send_seat_offer(sender, entry: WaitlistEntry, **kwargs) -> None:
    """`seat_offered` receiver: tell the family on their channel."""
    entry = WaitlistEntry.objects.select_related("slot", "school").get(pk=entry.pk)
    if entry.status == WaitlistEntry.Status.OFFERED:
        with _in_their_language(entry.contact_id):
            sent = tell_contact(entry.contact_id, offer_text(waitlist.describe_offer(entry)),
                                subject=_("A seat has opened on a campus tour"), email=entry.parent_email)
        _awaiting_answer(sent, entry.school_id, entry.contact_id, "seat_offer")


def lapsed_text(offer: dict) -> str:
    """A held seat that went unanswered: it has gone to the next family; the parent may choose another tour."""
    values = {**offer, "child": offer["child_name"], "label": human_slot(offer["date"], offer["time"])}
    return replies.join([
        _("The seat we held for %(child)s on the campus tour on %(label)s has now gone to the next family on "
          "the waitlist.") % values,
        _("If you'd still like to visit, just tell me a day that suits you."),
    ])


def send_offer_lapsed(sender, entry: WaitlistEntry, **kwargs) -> None:
    """`offer_lapsed` receiver: tell the family their hold ran out."""
    entry = WaitlistEntry.objects.select_related("slot", "school").get(pk=entry.pk)
    with _in_their_language(entry.contact_id):
        tell_contact(entry.contact_id, lapsed_text(waitlist.describe_offer(entry)),
                     subject=_("The seat we held for you"), email=entry.parent_email)


def follow_up_text(booking: TourBooking) -> str:
    """After the tour: thanks and the school's next step (the school's own words), or, for a family that did not
    come, an offer to rebook (whose yes the concierge reads as a yes to booking: "Would you like to book ...")."""
    school, local = booking.school, booking.local_start
    values = {"school": school.name, "child": booking.child_name, "when": human_slot(
        local.date().isoformat(), f"{local:%H:%M}", local.date())}
    if booking.status == TourBooking.Status.COMPLETED:
        next_step = school.after_tour_next_step.strip() or _("If you have any questions, just reply here.")
        return replies.join([_("Thank you for visiting %(school)s with %(child)s!") % values, next_step])
    return replies.join([_("We missed you at the campus tour on %(when)s for %(child)s.") % values,
                         _("No problem at all: would you like to book another tour? Just tell me a day that "
                           "suits you.")])


def send_tour_follow_up(sender, booking: TourBooking, **kwargs) -> None:
    """`tour_outcome_recorded` receiver: the follow-up on the parent's channel."""
    with _in_their_language(booking.contact_id):
        sent = tell_contact(booking.contact_id, follow_up_text(booking),
                            subject=_("Your campus tour at %(school)s") % {"school": booking.school.name},
                            email=booking.parent_email)
    if booking.status != TourBooking.Status.COMPLETED:  # the no-show's follow-up offers to book again
        _awaiting_answer(sent, booking.school_id, booking.contact_id, "offer_book")


signals.seat_offered.connect(send_seat_offer, dispatch_uid="chatbot.outreach.send_seat_offer")
signals.offer_lapsed.connect(send_offer_lapsed, dispatch_uid="chatbot.outreach.send_offer_lapsed")
signals.tour_outcome_recorded.connect(send_tour_follow_up, dispatch_uid="chatbot.outreach.send_tour_follow_up")
