"""What the concierge says: short, warm, and only facts that came from the prompt or a tool result.

Every date is written with its weekday ("Wednesday 25 November at 09:00"). Slot
and tour choices are numbered lists ("1. ..."), which understanding.py reads back
when the parent answers "the second one".
"""

import datetime as dt
import re

import phonenumbers

from chatbot.agent.offline.when import PARTS_OF_DAY, human_date, human_slot

MAX_LISTED = 6
CAPABILITIES = (
    "I can book a campus tour, move or cancel one, arrange a call back from our admissions team, "
    "or answer questions about the school."
)
FIELD_LABELS = {
    "parent_name": "your name",
    "parent_phone": "your phone number",
    "parent_email": "your e-mail address",
    "child_name": "your child's name",
    "child_age": "your child's age",
    "preferred_date": "the date",
    "preferred_time": "the time",
    "special_requirements": "the special requirements",
    "preferred_name": "the name I call you",
}
PRONOUNS = {"son": "he", "boy": "he", "daughter": "she", "girl": "she"}


def _name_part(name: str) -> str:
    return f", {name}" if name else ""


def human_phone(phone: str) -> str:
    """'+65 9123 4567' for '+6591234567' (as given when it is not a number phonenumbers can read)."""
    try:
        number = phonenumbers.parse(phone, None)
        return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
    except phonenumbers.NumberParseException:
        return phone


def hello(name: str = "") -> str:
    return f"Hi {name}!" if name else "Hello!"


def welcome(school: str, name: str, returning: bool, tours: list[dict], today: dt.date) -> str:
    """The answer to a bare greeting."""
    place = f" to {school}" if school else ""
    if name and returning:
        opening = f"Hi {name}, welcome back!"
    elif name:
        opening = f"Hi {name}, welcome{place}!"
    else:
        opening = f"Hello, and welcome{place}!"
    upcoming = f" {tours_summary(tours, today)}" if tours else ""
    return f"{opening}{upcoming} {CAPABILITIES} How can I help?"


def refuse_injection() -> str:
    return (
        "Sorry, I can't do that. I can only help with your own tour bookings, call backs and questions "
        "about the school."
    )


def refuse_offtopic(school: str, short: bool = False) -> str:
    who = f"the tour concierge of {school}" if school else "the school's tour concierge"
    if short:
        return "I'm afraid I can't help with anything unrelated to the school."
    return f"Sorry, I can't help with that: I'm {who}. {CAPABILITIES}"


def not_understood() -> str:
    return f"Sorry, I didn't quite catch that. {CAPABILITIES} What would you like to do?"


def thanks(name: str) -> str:
    return f"You're welcome{_name_part(name)}! Is there anything else I can help with?"


def bye(name: str, tours: list[dict], today: dt.date) -> str:
    if tours:
        tour = tours[0]
        when = human_slot(str(tour.get("date") or ""), tour.get("time"), today)
        return f"Goodbye{_name_part(name)}! We look forward to seeing you on {when}."
    return f"Goodbye{_name_part(name)}, and have a lovely day!"


def noted(name: str) -> str:
    return f"Thank you{_name_part(name)}, I've noted that. How can I help you today?"


def anything_else() -> str:
    return "Great! Is there anything else I can help with?"


def no_problem() -> str:
    return "No problem. Is there anything else I can help with?"


def kept_booking() -> str:
    return "No problem, I won't cancel anything."


NOT_SURE = "I'm not sure about that one: I don't have that information, and I'd rather not guess."
CALLBACK_OFFER = "Would you like someone from our admissions team to call you back about it?"  # REPLY_ASKS


def _not_sure_about(questions: list[str]) -> str:
    asked = " and ".join(f'"{q.rstrip(" ?.!")}"' for q in questions)
    return f"As for {asked}, I'm not sure: I don't have that information, and I'd rather not guess."


