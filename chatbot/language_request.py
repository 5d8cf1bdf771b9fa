"""A message that asks for the replies in another language ("english pls", "can speak english?", "bahasa melayu
boleh?", "中文可以吗", "தமிழில் பேசலாமா?"): it names one language and says nothing else than how to ask for it
(`language_requests.json`, data). "do you teach english?" or "有英文课吗" say more: they are questions."""

import json
import re
from functools import cache
from pathlib import Path

REQUESTS_FILE = Path(__file__).with_name("language_requests.json")
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
PUNCTUATION = re.compile(r"[^\w\s\u0b80-\u0bff]")
SENTENCE_END = re.compile(r"(?<=[.?!\u3002\uff1f\uff01])\s*|\n")
MAX_WORDS = 7  # a request is short; a longer message says something besides


@cache
def _data() -> tuple[dict[str, tuple[str, ...]], frozenset[str], tuple[str, ...]]:
    data = json.loads(REQUESTS_FILE.read_text(encoding="utf-8"))
    names = {code: tuple(sorted(words, key=len, reverse=True)) for code, words in data["names"].items()}
    return names, frozenset(data["words"]), tuple(sorted(data["han_words"], key=len, reverse=True))


def _named(text: str, name: str) -> re.Match | None:
    if HAN.search(name) or not name.isascii():
        return re.search(re.escape(name), text)
    return re.search(rf"\b{re.escape(name)}\b", text)


def asked_language(text: str) -> str:
    """The language code a message asks the replies to be in, '' when it is no such request; a sentence of its own
    may ask it ("seri, book pannunga. english la reply pannunga pls", "can reply in english? hard to read tamil")."""
    asked = {_asked_in(piece) for piece in SENTENCE_END.split(text) if piece.strip()} - {""}
    return asked.pop() if len(asked) == 1 else ""


def _asked_in(text: str) -> str:
    names, words, han_words = _data()
    lowered = PUNCTUATION.sub(" ", text.lower())
    if len(lowered.split()) > MAX_WORDS:
        return ""
    found = [(code, match) for code, spelt in names.items() for name in spelt if (match := _named(lowered, name))]
    codes = {code for code, _ in found}
    if len(codes) != 1:
        return ""
    code, match = max(found, key=lambda f: len(f[1].group(0)))
    rest = lowered[: match.start()] + " " + lowered[match.end() :]
    for han in han_words:
        rest = rest.replace(han, " ")
    return code if all(word in words for word in rest.split()) else ""
