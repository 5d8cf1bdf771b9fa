"""What a parent's message says: intents, facts (names, phone, e-mail, child, age, when) and corrections.

Phone numbers go through phonenumbers and dates through dateparser (when.py);
lexicon.py holds the wording of intents, names and ages. Chinese, Malay and Tamil
words are first put in English by gloss.py (word lists in lexicons/), so the same
reading serves all four languages and mixed messages. Extraction runs on a
masked copy of the text (e-mails, references, phones, dates blanked out) so that
"Tuesday" is never a name and "+65" never an age.
"""

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from functools import lru_cache
from pathlib import Path

import dateparser
import phonenumbers

from chatbot.agent.offline import lexicon as lx
from chatbot.agent.offline.gloss import gloss
from chatbot.agent.offline.when import When, find_when, spans
from chatbot.language_request import asked_language
from crm.identity import InvalidContactDetail, normalise_phone

WHEN_FIELDS = ("preferred_date", "preferred_time")
PEOPLE_FIELDS = ("parent_name", "child_name", "child_age")
HESITATE = re.compile(
    r"\b(?:no|not|nope|nah|don'?t|wait|hold on|actually|instead|change|rather|but|hmm|sorry|(?:what|how) about)\b",
    re.IGNORECASE,
)
# The verb of the action a read-back awaits, said with the yes ("ok, book it", "可以，改吧": yes, change it): part
# of the yes, not a change of mind (glossed, so one list serves every language).
ACTION_VERBS = {
    action: re.compile(rf"\b(?:{'|'.join(verbs)})\b(?:\s+(?:it|that|them|the tour))?", re.IGNORECASE)
    for action, verbs in lx.ENGLISH["action_verbs"].items()
}
DEFAULT_REGION = "SG"
ZONE_TAB = Path("/usr/share/zoneinfo/zone.tab")
SIMILAR_SPELLING = 0.75  # "*Ashby" respells "Ashbey" (0.91), not "Charlotte"
SIMILAR_NAME = 0.6  # "Jon" for "John" (0.86) is a correction; "Ana" for "John" (0.29) is not
MAX_AGE = 18
MAX_ANSWER_WORDS = 6
MAX_HOUR_ANSWER_WORDS = 5  # "ok 11 then can": a bare hour answering the slots shown
CONTACT_FIELDS = frozenset({"parent_name", "parent_phone", "parent_email"})
MAX_NAME_PARTS = 4  # a romanised Chinese name can have four ("Raymond Lim Boon Hock")
LEADING_NAME_ENDS = frozenset({"and", "&", "-", "–", "—", "here"})  # what may follow a name that opens a message


@dataclass
class Hints:
    """What the conversation so far tells the reader about a message."""

    today: dt.date
    now: dt.time
    tour_times: tuple[str, ...] = ()
    region: str = DEFAULT_REGION
    asked: frozenset[str] = frozenset()  # what the previous reply asked for (policy._asked: the dialogue state)
    options: int = 0  # how many numbered choices the parent was just shown
    known: dict = field(default_factory=dict)  # current booking facts, to tell which name a correction fixes
    booked_children: tuple[str, ...] = ()  # the children of the parent's booked tours
    asked_ages_of: tuple[str, ...] = ()  # the children the previous reply asked the age of ("How old is Mia?")
    known_children: tuple[dict, ...] = ()  # the contact's children in the CRM ({"name", "age"?})
    unsure: dict = field(default_factory=dict)  # what the previous reply asked the parent to confirm ("child_is")


@dataclass
class Reading:
    """What one parent message (or a burst of them) says."""

    intents: set[str] = field(default_factory=set)
    questions: list[str] = field(default_factory=list)
    facts: dict = field(default_factory=dict)
    when: When = field(default_factory=When)
    corrections: set[str] = field(default_factory=set)
    booking_refs: list[str] = field(default_factory=list)
    callback_refs: list[str] = field(default_factory=list)  # call backs named by reference ("C-WUC3X6")
    choice: int | None = None  # index into the options shown; -1 for "the last one"
    extreme: str = ""  # "soonest" or "latest": the option picked by when it is ("the soonest", "earliest one");
    # "any" ("whichever", "any time ok") or "either" ("either is fine", "both work": one of two): the soonest
    hour: int | None = None  # "11 then": a bare hour naming one of the options shown
    reason: str = ""
    topic: str = ""
    call_time: str = ""
    relation: str = ""
    correcting: bool = False  # "sorry", "actually", "I meant", "not X"
    children: list[dict] = field(default_factory=list)  # the children this message names, with ages, in order
    child_count: int = 0  # how many children it says come ("twins": 2, "my three kids": 3)
    adds_child: bool = False  # "and her brother Max": one more child, not a new booking or a correction
    said: dict[str, str] = field(default_factory=dict)  # a question in English words -> the parent's own words
    unsure: dict[str, str] = field(default_factory=dict)  # a name said without saying whose: {"child_name": "Mira"}
    child_said: bool = False  # the child's name came with a word that says it is the child's ("son Irfan")
    only: str = ""  # of several children, the one coming: a name, or "younger" / "older" ("only the small one")

    def merge(self, other: "Reading") -> "Reading":
        """This reading with a later message's reading on top (later facts win)."""
        later = other.when
        when = later if later.has_date or later.time else self.when
        earlier = self.when
        if later.time and not later.has_date and earlier.has_date:  # "9 Dec around 3" then "no, 11am": 9 Dec
            when = replace(earlier, time=later.time, part_of_day=later.part_of_day, after=None, before=None,
                           time_phrase=later.time_phrase)
        elif later.has_date and later.is_empty_of_time and not earlier.is_empty_of_time:
            when = replace(later, time=earlier.time, part_of_day=earlier.part_of_day, after=earlier.after,
                           before=earlier.before, time_phrase=earlier.time_phrase)  # "friday around 3?" then
            # "not this friday, next friday the 11th" (or "tue same time can?"): the 11th around 3
        elif not later.has_date and not later.time and (later.after or later.before):  # "after 3": a window that day
            when = replace(when, time=None, part_of_day=later.part_of_day, after=later.after, before=later.before)
        elif later.part_of_day and not later.has_date and not later.time:
            when = replace(when, part_of_day=later.part_of_day)
        only = other.only or self.only
        children = keep_only(merge_children(self.children, other.children), only)
        return Reading(
            intents=self.intents | other.intents,
            questions=self.questions + other.questions,
            facts={**self.facts, **other.facts},
            when=when,
            corrections=self.corrections | other.corrections,
            booking_refs=list(dict.fromkeys(self.booking_refs + other.booking_refs)),
            callback_refs=list(dict.fromkeys(self.callback_refs + other.callback_refs)),
            choice=other.choice if other.choice is not None else self.choice,
            extreme=other.extreme or self.extreme,
            hour=other.hour if other.hour is not None else self.hour,
            reason=other.reason or self.reason,
            topic=other.topic or self.topic,
            call_time=_later_call_time(self, other),
            relation=other.relation or self.relation,
            correcting=self.correcting or other.correcting,
            children=children,
            child_count=len(children) if only else other.child_count or self.child_count,
            adds_child=self.adds_child or other.adds_child,
            said={**self.said, **other.said},
            unsure={**self.unsure, **other.unsure},
            child_said=self.child_said or other.child_said,
            only=only,
        )


def _later_call_time(earlier: Reading, later: Reading) -> str:
    """The call time said last; said without a day, on the day said before ("tmrw after 5" then "ok after 5 also
    can", or "12 to 2 then" after "tmr 8pm": tomorrow)."""
    if later.call_time and earlier.call_time and earlier.when.has_date and not later.when.has_date:
        return f"{earlier.when.date_phrase} {later.call_time}"
    return later.call_time or earlier.call_time


