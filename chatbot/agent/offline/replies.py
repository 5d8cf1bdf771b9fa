"""What the concierge says: short, warm, and only facts that came from the prompt or a tool result.

Every sentence is a gettext message with named placeholders, rendered in the
language active at the call (the policy activates the parent's, see compose.py);
the catalogues are in locale/. Every date is written with its weekday
("Wednesday 25 November at 09:00", chatbot.dates). Slot and tour choices are
numbered lists ("1. ...").

A function that asks the parent something or offers a choice also declares it, typed, to the reply being
written (`recording`): the reply's dialogue state (`chatbot.agent.dialogue`) is that declaration, never a reading
of the words afterwards.
"""

import contextlib
import contextvars
import datetime as dt
import re
from collections.abc import Iterator

import phonenumbers
from django.utils import formats
from django.utils.translation import get_language, gettext_lazy, ngettext, pgettext, pgettext_lazy
from django.utils.translation import gettext as _

from bookings.callbacks import OUTSIDE_CALLING_HOURS
from bookings.intake import read_window
from bookings.models import said_names, split_names
from chatbot.agent.dialogue import Declared
from chatbot.agent.offline.lexicon import ENGLISH, address
from chatbot.agent.offline.when import PARTS_OF_DAY
from chatbot.dates import human_date, human_slot
from chatbot.faq import asked_nothing

MAX_LISTED = 6
CAPABILITIES = gettext_lazy(
    "I can book a campus tour, move or cancel one, arrange a call back from our admissions team, "
    "or answer questions about the school."
)
FIELD_LABELS = {
    "parent_name": gettext_lazy("your name"),
    "parent_phone": gettext_lazy("your phone number"),
    "parent_email": gettext_lazy("your e-mail address"),
    "child_name": gettext_lazy("your child's name"),
    "child_age": gettext_lazy("your child's age"),
    "preferred_date": gettext_lazy("the date"),
    "preferred_time": gettext_lazy("the time"),
    "special_requirements": gettext_lazy("the special requirements"),
    "preferred_name": gettext_lazy("the name I call you"),
}
PARTS = {
    "morning": pgettext_lazy("when", "in the morning"),
    "afternoon": pgettext_lazy("when", "in the afternoon"),
    "evening": pgettext_lazy("when", "in the evening"),
}
PRONOUNS: dict[str, str] = ENGLISH["pronouns"]
NO_SPACE_LANGUAGES = ("zh-hans",)  # sentences follow each other without a space

_declared: contextvars.ContextVar[Declared | None] = contextvars.ContextVar("declared", default=None)


@contextlib.contextmanager
def recording() -> Iterator[Declared]:
    """Collect what the replies written inside the block ask for and offer."""
    declared = Declared()
    token = _declared.set(declared)
    try:
        yield declared
    finally:
        _declared.reset(token)


def _ask(*asks: str, ages_of: list[str] | None = None) -> None:
    declared = _declared.get()
    if declared is not None:
        declared.asked.extend(a for a in asks if a not in declared.asked)
        declared.ages_of.extend(ages_of or [])


def _tell(note: str) -> None:
    """A note a conversation hears once (dialogue.TOLD), said in this reply."""
    declared = _declared.get()
    if declared is not None and note not in declared.told:
        declared.told.append(note)


def _offer(items: list[dict]) -> None:
    """The slots (or tours: with "booking_id") a reply lists, in the order listed."""
    declared = _declared.get()
    if declared is not None:
        declared.options = [{k: item.get(k) for k in ("date", "time", "booking_id") if item.get(k)}
                            for item in items[:MAX_LISTED] if item.get("date")]


def about(task: str) -> None:
    """The task the reply's questions belong to (`dialogue.TASKS`)."""
    declared = _declared.get()
    if declared is not None and not declared.about:
        declared.about = task


def concerning(reference: str) -> None:
    """The parent's tour the reply is about (a move or cancellation in progress)."""
    declared = _declared.get()
    if declared is not None and reference:
        declared.subject = reference


def join(parts: list[str]) -> str:
    """Sentences (or replies' parts) one after the other, as the active language writes them."""
    glue = "" if get_language() in NO_SPACE_LANGUAGES else " "
    return glue.join(str(p) for p in parts if p)


def _either(items: list[str]) -> str:
    """'a or b or c' in the active language."""
    text = str(items[0])
    for item in items[1:]:
        text = pgettext("a choice", "%(first)s or %(second)s") % {"first": text, "second": item}
    return text


def _listed(items: list[str]) -> str:
    """'a, b and c' in the active language."""
    return said_names([str(i) for i in items])


def _part(part: str) -> str:
    return str(PARTS.get(part.lower(), part))


def human_phone(phone: str) -> str:
    """'+65 9123 4567' for '+6591234567' (as given when it is not a number phonenumbers can read)."""
    try:
        number = phonenumbers.parse(phone, None)
        return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
    except phonenumbers.NumberParseException:
        return phone


def hello(name: str = "") -> str:
    return _("Hi %(name)s!") % {"name": name} if name else _("Hello!")


def welcome(school: str, name: str, returning: bool, tours: list[dict], today: dt.date) -> str:
    """The answer to a bare greeting."""
    if name and returning:
        opening = _("Hi %(name)s, welcome back!") % {"name": name}
    elif name and school:
        opening = _("Hi %(name)s, welcome to %(school)s!") % {"name": name, "school": school}
    elif name:
        opening = _("Hi %(name)s, welcome!") % {"name": name}
    elif school:
        opening = _("Hello, and welcome to %(school)s!") % {"school": school}
    else:
        opening = _("Hello, and welcome!")
    upcoming = tours_summary(tours, today) if tours else ""
    return join([opening, upcoming, CAPABILITIES, _("How can I help?")])


def refuse_injection() -> str:
    return _(
        "Sorry, I can't do that. I can only help with your own tour bookings, call backs and questions "
        "about the school."
    )


