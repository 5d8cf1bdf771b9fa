"""CRM services: contacts, the persistent context, and person -> deal -> activity.

The local tables are always written, inside the caller's transaction, so the CRM
view of a booking can never disagree with the booking itself. An external CRM
(Pipedrive) is synced from these rows afterwards.
"""

import datetime as dt
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from crm.models import PERSISTENT_CONTEXT_FIELDS, Activity, Child, Contact, Deal
from crm.signals import crm_rows_changed
from plumbing.transactions import savepoint_if_nested


def create_web_visitor_contact(*, school, web_visitor_id: str, language: str = "") -> Contact | None:
    """The contact of a web visitor whose id was minted at this socket's handshake, in one INSERT with no look-up
    first (`find_or_create_contact` reads first); None if another socket of the visitor (another tab, given the
    token this socket's session sent) created it first."""
    try:
        with savepoint_if_nested():
            return Contact.objects.create(school=school, web_visitor_id=web_visitor_id, language=language)
    except IntegrityError:
        return None


def find_or_create_contact(
    *,
    school,
    verified_phone: str = "",
    phone: str = "",
    email: str = "",
    name: str = "",
    web_visitor_id: str = "",
    chatwoot_contact_id: str = "",
    whatsapp_name: str = "",
    language: str = "",
) -> Contact:
    """The school's contact for this identity, created on first sight.

    Only what a platform vouches for identifies a contact (docs/identity.md): the
    Chatwoot contact id, the signed web visitor id, then `verified_phone` (the
    WhatsApp sender's number, E.164). `phone` and `email` are details someone
    typed or a platform passed on unchecked: they are stored on a new contact
    or a blank field, unverified, and never looked up. Blank fields of an
    existing contact are filled in; nothing is overwritten. `language` (of the
    first message) is kept on a new contact only: later messages set it
    (`chatbot.language.remember`).
    """
    chatwoot_contact_id = str(chatwoot_contact_id or "")
    lookups = [
        {"chatwoot_contact_id": chatwoot_contact_id} if chatwoot_contact_id else None,
        {"web_visitor_id": web_visitor_id} if web_visitor_id else None,
        {"phone": verified_phone, "phone_verified": True} if verified_phone else None,
    ]
    details = {"phone": phone, "email": email, "name": name, "whatsapp_name": whatsapp_name,
               "web_visitor_id": web_visitor_id, "chatwoot_contact_id": chatwoot_contact_id}
    for _attempt in range(2):
        for lookup in filter(None, lookups):
            contact = Contact.objects.filter(school=school, **lookup).first()
            if contact:
                if verified_phone:
                    _verify_phone(contact, verified_phone)
                fill_contact_details(contact, **details)
                return contact
        fields = {**details, "language": language,
                  **({"phone": verified_phone, "phone_verified": True} if verified_phone else {})}
        try:
            with savepoint_if_nested():
                return Contact.objects.create(school=school, **fields)
        except IntegrityError:
            continue  # created by a concurrent request: look it up again
    raise IntegrityError("Could not create or find the contact.")


def _verify_phone(contact: Contact, number: str) -> None:
    """A platform vouches for `number` as this contact's: it replaces an unverified (typed) one, unless another
    contact of the school already holds it verified (two platform identities are never merged here)."""
    if contact.phone_verified or (
        Contact.objects.filter(school=contact.school_id, phone=number, phone_verified=True).exists()
    ):
        return
    contact.phone, contact.phone_verified = number, True
    try:
        with transaction.atomic():
            contact.save(update_fields=["phone", "phone_verified", "updated_at"])
    except IntegrityError:  # verified for another contact at the same moment: leave this one as it was
        contact.refresh_from_db(fields=["phone", "phone_verified"])


# Identifiers unique per school (see Contact.Meta.constraints). A typed phone is not one of them.
_UNIQUE_IDENTIFIERS = ("web_visitor_id", "chatwoot_contact_id")


def fill_contact_details(contact: Contact, **fields: str) -> None:
    """Fill the contact's blank fields; never overwrite what is there.

    A `phone` given here is a detail (typed in a booking, passed on by a platform
    that does not check it): it is kept unverified and identifies no one.
    """
    changed = []
    for field, value in fields.items():
        if value and not getattr(contact, field):
            if field in _UNIQUE_IDENTIFIERS and (
                Contact.objects.filter(school=contact.school_id, **{field: value}).exclude(pk=contact.pk).exists()
            ):
                continue  # that chat id belongs to another contact of this school
            setattr(contact, field, value)
            changed.append(field)
    if changed:
        contact.save(update_fields=[*changed, "updated_at"])