def merge_children(children: list[dict], said: list[dict]) -> list[dict]:
    """`children` with what a later message said of children: a child of the same name is updated, a new name
    fills the first unnamed child ("my two boys" then "Sam and Ben") or is one child more; ages said without
    names go, in order, to the children still without an age (an age for every child: to the children in
    order)."""
    merged = [dict(c) for c in children]
    nameless = [c for c in said if not c.get("name")]
    # an age for every child, by place ("the older 9, the younger 6", "5 and 3"): theirs, in order
    every = len(nameless) == len(merged) >= 2 and all(c.get("age") is not None for c in nameless)
    again = iter(merged) if every else None
    for child in said:
        name = str(child.get("name") or "")
        if not name and again is not None:
            target = next(again)
        elif not name:
            target = next((c for c in merged if c.get("age") is None), None)
            if target is None:
                target = {}
                merged.append(target)
        else:
            target = next((c for c in merged if str(c.get("name") or "").lower() == name.lower()), None)
            target = target or next((c for c in merged if not c.get("name")), None)
            if target is None:
                target = {}
                merged.append(target)
        target.update({k: v for k, v in child.items() if v not in (None, "")})
    return merged


def keep_only(children: list[dict], only: str) -> list[dict]:
    """Of several children, the one said to be coming (`Reading.only`): the one of that name, or the youngest or
    the oldest when all ages are known; all of them when it names none of them."""
    if len(children) < 2 or not only:
        return children
    if only in ("younger", "older"):
        if any(c.get("age") is None for c in children):
            return children
        pick = (min if only == "younger" else max)(children, key=lambda c: int(c["age"]))
        return [pick]
    named = [c for c in children if str(c.get("name") or "").lower() == only.lower()]
    return named[:1] or children


@lru_cache(maxsize=64)
def region_for(time_zone: str, phone: str) -> str:
    """The phone region: from the contact's number, else the school's time zone, else SG."""
    if phone:
        try:
            region = phonenumbers.region_code_for_number(phonenumbers.parse(phone, None))
        except phonenumbers.NumberParseException:
            region = None
        if region and region != "ZZ":
            return region
    if time_zone and ZONE_TAB.exists():
        for line in ZONE_TAB.read_text().splitlines():
            columns = line.split("\t")
            if len(columns) >= 3 and columns[2] == time_zone:
                return columns[0]
    return DEFAULT_REGION


def _same_case(word: str, replacement: str) -> str:
    return replacement[0].upper() + replacement[1:] if word[:1].isupper() else replacement


def _mask(text: str, found: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in found:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _is_initial(word: str, first: bool = False) -> bool:
    """"R." anywhere in a name; "R" without its dot only after the name ("Priya R": "I think" is no name); in
    Tamil script, a letter's name with its dot ("எஸ். பிரியா": S. Priya)."""
    latin = r"[A-Z]\." if first else r"[A-Z]\.?"
    return bool(re.fullmatch(f"{latin}|{lx.TAMIL_INITIAL}", word))


def _name_word(word: str) -> bool:
    """Whether a word can be part of a name: not a word the reader knows as something else (a filler, a function
    word, a school year, a yes or a greeting, in any of the four languages), no number, no date or time, no
    verb form."""
    lowered = word.lower().strip("'.")
    # "I'm meeting a friend", "I'm writing about...": a vowel before the "ing" ("Ming", "Ling", "Ching" are names)
    verb = word.islower() and lowered.endswith("ing") and bool(re.search(r"[aeiouy]", lowered[:-3]))
    known = (lx.NOT_NAME_ENDING.search, lx.SCHOOL_WORDS.fullmatch, lx.YES.fullmatch, lx.NO.fullmatch)
    phrase = lx.HAN_WORD.fullmatch(word) and (len(word) > lx.MAX_HAN_NAME  # "先看看别的": a phrase, not a name
                                              or word[0] in lx.HAN_NOT_NAME_START)  # "的那个": a particle first
    return not (lowered in lx.NOT_A_NAME or verb or phrase or any(c.isdigit() for c in word)
                or not any(c.isalpha() for c in word)  # "-", "&": no letters, no name
                or not (word[0].isalpha() or word[0] in "'’")  # "*Ashby-Reid": a correction mark, not a name
                or any(check(lowered) for check in known) or spans(word))


def _clean_name(raw: str, whole: bool = True) -> str:
    """The name words at the start of `raw` ("Jon Tan" of "Jon Tan and my son"), '' if it is no name. Up to
    four words ("Raymond Lim Boon Hock"), or six with "bin"/"binti"/"s/o" between them; an initial only beside a
    name ("R. Priya").
    Not `whole`: a name said by the way, whose further words count only when capitalised ("Sam" of "Sam
    wants to come")."""
    words: list[str] = []
    said = [w.strip("-") for w in raw.split() if w.strip("-")]  # "Divya-னு": not the hyphen before a particle
    whole = whole or _patronymic_name(said) or _name_to_the_end(said)
    for index, word in enumerate(said):
        if not words and word.lower() in lx.TITLES:  # "Mrs Tan": the name, not the title
            continue
        joins = word.lower() in lx.NAME_CONNECTORS and bool(words) or _inner_part(said, index, bool(words))
        if not (joins or _is_initial(word, first=not words) or _name_word(word)):
            break
        if words and _script(word) != _script(words[-1]) and not _is_initial(words[-1]):
            break  # "Wei Ling 打错了" (typed it wrong): a name is written in one script
        if words and not whole and not joins and not word[:1].isupper():
            break
        words.append(word)
    while words and words[-1].lower() in lx.NAME_CONNECTORS:  # "Irfan bin" with no name after it
        words.pop()
    joined = any(w.lower() in lx.NAME_CONNECTORS for w in words[1:])
    words = words[: 6 if joined else MAX_NAME_PARTS]
    if not words or words[0].lower().endswith("'s") or all(_is_initial(w) for w in words):
        return ""  # "S", "K": a letter alone is no name
    if len(words[0].strip(".")) == 1 and not _is_initial(words[0]):
        return ""
    name = " ".join(words)
    if not (name.islower() or name.isupper()):
        return name
    return " ".join(w.lower() if w.lower() in lx.NAME_CONNECTORS else w.title() for w in words)  # "binti" stays


def _name_to_the_end(said: list[str]) -> bool:
    """Whether the words, up to the end of the message, a number or a comma or full stop, are all name words,
    two to MAX_NAME_PARTS of them ("anak sy siti hajar 3 thn", "my daughter mia chen"): one whole name, also
    typed in lower case and said by the way ("my son sam wants to come" goes on past the name: "Sam")."""
    run: list[str] = []
    for word in said:
        if word[:1].isdigit():
            break
        core = word.rstrip(",.;!")
        if not core or not _name_word(core):
            return False
        run.append(core)
        if core != word:
            break
    return 2 <= len(run) <= MAX_NAME_PARTS


def _patronymic_name(said: list[str]) -> bool:
    """Whether the words open with a name joined by "bin"/"binti"/"s/o" to a name ("nur aisyah binti ahmad", typed in
    lower case): one whole name, also when said by the way."""
    joint = next((i for i, w in enumerate(said[:MAX_NAME_PARTS + 1]) if w.lower() in lx.PATRONYMICS), 0)
    return 0 < joint < len(said) - 1 and all(_name_word(w) for w in said[:joint]) and _name_word(said[joint + 1])


def _inner_part(said: list[str], index: int, after_name: bool) -> bool:
    """A short word that is a filler alone but written as a name between two name words ("Tan Ah Kow", "Lim Ah
    Huat": the Hokkien "Ah")."""
    word, rest = said[index], said[index + 1 :]
    return (after_name and len(word) <= 3 and word.istitle() and bool(rest) and rest[0].istitle()
            and _name_word(rest[0]))


def _script(word: str) -> str:
    """"han", "tamil" or "latin": the script a word is written in."""
    return "han" if lx.HAN_WORD.match(word) else "tamil" if re.match(r"[\u0b80-\u0bff]", word) else "latin"


def _name(patterns: list[re.Pattern], text: str, whole: bool = True) -> str:
    for pattern in patterns:
        for match in pattern.finditer(text):
            name = _clean_name(match.group(1), whole)
            if name:
                return name
    return ""


def _name_before(patterns: list[re.Pattern], text: str, any_start: bool = True) -> str:
    """The name right before a cue: the longest run of words up to the cue that is all name (`any_start`), else
    the words before the cue if they all are."""
    for pattern in patterns:
        for match in pattern.finditer(text):
            words = match.group(1).split()
            for start in range(len(words) if any_start else 1):
                name = _clean_name(" ".join(words[start:]))
                if name and len(name.split()) == len(words) - start:
                    return name
    return ""


def _read_phone(written: str, region: str) -> str:
    """A number found in a message as the tools store it (a neighbouring country's too: "6012 3456789" is
    Malaysian, not a Singapore number with extra digits), else as written, for the tool to say what is wrong."""
    try:
        return normalise_phone(written, region)
    except InvalidContactDetail:
        return written.strip()


def _phones(text: str, region: str) -> list[tuple[str, tuple[int, int]]]:
    found = [
        (_read_phone(m.raw_string, region), (m.start, m.end))
        for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.POSSIBLE)
    ]
    if not found:  # number-like but rejected by the library: pass it on so the tool can say what is wrong
        found = [
            (_read_phone(m.group(0), region), m.span())
            for m in lx.PHONE_LIKE.finditer(text)
            if sum(map(str.isdigit, m.group(0))) >= 6
        ]
    return found


