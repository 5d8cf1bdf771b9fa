"""The parent's language: recognised per message, remembered on the contact, answered in.

Four languages, each a Django language code: English ("en"), Simplified Chinese
("zh-hans"), Malay ("ms") and Tamil ("ta"). English is the school's fallback.

How a message's language is decided, in order:
0. A request for the replies in a language ("english pls", "bahasa melayu boleh?", "中文可以吗") is that language
   (`language_request.py`), whatever it is written in.
1. Script: any Han character is Chinese, any Tamil letter is Tamil ("can book tour 星期四?" is Chinese).
2. Code-mixed Latin text: words of the marker lists (`language_markers.json`, data: common words written in
   lower case, and day and month names in any case) of Malay ("can book tour hari Khamis?") and of Tamil written
   in Latin letters ("Tanglish": "naalaikku tour irukka?", and its endings "-kku", "-anum") are counted, and
   the language with more of them is the message's; a tie keeps the language in use when it is one of the two.
   A mixed message counts as the non-English language present.
3. Sentences: lingua (offline n-gram models, restricted to English and Malay) decides when it is confident
   and has at least two words to go on. Capitalised words after the first are left out first: they are
   mostly names, and "Muhammad bin Abdullah" alone says nothing about the language the parent writes in.
   A parent already writing one language switches to another only with a sentence of at least SWITCH_WORDS
   words: fewer ("earliest one", "my number is ...", a name typed in lower case) are words they mix in.
   Singapore English particles ("lah", "lor", "ah": `particles`) and the words of Singapore's place names
   (`places`: "school bus to sengkang?") are left out first: "ok can lah" is English, and a particle alone never
   switches the language.
4. Otherwise ("ok", "Leo, 5", "91234567") the message keeps the language the contact was already using.
"""

import json
import re
from functools import cache, lru_cache
from pathlib import Path

from django.conf import settings
from django.utils.translation.trans_real import DjangoTranslation
from django.views.i18n import JavaScriptCatalog
from lingua import Language, LanguageDetector, LanguageDetectorBuilder

from bookings.models import School
from chatbot.language_request import asked_language
from crm.models import Contact

ENGLISH, CHINESE, MALAY, TAMIL = "en", "zh-hans", "ms", "ta"
CODES = (ENGLISH, CHINESE, MALAY, TAMIL)
# lingua's relative confidence from which a message of two words, or of three and more, decides the language
CONFIDENT, SURE_ENOUGH = 0.9, 0.7
SWITCH_WORDS = 4  # words it takes a sentence the statistics read as another language to switch the language in use

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
TAMIL_SCRIPT = re.compile(r"[\u0b80-\u0bff]")
WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
REFERENCE = re.compile(r"\b[A-Z]-[A-Z0-9]{4,12}\b", re.IGNORECASE)  # T-7KQ3XM, W-8JH2KD: no language in them
MARKERS_FILE = Path(__file__).with_name("language_markers.json")


@cache
def _markers(code: str) -> tuple[frozenset[str], frozenset[str]]:
    """(words that mark the language when written in lower case, names of days and months in any case)."""
    data = json.loads(MARKERS_FILE.read_text(encoding="utf-8"))[code]
    return frozenset(data["words"]), frozenset(data["proper"])


@cache
def _tanglish() -> tuple[frozenset[str], tuple[str, ...]]:
    """(words of Tamil written in Latin letters, word endings that mark it)."""
    data = json.loads(MARKERS_FILE.read_text(encoding="utf-8"))[TAMIL]
    return frozenset(data["words"]), tuple(data["endings"])


@cache
def _places() -> frozenset[str]:
    """The words of Singapore's place names ("sengkang", "pasir ris"), as parents write them in lower case: no
    evidence of any language ("school bus to sengkang?" is English)."""
    return frozenset(json.loads(MARKERS_FILE.read_text(encoding="utf-8"))["places"])


