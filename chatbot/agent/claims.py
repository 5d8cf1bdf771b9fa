"""A reply claims only what its turn did: the changes a reply says were made, checked against the turn's tools.

`unbacked(reply, observations)` lists the claims of a turn's final reply ("booked", "moved", "cancelled", "call
back arranged", "on the waitlist", "seat passed on", "detail updated") that no tool result of the same turn backs:
a claim needs that tool's success in the turn, with the reference the reply names (a tour's `T-...`, a call
back's `C-...`, a waitlist entry's `W-...`). A reply that only repeats an earlier change ("Your tour is on
Tuesday ... T-7KQ3XM") claims nothing: only a done-verb does.

Claims are found two ways, in English, Chinese, Malay and Tamil:
- the concierge's own sentences, as the translation catalogues word them (the offline policy's replies, rendered
  from `TEMPLATES` in each language: they follow the catalogues as they change);
- a model's own wording: done-verbs per language ("I've booked", "has been cancelled", "已取消", "telah
  ditempah", "ரத்து செய்யப்பட்டது"...), in sentences that are not questions and not negated ("nothing is
  booked yet"), outside quotes and outside the FAQ's answers the turn looked up.

Checked as an invariant over every conversation test (tests/conftest.py) and every evaluate run
(quality/evaluation/checks.py, `TruthfulReplies`).
"""

import re
from dataclasses import dataclass, field
from functools import cache

from django.conf import settings
from django.utils import translation

from chatbot.agent import dialogue

# The concierge's done-sentences (chatbot/agent/offline/replies.py), by the change each claims. "*_reference" ones
# give the reference of the booking or move claimed in the same reply.
TEMPLATES = (
    ("booked", "You're all set! %(child)s's campus tour is booked for %(when)s"),
    ("booked", "You're all set! %(child)s's place at %(event)s is booked for %(when)s"),
    ("booked_reference", "Your booking reference is %(reference)s."),
    ("moved", "Done! Your tour is now on %(when)s."),
    ("moved_reference", "Your booking reference is %(reference)s, the same as before."),
    ("cancelled", "Your tour %(reference)s on %(when)s has been cancelled."),
    ("cancelled", "Your tour %(reference)s has been cancelled."),
    ("callback", "I've asked our admissions team to call you on %(phone)s %(when)s about %(topic)s."),
    ("callback", "I've asked our admissions team to call you on %(phone)s %(when)s."),
    ("callback", "I've asked our admissions team to call you %(when)s about %(topic)s."),
    ("callback", "I've asked our admissions team to call you %(when)s."),
    ("waitlisted", "Done: you're number %(place)s on the waitlist for the tour on %(when)s for %(child)s."),
    ("declined", "No problem, I've passed the seat on to the next family."),
    ("updated", "Thanks, I've updated %(field)s to %(value)s."),
    ("updated", "Thanks, I've updated %(field)s to %(value)s on booking %(booking)s."),
)