def _age(text: str, hints: Hints) -> int | None:
    """The child's age in years: "5", "turning 6 in March" (5 now); number words are digits by now."""
    turning = lx.AGE_TURNING.search(text)
    if turning and 1 < int(turning.group(1)) <= MAX_AGE + 1:
        return int(turning.group(1)) - 1
    for pattern in lx.AGE:
        match = pattern.search(text)
        if match and 0 < int(match.group(1)) <= MAX_AGE:
            return int(match.group(1))
    bare = lx.BARE_NUMBER.match(text)
    if bare and "child_age" in hints.asked and not hints.options and 0 < int(bare.group(1)) <= MAX_AGE:
        return int(bare.group(1))
    return None


def _age_from_birth(phrase: str, today: dt.date) -> int | None:
    """Whole years since a date of birth ("12 May 2021", "03/05/2020"); None if it is no past date."""
    base = dt.datetime.combine(today, dt.time())
    settings = {"PREFER_DATES_FROM": "past", "DATE_ORDER": "DMY", "RELATIVE_BASE": base}
    try:
        born = dateparser.parse(phrase, languages=["en"], settings=settings)
    except (ValueError, OverflowError):
        return None
    if born is None or born.date() >= today:
        return None
    years = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
    return years if 0 <= years <= MAX_AGE else None


def _choice(text: str, hints: Hints) -> int | None:
    if not hints.options:
        return None
    match = lx.NUMBERED.search(text) or lx.BARE_NUMBER.match(text)
    if match:
        number = int(next(g for g in match.groups() if g))
        return number - 1 if 1 <= number <= hints.options else None
    match = lx.ORDINAL.search(text)
    if match:
        word = match.group(1).lower()
        return -1 if word == "last" else lx.ORDINALS[word]
    return None


def _sentences(text: str) -> list[str]:
    """Sentences, with "... fees and do you have a bus?" split into its two questions, but a topic said first
    stays with the question about it ("the bus, is there one to Punggol?", Chinese "校车，有到榜鹅吗")."""
    pieces, start = [], 0
    for found in lx.SENTENCE_BREAK.finditer(text):
        piece = text[start:found.start()]
        if not (found.group(0).startswith(",") and _is_topic(piece)):
            pieces.append(piece)
            start = found.end()
    pieces.append(text[start:])
    return [s.strip(" ,") for s in pieces if s and s.strip(" ,")]


TOPIC_WORDS = 4  # "regarding the school bus"


def _is_topic(piece: str) -> bool:
    """A few words naming something about the school, and nothing else: no date, time or request."""
    words = piece.split()
    return (0 < len(words) <= TOPIC_WORDS and bool(lx.SCHOOL_WORDS.search(piece)) and not spans(piece)
            and not lx.BOOK.search(piece))


def _is_question(sentence: str) -> bool:
    asks = lx.QUESTION_START.match(sentence) or lx.INFO_REQUEST.search(sentence) or lx.QUESTION_END.search(sentence)
    return sentence.rstrip().endswith("?") or bool(asks)


def _intents(sentence: str, hints: Hints) -> set[str]:
    if lx.INJECTION.search(sentence):
        return {"injection"}
    found = set()
    if lx.WAITLIST.search(sentence):
        found.add("waitlist")
    elif lx.KEEP.search(sentence):
        found.add("keep")
    elif lx.CANCEL.search(sentence):
        soft = not lx.CANCEL_WORD.search(sentence)
        moving = lx.RATHER_MOVE.search(sentence) or not find_when(sentence, hints.today, hints.now).is_empty
        found.add("reschedule" if soft and moving else "cancel")
    if lx.NO_MOVE.search(sentence):
        found.discard("reschedule")
    elif lx.RESCHEDULE.search(sentence) or (hints.booked_children and lx.BARE_CHANGE.search(sentence)):
        found.add("reschedule")  # "I have a tour on Tuesday. can change?": the tour they have
    if any(pattern.search(sentence) for pattern in (lx.CALLBACK, lx.CALLBACK_REF, lx.CALLBACK_CANCEL,
                                                    lx.CALLBACK_CHANGE)):
        found |= _callback_intents(sentence, found)
    if lx.OPEN_DAY.search(sentence):
        found.add("open_day")
    if lx.MY_TOUR.search(sentence):
        found.add("my_tour")
    elif lx.BOOK.search(sentence) and not found & {"cancel", "reschedule"}:
        # ("the older one is called Ming, the younger one Le": the family described, not another tour)
        another = lx.ANOTHER.search(sentence) and not _by_birth_order(sentence)
        found |= {"book", "another"} if another else {"book"}
    if lx.BROWSING.search(sentence):  # "not ready to book yet": no booking asked for
        found = (found - {"book", "another"}) | {"browsing"}
    for name, pattern in (("thanks", lx.THANKS), ("bye", lx.BYE), ("help", lx.HELP), ("arriving", lx.ARRIVING)):
        if pattern.search(sentence):
            found.add(name)
    short = len(sentence.split()) <= MAX_ANSWER_WORDS
    if short and lx.YES.match(sentence):
        found.add("yes")
    elif (short or lx.NO_THEN_WHY.match(sentence)) and lx.NO.match(sentence):  # "no i booked with my husband's"
        found.add("no")
    return found


def _callback_intents(sentence: str, found: set[str]) -> set[str]:
    """A call back asked for, or one the parent has changed ("callback_change") or cancelled ("callback_cancel"):
    by its words, or by its reference with a cancel (or anything else: a change). Such a message is about the
    call back, not a tour, so the tour intents its words also match are dropped."""
    named = bool(lx.CALLBACK_REF.search(sentence))
    if lx.CALLBACK_CANCEL.search(sentence) or (named and "cancel" in found):
        change = "callback_cancel"
    elif lx.CALLBACK_CHANGE.search(sentence) or named:
        change = "callback_change"
    else:
        return {"callback"}
    found -= {"cancel", "reschedule"}
    return {"callback", change}