def refuse_offtopic(school: str, short: bool = False) -> str:
    if short:
        return _("I'm afraid I can't help with anything unrelated to the school.")
    if school:
        refusal = _("Sorry, I can't help with that: I'm the tour concierge of %(school)s.") % {"school": school}
    else:
        refusal = _("Sorry, I can't help with that: I'm the school's tour concierge.")
    return join([refusal, CAPABILITIES])


def not_caught() -> str:
    return str(_("Sorry, I didn't quite catch that."))


def not_understood() -> str:
    return join([not_caught(), CAPABILITIES, _("What would you like to do?")])


def help_text() -> str:
    return join([CAPABILITIES, _("What would you like to do?")])


def thanks(name: str) -> str:
    if name:
        return _("You're welcome, %(name)s! Is there anything else I can help with?") % {"name": name}
    return _("You're welcome! Is there anything else I can help with?")


def bye(name: str, tours: list[dict], today: dt.date) -> str:
    if tours:
        tour = tours[0]
        values = {"name": name, "when": human_slot(str(tour.get("date") or ""), tour.get("time"), today)}
        if name:
            return _("Goodbye, %(name)s! We look forward to seeing you on %(when)s.") % values
        return _("Goodbye! We look forward to seeing you on %(when)s.") % values
    if name:
        return _("Goodbye, %(name)s, and have a lovely day!") % {"name": name}
    return _("Goodbye, and have a lovely day!")


def noted(name: str) -> str:
    if name:
        return _("Thank you, %(name)s, I've noted that. How can I help you today?") % {"name": name}
    return _("Thank you, I've noted that. How can I help you today?")


def anything_else() -> str:
    return _("Great! Is there anything else I can help with?")


def no_problem() -> str:
    return _("No problem. Is there anything else I can help with?")


def kept_booking() -> str:
    return _("No problem, I won't cancel anything.")


def kept_booking_more() -> str:
    return join([kept_booking(), _("Is there anything else I can help with?")])


NOT_SURE = gettext_lazy("I'm not sure about that one: I don't have that information, and I'd rather not guess.")
CALLBACK_OFFER = gettext_lazy("Would you like someone from our admissions team to call you back about it?")


def _not_sure_about(questions: list[str]) -> str:
    asked = pgettext("questions quoted together", " and ").join(
        pgettext("a quoted question", '"%(question)s"') % {"question": q.rstrip(" ?.!？。")} for q in questions)
    return _("As for %(questions)s, I'm not sure: I don't have that information, and I'd rather not guess.") % {
        "questions": asked}


LANGUAGE_NAMES = {"en": gettext_lazy("English"), "zh-hans": gettext_lazy("Chinese"), "ms": gettext_lazy("Malay"),
                  "ta": gettext_lazy("Tamil")}  # settings.LANGUAGES, named in the reply's language


def _in_language(result: dict) -> str:
    """"(We have this answer in English only.)" when the FAQ has no version in the language asked in."""
    language = LANGUAGE_NAMES.get(str(result.get("answer_language") or ""))
    if not language:
        return ""
    _tell("answer_language")
    return _("(We have this answer in %(language)s only.)") % {"language": language}


def faq_answer(result: dict, offer_callback: bool = False, say_language: bool = True) -> str:
    """A get_faq_answer success: its answer, or for a message that asked several things each answer found,
    then an honest "not sure" about the parts the FAQ has no confident answer to (`unanswered`). An answer
    not in the language asked in says which language it is in (unless the reply said so already:
    `say_language`)."""
    note = _in_language(result) if say_language else ""
    answers = [str(a.get("answer") or "").strip() for a in result.get("answers") or [] if isinstance(a, dict)]
    if not answers:
        return " ".join(part for part in (note, str(result.get("answer") or "").strip()) if part)
    answers.insert(0, note)
    unanswered = [str(q).strip() for q in result.get("unanswered") or [] if str(q).strip()]
    if unanswered:
        answers.append(join([_not_sure_about(unanswered), _callback_offer() if offer_callback else ""]))
    return join(answers)


YES_OR_NO = gettext_lazy("whether that's a yes or a no")
WHICH_OPTION = gettext_lazy("which of the options you'd like")
UNCLEAR = {  # what a reply asked for, as "Sorry, I still don't have ..." names it
    **{ask: FIELD_LABELS[ask] for ask in ("parent_name", "parent_phone", "parent_email", "child_name", "child_age")},
    "when": gettext_lazy("the day and time you'd like"),
    "choice": WHICH_OPTION,
    "take_soonest": WHICH_OPTION,
    "call_time": gettext_lazy("a good time to call"),
    "which_tour": gettext_lazy("which tour you mean"),
    **dict.fromkeys(("read_back", "offer_book", "offer_waitlist", "seat_offer", "move_or_another", "family_again"),
                    YES_OR_NO),
}


def still_unclear(asked: list[str], offered_before: bool) -> str:
    """The reply at the second miss on the same question: what is still unclear, and a person offered instead (a
    call back from the admissions team), rather than the same question a third time. When the last reply made
    that offer already, a shorter reminder of both, so no reply is sent twice in a row."""
    missing = list(dict.fromkeys(str(UNCLEAR[a]) for a in asked if a in UNCLEAR))
    if offered_before:
        _ask("offer_callback")
        if missing:
            return _("No rush: send me %(what)s whenever you're ready, or say yes and our admissions team will "
                     "call you back.") % {"what": _listed(missing)}
        return str(_("No rush: tell me whenever you're ready, or say yes and our admissions team will call you back."))
    if missing:
        lead = _("Sorry, I still don't have %(what)s.") % {"what": _listed(missing)}
    else:
        lead = _("Sorry, I don't seem to be getting this right.")
    return join([lead, _offer_person()])


