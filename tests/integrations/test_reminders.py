"""Tour reminders on a frozen clock: over the channel the parent booked on (WhatsApp inside and outside its 24
hours, Chatwoot, e-mail for the web chat), never for a cancelled or moved tour, at the new time for a moved
one, once each, and never a silent failure. WhatsApp and Chatwoot are fakes on 127.0.0.1 (our clients run)."""

import datetime as dt
import threading
import zoneinfo

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command

from bookings import services as bookings
from bookings.links import booking_for_token
from bookings.models import TourBooking
from chatbot.models import Channel, Message
from chatbot.reminders import services as reminders
from chatbot.reminders.models import ReminderSettings, SentReminder
from tests.chatbot.test_calendar import event_of
from tests.factories import ContactFactory, ConversationFactory, MessageFactory, SchoolFactory

pytestmark = [pytest.mark.django_db(transaction=True)]

SG = zoneinfo.ZoneInfo("Asia/Singapore")
MONDAY = dt.date(2027, 3, 1)
TUESDAY, WEDNESDAY, THURSDAY = (MONDAY + dt.timedelta(days=n) for n in (1, 2, 3))


def at(day: dt.date, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour, minute), SG)


@pytest.fixture
def clock():
    with time_machine.travel(at(MONDAY, 10), tick=False) as traveller:
        yield traveller


@pytest.fixture
def school(clock):
    return SchoolFactory(slug="reminder-school", name="Hillside Primary", time_zone="Asia/Singapore")


def parent_on(school, channel: str, *, email: str = "mei@mail.example", external_id: str = ""):
    """A parent who wrote to the school on `channel` just now (Monday 10:00)."""
    contact = ContactFactory(school=school, name="Mei Lin Tan", phone="+6591234567", email=email)
    conversation = ConversationFactory(school=school, contact=contact, channel=channel,
                                       external_id=external_id or {"whatsapp": "106540352242922:6591234567",
                                                                   "chatwoot": "1:123"}.get(channel, ""))
    MessageFactory(conversation=conversation, text="I'd like to see the school")
    return contact


def book(school, contact, day=WEDNESDAY, hour=9, email="mei@mail.example") -> TourBooking:
    return bookings.book_tour(school=school, contact=contact, parent_name="Mei Lin Tan", parent_phone="+6591234567",
                              parent_email=email, child_name="Tom", child_age=5, local_date=day,
                              local_time=dt.time(hour))


def template(school, name="tour_reminder_v2"):
    return ReminderSettings.objects.create(school=school, hours_before=[24, 2], whatsapp_template=name,
                                           whatsapp_template_language="en_GB",
                                           whatsapp_template_fields=["parent_name", "child_name", "tour_time"])


def run(clock, moment: dt.datetime) -> dict:
    clock.move_to(moment)
    return reminders.send_due_reminders()


# --- WhatsApp ----------------------------------------------------------------------------------------------------
def test_whatsapp_text_inside_24_hours_then_the_template_outside(clock, school, whatsapp):
    template(school)
    booking = book(school, parent_on(school, Channel.WHATSAPP))

    assert run(clock, at(TUESDAY, 8, 59)) == {}, "not due before 24 hours ahead"
    assert run(clock, at(TUESDAY, 9, 0)) == {"sent": 1}
    [text] = whatsapp.sent
    assert text["type"] == "text" and text["to"] == "6591234567"
    body = text["text"]["body"]
    assert "Tom's tour at Hillside Primary tomorrow, Wednesday 3 March, at 09:00" in body
    assert f"Your reference is {booking.reference}." in body
    assert run(clock, at(TUESDAY, 9, 1)) == {}, "sent once"

    # Wednesday 07:00: the parent's last message (Monday 10:00) is 45 hours old: only a template may go.
    assert run(clock, at(WEDNESDAY, 7, 0)) == {"sent": 1}
    sent = whatsapp.sent[1]
    assert sent["type"] == "template"
    assert sent["template"] == {"name": "tour_reminder_v2", "language": {"code": "en_GB"}, "components": [
        {"type": "body", "parameters": [{"type": "text", "text": "Mei Lin Tan"}, {"type": "text", "text": "Tom"},
                                        {"type": "text", "text": "09:00"}]}]}
    rows = {r.kind: r for r in SentReminder.objects.all()}
    assert (rows["24h"].status, rows["24h"].via) == ("sent", "whatsapp_text")
    assert (rows["2h"].status, rows["2h"].via) == ("sent", "whatsapp_template")
    assert rows["2h"].message.payload["reminder"] == {"booking": booking.reference, "kind": "2h"}
    assert rows["2h"].message.delivered_at is not None, "the transcript shows the reminder, delivered"
    assert not mail.outbox


