"""The concierge's own earlier replies, read back in every language it writes.

The policy keeps no state: what it asked last ("your name", "just to check"),
which tours and slots it listed, and which task a reply finished, it reads from
its earlier replies (lexicon.REPLY_ASKS, in English). A reply written in Chinese,
Malay or Tamil says the same things in the catalogue's words (locale/), so these
patterns follow the catalogue's wording; tests/chatbot/test_reply_markers.py renders
every reply in every language and checks that each is read back as its English is.
"""

import datetime as dt
import re
from dataclasses import dataclass

from chatbot.agent.offline.lexicon import BOOKING_REF, REPLY_ASKS
from chatbot.dates import read_slot

_TRANSLATED_ASKS = {
    "zh-hans": {
        "parent_name": r"您的姓名",
        "parent_phone": r"电话",
        "parent_email": r"电邮",
        "child_name": r"叫什么名字|孩子的名字",
        "child_age": r"几岁|年龄",
        "when": r"哪一个|哪天|换一天|什么时间",
        "call_time": r"方便致电的时间",
        "which_tour": r"哪一次参观",
        "read_back": r"确认一下",
        "propose_first": r"最早的是",
        "confirm_cancel": r"确定要取消吗",
        "offer_book": r"帮您预约|改为预约",
        "offer_callback": r"给您回电(?:吗|，好吗)",
        "reschedule": r"改到|改期|更改哪|更改您",
        "cancel": r"(?<!已)取消",
        "callback": r"回电",
        "family_again": r"还是为其他孩子",
        "booking": r"参观",
        "seat_offer": r"保留这个名额",
        "offer_waitlist": r"加入候补名单吗",
    },
    "ms": {
        "parent_name": r"\bnama anda\b",
        "parent_phone": r"\btelefon\b",
        "parent_email": r"\be-?mel\b",
        "child_name": r"\bsiapakah nama\b|\bnama anak\b",
        "child_age": r"\bumur",
        "when": r"\byang mana satu\b|\bhari lain\b|\bhari dan masa\b|\bhari atau masa\b",
        "call_time": r"\bmasa yang sesuai untuk kami menelefon\b",
        "which_tour": r"\blawatan mana\b",
        "read_back": r"\buntuk kepastian\b",
        "propose_first": r"\byang paling awal\b",
        "confirm_cancel": r"\bbatalkannya\?",
        "offer_book": r"\bmahu menempah\b|\bsaya tempah\?",
        "offer_callback": r"\bmenghubungi anda semula\b",
        "reschedule": r"\bpindahkan\b|\bmemindahkan\b|\bpindahkannya\b",
        "cancel": r"\b(?:membatalkan|batalkan|batalkannya)\b",
        "callback": r"\bpanggilan semula\b|\bmenghubungi anda semula\b|\bkemasukan kami menghubungi\b",
        "family_again": r"\batau untuk orang lain\?",
        "booking": r"\blawatan\b",
        "seat_offer": r"\bsaya menyimpannya untuk\b",
        "offer_waitlist": r"\bsenarai menunggu\?",
    },
    "ta": {
        "parent_name": r"உங்கள் பெயர",
        "parent_phone": r"தொலைபேசி",
        "parent_email": r"மின்னஞ்சல்",
        "child_name": r"பெயர் என்ன|குழந்தையின் பெயர்",
        "child_age": r"என்ன வயது|வயது \(|குழந்தையின் வயது",
        "when": r"எந்த நேரத்தை|எந்த நாள|வேறு நாள|எதை ரத்து செய்ய|எதை மாற்ற",
        "call_time": r"அழைக்க வசதியான நேரம்",
        "which_tour": r"எந்தச் சுற்றுப்பார்வையை",
        "read_back": r"உறுதிப்படுத்திக்கொள்ள",
        "propose_first": r"மிக விரைவான நேரம்",
        "confirm_cancel": r"ரத்து செய்துவிடட்டுமா",
        "offer_book": r"முன்பதிவு செய்ய விரும்புகிறீர்களா|முன்பதிவு செய்யட்டுமா",
        "offer_callback": r"திரும்ப அழைக்க வேண்டுமா|திரும்ப அழைக்க ஏற்பாடு செய்ய முடியும்",
        "reschedule": r"மாற்றுகிறேன்|மாற்றிவிடட்டுமா|மாற்ற விரும்புகிறீர்கள்|மாற்றுவோம்",
        "cancel": r"(?<![\u0b80-\u0bff])ரத்து(?! செய்யப்பட்டது)",  # not the "ரத்து" inside "நேரத்துக்கு"
        "callback": r"திரும்ப அழைப்|திரும்ப அழைக்க|அழைக்குமாறு",
        "family_again": r"வேறு ஒருவருக்கா",
        "booking": r"சுற்றுப்பார்வை",
        "seat_offer": r"வைத்திருக்கிறேன்",
        "offer_waitlist": r"காத்திருப்புப் பட்டியலில் சேர்க்கட்டுமா",
    },
}
ASKS = {  # "options" (a numbered list) is the same in every language
    key: [REPLY_ASKS[key], *(re.compile(by_key[key], re.IGNORECASE) for by_key in _TRANSLATED_ASKS.values()
                             if key in by_key)]
    for key in REPLY_ASKS
}
# "How old is Mia?" / "How old are Leo and Mia?" in the catalogue's words: the names, and what joins them.
ASKED_AGE_OF = [re.compile(r"(?:^|[\s，。？！]|那)([^\s，。？！那]+?)今年几岁"),
                re.compile(r"\bumur ([^?.!]+?)\?", re.IGNORECASE),
                re.compile(r"([^\s,.?!]+(?:(?:, | மற்றும் )[^\s,.?!]+)*)-க்கு என்ன வயது")]