def _offer_person() -> str:
    _ask("offer_callback")
    return str(_("Would you like someone from our admissions team to call you back instead?"))


def faq_replies(results: list[dict], offer_callback: bool, language_told: bool = False) -> list[str]:
    """What the turn's get_faq_answer results add to the reply, each: its answer, an honest "not sure" when the
    FAQ has no confident answer, or nothing when the message asked the FAQ nothing (`unanswered` empty: "is that
    ok?" with a booking detail, which the rest of the reply handles). The language an answer is only available
    in is said once a conversation (`language_told`: an earlier reply said it)."""
    texts, said_language = [], language_told
    for result in results:
        if result.get("status") == "success":
            texts.append(faq_answer(result, say_language=not said_language) or faq_unknown(offer_callback))
            said_language = said_language or bool(result.get("answer_language"))
        elif not asked_nothing(result):
            texts.append(faq_unknown(offer_callback))
    return texts


def faq_unknown(offer_callback: bool) -> str:
    """A get_faq_answer no_match (nothing found, or nothing found with confidence)."""
    return join([NOT_SURE, _callback_offer()]) if offer_callback else str(NOT_SURE)


def _callback_offer() -> str:
    _ask("offer_callback")
    return str(CALLBACK_OFFER)


def corrected(result: dict, today: dt.date) -> str:
    """Acknowledge an update_context result: only what it changed."""
    if result.get("status") == "not_changed" and not result.get("use"):
        return ""  # it was so already: nothing to say about it
    if result.get("status") != "updated":
        return rule_message(result, _("Sorry, I couldn't update that."), today)
    field = str(result.get("field") or "")
    if field in ("preferred_date", "preferred_time"):  # never a booked tour's (update_context moves none): the day or
        return ""  # time of the tour still to book, which the slots offered or the read-back say; nothing was moved
    value = result.get("new_value")
    if field == "parent_phone" and value:  # "+65 9123 4567", as the read-back writes it
        value = human_phone(str(value))
    values = {"field": FIELD_LABELS.get(field, _("that")), "value": value, "booking": result.get("booking_updated")}
    if values["booking"]:
        return _("Thanks, I've updated %(field)s to %(value)s on booking %(booking)s.") % values
    return _("Thanks, I've updated %(field)s to %(value)s.") % values


def numbered(lines: list[str]) -> str:
    return "\n".join(f"{index}. {line}" for index, line in enumerate(lines, 1))


def listing(intro: str, lines: list[str], question: str = "") -> str:
    """The intro, the numbered lines, then the question, each on its own line."""
    return "\n".join(filter(None, [intro, numbered(lines), question]))


def slot_lines(slots: list[dict], today: dt.date) -> list[str]:
    return [human_slot(s["date"], s.get("time"), today) for s in slots[:MAX_LISTED] if s.get("date")]


def tour_line(tour: dict, today: dt.date) -> str:
    values = {"when": human_slot(str(tour.get("date") or ""), tour.get("time"), today),
              "child": _names_said(tour.get("child_name")), "reference": tour.get("booking_id")}
    if values["child"]:
        return pgettext("a listed tour", "%(when)s for %(child)s (%(reference)s)") % values
    return pgettext("a listed tour", "%(when)s (%(reference)s)") % values


def tours_summary(tours: list[dict], today: dt.date) -> str:
    if not tours:
        return no_bookings()
    _offer(tours)
    if len(tours) == 1:
        return _("Your tour is on %(tour)s.") % {"tour": tour_line(tours[0], today)}
    return listing(_("Your upcoming tours:"), [tour_line(t, today) for t in tours])


def thanks_for_telling() -> str:
    """To a parent on the way to the tour, or late for it (nothing is sent to staff: nothing more is claimed)."""
    return _("Thanks for letting us know.")


def nothing_changed() -> str:
    """Before the tours said again to a parent who asks again whether they still stand."""
    return _("Yes, nothing has changed.")


def window(args: dict, today: dt.date) -> str:
    """'on Thursday 26 November in the afternoon' for a check_availability call ('' when it gave none)."""
    start, end = args.get("date_range_start"), args.get("date_range_end")
    pieces = []
    if start and (not end or end == start):
        pieces.append(pgettext("when", "on %(date)s") % {"date": human_date(start, today)})
    elif start and end:
        pieces.append(pgettext("when", "between %(start)s and %(end)s") % {
            "start": human_date(start, today), "end": human_date(end, today)})
    times = args.get("preferred_times") or []
    if times:
        parts = [t for t in times if ":" not in t]
        asked_window = next(filter(None, map(read_window, times)), None)
        if parts:
            pieces.append(_either([_part(p) for p in parts]))
        elif asked_window:
            pieces.append(_window_words(*asked_window))
        else:
            pieces.append(pgettext("when", "at %(time)s") % {"time": _either(times)})
    return pgettext("when: a day, then a time", "%(day)s %(time)s") % {
        "day": pieces[0], "time": pieces[1]} if len(pieces) == 2 else "".join(pieces)


def _window_words(after: str | None, before: str | None) -> str:
    """'after 10:00', 'before 12:00', 'between 10:00 and 12:00'."""
    if after and before:
        return pgettext("when", "between %(start)s and %(end)s") % {"start": after, "end": before}
    if after:
        return pgettext("when", "after %(time)s") % {"time": after}
    return pgettext("when", "before %(time)s") % {"time": before}


def _open_slots(when: str) -> str:
    if when:
        return _("Here are the open tour slots %(when)s:") % {"when": when}
    return _("Here are the open tour slots:")


def _no_slots(when: str) -> str:
    if when:
        return _("There are no open tour slots %(when)s.") % {"when": when}
    return _("There are no open tour slots.")


def _which_one(purpose: str) -> str:
    _ask("choice")
    return _("Which one would you like instead?") if purpose == "instead" else _("Which one would you like?")