def test_outside_24_hours_without_a_template_it_goes_by_email(clock, school, whatsapp):
    booking = book(school, parent_on(school, Channel.WHATSAPP))
    run(clock, at(TUESDAY, 12))  # 26 hours after the parent's last message
    assert not whatsapp.sent, "free text outside the window would be refused: not even tried"
    [email] = mail.outbox
    assert email.to == ["mei@mail.example"] and booking.reference in email.body
    row = SentReminder.objects.get()
    assert (row.status, row.via) == ("sent", "email") and "no approved WhatsApp template" in row.detail


def test_a_refused_template_with_no_email_leaves_a_staff_note(clock, school, whatsapp, admin_client):
    template(school, name="not_approved_yet")
    booking = book(school, parent_on(school, Channel.WHATSAPP, email=""), email="")
    whatsapp.fail_next = [("POST", r"/\d+/messages", 400)]
    clock.move_to(at(TUESDAY, 12))
    assert reminders.send_due_reminders() == {"failed": 1}
    row = SentReminder.objects.get()
    assert row.status == "failed" and not whatsapp.sent and not mail.outbox
    assert booking.reference in row.staff_note and "refused" in row.staff_note
    assert reminders.send_due_reminders() == {}, "a failed reminder is not retried behind staff's back"
    page = admin_client.get("/admin/chatbot/sentreminder/?status__exact=failed").content.decode()
    assert booking.reference in page and "Please remind Mei Lin Tan another way" in page
    desk = admin_client.get(f"/admin/desk/?school={school.pk}&date={WEDNESDAY.isoformat()}").content.decode()
    assert "Reminder not sent" in desk and "refused" in desk


def test_whatsapp_down_is_retried_then_falls_back_to_email(clock, school, whatsapp):
    book(school, parent_on(school, Channel.WHATSAPP))
    whatsapp.down = True
    assert run(clock, at(TUESDAY, 9)) == {"pending": 1}
    assert run(clock, at(TUESDAY, 9, 1)) == {}, "not again before RETRY_AFTER"
    assert run(clock, at(TUESDAY, 9, 3)) == {"pending": 1}
    assert not mail.outbox
    assert run(clock, at(TUESDAY, 9, 6)) == {"sent": 1}, "the third failure falls back"
    row = SentReminder.objects.get()
    assert (row.via, row.attempts) == ("email", 3) and "still unavailable after 3 tries" in row.detail
    assert len(mail.outbox) == 1
    assert Message.objects.filter(payload__reminder__kind="24h").count() == 1, "one message, tried three times"


# --- Chatwoot ------------------------------------------------------------------------------------------------------
def test_chatwoot_text_inside_24_hours_and_a_template_outside(clock, school, chatwoot):
    template(school)
    chatwoot.status["123"] = "resolved"  # a reminder goes whoever has the conversation, even resolved
    booking = book(school, parent_on(school, Channel.CHATWOOT))
    run(clock, at(TUESDAY, 9))
    run(clock, at(WEDNESDAY, 7))
    text, templated = [post.json for post in chatwoot.posts()]
    assert "tomorrow, Wednesday 3 March, at 09:00" in text["content"] and "template_params" not in text
    assert "today, Wednesday 3 March, at 09:00" in templated["content"] and booking.reference in templated["content"]
    assert templated["template_params"] == {
        "name": "tour_reminder_v2", "category": "UTILITY", "language": "en_GB",
        "processed_params": {"body": {"1": "Mei Lin Tan", "2": "Tom", "3": "09:00"}}}
    assert sorted(SentReminder.objects.values_list("via", flat=True)) == ["chatwoot_template", "chatwoot_text"]