def _classify(sentence: str, reading: Reading, hints: Hints) -> None:
    """Add this sentence's intents, or its FAQ question, to the reading."""
    found = _intents(sentence, hints)
    reading.intents |= found
    if found - {"thanks", "bye", "yes", "no", "browsing"}:
        asked = _question_inside(sentence, hints)
        if asked:  # "pls book the 2pm one thanks how much r the fees": the booking and the question
            reading.questions.append(asked)
        return
    plain = _mask(sentence, spans(sentence))
    school = lx.SCHOOL_WORDS.search(plain)  # "after lunch?" asks for a time, not lunch
    if lx.OFFTOPIC.search(sentence) and not school:
        reading.intents.add("offtopic")
        return
    if "bye" in found and not school:  # "ok can, will come back later": a goodbye, asking nothing
        return
    topic = any(m.group(0).lower() not in lx.NO_TOPIC for m in lx.SCHOOL_WORDS.finditer(plain))
    short_ask = topic and not lx.ABOUT_US.search(plain) and (lx.INFO_ASK.search(sentence) or (
        lx.TOPIC_ASK.search(sentence) and len(sentence.split()) <= lx.SHORT_ASK_WORDS))  # "fees pls"
    if not (_is_question(sentence) or (school and lx.QUESTION_INSIDE.search(sentence)) or short_ask):
        return
    tail = sentence.rsplit(",", 1)[-1].strip()
    if short_ask and tail != sentence and lx.SCHOOL_WORDS.search(tail):  # "tuesday 11am is good, fees pls"
        sentence = tail
    about_slots = lx.AVAILABILITY.search(sentence) and (not school or lx.TOUR_WORD.search(sentence))
    dated = not find_when(sentence, hints.today, hints.now, hints.tour_times).is_empty
    if about_slots or (not school and dated and lx.ASKS_WHAT_IS_OPEN.search(sentence)):
        reading.intents.add("availability")
    elif dated and not school:
        return  # "can we come Friday at 9?": a request, carried by its date and time
    elif school or len(re.findall(r"[a-z]{2,}", sentence.lower())) >= 2:
        reading.questions.append(sentence)


def _question_inside(sentence: str, hints: Hints) -> str:
    """A question about the school that ends a sentence asking for something else, typed without a stop ("can we
    come tuesday 11am what are the fees"): from its question word on, when it has a topic and asks nothing of the
    task itself; '' otherwise."""
    start = lx.QUESTION_INSIDE_REQUEST.search(sentence)
    rest = sentence[start.start():] if start else ""
    plain = _mask(rest, spans(rest))
    topic = any(m.group(0).lower() not in lx.NO_TOPIC for m in lx.SCHOOL_WORDS.finditer(plain))
    return rest if topic and not _intents(rest, hints) - {"thanks", "yes", "no"} else ""


def _similar_name_field(new: str, hints: Hints) -> tuple[str, str] | None:
    """The name field a bare "sorry, Jon" most likely fixes (its value is spelt like "John")."""
    best = None
    for name_field in ("parent_name", "child_name"):
        value = str(hints.known.get(name_field) or "").split()
        if not value or value[0].lower() == new.lower():
            continue
        score = SequenceMatcher(None, value[0].lower(), new.lower()).ratio()
        if score >= SIMILAR_NAME and (best is None or score > best[0]):
            rest = value[1:] if name_field == "parent_name" else []
            best = (score, name_field, " ".join([new, *rest]))
    return (best[1], best[2]) if best else None


def _name_correction(text: str, hints: Hints) -> tuple[str, str] | None:
    """("parent_name", "Jon Tan") for "it's Jon not John", choosing the field whose value was the wrong one."""
    bare = lx.BARE_CORRECTION.match(text) or lx.SPELLED.match(text)
    if bare and (said := _clean_name(bare.group(1))):
        return _similar_name_field(said, hints)
    for index, pattern in enumerate(lx.NAME_CORRECTION):
        for match in pattern.finditer(text):
            new, old = match.groups() if index == 0 else reversed(match.groups())
            new = _clean_name(new)
            if not (new and _clean_name(old)):
                continue
            for name_field in ("parent_name", "child_name"):
                value = str(hints.known.get(name_field) or "").split()
                if value and value[0].lower() == old.lower():
                    return name_field, " ".join([new, *value[1:]]) if name_field == "parent_name" else new
            booked_child = old.lower() in {child.lower() for child in hints.booked_children}
            about_child = booked_child or lx.RELATION.search(text) or lx.HIS_HER.search(text)
            return ("child_name" if about_child else "parent_name"), new
    return None


def _name_again(text: str, hints: Hints, correcting: bool) -> tuple[str, str] | None:
    """("parent_name", "Mark Reyes") when a name already given is typed again, fuller ("Mark", then "Mark Reyes sorry
    hit enter too soon": the same first words with a surname added) or, in a correction, respelt ("S. Sures",
    then "sorry, S. Suresh"): the later form replaces the earlier one."""
    for run in lx.CAP_RUN.finditer(text):
        said = _clean_name(run.group(0), whole=False)
        words = said.lower().split()
        for name_field in ("parent_name", "child_name"):
            value = str(hints.known.get(name_field) or "")
            known = value.lower().split()
            if not known or not words or words == known:
                continue
            fuller = len(words) > len(known) and words[: len(known)] == known
            respelt = (correcting and len(words) == len(known) and words[0][0] == known[0][0]
                       and SequenceMatcher(None, said.lower(), value.lower()).ratio() >= SIMILAR_NAME)
            if fuller or respelt:
                return name_field, said
    return None


def _reason(sentence: str) -> str:
    """Why a tour is cancelled: "because ...", or what follows "cancel T-XXXX, ..."."""
    match = lx.REASON.search(sentence)
    if match:
        return match.group(1).strip(" .!")
    _, sep, rest = lx.CANCEL.split(sentence, maxsplit=1)[-1].partition(",")
    rest = lx.BOOKING_REF.sub("", rest).strip(" .!-–—")
    if lx.CANCEL.search(rest):  # "I can't make it, please cancel it": the request again, not a reason
        return ""
    return rest if sep and len(rest) >= 3 and not lx.NO_REASON.fullmatch(rest) else ""


STARRED = re.compile(r"^\s*\*\s*([^\W\d_][\w'’-]*)")  # "*Ashby-Reid": the word the line before should have had


def _starred(text: str) -> str:
    """A line starting with "*" corrects a word of the line before it, as chat does ("Charlotte Ashby Reid", then
    "*Ashby-Reid sorry, autocorrect"): the word takes its place and the correcting line is dropped. A line whose
    word matches nothing before it is kept as it is."""
    kept: list[str] = []
    for line in text.split("\n"):
        star = STARRED.match(line)
        fixed = _respelt(kept[-1], star.group(1)) if star and kept else None
        if fixed is None:
            kept.append(line)
        else:
            kept[-1] = fixed
    return "\n".join(kept)


def _letters(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalpha())


def _respelt(line: str, word: str) -> str | None:
    """`line` with the words `word` respells put right: the same letters split or joined otherwise ("Ashby Reid"
    for "Ashby-Reid"), else the one word most like it ("Ashbey" for "Ashby"); None when no word is like it."""
    tokens = list(re.finditer(r"[\w'’-]+", line))
    for size in (3, 2, 1):
        for first in range(len(tokens) - size + 1):
            start, end = tokens[first].start(), tokens[first + size - 1].end()
            if _letters(line[start:end]) == _letters(word):
                return line[:start] + word + line[end:]
    likeness = {t: SequenceMatcher(None, t.group(0).lower(), word.lower()).ratio() for t in tokens}
    best = max(likeness, key=likeness.get, default=None)
    if best is None or likeness[best] < SIMILAR_SPELLING:
        return None
    return line[:best.start()] + word + line[best.end():]