# A model's own wording: done-verbs, per change, in the four languages.
DONE_VERBS = {
    "booked": (
        r"\b(?:I|we)(?:'ve| have)(?: now| just)? (?:booked|reserved|confirmed)\b",
        r"\b(?:is|are|has been|have been|was|were)(?: now| all)? (?:booked|reserved|confirmed)\b(?! (?:up|out|solid))",
        r"\byou(?:'re| are) (?:all )?booked\b",
        r"(?:已|已经)(?:为您|帮您|给您)?(?:预约|预订|订好|确认)|预约成功|预订成功|已订在",
        r"\b(?:telah|sudah) (?:di)?tempah\b|\bsaya telah menempah\b|\btempahan (?:anda )?(?:telah )?disahkan\b",
        r"முன்பதிவு செய்யப்பட்டது|முன்பதிவு செய்துவிட்டேன்|முன்பதிவு செய்துள்ளேன்",
    ),
    "moved": (
        r"\b(?:I|we)(?:'ve| have)(?: now| just)? (?:moved|rescheduled)\b",
        r"\b(?:is|are|has been|have been|was|were)(?: now)? (?:moved|rescheduled)\b",
        r"\btour is now (?:on|at|for)\b",
        r"(?:已|已经)(?:为您|帮您)?(?:改期|改到|改为|更改到|调整到|移到)|参观现在是",
        r"\b(?:telah|sudah) (?:di)?pindahkan\b|\bsaya telah memindahkan\b|\blawatan anda kini pada\b",
        r"மாற்றிவிட்டேன்|மாற்றியுள்ளேன்|சுற்றுப்பார்வை இப்போது",
    ),
    "cancelled": (
        r"\b(?:I|we)(?:'ve| have)(?: now| just)? cancell?ed\b",
        r"\b(?:is|are|has been|have been|was|were)(?: now)? cancell?ed\b",
        r"已(?:为您|帮您)?取消|已经取消",
        r"\b(?:telah|sudah) dibatalkan\b|\bsaya telah membatalkan\b",
        r"ரத்து செய்யப்பட்டது|ரத்து செய்துவிட்டேன்|ரத்து செய்துள்ளேன்",
    ),
    "callback": (
        r"\bI(?:'ve| have) (?:asked|arranged|requested|scheduled|booked|set up)\b[^.!?]*\bcall",
        r"\bcall ?back (?:is|has been) (?:arranged|requested|scheduled|booked)\b",
        r"我已(?:请|安排|通知)[^。！？]{0,20}(?:回电|致电|打电话)",
        r"\bsaya telah (?:meminta|mengatur)\b[^.!?]*\b(?:menghubungi|panggilan)\b",
        r"அழைக்குமாறு[^.!?]*கேட்டுள்ளேன்|அழைப்புக்கு ஏற்பாடு செய்துள்ளேன்",
    ),
    "waitlisted": (
        r"\bI(?:'ve| have) (?:added|put) you (?:on|to) (?:the|its|a) wait ?list\b",
        r"已(?:将您|把您)?(?:加入|列入)候补|候补名单上排第",
        r"\btelah (?:menambah|memasukkan|meletakkan) anda\b[^.!?]*\bsenarai menunggu\b",
        r"காத்திருப்புப் பட்டியலில் சேர்த்துவிட்டேன்",
    ),
    "declined": (
        r"\bpassed (?:the|your) seat on\b",
        r"名额让给",
        r"\bmemberikan tempat itu kepada keluarga\b",
        r"அடுத்த குடும்பத்துக்கு வழங்கிவிட்டேன்",
    ),
    "updated": (
        r"\bI(?:'ve| have)(?: now)? (?:updated|changed|corrected)\b",
        r"\b(?:has|have) been (?:updated|changed|corrected)\b",
        r"我?已(?:将|把)?[^。！？]{0,20}(?:更新|更改|修改)为",
        r"\bsaya telah (?:mengemas ?kini|menukar|mengubah|membetulkan)\b|\btelah dikemas ?kini\b",
        r"புதுப்பித்துவிட்டேன்|புதுப்பிக்கப்பட்டது",
    ),
}
# A sentence that says something was not (yet) done claims nothing. "No problem" is not a negation.
NO_PROBLEM = re.compile(r"\bno problem\b|没问题|\btiada masalah\b|பரவாயில்லை", re.IGNORECASE)
NEGATION = re.compile(r"n't\b|\b(?:not|nothing|never|cannot|yet to)\b|没有|还没|未|不会|无需|不用"
                      r"|\b(?:belum|tidak|tiada|bukan)\b|இல்லை|வில்லை|மாட்டேன்", re.IGNORECASE)
QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」")
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*|\n+")
REFERENCE = {"T": re.compile(r"\bT-[A-Z0-9]{4,}\b"), "C": re.compile(r"\bC-[A-Z0-9]{4,}\b"),
             "W": re.compile(r"\bW-[A-Z0-9]{4,}\b")}
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")
KIND_REFERENCE = {"booked": "T", "moved": "T", "cancelled": "T", "updated": "T", "callback": "C", "waitlisted": "W",
                  "declined": "W"}  # the reference a claim of each kind names (a cancelled call back names its C-)
SAID = {"booked": "booked", "moved": "moved", "cancelled": "cancelled", "callback": "a call back arranged",
        "waitlisted": "put on a waitlist", "declined": "a seat passed on", "updated": "a detail changed"}


@dataclass(frozen=True)
class Claim:
    """A change a reply says was made: its kind, the references it names, and the words that say it."""

    kind: str
    text: str
    references: frozenset[str] = field(default_factory=frozenset)

    def __str__(self) -> str:
        named = f" ({', '.join(sorted(self.references))})" if self.references else ""
        return f"the reply says {SAID[self.kind]}{named} ({self.text.strip()[:80]!r}), which the turn did not do"