# --- web chat: e-mail with the .ics and the manage link -----------------------------------------------------------
def test_a_web_chat_parent_gets_an_email_with_the_calendar_file_and_manage_link(clock, school, settings):
    settings.SITE_URL = "https://concierge.school.example"
    booking = book(school, parent_on(school, Channel.WEB))
    assert run(clock, at(TUESDAY, 9, 30)) == {"sent": 1}
    [email] = mail.outbox
    assert email.to == ["mei@mail.example"] and email.reply_to == ["admissions@school.example"]
    assert email.subject == "Reminder: Tom's tour at Hillside Primary, Wednesday 3 March at 09:00"
    [(name, ics, mimetype)] = email.attachments
    assert (name, mimetype) == (f"tour-{booking.reference}.ics", "text/calendar")
    assert "DTSTART;TZID=Asia/Singapore:20270303T090000" in ics  # the school's 09:00, 01:00 UTC
    event = event_of(ics)
    assert event.decoded("dtstart") == booking.starts_at and str(event["uid"]).startswith(f"{booking.reference}@")
    link = next(line for line in email.body.splitlines() if "https://" in line).split("here: ")[1]
    token = link.removeprefix("https://concierge.school.example/manage/").rstrip("/")
    assert booking_for_token(token) == booking
    assert SentReminder.objects.get().via == "email"


def test_a_web_chat_parent_without_email_gets_a_staff_note(clock, school):
    book(school, parent_on(school, Channel.WEB, email=""), email="")
    assert run(clock, at(TUESDAY, 9)) == {"failed": 1}
    assert "left no e-mail address" in SentReminder.objects.get().staff_note
    assert not mail.outbox


# --- cancelled and moved tours ----------------------------------------------------------------------------------
def test_a_cancelled_tour_is_never_reminded(clock, school):
    booking = book(school, parent_on(school, Channel.WEB))
    bookings.cancel_tour(booking=booking, reason="Found another school")
    assert run(clock, at(TUESDAY, 9)) == {} and run(clock, at(WEDNESDAY, 7)) == {}
    assert not mail.outbox and not SentReminder.objects.exists()


def test_a_tour_cancelled_after_its_reminder_was_found_due_is_skipped(clock, school):
    booking = book(school, parent_on(school, Channel.WEB))
    clock.move_to(at(TUESDAY, 9))
    [due] = reminders.due_reminders()
    bookings.cancel_tour(booking=booking)  # between the selection and the send
    assert reminders.send_reminder(booking.pk, due.kind, due.booking.starts_at) == "skipped"
    assert not mail.outbox
    assert "cancelled" in SentReminder.objects.get().detail


def test_a_rescheduled_tour_is_reminded_at_its_new_time_only(clock, school):
    """Today's reschedule: a new booking replaces the old one."""
    old = book(school, parent_on(school, Channel.WEB))
    assert run(clock, at(TUESDAY, 9)) == {"sent": 1}
    clock.move_to(at(TUESDAY, 10))
    new = bookings.reschedule_tour(booking=old, new_date=THURSDAY, new_time=dt.time(14))

    assert run(clock, at(WEDNESDAY, 7)) == {}, "nothing for the old Wednesday 09:00 tour"
    assert reminders.send_reminder(old.pk, "2h", old.starts_at) == "skipped", "found due just before the move"
    assert run(clock, at(WEDNESDAY, 14)) == {"sent": 1}
    assert run(clock, at(THURSDAY, 12)) == {"sent": 1}
    reminded = list(SentReminder.objects.filter(status="sent").order_by("created_at")
                    .values_list("booking_id", "kind", "tour_starts_at"))
    assert reminded == [(old.pk, "24h", at(WEDNESDAY, 9)), (new.pk, "24h", at(THURSDAY, 14)),
                        (new.pk, "2h", at(THURSDAY, 14))]
    assert "tomorrow, Thursday 4 March, at 14:00" in mail.outbox[1].body