def faq_answer(result: dict, offer_callback: bool = False) -> str:
    """A get_faq_answer success: its answer, or for a message that asked several things each answer found,
    then an honest "not sure" about the parts the FAQ has no confident answer to (`unanswered`)."""
    answers = [str(a.get("answer") or "").strip() for a in result.get("answers") or [] if isinstance(a, dict)]
    if not answers:
        return str(result.get("answer") or "").strip()
    unanswered = [str(q).strip() for q in result.get("unanswered") or [] if str(q).strip()]
    if unanswered:
        answers.append(_not_sure_about(unanswered) + (f" {CALLBACK_OFFER}" if offer_callback else ""))
    return " ".join(a for a in answers if a)


def faq_unknown(offer_callback: bool) -> str:
    """A get_faq_answer no_match (nothing found, or nothing found with confidence)."""
    return f"{NOT_SURE} {CALLBACK_OFFER}" if offer_callback else NOT_SURE


def corrected(result: dict, today: dt.date) -> str:
    """Acknowledge an update_context result."""
    if result.get("status") != "updated":
        return str(result.get("message") or "Sorry, I couldn't update that.")
    field = str(result.get("field") or "")
    value = result.get("new_value")
    if field == "preferred_date" and value:
        value = human_date(str(value), today)
    booking = f" on booking {result['booking_updated']}" if result.get("booking_updated") else ""
    return f"Thanks, I've updated {FIELD_LABELS.get(field, 'that')} to {value}{booking}."


def numbered(lines: list[str]) -> str:
    return "\n".join(f"{index}. {line}" for index, line in enumerate(lines, 1))


def slot_lines(slots: list[dict], today: dt.date) -> list[str]:
    return [human_slot(s["date"], s.get("time"), today) for s in slots[:MAX_LISTED] if s.get("date")]


def tour_line(tour: dict, today: dt.date) -> str:
    child = f" for {tour['child_name']}" if tour.get("child_name") else ""
    return f"{human_slot(str(tour.get('date') or ''), tour.get('time'), today)}{child} ({tour.get('booking_id')})"


def tours_summary(tours: list[dict], today: dt.date) -> str:
    if not tours:
        return "I can't see any upcoming tours for you. Would you like to book one?"
    if len(tours) == 1:
        return f"Your tour is on {tour_line(tours[0], today)}."
    return "Your upcoming tours:\n" + numbered([tour_line(t, today) for t in tours])


def window(args: dict, today: dt.date) -> str:
    """' on Thursday 26 November in the afternoon' for a check_availability call."""
    start, end = args.get("date_range_start"), args.get("date_range_end")
    text = ""
    if start and (not end or end == start):
        text = f" on {human_date(start, today)}"
    elif start and end:
        text = f" between {human_date(start, today)} and {human_date(end, today)}"
    times = args.get("preferred_times") or []
    if times:
        parts = [t for t in times if ":" not in t]
        text += f" in the {' or '.join(parts)}" if parts else f" at {' or '.join(times)}"
    return text


def availability(result: dict, args: dict, today: dt.date, purpose: str = "") -> str:
    """Offer what check_availability found, or say plainly that nothing fits."""
    status = result.get("status")
    slots = result.get("available_slots") or []
    question = f"Which one would you like{purpose}?"
    if status == "success" and slots:
        timed = any(":" in str(t) for t in args.get("preferred_times") or [])
        if timed and not args.get("date_range_start") and len({s.get("date") for s in slots}) > 1:  # no day
            question = f"The soonest is {slot_lines(slots, today)[0]}: shall I take that one, or which would you like?"
        return f"Here are the open tour slots{window(args, today)}:\n{numbered(slot_lines(slots, today))}\n{question}"
    if status == "success":
        return f"I'm sorry, there are no open tour slots{window(args, today)}. Would another day suit you?"
    message = str(result.get("message") or f"There are no open tour slots{window(args, today)}.").strip()
    alternatives = result.get("alternatives") or []
    if alternatives:
        return f"{message} These are the next open slots:\n{numbered(slot_lines(alternatives, today))}\n{question}"
    return f"{message} Is there another day that would suit you?"