def read_message(text: str, hints: Hints) -> Reading:
    """Read one parent message."""
    if asked_language(text):  # "english pls": the turn already answers in it; the question asked stays pending
        return Reading(intents={"language"})
    glossed = gloss(_starred(text))
    text = re.sub(r"\b([ap])\.m\.?", r"\1m", glossed.text.replace("\u2019", "'"), flags=re.IGNORECASE)
    text = lx.CONTRACTION.sub(lambda m: _same_case(m.group(0), lx.CONTRACTIONS[m.group(0).lower()]), text)
    reading = Reading()
    greeting = lx.GREETING.match(text)
    if greeting:
        reading.intents.add("greet")
        text = text[greeting.end() :]
    emails = [(m.group(0), m.span()) for m in lx.EMAIL.finditer(text)]
    refs = [(m.group(0).upper(), m.span()) for m in lx.BOOKING_REF.finditer(text)]
    callback_refs = [(m.group(0).upper(), m.span()) for m in lx.CALLBACK_REF.finditer(text)]
    births = [m.span(1) for m in lx.BIRTH.finditer(text)]  # a date of birth is no tour date
    masked = _mask(text, [span for _, span in emails + refs + callback_refs] + births)
    dates = spans(masked)
    phones = _phones(_mask(masked, dates), hints.region)
    masked = _mask(masked, [span for _, span in phones])
    reading.when = find_when(masked, hints.today, hints.now, hints.tour_times)
    bare = _mask(masked, dates)
    reading.booking_refs = list(dict.fromkeys(ref for ref, _ in refs))
    reading.callback_refs = list(dict.fromkeys(ref for ref, _ in callback_refs))
    if emails:
        reading.facts["parent_email"] = emails[-1][0]
    if phones:
        reading.facts["parent_phone"] = phones[-1][0]
        signed = lx.NAME_BEFORE_PHONE.search(bare[: phones[-1][1][0]])  # "Jon 91234567"
        name = _clean_name(signed.group(1)) if signed else ""
        if name and not re.match(rf"{re.escape(name)}{lx.PARENT_OF}", signed.group(1), re.IGNORECASE):
            reading.facts["parent_name"] = name  # not "Kavin amma, 9123 4567": Kavin's mother

    for sentence in _sentences(text):
        _classify(sentence, reading, hints)
        reading.correcting = reading.correcting or bool(lx.CORRECTION.search(sentence))
        if "cancel" in reading.intents and not reading.reason and (lx.CANCEL.search(sentence)
                                                                   or lx.REASON.search(sentence)):
            reading.reason = _reason(sentence)
        if lx.SPECIAL.search(sentence):
            reading.facts["special_requirements"] = sentence.strip()[:200]
    if "reschedule" in reading.intents and "another" not in reading.intents:
        reading.intents.discard("book")  # "I have a tour booked on Monday, can I move it?": no new tour
    topic, waitlist = lx.TOPIC.search(text), lx.WAITLIST.search(text)
    if "callback" in reading.intents and topic and waitlist and waitlist.start() >= topic.start(1):
        reading.intents.discard("waitlist")  # "call me tmr? abt the waiting list": what the call is about
    if glossed.languages:  # the FAQ is asked in the parent's own words
        reading.said = {q: glossed.original(q) for q in reading.questions}
    vague = [q for q in reading.questions if not _names_a_slot(q, hints)]
    if vague and reading.when.part_of_day:  # "do you have after school care?" says nothing about when to come
        asked = [(m.start(), m.end()) for q in vague for m in re.finditer(re.escape(q), masked)]
        reading.when = find_when(_mask(masked, asked), hints.today, hints.now, hints.tour_times)
    if "offtopic" in reading.intents and not reading.questions and reading.intents <= {"offtopic", "greet"}:
        return Reading(intents=reading.intents)  # "what's the weather tomorrow?" asks for no tour tomorrow
    _people(bare, text, reading, hints)
    _family(bare, text, reading, hints)
    _details(bare, text, reading, hints)
    if reading.correcting:
        reading.corrections |= _corrected(reading)
    return reading


def _names_a_slot(sentence: str, hints: Hints) -> bool:
    when = find_when(sentence, hints.today, hints.now, hints.tour_times)
    return when.has_date or when.time is not None


def _people(bare: str, text: str, reading: Reading, hints: Hints) -> None:
    """Parent and child names and the child's age (or the name a correction fixes)."""
    fixed = (_name_correction(bare, hints) if reading.correcting else None) or _name_again(
        bare, hints, reading.correcting)
    if fixed:
        reading.facts[fixed[0]] = fixed[1]
        reading.corrections.add(fixed[0])
    else:
        parent = _name(lx.PARENT_NAME, _mask(bare, [m.span() for m in lx.BECAUSE_CLAUSE.finditer(bare)]))
        child = (_name(lx.CHILD_NAMED, bare) or _name(lx.CHILD_NAME, bare, whole=False)
                 or _name_before(lx.CHILD_NAME_BEFORE, bare) or _name_before(lx.CHILD_NAME_FIRST, bare, False))
        if (parent and not child and "child_name" in hints.asked and "parent_name" not in hints.asked
                and not lx.OWN_NAME.search(bare)):  # "shes 5, name is Aisha" answers "What's your daughter's name?"
            parent, child = None, parent
        swapped = child if parent is None else ""
        if _is_question(text):  # "可以带孩子一起参观吗": a word of the question, not a name
            parent, child = (name if name and _could_be_han_name(name) else "" for name in (parent, child))
        if parent and parent.endswith(lx.HAN_TITLES):  # "我是黄太太，黄丽娟": Mrs Huang, then her full name
            surname = re.escape(parent[0])
            fuller = re.search(rf"{re.escape(parent)}\s*,\s*({surname}[\u4e00-\u9fff]{{1,3}})(?![\u4e00-\u9fff])", bare)
            parent = fuller.group(1) if fuller else parent
        if parent and re.search(rf"(?<!\w){re.escape(parent)}{lx.PARENT_OF}", bare, re.IGNORECASE):
            parent = None  # "I'm 小美 mum" (我是小美妈妈): 小美 is the child
        if child and child == parent and lx.OWN_NAME.search(bare):  # "my name is Farah, she's 5": Farah is the parent
            child = ""
        if child and not parent and reading.intents <= {"greet", "yes", "book"}:
            parent = _leading_parent(bare, child, hints)  # "Hannah Whitfield-Jones, and it's for our little one Oliver"
        if parent and parent != child:
            reading.facts["parent_name"] = parent
        if child:
            reading.facts["child_name"] = child
            reading.child_said = child != swapped
        if not (parent or child):
            _bare_names(bare, text, reading, hints)
    born = lx.BIRTH.search(text)
    in_digits = lx.NUMBER_WORD.sub(lambda m: str(lx.NUMBER_WORDS[m.group(1).lower()]), bare)  # "five" -> "5"
    age = _age_from_birth(born.group(1), hints.today) if born else _age(in_digits, hints)
    named = reading.facts.get("child_name")
    if age is None and named:  # "my son Max is 3"
        match = re.search(rf"\b{re.escape(named)}\s*(?:is|'s|,)?\s*(\d{{1,2}})\b{lx.NOT_TIME}", in_digits,
                          re.IGNORECASE)
        age = int(match.group(1)) if match and 0 < int(match.group(1)) <= MAX_AGE else None
    if age is not None:
        reading.facts["child_age"] = age
    relation = lx.RELATION.search(bare)
    if relation:
        reading.relation = relation.group(1).lower()