def test_a_booking_moved_in_place_is_reminded_at_its_new_time(clock, school):
    """A move that keeps the booking (same reference, new slot): the reminder follows the start time."""
    booking = book(school, parent_on(school, Channel.WEB))
    assert run(clock, at(TUESDAY, 9)) == {"sent": 1}
    clock.move_to(at(TUESDAY, 10))
    old_start = booking.starts_at
    TourBooking.objects.filter(pk=booking.pk).update(starts_at=at(THURSDAY, 14))

    assert reminders.send_reminder(booking.pk, "2h", old_start) == "skipped", "claimed for the old time: moved"
    assert "moved" in SentReminder.objects.get(kind="2h", tour_starts_at=old_start).detail
    assert run(clock, at(WEDNESDAY, 7)) == {}
    assert run(clock, at(WEDNESDAY, 14)) == {"sent": 1}, "the day-before reminder again, for the new day"
    assert run(clock, at(THURSDAY, 12)) == {"sent": 1}
    sent = SentReminder.objects.filter(status="sent").order_by("created_at")
    assert [(r.kind, r.tour_starts_at) for r in sent] == [("24h", old_start), ("24h", at(THURSDAY, 14)),
                                                          ("2h", at(THURSDAY, 14))]
    assert len(mail.outbox) == 3


def test_only_the_latest_due_reminder_goes_and_none_whose_time_came_before_the_booking(clock, school):
    early = book(school, parent_on(school, Channel.WEB), day=WEDNESDAY, hour=9)
    clock.move_to(at(WEDNESDAY, 7, 30))  # the scheduler was down since Monday: "in two hours", not also "tomorrow"
    assert reminders.send_due_reminders() == {"sent": 1}
    assert SentReminder.objects.get(booking=early).kind == "2h"

    school.min_notice_hours = 1
    school.save()
    clock.move_to(at(WEDNESDAY, 10))  # booked 23 hours ahead: the confirmation is the day-before reminder
    late = book(school, ContactFactory(school=school, email="ana@mail.example"), day=THURSDAY, hour=9)
    assert reminders.due_reminders(at(WEDNESDAY, 10, 1)) == []
    assert [(d.booking, d.kind) for d in reminders.due_reminders(at(THURSDAY, 7))] == [(late, "2h")]


def test_schools_choose_their_hours_or_none(clock, school):
    ReminderSettings.objects.create(school=school, hours_before=[48])
    book(school, parent_on(school, Channel.WEB), day=THURSDAY)
    assert run(clock, at(TUESDAY, 8, 59)) == {}
    assert run(clock, at(TUESDAY, 9)) == {"sent": 1}
    assert run(clock, at(THURSDAY, 7)) == {}, "no two-hour reminder at this school"
    ReminderSettings.objects.filter(school=school).update(enabled=False, hours_before=[24, 2])
    assert reminders.due_reminders(at(THURSDAY, 7)) == []


# --- the scheduled job -------------------------------------------------------------------------------------------
def test_run_scheduled_sends_the_due_reminders_once(clock, school, capsys):
    booking = book(school, parent_on(school, Channel.WEB))
    clock.move_to(at(TUESDAY, 9))
    call_command("run_scheduled", "--job", "tour-reminders")
    out = capsys.readouterr().out
    assert "ran      tour-reminders" in out and "1 sent" in out
    call_command("run_scheduled", "--job", "tour-reminders")
    assert "not due  tour-reminders" in capsys.readouterr().out
    assert len(mail.outbox) == 1 and booking.reference in mail.outbox[0].body