def availability(result: dict, args: dict, today: dt.date, purpose: str = "") -> str:
    """Offer what check_availability found, or say plainly that nothing fits (`purpose` "instead": a move)."""
    status = result.get("status")
    slots = result.get("available_slots") or []
    question = _which_one(purpose)
    when = window(args, today)
    if status == "success" and slots:
        timed = any(":" in str(t) for t in args.get("preferred_times") or [])
        if timed and not args.get("date_range_start") and len({s.get("date") for s in slots}) > 1:  # no day
            _ask("take_soonest")
            question = _("The soonest is %(slot)s: shall I take that one, or which would you like?") % {
                "slot": slot_lines(slots, today)[0]}
        _offer(slots)
        return listing(_open_slots(when), slot_lines(slots, today), question)
    _ask("when")
    if status == "success":
        if when:
            return _("I'm sorry, there are no open tour slots %(when)s. Would another day suit you?") % {"when": when}
        return _("I'm sorry, there are no open tour slots. Would another day suit you?")
    # A search that found nothing says so in English only; elsewhere the reply's own words say it.
    english = get_language().startswith("en")
    message = rule_message(result, _no_slots(when), today) if english or result.get("template") else _no_slots(when)
    alternatives = result.get("alternatives") or []
    if alternatives:
        _offer(alternatives)
        around = any(str(a.get("date")) < str(args.get("date_range_start") or "") for a in alternatives)  # a day before
        intro = _("These slots are open:") if around else _("These are the next open slots:")
        return listing(join([message, intro]), slot_lines(alternatives, today), question)
    return join([message, _("Is there another day that would suit you?")])


def ambiguous(slots: list[dict], today: dt.date) -> str:
    _offer(slots)
    _ask("choice")
    return listing(_("I have more than one slot that fits:"), slot_lines(slots, today), _("Which one would you like?"))


def bad_choice(listed: list[dict]) -> str:
    """The options listed before, still open: the parent picked a number beyond them."""
    _offer(listed)
    _ask("choice")
    count = len(listed)
    return ngettext("Sorry, I only listed %(count)d option. Which number would you like?",
                    "Sorry, I only listed %(count)d options. Which number would you like?", count) % {"count": count}


def _child(relation: str, child_name: str) -> str:
    """'Mia', 'your son', 'your daughter' or 'your child'."""
    if child_name:
        return child_name
    if relation == "son":
        return _("your son")
    if relation == "daughter":
        return _("your daughter")
    return _("your child")


def _how_old(relation: str, child_name: str) -> str:
    pronoun = PRONOUNS.get(relation, "they")
    if child_name:
        return _("How old is %(child)s?") % {"child": child_name}
    if pronoun == "he":
        return _("How old is he?")
    if pronoun == "she":
        return _("How old is she?")
    return _("How old are they?")


def _name_and_age(relation: str, child_name: str) -> str:
    pronoun = PRONOUNS.get(relation, "they")
    child = _child(relation, child_name)
    if pronoun == "he":
        return _("What's %(child)s's name, and how old is he?") % {"child": child}
    if pronoun == "she":
        return _("What's %(child)s's name, and how old is she?") % {"child": child}
    return _("What's %(child)s's name, and how old are they?") % {"child": child}


def is_your_child(name: str, relation: str) -> str:
    """"Is Mira your daughter?": a name the parent said without saying whose it is."""
    _ask("child_is")
    if relation == "son":
        return _("Is %(name)s your son?") % {"name": name}
    if relation == "daughter":
        return _("Is %(name)s your daughter?") % {"name": name}
    return _("Is %(name)s your child?") % {"name": name}


def ask_for(missing: list[str], relation: str = "", child_name: str = "") -> str:
    """Ask for (at most) the next two missing details, child first, in plain words."""
    order = ("child_name", "child_age", "parent_name", "parent_phone")
    wanted = tuple([f for f in order if f in missing][:2])
    child = _child(relation, child_name)
    name_q = _("What's %(child)s's name?") % {"child": child}
    your_name = _("And may I have your name?")
    phone = _("And what's the best phone number to reach you on?")
    questions = {
        ("child_name", "child_age"): lambda: _name_and_age(relation, child_name),
        ("child_name",): lambda: name_q,
        ("child_age",): lambda: _how_old(relation, child_name),
        ("parent_name", "parent_phone"): lambda: _("Could I have your name and a phone number we can reach you on?"),
        ("parent_name",): lambda: _("May I have your name?"),  # asked alone: no "And"
        ("parent_phone",): lambda: _("What's the best phone number to reach you on?"),
        ("child_age", "parent_name"): lambda: join([_how_old(relation, child_name), your_name]),
        ("child_age", "parent_phone"): lambda: join([_how_old(relation, child_name), phone]),
        ("child_name", "parent_name"): lambda: join([name_q, your_name]),
        ("child_name", "parent_phone"): lambda: join([name_q, phone]),
    }
    question = questions.get(wanted)
    if question:
        _ask(*wanted, ages_of=[child_name] if "child_age" in wanted and child_name else None)
    return question() if question else ""


def also(question: str) -> str:
    """A question after a list of slots: 'Also: what's Mia's name?'."""
    return _("Also: %(question)s") % {"question": question[0].lower() + question[1:]} if question else ""