def ambiguous(slots: list[dict], today: dt.date) -> str:
    return f"I have more than one slot that fits:\n{numbered(slot_lines(slots, today))}\nWhich one would you like?"


def bad_choice(count: int) -> str:
    return f"Sorry, I only listed {count} option{'s' if count != 1 else ''}. Which number would you like?"


def _child_words(relation: str, child_name: str) -> tuple[str, str]:
    """('your son', 'he') or ('Mia', 'she') for the questions about the child."""
    pronoun = PRONOUNS.get(relation, "they")
    if child_name:
        return child_name, pronoun
    return f"your {relation}" if relation in ("son", "daughter") else "your child", pronoun


def ask_for(missing: list[str], relation: str = "", child_name: str = "") -> str:
    """Ask for (at most) the next two missing details, child first, in plain words."""
    order = ("child_name", "child_age", "parent_name", "parent_phone")
    wanted = [f for f in order if f in missing][:2]
    child, pronoun = _child_words(relation, child_name)
    is_are = "are" if pronoun == "they" and not child_name else "is"
    questions = {
        ("child_name", "child_age"): f"What's {child}'s name, and how old {is_are} {pronoun}?",
        ("child_name",): f"What's {child}'s name?",
        ("child_age",): f"How old {is_are} {child if child_name else pronoun}?",
        ("parent_name", "parent_phone"): "Could I have your name and a phone number we can reach you on?",
        ("parent_name",): "And may I have your name?",
        ("parent_phone",): "What's the best phone number to reach you on?",
        ("child_age", "parent_name"): f"How old {is_are} {child if child_name else pronoun}? And may I have your name?",
        ("child_age", "parent_phone"): (
            f"How old {is_are} {child if child_name else pronoun}? And what's the best phone number to reach you on?"
        ),
        ("child_name", "parent_name"): f"What's {child}'s name? And may I have your name?",
        ("child_name", "parent_phone"): f"What's {child}'s name? And what's the best phone number to reach you on?",
    }
    return questions.get(tuple(wanted), "")


def ask_when() -> str:
    return "Which day and time would suit you for the tour?"


def start_booking(relation: str, child_name: str, another: bool) -> str:
    child, _ = _child_words(relation, child_name)
    what = "another campus tour" if another else "a campus tour"
    whom = f" for {child}" if relation or child_name else ""
    return f"I'd be happy to arrange {what}{whom}!"


def booking_confirmed(result: dict, today: dt.date) -> str:
    details = result.get("confirmation_details") or {}
    child = details.get("child_name") or "your child"
    minutes = f" ({details['duration_minutes']} minutes)" if details.get("duration_minutes") else ""
    place = f" at {details['school']}" if details.get("school") else ""
    address = f", {details['address']}" if details.get("address") else ""
    when = human_slot(details.get("date", ""), details.get("time"), today)
    return (
        f"You're all set! {child}'s campus tour is booked for {when}{minutes}{place}{address}. "
        f"Your booking reference is {result.get('booking_id')}."
    )


def booking_pending(date: str, time: str, today: dt.date) -> str:
    return f"{human_slot(date, time, today)} it is. Before I can book it, I just need a couple of details."


def tool_error(result: dict, today: dt.date) -> str:
    """A book_tour error in plain words, with the alternatives it offered."""
    field = result.get("field")
    message = str(result.get("message") or "Sorry, that didn't work.").strip()
    if field == "parent_phone":
        return f"That number doesn't look right — could you check it? ({message})"
    if field == "parent_email":
        return f"That e-mail address doesn't look right — could you check it? ({message})"
    alternatives = result.get("alternatives") or []
    if alternatives:
        return f"{message} These slots are open:\n{numbered(slot_lines(alternatives, today))}\nWould one of these work?"
    if field in ("preferred_date", "preferred_time"):
        return f"{message} Which other day or time would suit you?"
    return message