@pytest.mark.postgres
def test_two_runners_at_once_send_each_reminder_once(clock, school):
    book(school, parent_on(school, Channel.WEB))
    for n in range(4):  # the tour's five seats
        other = ContactFactory(school=school, email=f"p{n}@mail.example")
        book(school, other, email=f"p{n}@mail.example")
    clock.move_to(at(TUESDAY, 9))
    start = threading.Barrier(2)
    results = []

    def runner():
        from django.db import connection

        try:
            start.wait()
            results.append(reminders.send_due_reminders())
        finally:
            connection.close()

    threads = [threading.Thread(target=runner) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(mail.outbox) == 5, "five families, five reminders, whoever sent them"
    assert sorted(m.to[0] for m in mail.outbox) == sorted({m.to[0] for m in mail.outbox})
    assert SentReminder.objects.filter(status="sent").count() == 5
    assert sum(r.get("sent", 0) for r in results) == 5


@pytest.mark.postgres
def test_eight_runners_racing_for_one_reminder_send_it_once(clock, school):
    booking = book(school, parent_on(school, Channel.WEB))
    clock.move_to(at(TUESDAY, 9))
    start = threading.Barrier(8)
    outcomes = []

    def runner():
        from django.db import connection

        try:
            start.wait()
            outcomes.append(reminders.send_reminder(booking.pk, "24h", booking.starts_at))
        finally:
            connection.close()

    threads = [threading.Thread(target=runner) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes) == ["sent"] + ["taken"] * 7
    assert len(mail.outbox) == 1 and SentReminder.objects.count() == 1



def test_a_parent_who_never_chatted_and_left_no_email_gets_a_staff_note(clock, school):
    book(school, ContactFactory(school=school, email=""), email="")  # booked by staff on the phone, say
    assert run(clock, at(TUESDAY, 9)) == {"failed": 1}
    assert "no chat with us and left no e-mail address" in SentReminder.objects.get().staff_note


def test_chatwoot_refusing_the_template_falls_back_to_email(clock, school, chatwoot):
    template(school)
    booking = book(school, parent_on(school, Channel.CHATWOOT))
    chatwoot.fail_next = [("POST", r"/api/v1/accounts/\d+/conversations/\d+/messages", 422)]
    assert run(clock, at(TUESDAY, 12)) == {"sent": 1}
    row = SentReminder.objects.get()
    assert row.via == "email" and "Chatwoot: refused" in row.detail
    assert [m.to for m in mail.outbox] == [["mei@mail.example"]] and booking.reference in mail.outbox[0].subject + \
        mail.outbox[0].body


def test_the_mail_server_down_is_retried_then_left_to_staff(clock, school, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 1, 2  # nothing listens there
    book(school, parent_on(school, Channel.WEB))
    assert run(clock, at(TUESDAY, 9)) == {"pending": 1}
    assert run(clock, at(TUESDAY, 9, 3)) == {"pending": 1}
    assert run(clock, at(TUESDAY, 9, 6)) == {"failed": 1}
    row = SentReminder.objects.get()
    assert row.attempts == 3 and "could not be sent after 3 tries" in row.staff_note


def test_the_reminder_is_in_the_parents_language(clock, school):
    school.languages = ["en", "ms"]
    school.save()
    ReminderSettings.objects.create(school=school, hours_before=[48])
    contact = parent_on(school, Channel.WEB)
    contact.language = "ms"
    contact.save()
    booking = book(school, contact, day=THURSDAY)
    assert run(clock, at(TUESDAY, 15)) == {"sent": 1}  # 42 hours ahead: no "tomorrow"
    [email] = mail.outbox
    assert email.subject == "Peringatan: lawatan Tom ke Hillside Primary, Khamis, 4 Mac pukul 09:00"
    assert email.body.startswith("Helo Mei Lin Tan, ini peringatan tentang lawatan Tom ke Hillside Primary pada "
                                 "Khamis, 4 Mac pukul 09:00.")
    assert booking.reference in email.body