def ask_family(children: list[dict], expected: int, missing: list[str]) -> str:
    """Ask about the children of a family booking, one question, naming the child it is about: "What are their
    names, and how old are they?", "And what's the other child's name?", "And how old is Mia?". Then, if
    missing, one of the parent's details."""
    named = [str(c["name"]) for c in children if c.get("name")]
    unnamed = max(expected, len(children)) - len(named)
    ageless = [str(c["name"]) for c in children if c.get("name") and c.get("age") in (None, "")]
    if unnamed and not named:
        ages_known = len(children) >= expected and all(c.get("age") not in (None, "") for c in children)
        question = _("What are their names?") if ages_known else _("What are their names, and how old are they?")
        _ask("child_name", *([] if ages_known else ["child_age"]))
    elif unnamed:
        _ask("child_name")
        question = (_("And what's the other child's name?") if unnamed == 1
                    else _("And the names of the other %(count)d?") % {"count": unnamed})
    elif ageless:
        _ask("child_age", ages_of=ageless)
        question = (_("And how old is %(child)s?") if len(ageless) == 1 else _("How old are %(child)s?")) % {
            "child": join_names(ageless)}
    else:
        return ask_for([m for m in missing if m not in ("child_name", "child_age")])
    parent = {"parent_name": _("And may I have your name?"),
              "parent_phone": _("And what's the best phone number to reach you on?")}
    detail = next((m for m in ("parent_name", "parent_phone") if m in missing), "")
    if detail:
        _ask(detail)
    return join([question, parent[detail] if detail else ""])


def family_again(children: tuple[dict, ...]) -> str:
    """A returning family: offer the children the school knows ("both of them again?")."""
    values = {"names": join_names([str(c.get("name")) for c in children]), "count": len(children)}
    _ask("family_again")
    if len(children) == 2:
        return _("Is the tour for %(names)s again (both of them), or for someone else?") % values
    return _("Is the tour for %(names)s again (all %(count)d of them), or for someone else?") % values


def ask_when() -> str:
    _ask("when")
    return _("Which day and time would suit you for the tour?")


def start_booking(relation: str, child_name: str, another: bool) -> str:
    child = _child(relation, child_name)
    if relation or child_name:
        if another:
            return _("I'd be happy to arrange another campus tour for %(child)s!") % {"child": child}
        return _("I'd be happy to arrange a campus tour for %(child)s!") % {"child": child}
    return _("I'd be happy to arrange another campus tour!") if another else _("I'd be happy to arrange a campus tour!")


def booking_confirmed(result: dict, today: dt.date) -> str:
    details = result.get("confirmation_details") or {}
    values = {
        "child": _names_said(details.get("child_name")) or _("your child"),
        "when": human_slot(details.get("date", ""), details.get("time"), today),
        "minutes": details.get("duration_minutes"),
        "school": details.get("school"),
        "address": details.get("address"),
        "reference": result.get("booking_id"),
        "event": details.get("event"),
    }
    if values["event"]:
        booked = _("You're all set! %(child)s's place at %(event)s is booked for %(when)s") % values
    else:
        booked = _("You're all set! %(child)s's campus tour is booked for %(when)s") % values
    if values["minutes"]:
        booked += pgettext("a tour's length", " (%(minutes)s minutes)") % values
    if values["school"]:
        booked += pgettext("where the tour is", " at %(school)s") % values
    if values["address"]:
        booked += pgettext("the school's address", ", %(address)s") % values
    return join([booked + pgettext("end of a sentence", "."),
                 _("Your booking reference is %(reference)s.") % values])


def open_days(events: list[dict], today: dt.date) -> str:
    """The open days as a numbered list (read back like slots when the parent picks one)."""
    lines = []
    for event in events[:MAX_LISTED]:
        values = {"when": human_slot(event["date"], event.get("time"), today),
                  "title": event.get("title") or _("Open day"), "minutes": event.get("duration_minutes"),
                  "left": event.get("seats_left") or 0}
        places = (ngettext("%(left)s place left", "%(left)s places left", values["left"]) % values
                  if values["left"] else _("fully booked"))
        lines.append(_("%(when)s: %(title)s (%(minutes)s minutes, %(places)s)") % {**values, "places": places})
    _offer(events)
    _ask("choice")
    ask = _("Would you like to book a place?") if len(lines) == 1 else _("Which one would you like to book a place at?")
    return listing(_("Our upcoming open days:"), lines, ask)


def no_open_days() -> str:
    _ask("offer_book")
    return join([_("There are no open days planned at the moment."),
                 _("Would you like to book a campus tour instead?")])


def which_open_day() -> str:
    _ask("choice")
    return _("Which one would you like to come to?")


def booking_pending(date: str, time: str, today: dt.date) -> str:
    return _("%(slot)s it is. Before I can book it, I just need a couple of details.") % {
        "slot": human_slot(date, time, today)}


def _open_alternatives(message: str, alternatives: list[dict], today: dt.date) -> str:
    _offer(alternatives)
    _ask("choice")
    return listing(join([message, _("These slots are open:")]), slot_lines(alternatives, today),
                   _("Would one of these work?"))


def rule_message(result: dict, default: str = "", today: dt.date | None = None) -> str:
    """A tool's message in the parent's language: a booking rule's template (bookings.services.BookingError) filled
    with its params written in that language, or a message without params as the catalogue has it; `default`
    when the result has none."""
    message = str(result.get("message") or "").strip()
    if not message:
        return default
    params, template = result.get("params"), result.get("template")
    if not (params and template) or get_language().startswith("en"):
        return _(message)
    return _(template) % {key: _rule_param(key, value, today) for key, value in params.items()}


def _rule_param(key: str, value, today: dt.date | None) -> str:
    if key == "weekday":
        return formats.date_format(dt.date.fromisoformat(value), "l")
    if key.endswith("date"):
        return human_date(value, today)
    return str(value)


def tool_error(result: dict, today: dt.date) -> str:
    """A book_tour error in plain words, with the alternatives it offered."""
    field = result.get("field")
    message = rule_message(result, _("Sorry, that didn't work."), today)
    if field in ("parent_phone", "parent_email", "preferred_date", "preferred_time"):
        _ask(field if field.startswith("parent") else "when")
    if field == "parent_phone":
        return _("That number doesn't look right — could you check it? (%(problem)s)") % {"problem": message}
    if field == "parent_email":
        return _("That e-mail address doesn't look right — could you check it? (%(problem)s)") % {"problem": message}
    alternatives = result.get("alternatives") or []
    wait = waitlist_offer(result["waitlist"], today) if result.get("waitlist") else ""
    if alternatives:
        return join([_open_alternatives(message, alternatives, today), wait])
    if wait:
        return join([message, wait])
    if field in ("preferred_date", "preferred_time"):
        return join([message, _("Which other day or time would suit you?")])
    return message


