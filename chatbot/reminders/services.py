"""Tour reminders: which are due, and sending each one exactly once over the channel the parent booked on.

Each reminder is claimed first (a `SentReminder` row, unique on booking, kind and tour start), then the
booking is read again: a tour cancelled or moved since is not reminded (a moved tour's new start is a new
key, reminded at its own time). The channel is the one of the parent's latest conversation:

- A channel whose replies go through a platform's API (its registry entry's `delivery`: WhatsApp direct,
  Chatwoot): a chat message; where WhatsApp's 24-hour rule applies (`messaging_window`), outside 24 hours of
  the parent's last message the school's approved WhatsApp template (free text is refused there). Sent here
  through the channel's exactly-once delivery (chatbot.channels.outbound), so the outcome is known.
- Web chat (and anything else): an e-mail with the tour's .ics and its signed manage link.

When the channel cannot carry it (no template, the platform refuses, still down after a few tries), the
reminder goes by e-mail if the booking has an address, else it is marked failed with a staff note (admin:
Tour reminders; the desk shows it on the tour). It never fails silently.
"""

import datetime as dt
import logging
from dataclasses import dataclass

from django.core.mail import EmailMessage
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from bookings.links import manage_url
from bookings.models import School, TourBooking
from bookings.services import describe_date, local_now
from bookings.zones import zone_label
from chatbot.calendar import calendar_file
from chatbot.channels import registry
from chatbot.channels.outbound import deliver_with
from chatbot.dates import human_date
from chatbot.language import reply_language
from chatbot.models import Conversation, Message
from chatbot.reminders.models import ReminderSettings, SentReminder
from chatbot.selectors import inside_whatsapp_window, latest_conversation
from chatbot.services import store_outbound
from crm.external.http import PermanentError, TransientError
from crm.external.tasks import GiveUp
from plumbing.logging import mask_email, mask_phone

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3  # a channel down this many runs in a row: the reminder falls back (e-mail or a staff note)
RETRY_AFTER = dt.timedelta(minutes=2)
Status, Via = SentReminder.Status, SentReminder.Via


class Undeliverable(Exception):  # noqa: N818 (control flow)
    """This channel cannot carry the reminder (the reason is for the staff note)."""


class TryLater(Exception):  # noqa: N818 (control flow)
    """The channel is down for now; the next run tries again."""


def settings_for(school: School) -> ReminderSettings:
    """The school's reminder settings; the defaults (unsaved) when it has none."""
    try:
        return school.reminder_settings
    except ReminderSettings.DoesNotExist:
        return ReminderSettings(school=school)


# --- what is due -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Due:
    booking: TourBooking
    hours: int

    @property
    def kind(self) -> str:
        return f"{self.hours}h"


def due_reminders(now: dt.datetime | None = None) -> list[Due]:
    """Scheduled tours with a reminder due now and not yet done: per tour only the latest one due (a scheduler
    that was down sends "in two hours", not also "tomorrow"), and none whose time had already come when the
    tour was booked (the confirmation has just told the parent)."""
    now = now or timezone.now()
    by_school = {s.pk: settings_for(s) for s in School.objects.filter(is_active=True).select_related(
        "reminder_settings")}
    horizon = max((max(p.hours_before, default=0) for p in by_school.values() if p.enabled), default=0)
    if not horizon:
        return []
    upcoming = (TourBooking.objects.filter(status=TourBooking.Status.SCHEDULED, starts_at__gt=now,
                                           starts_at__lte=now + dt.timedelta(hours=horizon),
                                           school_id__in=list(by_school))
                .select_related("school", "contact").order_by("starts_at"))
    # Done, or being sent (a pending one is tried again once RETRY_AFTER has passed).
    done = set(SentReminder.objects.filter(booking__in=upcoming)
               .exclude(status=Status.PENDING, updated_at__lte=now - RETRY_AFTER)
               .values_list("booking_id", "kind", "tour_starts_at"))
    found = []
    for booking in upcoming:
        policy = by_school[booking.school_id]
        if not policy.enabled:
            continue
        due = [h for h in policy.hours_before if booking.starts_at - dt.timedelta(hours=h) <= now]
        if not due:
            continue
        hours = min(due)
        if booking.created_at > booking.starts_at - dt.timedelta(hours=hours):
            continue
        if (booking.pk, f"{hours}h", booking.starts_at) not in done:
            found.append(Due(booking, hours))
    return found


def send_due_reminders(now: dt.datetime | None = None, limit: int = 200) -> dict[str, int]:
    """Send every reminder due now (at most `limit` per run); returns how many ended in each state."""
    counts: dict[str, int] = {}
    for due in due_reminders(now)[:limit]:
        outcome = send_reminder(due.booking.pk, due.kind, due.booking.starts_at, now=now)
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