def _leading_parent(bare: str, child: str, hints: Hints) -> str:
    """The name a message opens with, before a clause that names the child ("Hannah Whitfield-Jones, and it's for
    our little one Oliver", "Marcus T. Delgado - son Leo, 4"): the parent's, when the parent's name was asked or it
    is written as a whole name (two words or more, capitalised); '' otherwise."""
    first = lx.LEADING_NAME.split(bare.strip(), maxsplit=1)[0]
    name = _clean_name(first)
    words = name.split()
    end = first.lower().find(words[-1].lower()) + len(words[-1]) if words else 0
    after = first[end:].split()  # the words after the name ("Mrs" before it is none of them)
    if not name or name.lower() == child.lower() or (after and after[0].lower() not in LEADING_NAME_ENDS):
        return ""
    written = len(words) >= 2 and all(w[:1].isupper() for w in words if w.lower() not in lx.NAME_CONNECTORS)
    return name if "parent_name" in hints.asked or written else ""


def _could_be_han_name(name: str) -> bool:
    """False for a Chinese word that starts with neither a surname nor a nickname's prefix."""
    return not lx.HAN_WORD.match(name) or name[0] in lx.HAN_NAME_START


def _bare_names(bare: str, text: str, reading: Reading, hints: Hints) -> None:
    """A name said with nothing that says whose: the answer to the name just asked for; to "What's your child's
    name? And may I have your name?", the child's then the parent's ("Mia, Sarah"), or, for one name alone, a
    question first ("Is Sarah your child?"): `reading.unsure`. The answer to that question: a yes makes it the
    child's name, a no the parent's when it answered both questions."""
    answer = "?" not in text and reading.intents <= {"greet", "yes"}
    # "chloe. got any slot this wk?": the name asked for, said first as a sentence of its own, then something else
    head, *rest = re.split(r"[.!]\s+|\n", bare.strip(), maxsplit=1)
    own_sentence = (bool(hints.asked & {"child_name", "parent_name"}) and bool(rest) and "?" not in head
                    and _intents(head, hints) <= {"greet", "yes"})
    answered = bare.strip() if answer else head if own_sentence else ""
    parts = lx.LEADING_NAME.split(answered, maxsplit=2) if answered else []
    said = [_clean_name(part) if _only_name(part) else "" for part in parts[:2]]
    leading = said[0] if said else ""
    both = {"child_name", "parent_name"} <= hints.asked
    doubted = hints.unsure.get("child_name") if "parent_name" in hints.unsure else ""
    if leading and both and len(said) == 2 and said[1]:  # "Mia, Sarah"
        reading.facts.update(child_name=leading, parent_name=said[1])
    elif leading and doubted and leading.lower() != doubted.lower():
        # "chloe" to both name questions, "Is Chloe your child?", then "lim siew ling": the child's, then the parent's
        reading.facts.update(child_name=doubted, parent_name=leading)
    elif leading and both:
        reading.unsure.update(child_name=leading, parent_name=leading)
    elif leading and "child_name" in hints.asked:
        reading.facts["child_name"] = leading
    elif leading and "parent_name" in hints.asked:
        reading.facts["parent_name"] = leading
    # "yes book it, Jenna Morales" to "And may I have your name?"; "call me tmr after 5, Jason Ng": a call back needs
    # no child, so the name it is signed with is the parent's
    signing = "parent_name" in hints.asked or ("callback" in reading.intents and "child_name" not in hints.asked)
    signed = "" if leading or not signing else _signed_name(bare)
    if signed:
        reading.facts.setdefault("parent_name", signed)
    maybe = "" if leading else _name(lx.MAYBE_CHILD, bare, whole=False)
    if maybe and "child_name" in hints.asked and "parent_name" not in hints.asked:
        reading.facts["child_name"] = maybe  # "for Mira" to "What's your daughter's name?"
    elif maybe and maybe.lower() != str(hints.known.get("parent_name") or "").lower():
        reading.unsure["child_name"] = maybe  # "it's for Mira": asked, not stored
    if hints.unsure and not reading.unsure and "yes" in reading.intents:  # "Is Mira your daughter?" "yes"
        reading.facts.setdefault("child_name", hints.unsure["child_name"])
    elif hints.unsure and not reading.unsure and "no" in reading.intents and "parent_name" in hints.unsure:
        reading.facts.setdefault("parent_name", hints.unsure["parent_name"])  # "no, that's me"


def _signed_name(bare: str) -> str:
    """A name that ends a line after a comma or after a line before it, every word of it capitalised as typed (or a
    Chinese name: "yes book it, Jenna Morales", "ok boleh, Siti Aminah", "好的，陈美玲", "Lovely" then "Charlotte
    Ashby-Reid"): the parent signing with the name just asked for."""
    for index, line in enumerate(bare.splitlines()):
        *before, part = re.split(r"[,;]", line)
        words = part.split()
        written = all(w[:1].isupper() or (lx.HAN_WORD.fullmatch(w) and _could_be_han_name(w)) for w in words)
        if (before or index) and words and "?" not in part and written and _only_name(part):
            name = _clean_name(part)
            if len(name.split()) == len(words):
                return name
    return ""


def _only_name(part: str) -> bool:
    """Whether a piece of a bare answer is a name and at most a filler or two ("Jon Tan here", "sarah lah"), not a
    sentence that starts like one ("Find me a place", "Try the other one")."""
    words = [w for w in part.split() if w.lower() not in lx.TITLES]
    name = _clean_name(part).split()
    rest = words[len(name):]
    return len(rest) <= 2 and all(w.lower().strip(".!'") in lx.NOT_A_NAME for w in rest)


