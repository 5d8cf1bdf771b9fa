"""Make Pipedrive match the local CRM rows of one contact: person -> deal -> activities.

The sync is convergent: it reads the local rows (the truth, committed with the
booking) and creates or updates what Pipedrive is missing. Running it twice,
after a crash, or out of order changes nothing more. Ids are stored on our rows
the moment Pipedrive returns them; a crash between Pipedrive's answer and that
save is healed by looking the record up (person by phone/e-mail, deal by title,
activity by subject, which carries the booking reference) before creating it.
"""

import datetime as dt
import hashlib
import json
import logging
from html import escape
from typing import Any

from django.utils import timezone

from crm.external import ledger
from crm.external.http import PermanentError, TransientError
from crm.models import Activity, Contact, Deal, ExternalCall
from crm.pipedrive import SYSTEM, PipedriveClient
from crm.services import update_persistent_context
from plumbing.logging import mask_phone

logger = logging.getLogger(__name__)

ACTIVITY_TYPES = {Activity.Kind.TOUR: "meeting", Activity.Kind.CALLBACK: "call"}
UPDATABLE = ("subject", "type", "due_date", "due_time", "duration", "note", "done", "busy")


def activity_key(activity_id: int) -> str:
    return f"pipedrive:activity:{activity_id}"


def _html(text: str) -> str:
    return "<br>".join(escape(line) for line in (text or "").splitlines())


def activity_fields(activity: Activity, person_id: int, deal_id: int) -> dict[str, Any]:
    """The Pipedrive v2 activity for a local activity (times in UTC, as Pipedrive expects)."""
    fields: dict[str, Any] = {
        "subject": activity.subject[:255],
        "type": ACTIVITY_TYPES.get(activity.kind, "task"),
        "deal_id": deal_id,
        "participants": [{"person_id": person_id, "primary": True}],
        "note": _html(activity.note),
        "done": bool(activity.done),
        # A tour blocks the calendar until it is done: held, cancelled or a no-show, it no longer does.
        "busy": activity.kind == Activity.Kind.TOUR and not activity.done,
    }
    if activity.due_at:
        due = activity.due_at.astimezone(dt.UTC)
        fields["due_date"] = due.date().isoformat()
        fields["due_time"] = due.strftime("%H:%M:%S")
    elif activity.due_date:
        fields["due_date"] = activity.due_date.isoformat()
        callback = activity.callback
        if callback is not None:  # due at the start of its window, in the school's zone
            local = dt.datetime.combine(activity.due_date, callback.window_start, callback.school.tz)
            utc = local.astimezone(dt.UTC)
            fields["due_date"], fields["due_time"] = utc.date().isoformat(), utc.strftime("%H:%M:%S")
    if activity.duration_minutes:
        hours, minutes = divmod(activity.duration_minutes, 60)
        fields["duration"] = f"{hours:02d}:{minutes:02d}:00"
    return fields


def fingerprint(fields: dict[str, Any]) -> str:
    wanted = {name: fields.get(name) for name in UPDATABLE}
    return hashlib.sha256(json.dumps(wanted, sort_keys=True, default=str).encode()).hexdigest()


def _person_name(contact: Contact, activities: list[Activity]) -> str:
    for activity in activities:
        source = activity.tour_booking or activity.callback
        if source is not None and source.parent_name:
            return source.parent_name
    return contact.name or contact.preferred_name or contact.whatsapp_name or f"Parent #{contact.pk}"


def ensure_person(client: PipedriveClient, contact: Contact, activities: list[Activity]) -> int:
    if contact.pipedrive_person_id:
        return contact.pipedrive_person_id
    person_id = None
    if contact.phone:
        person_id = client.search_person(contact.phone, "phone")
    if person_id is None and contact.email:
        person_id = client.search_person(contact.email, "email")
    if person_id is None:
        person_id = client.create_person(name=_person_name(contact, activities), phone=contact.phone,
                                         email=contact.email)
        logger.info("pipedrive person %s created for contact %s (%s)", person_id, contact.pk,
                    mask_phone(contact.phone))
    Contact.objects.filter(pk=contact.pk).update(pipedrive_person_id=person_id, updated_at=timezone.now())
    contact.pipedrive_person_id = person_id
    update_persistent_context(contact, pipedrive_person_id=person_id)
    return person_id


def ensure_deal(client: PipedriveClient, deal: Deal, person_id: int) -> int:
    if deal.pipedrive_deal_id:
        return deal.pipedrive_deal_id
    same = [d for d in client.open_deals_of(person_id) if d.get("title") == deal.title]
    deal_id = int(same[0]["id"]) if same else client.create_deal(title=deal.title, person_id=person_id)
    Deal.objects.filter(pk=deal.pk).update(pipedrive_deal_id=deal_id, updated_at=timezone.now())
    deal.pipedrive_deal_id = deal_id
    update_persistent_context(deal.contact, pipedrive_deal_id=deal_id)
    return deal_id