# --- one reminder ------------------------------------------------------------------------------------------------
def _claim(booking_id: int, kind: str, starts_at: dt.datetime, now: dt.datetime) -> SentReminder | None:
    """The reminder's row if this runner may send it now; None if another has it or it is done."""
    try:
        with transaction.atomic():
            return SentReminder.objects.create(booking_id=booking_id, kind=kind, tour_starts_at=starts_at)
    except IntegrityError:
        pass
    row = SentReminder.objects.filter(booking_id=booking_id, kind=kind, tour_starts_at=starts_at).first()
    # A send that failed for a moment (or whose runner died) is tried again later, by one runner.
    if row is None or row.status != Status.PENDING or row.updated_at > now - RETRY_AFTER:
        return None
    taken = SentReminder.objects.filter(pk=row.pk, status=Status.PENDING, attempts=row.attempts).update(
        attempts=F("attempts") + 1, updated_at=timezone.now())
    if not taken:
        return None
    row.refresh_from_db()
    return row


def _finish(row: SentReminder, status: str, *, via: str = "", detail: str = "", staff_note: str = "",
            message: Message | None = None) -> str:
    row.status, row.via, row.detail, row.staff_note = status, via, detail[:500], staff_note
    row.message = message or row.message
    row.sent_at = timezone.now() if status == Status.SENT else None
    row.save(update_fields=["status", "via", "detail", "staff_note", "message", "sent_at", "updated_at"])
    return status


def send_reminder(booking_id: int, kind: str, starts_at: dt.datetime, *, now: dt.datetime | None = None) -> str:
    """Send one reminder if nobody has; returns its state ("sent", "skipped", "failed", "pending", "taken")."""
    now = now or timezone.now()
    row = _claim(booking_id, kind, starts_at, now)
    if row is None:
        return "taken"
    booking = TourBooking.objects.select_related("school", "contact").get(pk=booking_id)
    if booking.status != TourBooking.Status.SCHEDULED or booking.starts_at != starts_at:
        now_is = "moved" if booking.status in (TourBooking.Status.SCHEDULED, TourBooking.Status.RESCHEDULED) \
            else booking.get_status_display().lower()
        return _finish(row, Status.SKIPPED, detail=f"Not sent: the tour was {now_is} before its reminder went.")
    if booking.starts_at <= now:
        return _finish(row, Status.SKIPPED, detail="The tour had started before the reminder could go.")
    conversation = latest_conversation(booking.contact_id)
    try:
        via, message, detail = _send(booking, conversation, row, now)
    except TryLater as exc:
        SentReminder.objects.filter(pk=row.pk).update(detail=str(exc)[:500], updated_at=timezone.now())
        logger.info("reminder %s of %s: %s; trying again later", kind, booking.reference, exc)
        return Status.PENDING
    except Undeliverable as exc:
        note = (f"The {kind} reminder of {booking.reference} ({_when_for_staff(booking)}) could not be sent: {exc}. "
                f"Please remind {booking.parent_name} another way (their number is on the booking).")
        logger.warning("reminder %s of %s NOT sent (%s); staff note written", kind, booking.reference, exc)
        return _finish(row, Status.FAILED, detail=str(exc), staff_note=note)
    logger.info("reminder %s of %s sent by %s to %s", kind, booking.reference, Via(via).label,
                mask_email(booking.parent_email) if via == Via.EMAIL else mask_phone(booking.parent_phone))
    return _finish(row, Status.SENT, via=via, detail=detail, message=message)


def _send(booking: TourBooking, conversation: Conversation | None, row: SentReminder, now: dt.datetime
          ) -> tuple[str, Message | None, str]:
    """(via, chat message, detail) once sent; TryLater or Undeliverable otherwise."""
    fallback = ""
    channel = conversation.channel if conversation else ""
    if registry.spec_for(channel).delivery is not None:
        try:
            via, message = _send_in_chat(booking, conversation, row, now)
            return via, message, ""
        except Undeliverable as exc:
            fallback = f"{conversation.get_channel_display()}: {exc}"  # a channel with no choice: its name
    if not booking.parent_email:
        if fallback:
            raise Undeliverable(f"{fallback}; no e-mail address to fall back on")
        raise Undeliverable("the parent chatted on the website and left no e-mail address" if conversation
                            else "the parent has no chat with us and left no e-mail address")
    _send_email(booking, row, now)
    return Via.EMAIL, None, (f"By e-mail instead. {fallback}" if fallback else "")


# --- chat channels ---------------------------------------------------------------------------------------------
def _send_in_chat(booking: TourBooking, conversation: Conversation, row: SentReminder, now: dt.datetime
                  ) -> tuple[str, Message]:
    spec = registry.spec_for(conversation.channel)
    route = spec.delivery
    if not route.configured():
        raise Undeliverable("the channel is not configured here")
    message = row.message  # a retry re-sends the same message: its delivery ledger keeps it single
    if message is None:
        template = None
        if spec.messaging_window and not inside_whatsapp_window(conversation, now):
            policy = settings_for(booking.school)
            if not policy.whatsapp_template:
                raise Undeliverable("the parent's last message is over 24 hours old and the school has no "
                                    "approved WhatsApp template set")
            template = template_payload(policy, booking, now)
        message = _store_message(conversation, booking, row, template, now)
    via = route.template_via if message.payload.get("template") else route.text_via
    try:
        outcome = deliver_with(route.client, route.sender, message.pk)
    except TransientError as exc:
        if row.attempts >= MAX_ATTEMPTS:
            raise Undeliverable(f"still unavailable after {row.attempts} tries ({exc})") from None
        raise TryLater(f"{conversation.channel} unavailable: {exc}") from None
    except (PermanentError, GiveUp) as exc:
        raise Undeliverable(f"refused: {exc}") from None
    if outcome not in ("delivered", "already delivered"):
        raise Undeliverable(outcome)
    return via, message