def update_persistent_context(contact: Contact, **fields: Any) -> dict:
    """Merge fields into the contact's persistent context; unknown keys are refused."""
    unknown = set(fields) - set(PERSISTENT_CONTEXT_FIELDS)
    if unknown:
        raise ValueError(f"Not persistent context fields: {sorted(unknown)}")
    with transaction.atomic():
        # Read-modify-write under a row lock: the caller's instance may be stale.
        current = Contact.objects.select_for_update(no_key=True).values_list("context", flat=True).get(pk=contact.pk)
        contact.context = {**(current or {}), **fields}
        Contact.objects.filter(pk=contact.pk).update(context=contact.context, updated_at=timezone.now())
    return contact.context


def set_preferred_name(contact: Contact, name: str) -> None:
    contact.preferred_name = name
    contact.save(update_fields=["preferred_name", "updated_at"])
    update_persistent_context(contact, parent_preferred_name=name)


def _open_deal(contact: Contact, title: str) -> Deal:
    deal = Deal.objects.select_for_update(no_key=True).filter(contact=contact, is_open=True).first()
    return deal or Deal.objects.create(contact=contact, title=title)


def _tour_context(booking) -> dict[str, Any]:
    local = booking.local_start
    return {
        "tour_booking_id": booking.reference,
        "tour_scheduled_date": local.date().isoformat(),
        "tour_scheduled_time": local.strftime("%H:%M"),
        "tour_status": str(booking.status),
    }


DETAIL_MAX_CHARS = 200
DATE_DETAILS = ("child_dob", "child_enrollment_date_preferred")


def _detail(value: Any, is_date: bool) -> str:
    """A detail as text ("" when it is no text, or no date where a date belongs)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return ""
    text = str(value).strip()[:DETAIL_MAX_CHARS]
    if is_date:
        try:
            return dt.date.fromisoformat(text).isoformat()
        except ValueError:
            return ""
    return text


def trusted_context(contact: Contact, claimed: dict[str, Any], correctable: tuple[str, ...]) -> dict[str, Any]:
    """What may be taken of a persistent context held elsewhere (Chatwoot's custom attributes, which a website
    visitor can set): the `correctable` details, as text (a date only when it is one), and a tour or a call back
    only when it is this contact's own, with the values of its record (another parent's reference is ignored).
    The rest (Pipedrive ids, statuses, times) is ours and never taken from outside."""
    taken = {key: _detail(claimed.get(key), key in DATE_DETAILS) for key in correctable}
    taken = {key: value for key, value in taken.items() if value}
    reference = _detail(claimed.get("tour_booking_id"), False)
    booking = contact.tour_bookings.select_related("school").filter(reference=reference).first() if reference else None
    if booking is not None:
        taken.update(_tour_context(booking))
    reference = _detail(claimed.get("callback_id"), False)
    callback = contact.callbacks.filter(reference=reference).first() if reference else None
    if callback is not None:
        taken.update(_callback_context(callback))
    return taken


def _queue_pipedrive_sync(contact_id: int) -> None:
    """When Pipedrive is configured: once this transaction commits, say the contact's CRM rows changed
    (`crm.signals.crm_rows_changed`; crm/tasks.py queues their mirror to Pipedrive on Celery)."""
    if settings.PIPEDRIVE_API_TOKEN:
        transaction.on_commit(lambda: crm_rows_changed.send(sender=Contact, contact_id=contact_id))


def remember_children(contact: Contact, children: list[tuple[str, Any, Any, str]]) -> list[Child]:
    """The contact's CRM child for each (name, age, date of birth, year group), created or brought up to date,
    so a returning family's children are known. A name is matched case-insensitively."""
    records = []
    for name, age, born, year_group in children:
        child = Child.objects.filter(contact=contact, name__iexact=name).first()
        if child is None:
            try:
                with transaction.atomic():  # the same family booking in two tabs at once: one row
                    child = Child.objects.create(contact=contact, name=name, age=age, date_of_birth=born,
                                                 year_group=year_group or "")
            except IntegrityError:
                child = Child.objects.get(contact=contact, name=name)
        else:
            given = {"age": age, "date_of_birth": born, "year_group": year_group}
            changed = [f for f, v in given.items() if v not in (None, "") and getattr(child, f) != v]
            for field in changed:
                setattr(child, field, given[field])
            if changed:
                child.save(update_fields=changed)
        records.append(child)
    return records


def rename_child(contact: Contact, old: str, new: str) -> None:
    """"It's Miah, not Mia": the CRM child follows, unless the contact already has a child of the new name."""
    if not Child.objects.filter(contact=contact, name__iexact=new).exists():
        Child.objects.filter(contact=contact, name__iexact=old).update(name=new)