def _details_slot(result: dict, today: dt.date) -> str:
    details = result.get("confirmation_details") or {}
    return human_slot(details.get("date", ""), details.get("time"), today) if details.get("date") else ""


def rescheduled(result: dict, today: dt.date) -> str:
    when = _details_slot(result, today)
    moved = f"Done! Your tour is now on {when}." if when else f"Done! {result.get('message', '')}".strip()
    previous = f" (it replaces {result['previous_booking_id']})" if result.get("previous_booking_id") else ""
    return f"{moved} Your new booking reference is {result.get('booking_id')}{previous}."


def cancelled(result: dict, tour: dict | None, today: dt.date, offer_new: bool = True) -> str:
    """The cancellation (policy.COMPLETED reads "tour T-... has been cancelled" back)."""
    when = f" on {human_slot(str(tour['date']), tour.get('time'), today)}" if tour and tour.get("date") else ""
    text = f"Your tour {result.get('booking_id')}{when} has been cancelled."
    offer = " If you'd like to come another time, just let me know and I'll book a new tour." if offer_new else ""
    return text + offer


def options(slots: list[dict], today: dt.date, question: str = "Which time would you like?") -> str:
    """Exact start times a tool offered when it was given only a part of the day."""
    return f"These times are open:\n{numbered(slot_lines(slots, today))}\n{question}"


def no_bookings() -> str:
    return "I couldn't find any upcoming tours under your contact. Would you like to book one?"


def which_tour(tours: list[dict], action: str, today: dt.date) -> str:
    verb = "cancel" if action == "cancel" else "move"
    return f"Which tour would you like to {verb}?\n" + numbered([tour_line(t, today) for t in tours])


def manage_error(result: dict, action: str, today: dt.date) -> str:
    message = str(result.get("message") or "Sorry, I couldn't change that booking.").strip()
    alternatives = result.get("alternatives") or []
    if alternatives and action == "reschedule":  # the new slot is full, closed...: offer the open ones
        return f"{message} These slots are open:\n{numbered(slot_lines(alternatives, today))}\nWould one of these work?"
    tours = [t for t in result.get("your_bookings") or [] if isinstance(t, dict) and t.get("booking_id")]
    if tours:
        listed = numbered([tour_line(t, today) for t in tours])
        verb = "cancel" if action == "cancel" else "move"
        return f"{message} These are your upcoming tours:\n{listed}\nWhich one would you like to {verb}?"
    return f"{message} Would you like to book a new tour instead?"


def moving(tour: dict, today: dt.date) -> str:
    return f"Sure, let's move your tour on {human_slot(tour['date'], tour.get('time'), today)}."


def ask_new_slot(tour: dict | None, today: dt.date) -> str:
    current = f" from {human_slot(tour['date'], tour.get('time'), today)}" if tour and tour.get("date") else ""
    return f"What day and time would you like to move your tour{current} to?"


def _call_when(best: str, due: str, today: dt.date) -> str:
    """'on Monday 23 November in the morning' from the tool's best time and due date."""
    day = human_date(due, today) if due else ""
    on_day = f"on {day} " if day else ""
    if best.lower() in PARTS_OF_DAY:
        return f"{on_day}in the {best.lower()}"
    if re.fullmatch(r"\d{1,2}:\d{2}", best):
        return f"{on_day}at {best}"
    if best.lower() in ("", "anytime", "any time"):
        return on_day.strip() or "as soon as they can"
    return f"{best} ({day})" if day else best


def callback_done(result: dict, today: dt.date) -> str:
    details = result.get("details") or {}
    who = str(details.get("parent_name") or "").split()
    when = _call_when(str(details.get("best_time_to_call") or ""), str(details.get("due_date") or ""), today)
    topic = f" about {details['topic']}" if details.get("topic") else ""
    phone = f" on {human_phone(str(details['parent_phone']))}" if details.get("parent_phone") else ""
    return (
        f"Thanks{_name_part(who[0] if who else '')}! I've asked our admissions team to call you{phone} {when}{topic}. "
        f"Your reference is {result.get('callback_id')}."
    )