@cache
def _particles() -> frozenset[str]:
    """Singapore English particles ("lah", "lor"): no evidence of any language."""
    return frozenset(json.loads(MARKERS_FILE.read_text(encoding="utf-8"))["particles"])


def _marked(lower: list[str], written: list[str], previous: str) -> str:
    """Malay or Tamil when marker words say so (the language with more of them), '' when none does."""
    words, proper = _markers(MALAY)
    tamil, endings = _tanglish()
    malay = sum(w in words for w in lower) + sum(w.lower() in proper for w in written)
    tanglish = sum(w in tamil or (w.endswith(endings) and w not in words) for w in lower)
    if not (malay or tanglish):
        return ""
    if malay == tanglish:
        return previous if previous in (MALAY, TAMIL) else MALAY
    return MALAY if malay > tanglish else TAMIL


@cache
def _detector() -> LanguageDetector:
    return LanguageDetectorBuilder.from_languages(Language.ENGLISH, Language.MALAY).build()


def warm_up() -> None:
    """lingua loads its models on first use (~0.2 s): pay that at start-up, not in a parent's turn. (Through
    `detect`, a sentence with a Malay marker word would never reach lingua.)"""
    _detector().compute_language_confidence_values("thank you, see you tomorrow at the school")


def _sentence_words(text: str) -> list[str]:
    """The words, less capitalised ones after the first (names, mostly)."""
    words = WORD.findall(text)
    return [w for i, w in enumerate(words) if i == 0 or not w[:1].isupper() or w.isupper()]


@lru_cache(maxsize=256)  # a message is detected where its contact is made and again where it is stored
def detect(text: str, previous: str = "") -> str:
    """The language of one message (a code of CODES), or `previous` when the message does not tell."""
    asked = asked_language(text)  # "english pls", "中文可以吗": the language asked for, whatever it is written in
    if asked:
        return asked
    if HAN.search(text):
        return CHINESE
    if TAMIL_SCRIPT.search(text):
        return TAMIL
    text = REFERENCE.sub(" ", text)
    written = WORD.findall(text)
    lower = [w.lower() for w in written if w.islower() or len(written) == 1]  # "Boleh?" alone is no name
    marked = _marked(lower, written, previous)
    if marked:
        return marked
    sentence = [w for w in _sentence_words(text) if w.lower() not in _particles() and w.lower() not in _places()]
    if len(sentence) >= 2:  # one word ("ya", "Sengkang") is too little for statistics
        found = _detector().compute_language_confidence_values(" ".join(sentence))[0]
        if found.value >= (CONFIDENT if len(sentence) == 2 else SURE_ENOUGH):
            language = MALAY if found.language == Language.MALAY else ENGLISH
            # a few English words from a parent writing another language ("earliest one", "my number is ..."):
            # the English they mix in, not a switch; a sentence of their own in English is one
            # a few words the statistics call another language ("tan mei hua 9876 5432": a name) are no switch either
            mixed_in = previous not in ("", language) and len(sentence) < SWITCH_WORDS
            return previous if mixed_in else language
    return previous


def remember(contact: Contact, text: str) -> str:
    """The language of the contact's new message (theirs so far when it does not tell); kept on the contact."""
    language = detect(text, contact.language or ENGLISH)
    if language != contact.language:
        contact.language = language
        Contact.objects.filter(pk=contact.pk).update(language=language)
    return language


def reply_language(school: School, contact: Contact) -> str:
    """The language to answer the contact in: the one they last wrote in, when the school offers it."""
    return school.language_for(contact.language or ENGLISH)


@cache
def widget_texts(code: str) -> dict:
    """The web chat widget's own words in `code` (the project's "djangojs" catalogue; English: the widget's)."""
    if code == ENGLISH:
        return {}
    catalogue = JavaScriptCatalog()
    catalogue.translation = DjangoTranslation(code, domain="djangojs", localedirs=settings.LOCALE_PATHS)
    return catalogue.get_catalog()