def children_of(contact) -> QuerySet[Child]:
    """The contact's children, oldest record first (`contact` may be an OuterRef)."""
    return Child.objects.filter(contact=contact).order_by("pk")


def known_children(contact: Contact) -> list[dict]:
    """The contact's children as the CRM knows them ({"name", "age"?, "year_group"?}), oldest record first."""
    return [{k: v for k, v in (("name", c.name), ("age", c.age), ("year_group", c.year_group)) if v not in (None, "")}
            for c in children_of(contact)]


def record_tour_booked(booking) -> Activity:
    """Person -> deal -> tour activity for a new booking, and the contact's context."""
    contact = booking.contact
    contact.refresh_from_db(fields=["context"])
    deal = _open_deal(contact, f"Admission enquiry: {booking.child_name} ({booking.parent_name})")
    if deal.stage != Deal.Stage.TOUR_BOOKED:
        deal.stage = Deal.Stage.TOUR_BOOKED
        deal.save(update_fields=["stage", "updated_at"])
    activity = Activity.objects.create(
        deal=deal,
        contact=contact,
        kind=Activity.Kind.TOUR,
        subject=_tour_subject(booking),
        due_at=booking.starts_at,
        duration_minutes=booking.school.tour_duration_minutes,
        note=booking.special_requirements,
        tour_booking=booking,
    )
    update_persistent_context(
        contact,
        parent_preferred_name=contact.context.get("parent_preferred_name") or booking.parent_name,
        parent_preferred_phone=booking.parent_phone,
        parent_preferred_email=booking.parent_email or contact.context.get("parent_preferred_email", ""),
        child_name=booking.child_name,
        tour_booked_at=timezone.now().isoformat(),
        **_tour_context(booking),
    )
    _queue_pipedrive_sync(contact.pk)
    return activity


def _tour_subject(booking) -> str:
    """"School tour: Leo (5) and Mia (3) (T-7KQ3XM)": every child on the tour."""
    return f"School tour: {booking.children_label} ({booking.reference})"


def record_tour_moved(booking, from_starts_at) -> Activity | None:
    """The tour activity follows the booking to its new time; the note keeps where it was."""
    activity = Activity.objects.filter(tour_booking=booking).first()
    if activity:
        was = from_starts_at.astimezone(booking.school.tz)
        activity.due_at = booking.starts_at
        activity.note = "\n".join(filter(None, [activity.note, f"Moved from {was:%a %d %b %Y %H:%M}."]))
        activity.save(update_fields=["due_at", "note", "updated_at"])
    update_persistent_context(booking.contact, **_tour_context(booking))
    _queue_pipedrive_sync(booking.contact_id)
    return activity


def correct_parent_name(contact: Contact, old: str, new: str) -> None:
    """"It's Jon, not John": the contact's name and the persistent context's preferred name follow, each when it
    was the misspelt one (or, for the preferred name, not set)."""
    if not old or not new or old == new:
        return
    if contact.name == old:
        contact.name = new
        contact.save(update_fields=["name", "updated_at"])
    if (contact.context or {}).get("parent_preferred_name") in (None, "", old):
        update_persistent_context(contact, parent_preferred_name=new)


def record_tour_details_corrected(booking, previous: dict[str, Any]) -> None:
    """Names or contact details of a booked tour were corrected: the CRM follows, so the contact, the activity
    and the persistent context say what the booking says (its children are already the CRM's, see
    `remember_children` and `rename_child`). `previous` holds the booking's values before."""
    contact = booking.contact
    contact.refresh_from_db(fields=["name", "context"])
    Activity.objects.filter(tour_booking=booking).update(subject=_tour_subject(booking), updated_at=timezone.now())
    correct_parent_name(contact, previous.get("parent_name") or "", booking.parent_name)
    update_persistent_context(
        contact,
        parent_preferred_phone=booking.parent_phone,
        child_name=booking.child_name,
        **({"parent_preferred_email": booking.parent_email} if booking.parent_email else {}),
    )


CANCELLED_PREFIX = "Cancelled: "


def record_tour_cancelled(booking) -> Activity | None:
    """The tour's activity says it is cancelled (subject prefix, done, so Pipedrive no longer shows a busy meeting)."""
    activity = Activity.objects.filter(tour_booking=booking).first()
    if activity:
        activity.done = True
        if not activity.subject.startswith(CANCELLED_PREFIX):
            activity.subject = f"{CANCELLED_PREFIX}{activity.subject}"
        reason = booking.cancellation_reason or "no reason given"
        activity.note = "\n".join(filter(None, [activity.note, f"Cancelled: {reason}."]))
        activity.save(update_fields=["done", "subject", "note", "updated_at"])
    update_persistent_context(booking.contact, **_tour_context(booking))
    _queue_pipedrive_sync(booking.contact_id)
    return activity