def ask_callback(missing: list[str], first: bool) -> str:
    wants = {
        "parent_name": "your name",
        "parent_phone": "the number to call",
        "best_time_to_call": "a good time to call",
    }
    items = [wants[f] for f in ("parent_name", "parent_phone", "best_time_to_call") if f in missing]
    listed = items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" and {items[-1]}"
    opening = "I'll gladly arrange a call back from our admissions team." if first else "Thank you."
    return f"{opening} Could you tell me {listed}?"


def _who_comes(details: dict) -> str:
    child = str(details.get("child_name") or "your child")
    age = f" ({details['child_age']})" if details.get("child_age") not in (None, "") else ""
    return f"{child}{age}"


def _reach(details: dict) -> str:
    ways = [human_phone(str(details["parent_phone"]))] if details.get("parent_phone") else []
    ways += [str(details["parent_email"])] if details.get("parent_email") else []
    name = str(details.get("parent_name") or "")
    return f"{name} on {' / '.join(ways)}" if name and ways else name or " / ".join(ways)


def read_back_booking(result: dict, today: dt.date) -> str:
    """Everything that will be booked, before it is (the parent's "yes" books it)."""
    details = result.get("read_back") or {}
    when = human_slot(details.get("date", ""), details.get("time"), today)
    place = f" at {details['school']}" if details.get("school") else ""
    reach = _reach(details)
    contact = f" We'll send the confirmation to {reach}." if reach else ""
    return (f"Just to check before I book: a campus tour for {_who_comes(details)} on {when}{place}.{contact} "
            "Shall I book it?")


def read_back_move(result: dict, today: dt.date) -> str:
    old, new = result.get("from") or {}, result.get("to") or {}
    was = human_slot(old.get("date", ""), old.get("time"), today)
    will = human_slot(new.get("date", ""), new.get("time"), today)
    child = f"{old['child_name']}'s" if old.get("child_name") else "your"
    return (f"Just to check: I'll move {child} tour {result.get('booking_id')} from {was} to {will}. "
            "Shall I go ahead and move it?")


def read_back_cancel(result: dict, today: dt.date) -> str:
    tour = result.get("tour") or {}
    when = human_slot(tour.get("date", ""), tour.get("time"), today)
    child = f"{tour['child_name']}'s" if tour.get("child_name") else "your"
    return (f"Just to check: I'll cancel {child} tour {result.get('booking_id')} on {when}. "
            "Shall I go ahead and cancel it?")


def unconfirmed(read_back_reply: str) -> str:
    """The read-back again, for a parent who says thanks or goodbye before answering it."""
    start = read_back_reply.find("Just to check")
    if start < 0:
        return ""
    return f"Before you go: I haven't done this yet. {read_back_reply[start:]}"


def noted_details(new: dict) -> str:
    """"Thanks, Priya: I've noted Ethan (5) and +65 9876 5432." for the details this message gave."""
    noted = []
    if new.get("child_name"):
        age = f" ({new['child_age']})" if new.get("child_age") not in (None, "") else ""
        noted.append(f"{new['child_name']}{age}")
    elif new.get("child_age") not in (None, ""):
        noted.append(f"the age ({new['child_age']})")
    noted += [human_phone(str(new["parent_phone"]))] if new.get("parent_phone") else []
    noted += [str(new["parent_email"])] if new.get("parent_email") else []
    first = str(new.get("parent_name") or "").split(" ")[0]
    if not noted:
        return f"Thanks, {first}." if first else ""
    listed = noted[0] if len(noted) == 1 else ", ".join(noted[:-1]) + f" and {noted[-1]}"
    return f"Thanks{_name_part(first)}: I've noted {listed}."


def nothing_booked() -> str:
    return "No problem: I hadn't booked it yet, so nothing is booked and there's nothing to cancel."


def what_to_change() -> str:
    return "No problem, nothing is changed. What would you like to change?"