def _family(bare: str, text: str, reading: Reading, hints: Hints) -> None:
    """Several children, however they are said: names with ages ("Sam (6) and Ella (3)", "Aiden is 7 and Chloe is
    4"), a list of names after a word for children ("my twins, Leo and Mia"), ages for them in order ("they're 5
    and 3"), a count ("my two boys", "twins"), one more child ("and her brother Max, 4"), the age of the child
    just asked about, or the known children of a returning family ("yes, both of them"). What it finds goes to
    `reading.children` (and replaces the one-child facts, which could not hold it)."""
    digits = lx.NUMBER_WORD.sub(lambda m: str(lx.NUMBER_WORDS[m.group(1).lower()]), bare)
    parent = str(reading.facts.get("parent_name") or hints.known.get("parent_name") or "").split(" ")[0].lower()
    found: list[tuple[int, str, int | None]] = []  # (where, name, age)

    def add(at: int, name: str, age: int | None = None) -> None:
        name = _name_ending(name.removesuffix("'s"))  # "Sam's 6"; "Mei Xin 4"; "Hi Ava 6": Ava
        if not _clean_name(name) or name.lower() == parent or (age is not None and not 0 < age <= MAX_AGE):
            return
        found.append((at, name.title() if name.islower() else name, age))

    for match in lx.NAME_AGE.finditer(digits):
        add(match.start(), match.group(1), int(match.group(2)))
    for name in hints.asked_ages_of:  # a name just asked about, however it is typed: "chloe just turned 4"
        match = re.search(rf"\b{re.escape(name)}{lx.NAME_TO_AGE}{lx.NOT_TIME}", digits, re.IGNORECASE)
        if match and not any(n.lower() == name.lower() for _, n, _ in found):
            add(match.start(), name, int(match.group(1)))
    cue = lx.CHILDREN_CUE.search(digits) or found or "child_name" in hints.asked or lx.AGE_LIST.search(digits)
    lists = [] if not cue else list(lx.NAME_LIST.finditer(digits if "child_name" not in hints.asked
                                                           else _title_short(digits)))
    for match in lists:
        for name in lx.CAP_NAME.finditer(match.group(0)):
            add(match.start() + name.start(), name.group(0))
    called = lx.CALLED_NAME.finditer(digits) if lx.CHILDREN_CUE.search(digits) else ()
    for match in called:  # "two children, the older one is called Ming, the younger one is called Le"
        add(match.start(1), match.group(1))
    for match in lx.LOWER_NAME_LIST.finditer(digits):
        add(match.start(1), match.group(1))
        add(match.start(2), match.group(2))
    adds = bool(lx.ADDS_CHILD.search(text)) and not lists
    sibling = lx.SIBLING_NAME.search(bare) if adds else None
    if sibling and not any(n.lower() == sibling.group(1).lower() for _, n, _ in found):  # "sister Chloe 4": hers
        add(sibling.start(1), sibling.group(1), reading.facts.get("child_age"))
    named: dict[str, dict] = {}
    for _, name, age in sorted(found, key=lambda item: item[0]):
        child = named.setdefault(name.lower(), {"name": name})
        if age is not None:
            child["age"] = age
    children = list(named.values())
    ordered = _by_birth_order(digits)
    if ordered:  # "the older one 9, the younger one 6": in that order, with the names said anywhere else in it
        children = merge_children(ordered, children)
    if "family_again" in hints.asked:  # "Is the tour for Leo and Mia again?" "yes, both" / "just Mia"
        words = {w.lower() for w in re.findall(r"[A-Za-z'-]+", text)}
        again = [dict(c) for c in hints.known_children if str(c.get("name", "")).lower() in words]
        if again or "yes" in reading.intents or "both" in words:
            children = merge_children(again or [dict(c) for c in hints.known_children], children)
    ages = _ages_in_order(digits)
    if ages and (children or hints.asked_ages_of or hints.asked & {"child_age", "child_name"}):
        if not children:  # "5 and 3" to "How old are Leo and Mia?"
            children = [{"name": name} for name in hints.asked_ages_of]
        without = [c for c in children if "age" not in c]
        for child, years in zip(without, ages, strict=False):
            child["age"] = years
        children += [{"age": years} for years in ages[len(without):]]
    same = lx.SAME_AGE.search(digits)
    if same and 0 < int(same.group(1)) <= MAX_AGE and not ages:
        children = [{**c, "age": c.get("age", int(same.group(1)))} for c in children] or [
            {"name": n, "age": int(same.group(1))} for n in hints.asked_ages_of]
    age = reading.facts.get("child_age")
    if not children and hints.asked_ages_of and age is not None:  # "she's 3" to "How old is Mia?"
        children = [{"name": hints.asked_ages_of[0], "age": age}] if len(hints.asked_ages_of) == 1 else [
            {"age": age}]  # to "How old are Sam and Ben?": the first of them still without an age
    group = lx.GROUP.search(digits)
    count = lx.CHILD_COUNT.search(digits)
    reading.child_count = lx.GROUP_SIZES[group.group(1).lower()] if group else int(count.group(1)) if count else 0
    if reading.child_count and same and not children:  # "twins, they're 4": two children of that age
        children = [{"age": int(same.group(1))} for _ in range(reading.child_count)]
    aged = [c["age"] for c in children if "age" in c]
    if group and len(children) >= 2 and len(aged) == 1:  # "twins, Leo n Mia, 5": twins are the same age
        children = [{**c, "age": aged[0]} for c in children]
    named_before = [{"name": str(hints.known.get("child_name") or "")}, *hints.known_children]
    reading.only = _only_child(digits, [*children, *named_before])
    if reading.only and len(keep_only(children, reading.only)) == 1:  # "two kids, Ava 6 and Noah 3, only Noah"
        children, reading.child_count = keep_only(children, reading.only), 1
        reading.facts.update({f"child_{k}": v for k, v in children[0].items()})
    several = len(children) >= 2 or reading.child_count >= 2 or (adds and children)
    asked_one = [str(hints.known.get("child_name") or "").lower()] == [n.lower() for n in hints.asked_ages_of]
    if (asked_one and not several and not hints.known.get("children") and len(children) == 1
            and str(children[0].get("name") or hints.asked_ages_of[0]).lower() == hints.asked_ages_of[0].lower()):
        reading.facts.update({f"child_{k}": v for k, v in children[0].items()})  # "Jayden is 5" to "How old is
        # Jayden?" of a one-child booking: that child's age, as the tools' child_age
    elif several or hints.asked_ages_of or "family_again" in hints.asked:
        reading.children = children
        reading.adds_child = adds and bool(children)
        if children or reading.child_count >= 2:
            reading.facts.pop("child_name", None)
            reading.facts.pop("child_age", None)
    elif len(children) == 1 and "child_name" in hints.asked and "child_name" not in reading.facts:
        reading.facts.update({f"child_{k}": v for k, v in children[0].items()})  # "Arjun 6" to "name and age?"


def _by_birth_order(text: str) -> list[dict]:
    """The children said by their place among the siblings, the older first ("大的9岁小的6岁": [{"age": 9}, {"age":
    6}]; "the younger one is called Le, the older one Ming": [{"name": "Ming"}, {"name": "Le"}]), when at least two
    places are said (a lone "my little one is 4" is one child's age, not an order)."""
    found: dict[int, dict] = {}
    for match in lx.BY_ORDER.finditer(text):
        rank = next(lx.BIRTH_ORDER[place] for place in lx.BIRTH_ORDER if match.group(place))
        name, age = match.group("name"), match.group("age")
        child = {**({"name": name} if name and _clean_name(name) else {}),
                 **({"age": int(age)} if age and 0 < int(age) <= MAX_AGE else {})}
        if child and rank not in found:
            found[rank] = child
    return [found[rank] for rank in sorted(found)] if len(found) >= 2 else []


def _name_ending(words: str) -> str:
    """The longest run of name words that ends `words` ("Ava" of "Hi Ava", "Mei Xin" of "Mei Xin")."""
    split = words.split()
    return next((" ".join(split[i:]) for i in range(len(split))
                 if len(_clean_name(" ".join(split[i:])).split()) == len(split) - i), "")


def _only_child(text: str, children: list[dict]) -> str:
    """The one child said to be the only one coming ("only Noah would be starting", "Hana je"): its name (one of
    `children`, or any name written as one: the children it picks from may come in another message), or
    "younger" / "older" ("only the small one is joining"); '' when no child is named so."""
    names = {str(c.get("name") or "").lower() for c in children} - {""}
    for match in lx.ONLY_CHILD.finditer(text):
        said = {k.removeprefix("then_"): v for k, v in match.groupdict().items() if v}
        if "younger" in said or "older" in said:
            return "younger" if "younger" in said else "older"
        name = said.get("name", "")
        if name.lower() in names or (_clean_name(name) and not name.islower()):  # a child named before, or a name
            return name
    return ""


def _title_short(text: str) -> str:
    """A short answer with its words capitalised ("leo and mia" -> "Leo And Mia"), so names typed in lower case
    after "What are their names?" read as names; "and" stays lower case."""
    if len(text.split()) > 8:
        return text
    return re.sub(r"\b[a-z][a-z'-]+", lambda m: m.group(0) if m.group(0) in lx.AND_WORDS else m.group(0).title(), text)