_NAMES_JOINED = re.compile(r"和|、|,\s*|\s+dan\s+|\s+மற்றும்\s+")
_NOT_NAMES = {"他", "她", "孩子", "குழந்தை", "மேலும்"}  # pronouns, "and also"
# Where a read-back starts ("Just to check before I book: ...").
READ_BACK_START = re.compile(r"just to check|(?:预约前)?跟您确认一下|untuk kepastian"
                             r"|(?:முன்பதிவு செய்வதற்கு முன் )?உறுதிப்படுத்திக்கொள்ள", re.IGNORECASE)
_REF = r"([TCW]-[A-Z0-9]+)"  # tours, call backs, waitlist entries
DONE = re.compile(  # a reply that finished a booking, move or call back gives its reference
    rf"\breference is {_REF}|编号是 {_REF}|\banda ialah {_REF}|குறிப்பு எண் {_REF}", re.IGNORECASE)
CANCELLED = re.compile(  # a cancellation names the tour
    r"\btour (T-[A-Z0-9]+)\b[^.\n]* has been cancelled|参观 (T-[A-Z0-9]+) 已取消"
    r"|\blawatan anda (T-[A-Z0-9]+)\b[^.\n]* telah dibatalkan|சுற்றுப்பார்வை (T-[A-Z0-9]+) ரத்து செய்யப்பட்டது",
    re.IGNORECASE)
OPTION = re.compile(r"^\s*\d{1,2}[.)]\s+(.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Ending:
    """A reference a reply finished a task with; `cancelled` when the task was a cancellation."""

    reference: str
    cancelled: bool


def asked_in(reply: str) -> frozenset[str]:
    """What a concierge reply asked the parent for (the REPLY_ASKS keys), in whichever language it is."""
    return frozenset(key for key, patterns in ASKS.items() if any(p.search(reply) for p in patterns))


def ages_asked_in(reply: str) -> tuple[str, ...]:
    """The children a translated reply asked the age of (English: `understanding.asked_ages_of`)."""
    for pattern in ASKED_AGE_OF:
        match = pattern.search(reply or "")
        if match:
            return tuple(n for n in _NAMES_JOINED.split(match.group(1).strip()) if n and n not in _NOT_NAMES)
    return ()


def endings(reply: str) -> list[Ending]:
    """The tasks a reply finished, in the order it says them."""
    found = [(m.start(), Ending(next(g for g in m.groups() if g).upper(), False)) for m in DONE.finditer(reply)]
    found += [(m.start(), Ending(next(g for g in m.groups() if g).upper(), True)) for m in CANCELLED.finditer(reply)]
    return [ending for _, ending in sorted(found, key=lambda pair: pair[0])]


def read_back_in(reply: str) -> str:
    """The read-back of a reply, from its "Just to check" on ('' when it has none)."""
    start = READ_BACK_START.search(reply)
    return reply[start.start():] if start else ""


def options_in(reply: str, today: dt.date) -> list[dict]:
    """The numbered slots or tours a reply offered, read back into dates (and references for tours)."""
    options = []
    for match in OPTION.finditer(reply):
        line = match.group(1)
        slot = read_slot(line, today)
        if slot is None:
            continue
        reference = BOOKING_REF.findall(line)
        options.append({"date": slot[0], "time": slot[1], "booking_id": reference[-1] if reference else None})
    return options