def waitlist_offer(full: dict, today: dt.date) -> str:
    """Offer the waitlist of a full tour."""
    _ask("offer_waitlist")
    return _("Or, if %(when)s is the one you want, I can put you on its waitlist and offer you the first seat "
             "that frees up. Shall I put you on its waitlist?") % {
        "when": human_slot(str(full.get("date") or ""), full.get("time"), today)}


def waitlisted(result: dict, today: dt.date) -> str:
    tour = result.get("tour") or {}
    values = {"place": result.get("place_in_line"), "child": tour.get("child_name") or _("your child"),
              "when": human_slot(str(tour.get("date") or ""), tour.get("time"), today),
              "hours": int(result.get("hold_minutes") or 0) // 60, "reference": result.get("waitlist_id")}
    done = _("Done: you're number %(place)s on the waitlist for the tour on %(when)s for %(child)s.") % values
    if values["hours"]:
        held = ngettext("If a seat frees up, I'll message you here and hold it for you for %(hours)s hour.",
                        "If a seat frees up, I'll message you here and hold it for you for %(hours)s hours.",
                        values["hours"]) % values
    else:
        held = _("If a seat frees up, I'll message you here and hold it for you.")
    return join([done, held, _("Your waitlist reference is %(reference)s.") % values])


def ask_waitlist_tour() -> str:
    _ask("when")
    return _("Which day and time would you like to wait for?")


def seat_declined() -> str:
    return join([_("No problem, I've passed the seat on to the next family."),
                 _("Is there anything else I can help with?")])


def _details_slot(result: dict, today: dt.date) -> str:
    details = result.get("confirmation_details") or {}
    return human_slot(details.get("date", ""), details.get("time"), today) if details.get("date") else ""


def move_or_another(result: dict, today: dt.date) -> str:
    """book_tour's has_upcoming_tour: the child already has a tour coming up; move it, or book another as well?"""
    tour = (result.get("your_bookings") or [{}])[0]
    wanted = result.get("requested") or {}
    values = {"child": _names_said(tour.get("child_name")) or _("your child"), "reference": tour.get("booking_id"),
              "when": human_slot(str(tour.get("date") or ""), tour.get("time"), today),
              "new": human_slot(str(wanted.get("date") or ""), wanted.get("time"), today)}
    _ask("move_or_another")
    return _("%(child)s already has a tour on %(when)s (%(reference)s). Shall I move that tour to %(new)s instead, "
             "or book another tour as well?") % values


def rescheduled(result: dict, today: dt.date) -> str:
    when = _details_slot(result, today)
    if when:
        moved = _("Done! Your tour is now on %(when)s.") % {"when": when}
    else:
        moved = join([_("Done!"), str(result.get("message", ""))]).strip()
    return join([moved, _("Your booking reference is %(reference)s, the same as before.")
                 % {"reference": result.get("booking_id")}])


def already_then(result: dict, today: dt.date) -> str:
    """A move to the slot the tour already has: nothing changed, and it says so."""
    return _("Your tour %(reference)s is already on %(when)s, so there is nothing to change.") % {
        "reference": result.get("booking_id"), "when": _details_slot(result, today)}


def cancelled(result: dict, tour: dict | None, today: dt.date, offer_new: bool = True) -> str:
    """The cancellation, with the tour's reference."""
    values = {"reference": result.get("booking_id")}
    if tour and tour.get("date"):
        values["when"] = human_slot(str(tour["date"]), tour.get("time"), today)
        text = _("Your tour %(reference)s on %(when)s has been cancelled.") % values
    else:
        text = _("Your tour %(reference)s has been cancelled.") % values
    offer = _("If you'd like to come another time, just let me know and I'll book a new tour.") if offer_new else ""
    return join([text, offer])


def options(slots: list[dict], today: dt.date) -> str:
    """Exact start times a tool offered when it was given only a part of the day."""
    _offer(slots)
    _ask("choice")
    return listing(_("These times are open:"), slot_lines(slots, today), _("Which time would you like?"))


def no_bookings() -> str:
    """A move or cancellation asked for with no upcoming tour on this contact (perhaps booked from another)."""
    _ask("offer_book")
    return _("I can't find an upcoming tour booked from this chat. If you booked it with another phone number, "
             "please message us from that number; or would you like me to book a new tour?")


def _which_tour_question(action: str) -> str:
    return _("Which tour would you like to cancel?") if action == "cancel" else _("Which tour would you like to move?")


def which_tour(tours: list[dict], action: str, today: dt.date) -> str:
    _offer(tours)
    _ask("which_tour")
    return listing(_which_tour_question(action), [tour_line(t, today) for t in tours])


def manage_error(result: dict, action: str, today: dt.date) -> str:
    if result.get("code") == "no_upcoming_tours":  # nothing to move or cancel
        return no_bookings()
    message = rule_message(result, _("Sorry, I couldn't change that booking."), today)
    alternatives = result.get("alternatives") or []
    if alternatives and action == "reschedule":  # the new slot is full, closed...: offer the open ones
        return _open_alternatives(message, alternatives, today)
    tours = [t for t in result.get("your_bookings") or [] if isinstance(t, dict) and t.get("booking_id")]
    if tours:
        _offer(tours)
        _ask("which_tour")
        question = (_("Which one would you like to cancel?") if action == "cancel"
                    else _("Which one would you like to move?"))
        return listing(join([message, _("These are your upcoming tours:")]), [tour_line(t, today) for t in tours],
                       question)
    _ask("offer_book")
    return join([message, _("Would you like to book a new tour instead?")])


def moving(tour: dict, today: dt.date) -> str:
    return _("Sure, let's move your tour on %(when)s.") % {"when": human_slot(tour["date"], tour.get("time"), today)}


def ask_new_slot(tour: dict | None, today: dt.date) -> str:
    _ask("when")
    if tour and tour.get("date"):
        return _("What day and time would you like to move your tour from %(when)s to?") % {
            "when": human_slot(tour["date"], tour.get("time"), today)}
    return _("What day and time would you like to move your tour to?")


def _call_when(best: str, due: str, today: dt.date) -> str:
    """'on Monday 23 November in the morning' from the tool's best time and due date."""
    day = human_date(due, today) if due else ""
    on_day = pgettext("when", "on %(date)s") % {"date": day} if day else ""
    if best.lower() in PARTS_OF_DAY:
        part = _part(best)
        return pgettext("when: a day, then a time", "%(day)s %(time)s") % {"day": on_day, "time": part} \
            if on_day else part
    if re.fullmatch(r"\d{1,2}:\d{2}", best):
        at = pgettext("when", "at %(time)s") % {"time": best}
        return pgettext("when: a day, then a time", "%(day)s %(time)s") % {"day": on_day, "time": at} \
            if on_day else at
    if best.lower() in ("", "anytime", "any time"):
        return on_day or _("as soon as they can")
    return f"{best} ({day})" if day else best


def _call_window(details: dict, today: dt.date) -> str:
    """'on Monday 30 November between 17:00 and 18:00': the day and window the call back is due, as stored."""
    if not (details.get("due_date") and details.get("window_start") and details.get("window_end")):
        return _call_when(str(details.get("best_time_to_call") or ""), str(details.get("due_date") or ""), today)
    return pgettext("when", "on %(date)s between %(start)s and %(end)s") % {
        "date": human_date(str(details["due_date"]), today), "start": details["window_start"],
        "end": details["window_end"]}


def _moved_because(result: dict, today: dt.date) -> str:
    """Why the call is due at another time than asked ("The school is closed on Saturday."), in the parent's
    language, from the tool's reasons (the new time itself is said with the call back)."""
    reasons = (result.get("moved_from") or {}).get("reasons") or []
    return join([_(str(r["template"])) % {key: _rule_param(key, value, today) for key, value in
                                          (r.get("params") or {}).items()}
                 for r in reasons if isinstance(r, dict) and r.get("template") and r.get("code") != "now_due"])


def callback_done(result: dict, today: dt.date) -> str:
    details = result.get("details") or {}
    values = {
        "name": address(str(details.get("parent_name") or "")),
        "when": _call_window(details, today),
        "topic": details.get("topic"),
        "phone": human_phone(str(details["parent_phone"])) if details.get("parent_phone") else "",
        "reference": result.get("callback_id"),
    }
    thanks = _("Thanks, %(name)s!") % values if values["name"] else _("Thanks!")
    if values["phone"] and values["topic"]:
        asked = _("I've asked our admissions team to call you on %(phone)s %(when)s about %(topic)s.") % values
    elif values["phone"]:
        asked = _("I've asked our admissions team to call you on %(phone)s %(when)s.") % values
    elif values["topic"]:
        asked = _("I've asked our admissions team to call you %(when)s about %(topic)s.") % values
    else:
        asked = _("I've asked our admissions team to call you %(when)s.") % values
    return join([thanks, _moved_because(result, today), asked, _("Your reference is %(reference)s.") % values])


def callback_managed(result: dict, today: dt.date) -> str:
    """What manage_callback did to a call back (moved, cancelled), or what it still needs to know."""
    status, details = result.get("status"), result.get("details") or {}
    values = {"reference": result.get("callback_id"), "when": _call_window(details, today)}
    if status == "success" and result.get("action") == "cancelled":
        return join([_("Done: your call back %(when)s is cancelled, so nobody from admissions will call you "
                       "then.") % values,
                     _("For your records, the cancelled call back's reference is %(reference)s.") % values])
    if status == "success":
        return join([_moved_because(result, today), _("Done: our admissions team will now call you %(when)s.") % values,
                     _("Your reference is %(reference)s, the same as before.") % values])
    if status == "missing_fields" and "new_time" in (result.get("missing") or []):
        _ask("call_time")
        return _("When would be a good time to call you instead?")
    problem = rule_message(result, _("Sorry, I couldn't change that call back."), today) if status == "error" else ""
    open_ones = [c for c in result.get("your_callbacks") or [] if isinstance(c, dict) and c.get("callback_id")]
    if not open_ones:
        _ask("offer_callback")
        return join([problem, _("I couldn't find an open call back under your contact. "
                                "Would you like me to arrange one?")])
    listed = _("Your open call back requests are %(list)s.") % {"list": _listed([
        f"{c['callback_id']} ({human_date(str(c.get('due_date')), today)}, {c.get('window', '')})"
        for c in open_ones])}
    question = _("Which one would you like to cancel?") if result.get("action") == "cancel" else _(
        "Which one would you like to change?")
    return join([problem, listed, question])


def outside_calling_hours(opens: str, closes: str, missing: list[str], first: bool) -> str:
    """The time asked for a call lies outside the school's calling hours: say them and ask for another time, with
    what else is missing (nothing is arranged yet)."""
    hours = _(OUTSIDE_CALLING_HOURS) % {"opens": opens, "closes": closes}
    if missing:
        return join([hours, ask_callback([*missing, "best_time_to_call"], first)])
    _ask("call_time")
    return join([hours, _("When would be a good time to call you instead?")])


def callback_failed() -> str:
    return _("Sorry, I couldn't arrange the call back.")


def ask_callback(missing: list[str], first: bool) -> str:
    wants = {
        "parent_name": _("your name"),
        "parent_phone": _("the number to call"),
        "best_time_to_call": _("a good time to call"),
    }
    items = [wants[f] for f in ("parent_name", "parent_phone", "best_time_to_call") if f in missing]
    _ask(*[{"best_time_to_call": "call_time"}.get(f, f) for f in ("parent_name", "parent_phone", "best_time_to_call")
           if f in missing])
    opening = _("I'll gladly arrange a call back from our admissions team.") if first else _("Thank you.")
    return join([opening, _("Could you tell me %(details)s?") % {"details": _listed(items)}])


def child_labels(children: list) -> list[str]:
    """["Leo (5)", "Mia"] for [{"name": "Leo", "age": 5}, {"name": "Mia"}]."""
    return [pgettext("a child and their age", "%(child)s (%(age)s)") % {"child": c["name"], "age": c["age"]}
            if c.get("age") not in (None, "") else str(c["name"])
            for c in children if isinstance(c, dict) and c.get("name")]


def _names_said(joined: str | None) -> str:
    """A booking's children as the tools write them ("Leo, Mia and Sam"), joined in the active language."""
    return join_names(split_names(joined or ""))


def join_names(names: list[str]) -> str:
    """"Leo", "Leo and Mia", "Leo, Mia and Sam" in the active language."""
    return _listed(names) if names else ""


def _who_comes(details: dict) -> str:
    """Every child on the tour with their age: "Leo (5) and Mia (3)"."""
    labels = child_labels(details.get("children") or [])
    if labels:
        return _listed(labels)
    child = str(details.get("child_name") or _("your child"))
    if details.get("child_age") not in (None, ""):
        return pgettext("a child and their age", "%(child)s (%(age)s)") % {"child": child, "age": details["child_age"]}
    return child


def _reach(details: dict) -> str:
    ways = [human_phone(str(details["parent_phone"]))] if details.get("parent_phone") else []
    ways += [str(details["parent_email"])] if details.get("parent_email") else []
    name = str(details.get("parent_name") or "")
    if name and ways:
        return pgettext("a person and how to reach them", "%(name)s on %(ways)s") % {
            "name": name, "ways": " / ".join(ways)}
    return name or " / ".join(ways)


def read_back_booking(result: dict, today: dt.date) -> str:
    """Everything that will be booked, before it is (the parent's "yes" books it)."""
    details = result.get("read_back") or {}
    values = {"who": _who_comes(details), "when": human_slot(details.get("date", ""), details.get("time"), today),
              "school": details.get("school"), "reach": _reach(details), "event": details.get("event")}
    if values["event"]:
        tour = _("Just to check before I book: a place at %(event)s for %(who)s on %(when)s.") % values
    elif values["school"]:
        tour = _("Just to check before I book: a campus tour for %(who)s on %(when)s at %(school)s.") % values
    else:
        tour = _("Just to check before I book: a campus tour for %(who)s on %(when)s.") % values
    contact = _("The booking will be under %(reach)s.") % values if values["reach"] else ""
    _ask("read_back")
    return join([tour, contact, _("Shall I book it?")])


def read_back_move(result: dict, today: dt.date) -> str:
    old, new = result.get("from") or {}, result.get("to") or {}
    values = {"child": old.get("child_name"), "reference": result.get("booking_id"),
              "was": human_slot(old.get("date", ""), old.get("time"), today),
              "will": human_slot(new.get("date", ""), new.get("time"), today)}
    if values["child"]:
        check = _("Just to check: I'll move %(child)s's tour %(reference)s from %(was)s to %(will)s.") % values
    else:
        check = _("Just to check: I'll move your tour %(reference)s from %(was)s to %(will)s.") % values
    _ask("read_back")
    return join([check, _("Shall I go ahead and move it?")])


def read_back_cancel(result: dict, today: dt.date) -> str:
    tour = result.get("tour") or {}
    values = {"child": tour.get("child_name"), "reference": result.get("booking_id"),
              "when": human_slot(tour.get("date", ""), tour.get("time"), today)}
    if values["child"]:
        check = _("Just to check: I'll cancel %(child)s's tour %(reference)s on %(when)s.") % values
    else:
        check = _("Just to check: I'll cancel your tour %(reference)s on %(when)s.") % values
    _ask("read_back")
    return join([check, _("Shall I go ahead and cancel it?")])


def unconfirmed(read_back: str) -> str:
    """The read-back again (`read_back`: the awaited action read back anew), for a parent who says thanks or
    goodbye before answering it."""
    return join([_("Before you go: I haven't done this yet."), read_back]) if read_back else ""


def noted_details(new: dict, children: list | None = None) -> str:
    """"Thanks, Priya: I've noted Ethan (5) and +65 9876 5432." for the details this message gave (and the
    children it named)."""
    noted = [_who_comes({"children": children})] if child_labels(children or []) else []
    if not noted and new.get("child_name"):
        noted.append(_who_comes({"child_name": new["child_name"], "child_age": new.get("child_age")}))
    elif not noted and new.get("child_age") not in (None, ""):
        noted.append(_("the age (%(age)s)") % {"age": new["child_age"]})
    noted += [human_phone(str(new["parent_phone"]))] if new.get("parent_phone") else []
    noted += [str(new["parent_email"])] if new.get("parent_email") else []
    first = address(str(new.get("parent_name") or ""))
    if not noted:
        return _("Thanks, %(name)s.") % {"name": first} if first else ""
    values = {"name": first, "details": _listed(noted)}
    return _("Thanks, %(name)s: I've noted %(details)s.") % values if first else \
        _("Thanks: I've noted %(details)s.") % values


def nothing_booked() -> str:
    return _("No problem: I hadn't booked it yet, so nothing is booked and there's nothing to cancel.")


def what_to_change() -> str:
    return _("No problem, nothing is changed. What would you like to change?")