def ensure_deal_stage(client: PipedriveClient, deal: Deal, deal_id: int) -> None:
    """Move the Pipedrive deal to the stage the school maps the deal's funnel stage to (School.pipedrive_stage_ids);
    a stage the school does not map is left alone."""
    stage_id = (deal.contact.school.pipedrive_stage_ids or {}).get(deal.stage)
    if deal.pipedrive_stage == deal.stage:
        return
    if stage_id:
        client.update_deal(deal_id, stage_id=stage_id)
    Deal.objects.filter(pk=deal.pk).update(pipedrive_stage=deal.stage)
    deal.pipedrive_stage = deal.stage


def _booking_note(activity: Activity) -> str:
    booking = activity.tour_booking
    lines = [f"Tour booked by the school concierge chatbot: {booking.reference}.",
             f"Children: {booking.children_label}",
             f"Parent: {booking.parent_name}, {booking.parent_phone}" + (
                 f", {booking.parent_email}" if booking.parent_email else "")]
    if booking.special_requirements:
        lines.append(f"Special requirements: {booking.special_requirements}")
    return "<p>" + "</p><p>".join(escape(line) for line in lines) + "</p>"


def _add_booking_note(client: PipedriveClient, activity: Activity, deal_id: int) -> None:
    """One note on the deal per booked tour; never two (a lost answer is not repeated)."""
    attempt = ledger.begin(f"pipedrive:note:activity:{activity.pk}", SYSTEM)
    if not attempt.go:
        if attempt.ambiguous:
            ledger.give_up(attempt, "The note may have been written before a crash; not repeated.")
        return
    try:
        note_id = client.add_note(content=_booking_note(activity), deal_id=deal_id)
    except TransientError as exc:
        (ledger.ambiguous if exc.maybe_delivered else ledger.release)(attempt, str(exc))
        raise
    except PermanentError as exc:
        ledger.refused(attempt, str(exc))
        return  # the note is a nicety: the activity already carries the details
    ledger.finish(attempt, note_id)


def ensure_activity(client: PipedriveClient, activity: Activity, person_id: int, deal_id: int) -> int:
    fields = activity_fields(activity, person_id, deal_id)
    wanted = fingerprint(fields)
    record, _ = ExternalCall.objects.get_or_create(key=activity_key(activity.pk), defaults={"system": SYSTEM})
    activity_id = activity.pipedrive_activity_id
    if not activity_id:
        same = [a for a in client.activities_of_deal(deal_id) if a.get("subject") == fields["subject"]]
        if same:
            activity_id, written = int(same[0]["id"]), ""
        else:
            activity_id, written = client.create_activity(fields), wanted
        Activity.objects.filter(pk=activity.pk).update(pipedrive_activity_id=activity_id, updated_at=timezone.now())
        activity.pipedrive_activity_id = activity_id
        _record_written(record, activity_id, written)
        context_field = "tour_activity_id" if activity.kind == Activity.Kind.TOUR else "callback_activity_id"
        update_persistent_context(activity.contact, **{context_field: activity_id})
        if activity.kind == Activity.Kind.TOUR and activity.tour_booking_id:
            _add_booking_note(client, activity, deal_id)
    if record.fingerprint != wanted:
        client.update_activity(activity_id, {name: fields[name] for name in UPDATABLE if name in fields})
        _record_written(record, activity_id, wanted)
    return activity_id


def _record_written(record: ExternalCall, activity_id: int, written: str) -> None:
    """The activity's ledger row: its Pipedrive id, and the fingerprint of what Pipedrive now holds."""
    ExternalCall.objects.filter(pk=record.pk).update(
        external_id=str(activity_id), fingerprint=written, state=ExternalCall.State.DONE, done_at=timezone.now())
    record.fingerprint = written


def sync_contact(contact_id: int, client: PipedriveClient) -> dict[str, Any]:
    """Bring Pipedrive up to date with the contact's person, deals and activities."""
    contact = Contact.objects.get(pk=contact_id)
    activities = list(Activity.objects.filter(contact=contact)
                      .select_related("deal__contact__school", "contact", "tour_booking", "callback__school")
                      .order_by("created_at", "id"))
    if not activities:
        return {"contact": contact_id, "activities": 0}
    person_id = ensure_person(client, contact, activities)
    deal_ids = {}
    for activity in activities:
        if activity.deal_id not in deal_ids:
            deal_ids[activity.deal_id] = ensure_deal(client, activity.deal, person_id)
            ensure_deal_stage(client, activity.deal, deal_ids[activity.deal_id])
        ensure_activity(client, activity, person_id, deal_ids[activity.deal_id])
    return {"contact": contact_id, "person": person_id, "activities": len(activities)}


def out_of_date_contacts(since: dt.datetime, limit: int = 500) -> list[int]:
    """Contacts with an activity Pipedrive has not seen in its current state (for the reconcile sweep)."""
    activities = list(Activity.objects.filter(updated_at__gte=since).select_related("callback__school")
                      .order_by("updated_at")[:limit])
    records = dict(ExternalCall.objects.filter(system=SYSTEM, key__in=[activity_key(a.pk) for a in activities])
                   .values_list("key", "fingerprint"))
    contacts: dict[int, None] = {}  # ordered, without repeats
    for activity in activities:
        if activity.contact_id in contacts:
            continue
        current = fingerprint(activity_fields(activity, 0, 0))
        if not activity.pipedrive_activity_id or records.get(activity_key(activity.pk)) != current:
            contacts[activity.contact_id] = None
    return list(contacts)