def _ages_in_order(text: str) -> list[int]:
    """"they're 5 and 3" -> [5, 3]; "aged 6, 4 and 2" -> [6, 4, 2]."""
    match = lx.AGE_LIST.search(text)
    if not match:
        return []
    ages = [int(match.group(1)), *(int(a) for a in re.findall(r"\d{1,2}", match.group(2))), int(match.group(3))]
    return ages if all(0 < a <= MAX_AGE for a in ages) else []


def _details(bare: str, text: str, reading: Reading, hints: Hints) -> None:
    """The option picked, and what a call back is about and when."""
    reading.choice = _choice(text, hints)
    extreme = lx.EXTREME.search(text) if hints.options else None
    any_one = lx.ANY_OPTION.search(text) if hints.options and not extreme else None
    reading.extreme = ("soonest" if extreme.group(1) else "latest") if extreme else ""
    if any_one:  # "either is fine": the soonest, when it is one of two ("any" of any number)
        reading.extreme = "either" if any_one.group("two") else "any"
    hour = lx.HOUR_ONLY.match(bare)
    age = hour and reading.facts.get("child_age") == int(hour.group(1))  # "son Arjun 6": his age, not 6 o'clock
    if (hour and not age and reading.choice is None and hints.options and 0 < int(hour.group(1)) < 24
            and (len(text.split()) <= MAX_HOUR_ANSWER_WORDS or _hour_beside_details(bare, hour.start(1), reading))):
        reading.hour = int(hour.group(1))
    if "callback" in reading.intents or hints.asked & {"call_time", "callback"}:  # (a new time for a call back too)
        # "tomorrow after work? after 5pm": the first time said with a clock, else the first said
        said = list(lx.CALL_TIME.finditer(text))
        clocked = [m for m in said if any(c.isdigit() for c in m.group(0))]
        call_time = (clocked or said or [None])[0]
        if call_time and lx.ANY_TIME.fullmatch(call_time.group(0)) and (reading.when.part_of_day or reading.when.time):
            call_time = None  # "anytime tomorrow morning": the morning
        window = _window_said(reading.when)
        if window:  # "from half 2 onwards, til 4", "Mon morning after 10": the window as read, in full
            reading.call_time = window
        elif call_time and reading.when.has_date:  # "tomorrow after 5": the day and the window, not "evening"
            reading.call_time = f"{reading.when.date_phrase} {call_time.group(0)}".strip()
        else:
            reading.call_time = call_time.group(0) if call_time else reading.when.phrase
    topic = lx.TOPIC.search(text)
    if topic:
        reading.topic = lx.TOPIC_TAIL.sub("", topic.group(1).strip())


def _window_said(when: When) -> str:
    """A window of the day with both ends as it was read ("Mon between 10:00 and 12:00"), with its day as said;
    '' otherwise (one end alone is passed in the parent's words: "after 4pm ok, before 6" says both in two)."""
    if when.time or not (when.after and when.before):
        return ""
    return f"{when.date_phrase} between {when.after} and {when.before}".strip()


def _hour_beside_details(bare: str, at: int, reading: Reading) -> bool:
    """A bare hour in a short clause of its own, the rest of the message giving the parent's details: "11 works.
    I'm Jon Tan, mobile 91234567", "yang 11 la, nama saya ..." answer the slots shown and give the details."""
    if not reading.facts.keys() & CONTACT_FIELDS:
        return False
    before = [m.end() for m in lx.CLAUSE_BREAK.finditer(bare, 0, at)]
    after = lx.CLAUSE_BREAK.search(bare, at)
    clause = bare[before[-1] if before else 0 : after.start() if after else len(bare)]
    return len(clause.split()) <= MAX_HOUR_ANSWER_WORDS


def _corrected(reading: Reading) -> set[str]:
    """The fields a correcting message gives a new value for."""
    fields = {f for f in ("parent_phone", "parent_email", "child_age") if f in reading.facts}
    if reading.when.has_date:
        fields.add("preferred_date")
    if reading.when.time:
        fields.add("preferred_time")
    return fields


def understand(texts: list[str], hints: Hints) -> Reading:
    """Read this turn's messages in order; later messages override (and may correct) earlier ones. In a burst
    that answers the child's name with a word that says whose it is ("son Irfan 4yo"), a name said bare on a
    line of its own ("Muhammad Faiz bin Rahman", "Name is Tan Wei Ming") is the parent's, not the child's."""
    readings = _read_all(texts, hints)
    if len(texts) > 1 and any(r.child_said for r in readings):
        as_parent = replace(hints, asked=(hints.asked - {"child_name", "child_age"}) | {"parent_name"})
        readings = _read_all(texts, hints, as_parent)
    reading = Reading()
    for one in readings:
        reading = reading.merge(one)
    signed = _signed_burst(texts, reading)
    if signed:
        reading.facts["parent_name"] = signed
    return reading


def _signed_burst(texts: list[str], reading: Reading) -> str:
    """A burst signed with a name and a phone, each on a message of its own ("Hafizah", "9333 7777"; "Tan Wei Ming",
    "hp 9123 4567"): the name is the parent's, as "Hafizah 9333 7777" in one message would be."""
    if len(texts) < 2 or "parent_phone" not in reading.facts or reading.facts.keys() & {"parent_name", "child_name"}:
        return ""
    for text in texts:
        bare = gloss(text).text.strip()  # ("Esok" is "tomorrow", no name)
        name = _clean_name(bare)
        written = all(w[:1].isupper() or w.lower() in lx.NAME_CONNECTORS or _script(w) != "latin" for w in bare.split())
        if name and written and len(name.split()) == len(bare.split()) and not reading.children:
            return name
    return ""


def read_lines(text: str, hints: Hints) -> Reading:
    """One message; typed as a burst, a detail a line ("Rajesh Kumar⏎son Arjun 6⏎9000 1111"), its names are
    those its lines say read as a burst."""
    reading = read_message(text, hints)
    lines = [line for line in text.splitlines() if line.strip()]
    by_line = understand(lines, hints) if len(lines) > 1 else None
    if by_line is None or not by_line.child_said:
        return reading
    facts = {k: v for k, v in reading.facts.items() if k not in PEOPLE_FIELDS}
    facts.update({k: v for k, v in by_line.facts.items() if k in PEOPLE_FIELDS})
    return replace(reading, facts=facts, unsure={}, child_said=True)


def _read_all(texts: list[str], hints: Hints, as_parent: Hints | None = None) -> list[Reading]:
    """Each message read with what the earlier ones said known; with `as_parent`, a message that names no child
    in so many words is read again with those hints (the parent's name asked, not the child's)."""
    readings: list[Reading] = []
    known = dict(hints.known)
    for text in texts:
        reading = read_lines(text, replace(hints, known=known))
        if as_parent is not None and not reading.child_said:
            reading = read_lines(text, replace(as_parent, known=known))
        known = {**known, **reading.facts}
        readings.append(reading)
    return readings


def says_yes(text: str, actions: tuple[str, ...] = ()) -> bool:
    """The offline policy's reading of a plain yes to a read-back: "yes please", "ok go ahead", "that's right.
    What's the address?". Not a yes with a change anywhere in it ("yes. But the 11th", "please make it 2pm",
    "sure, what about Friday?"): a message that names a day or a time changes what was read back. Read in
    English words, so "ya betul", "好的" and "சரி" are a yes too. The verb of an action awaited (`actions`:
    "book", "reschedule", "cancel") goes with the yes ("ok la, tempah je", "yes, change it"), while a negation
    or a hesitation still wins. (A hosted model judges for itself.)"""
    text = gloss(text).text.strip()
    rest = text
    for action in actions:
        if action in ACTION_VERBS:
            rest = ACTION_VERBS[action].sub(" ", rest)
    return bool(lx.YES.match(text)) and not HESITATE.search(rest) and not spans(text)