def record_tour_outcome(booking) -> None:
    """A tour happened (or the family did not come): close its activity; a family that came has toured."""
    Activity.objects.filter(tour_booking=booking).update(done=True, updated_at=timezone.now())
    if booking.status == "completed":
        Deal.objects.filter(contact_id=booking.contact_id, is_open=True,
                            stage__in=[Deal.Stage.ENQUIRY, Deal.Stage.CALLBACK, Deal.Stage.TOUR_BOOKED]).update(
            stage=Deal.Stage.TOURED, updated_at=timezone.now())
    update_persistent_context(booking.contact, tour_status=str(booking.status))
    _queue_pipedrive_sync(booking.contact_id)


def move_deal_stage(deal: Deal, stage: str) -> Deal:
    """Staff move a family along the admissions funnel (e.g. to "applied"); Pipedrive follows."""
    if stage not in Deal.Stage.values:
        raise ValueError(f"{stage!r} is not a deal stage.")
    Deal.objects.filter(pk=deal.pk).update(stage=stage, updated_at=timezone.now())
    deal.stage = stage
    _queue_pipedrive_sync(deal.contact_id)
    return deal


def _callback_subject(callback) -> str:
    """"Call back Mei (afternoon, 12:00-17:00)": how the parent put it and the window, in the school's time."""
    return (f"Call back {callback.parent_name} ({callback.get_best_time_display().lower()}, "
            f"{callback.window_start:%H:%M}-{callback.window_end:%H:%M})")


def _callback_context(callback) -> dict[str, Any]:
    """The persistent context of a call back still to make (the prompt shows it, so a model can change it)."""
    return {"callback_requested": True, "callback_id": callback.reference, "callback_preference": callback.best_time,
            "callback_date": callback.due_date.isoformat(),
            "callback_window": f"{callback.window_start:%H:%M}-{callback.window_end:%H:%M}"}


def _no_callback_context(still_open) -> dict[str, Any]:
    """The context once a call back is done or cancelled: the one still open, if any, else none requested."""
    if still_open is not None:
        return _callback_context(still_open)
    return {"callback_requested": False, "callback_id": "", "callback_window": ""}


def record_callback_requested(callback) -> Activity:
    contact = callback.contact
    contact.refresh_from_db(fields=["context"])
    deal = _open_deal(contact, f"Admission enquiry: {callback.parent_name}")
    if deal.stage == Deal.Stage.ENQUIRY:
        deal.stage = Deal.Stage.CALLBACK
        deal.save(update_fields=["stage", "updated_at"])
    activity = Activity.objects.create(
        deal=deal,
        contact=contact,
        kind=Activity.Kind.CALLBACK,
        subject=_callback_subject(callback),
        due_date=callback.due_date,
        note=callback.topic,
        callback=callback,
    )
    update_persistent_context(
        contact,
        parent_preferred_name=contact.context.get("parent_preferred_name") or callback.parent_name,
        parent_preferred_phone=callback.parent_phone,
        callback_requested_at=timezone.now().isoformat(),
        **_callback_context(callback),
    )
    _queue_pipedrive_sync(contact.pk)
    return activity


def record_callback_moved(callback) -> None:
    """The call back's activity follows its new day, window and topic; the context speaks of it."""
    Activity.objects.filter(callback=callback).update(subject=_callback_subject(callback),
                                                      due_date=callback.due_date, note=callback.topic,
                                                      updated_at=timezone.now())
    update_persistent_context(callback.contact, **_callback_context(callback))
    _queue_pipedrive_sync(callback.contact_id)


def record_callback_cancelled(callback, still_open=None) -> None:
    """The parent cancelled the call back: its activity is done and says so; the context speaks of `still_open`
    (another open call back of the contact's) or of none."""
    activity = Activity.objects.filter(callback=callback).first()
    if activity:
        activity.done = True
        if not activity.subject.startswith(CANCELLED_PREFIX):
            activity.subject = f"{CANCELLED_PREFIX}{activity.subject}"
        activity.note = "\n".join(filter(None, [activity.note, "Cancelled by the parent."]))
        activity.save(update_fields=["done", "subject", "note", "updated_at"])
    update_persistent_context(callback.contact, **_no_callback_context(still_open))
    _queue_pipedrive_sync(callback.contact_id)


def record_callback_done(callback, still_open=None) -> None:
    Activity.objects.filter(callback=callback).update(done=True, updated_at=timezone.now())
    update_persistent_context(callback.contact, **_no_callback_context(still_open))
    _queue_pipedrive_sync(callback.contact_id)