def _template_regex(template: str) -> re.Pattern | None:
    """A catalogue sentence as a pattern: its words as they are (any run of spaces alike), a reference placeholder
    as a reference, any other as text on the same line. Placeholders at either end are left out."""
    parts = PLACEHOLDER.split(template)  # text, name, text, name, ... text
    while len(parts) > 1 and not parts[0].strip():
        parts = parts[2:]
    while len(parts) > 1 and not parts[-1].strip():
        parts = parts[:-2]
    pattern = ""
    for index, part in enumerate(parts):
        if index % 2:
            pattern += r"[TCW]-[A-Z0-9]+" if part in ("reference", "booking") else r"[^\n]+?"
        else:
            pattern += r"\s+".join(re.escape(word) for word in part.split(" "))
    return re.compile(pattern, re.IGNORECASE) if pattern.strip() else None


@cache
def _templates() -> tuple[tuple[str, re.Pattern], ...]:
    """TEMPLATES in every language the concierge answers in, as the catalogues word them."""
    found = []
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            for kind, template in TEMPLATES:
                regex = _template_regex(translation.gettext(template))
                if regex is not None and (kind, regex.pattern) not in {(k, r.pattern) for k, r in found}:
                    found.append((kind, regex))
    return tuple(found)


_DONE = {kind: [re.compile(p, re.IGNORECASE) for p in patterns] for kind, patterns in DONE_VERBS.items()}


def _references(kind: str, text: str) -> frozenset[str]:
    return frozenset(r.upper() for r in REFERENCE[KIND_REFERENCE[kind]].findall(text))


def _without(reply: str, texts: list[str]) -> str:
    for text in sorted({t.strip() for t in texts if t and t.strip()}, key=len, reverse=True):
        reply = reply.replace(text, " ")
    return reply


def _faq_texts(observations: list[tuple[str, dict]]) -> list[str]:
    texts = []
    for name, result in observations:
        if name == "get_faq_answer" and isinstance(result, dict):
            texts.append(str(result.get("answer") or ""))
            texts += [str(a.get("answer") or "") for a in result.get("answers") or [] if isinstance(a, dict)]
    return texts


def claims_in(reply: str, observations: list[tuple[str, dict]] | None = None) -> list[Claim]:
    """The changes a reply says were made (the FAQ answers the turn looked up are quoted, not claimed)."""
    text = _without(reply or "", _faq_texts(observations or []))
    claims: list[Claim] = []
    references = {"booked_reference": frozenset(), "moved_reference": frozenset()}
    for kind, regex in _templates():
        for match in regex.finditer(text):
            if kind in references:
                references[kind] |= _references("booked", match.group(0))
            else:
                claims.append(Claim(kind, match.group(0), _references(kind, match.group(0))))
    for sentence in SENTENCE_END.split(QUOTED.sub(" ", text)):
        plain = sentence.strip()
        if not plain or plain.endswith(("?", "？")) or NEGATION.search(NO_PROBLEM.sub(" ", plain)):
            continue
        for kind, patterns in _DONE.items():
            if any(p.search(plain) for p in patterns):
                claims.append(Claim(kind, plain, _references(kind, plain)))
    claims = [Claim(c.kind, c.text, c.references | references.get(f"{c.kind}_reference", frozenset()))
              for c in claims]
    unique = {}
    for claim in claims:
        unique.setdefault((claim.kind, claim.references), claim)
    return list(unique.values())


# What each change the tools report (`dialogue.done_in`) backs, as the kinds of claim a reply can make: a moved tour
# is a changed detail too; a call back moved is arranged anew, moved and changed.
BACKS = {"booked": ("booked",), "rescheduled": ("moved", "updated"), "cancelled": ("cancelled",),
         "callback_requested": ("callback",), "callback_rescheduled": ("callback", "moved", "updated"),
         "callback_cancelled": ("cancelled",), "waitlisted": ("waitlisted",), "declined_seat": ("declined",),
         "updated": ("updated",)}


def done_in(observations: list[tuple[str, dict]]) -> dict[str, set[str]]:
    """What the turn's tools changed, by kind of claim: the references of each (a kind with no reference: "")."""
    done: dict[str, set[str]] = {kind: set() for kind in KIND_REFERENCE}
    for change in dialogue.done_in(observations):
        for kind in BACKS[change["action"]]:
            done[kind].add(change["reference"])
    return done


def unbacked(reply: str, observations: list[tuple[str, dict]]) -> list[Claim]:
    """The claims of a turn's final reply that the turn's tool results (`Turn.observations`: (tool name, result))
    do not back: no success of that kind, or a reference named that no such success has."""
    done = done_in(observations)
    missing = []
    for claim in claims_in(reply, observations):
        made = {r.upper() for r in done[claim.kind]}
        if not made or not claim.references <= made:
            missing.append(claim)
    return missing