def _store_message(conversation: Conversation, booking: TourBooking, row: SentReminder, template: dict | None,
                   now: dt.datetime) -> Message:
    """The reminder as the concierge's message in the parent's conversation (the transcript shows it)."""
    payload = {"reminder": {"booking": booking.reference, "kind": row.kind}}
    if template:
        payload["template"] = template
    with transaction.atomic():
        message = store_outbound(conversation, reminder_text(booking, now), payload=payload,
                                 language=reply_language(booking.school, booking.contact))
        SentReminder.objects.filter(pk=row.pk).update(message=message)
    row.message = message
    return message


# --- the words ----------------------------------------------------------------------------------------------
def _when_for_staff(booking: TourBooking) -> str:
    return f"{describe_date(booking.local_start.date())}, {booking.local_start:%H:%M} " \
           f"{zone_label(booking.school, booking.starts_at)}"


def _words(booking: TourBooking, now: dt.datetime) -> dict[str, str]:
    """The tour's details as the parent reads them, in the active language (the school's clock)."""
    local, today = booking.local_start, local_now(booking.school, now).date()
    relative = {today: _("today"), today + dt.timedelta(days=1): _("tomorrow")}.get(local.date(), "")
    return {"parent": booking.parent_name, "child": booking.child_name, "school": booking.school.name,
            "date": human_date(local.date(), today), "time": f"{local:%H:%M}", "relative": relative,
            "reference": booking.reference}


def reminder_text(booking: TourBooking, now: dt.datetime) -> str:
    """The reminder in the parent's language (the one the school answers them in)."""
    with translation.override(reply_language(booking.school, booking.contact)):
        words = _words(booking, now)
        if words["relative"]:
            lines = [_("Hello %(parent)s, this is a reminder of %(child)s's tour at %(school)s %(relative)s, "
                       "%(date)s, at %(time)s. Your reference is %(reference)s.") % words]
        else:
            lines = [_("Hello %(parent)s, this is a reminder of %(child)s's tour at %(school)s on %(date)s at "
                       "%(time)s. Your reference is %(reference)s.") % words]
        if booking.school.address:
            lines.append(_("Where: %(address)s") % {"address": booking.school.address})
        url = manage_url(booking.reference)
        lines.append(_("Can't make it? Change or cancel it here: %(url)s") % {"url": url} if url
                     else _("Can't make it? Reply here and we'll move or cancel it."))
        return "\n".join(lines)


def reminder_subject(booking: TourBooking, now: dt.datetime) -> str:
    with translation.override(reply_language(booking.school, booking.contact)):
        return _("Reminder: %(child)s's tour at %(school)s, %(date)s at %(time)s") % _words(booking, now)


def template_values(booking: TourBooking, now: dt.datetime) -> dict[str, str]:
    """What a template's placeholders can be filled with (the template's language is the school's setting)."""
    with translation.override(settings_for(booking.school).whatsapp_template_language.replace("_", "-").lower()):
        words = _words(booking, now)
    return {"parent_name": words["parent"], "child_name": words["child"], "school_name": words["school"],
            "tour_date": words["date"], "tour_time": words["time"], "reference": booking.reference,
            "address": booking.school.address or booking.school.name}


def template_payload(policy: ReminderSettings, booking: TourBooking, now: dt.datetime) -> dict:
    """The school's approved template and the values of its placeholders, in order ({{1}}, {{2}} ...)."""
    values = template_values(booking, now)
    return {"name": policy.whatsapp_template, "language": policy.whatsapp_template_language,
            "category": policy.whatsapp_template_category,
            "parameters": [values[field] for field in policy.whatsapp_template_fields]}


# --- e-mail ---------------------------------------------------------------------------------------------------
def _send_email(booking: TourBooking, row: SentReminder, now: dt.datetime) -> None:
    """The reminder by e-mail, with the tour's calendar file and its manage link (SMTP down: try later)."""
    email = EmailMessage(subject=reminder_subject(booking, now), body=reminder_text(booking, now),
                         to=[booking.parent_email],
                         reply_to=[booking.school.contact_email] if booking.school.contact_email else None)
    email.attach(f"tour-{booking.reference}.ics", calendar_file(booking), "text/calendar")
    try:
        email.send()
    except OSError as exc:  # smtplib's errors are OSErrors: the mail server is down or refused the connection
        if row.attempts >= MAX_ATTEMPTS:
            raise Undeliverable(f"the e-mail could not be sent after {row.attempts} tries ({exc})") from None
        raise TryLater(f"e-mail unavailable: {exc}") from None
