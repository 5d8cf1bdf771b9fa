"""Chinese, Malay and Tamil words in English, so one reader understands all four languages and their mixes.

The offline reader (understanding.py, when.py) and the FAQ index read English. Before reading, `gloss`
replaces the words and phrases listed in the per-language word lists (`lexicons/*.json`, data only) by
their English meaning: "hari Khamis" -> "thursday", "nama saya" -> "my name is", "明天下午三点" ->
"tomorrow afternoon 3:00", "மகள் 4 வயது" -> "daughter 4 years old". Words not listed (names, English
words, numbers) are kept as written, so mixed messages ("can book tour hari Khamis?", "明天 10am can?")
need no language decision first.

How each script is matched:
- Latin (Malay): whole words, any case.
- Han (Chinese): substrings, as Chinese has no spaces; Chinese numerals before a counter ("四岁",
  "三点", "十点半") are first written in digits, and "下星期三" is read as "next week" + "wednesday".
- Tamil: at the start of a word, the rest of the word (a case ending: "வியாழக்கிழமை", "நாளைக்கு") is
  taken with it.
A variant starting with "=" matches only as written ("=ada": "Ada" is also a name).
A list entry may hold "{n}" (a number, "3" or "3:30") and "{m}" (minutes), e.g. "{n} tahun" ->
"{n} years old". Longer entries win over shorter ones.
"""

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from chatbot.agent.offline.when import rewrite

LEXICONS = Path(__file__).with_name("lexicons")
HAN = "\u4e00-\u9fff\u3400-\u4dbf"
TAMIL = "\u0b80-\u0bff"
_NUMBER = r"(\d{1,2}(?:[:.][0-5]\d)?)"
_MINUTES = r"([0-5]?\d)"
_SCRIPT = re.compile(rf"[{HAN}]|[{TAMIL}]")
_SPACES = re.compile(r"(?<=\S)  +(?=\S)")
_POSSESSIVE = re.compile(r"(?<=\w) +(?='s\b)")  # "my child" + "'s name is" (Malay "anak saya namanya")


@dataclass(frozen=True)
class Glossed:
    """A message in English words, with where each character came from and the languages whose words it had."""

    text: str
    index: tuple[int, ...]
    source: str
    languages: frozenset[str]

    def original(self, part: str) -> str:
        """The parent's own words for `part`, a piece of the glossed text (itself when it is not found)."""
        start = self.text.find(part)
        if start < 0 or not part:
            return part
        return self.source[self.index[start] : self.index[start + len(part)]].strip() or part


@dataclass(frozen=True)
class _Entry:
    english: str
    language: str
    numbered: bool  # has {n}
    minutes: bool  # has {m}


def _variant_pattern(variant: str, script: str) -> str:
    exact = variant.startswith("=")  # "=ada": only as written ("Ada" is also a name)
    variant = variant.removeprefix("=")
    body = re.escape(variant).replace(r"\{n\}", _NUMBER).replace(r"\{m\}", _MINUTES)
    body = re.sub(r"(?:\\ )+", r"\\s*" if script == "han" else r"\\s+", body)
    if exact:
        body = f"(?-i:{body})"
    if script == "latin":
        return rf"(?<![\w]){body}(?![\w])"
    if script == "tamil":
        tail = "" if variant.endswith("}") else f"[{TAMIL}]*"  # a case ending goes with the word
        return rf"(?<![{TAMIL}]){body}{tail}"
    return body


@dataclass(frozen=True)
class _Variant:
    """One way of writing an entry, with the first letter(s) a text must hold for it to be tried."""

    written: str
    script: str
    entry: _Entry
    key: str  # a Latin variant's first word, else its first character (after any {n})

    @property
    def numbers(self) -> int:
        return self.written.count("{n}") + self.written.count("{m}")


@dataclass(frozen=True)
class _Lexicons:
    variants: tuple[_Variant, ...]  # longest first
    numbers: re.Pattern  # number words ("empat", "நான்கு"), written in digits first
    digits: dict[str, str]
    numeral: re.Pattern | None  # Chinese numerals before a counter ("四岁", "三点")
    numerals: dict[str, int]
    week: re.Pattern | None  # "下星期" before a day number
    asks: re.Pattern | None  # a clause asking by a question word or ending, without a question mark


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object whose keys are all different (a repeated English meaning would silently drop a list)."""
    keys = [key for key, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise ValueError(f"word list repeats {repeated}")
    return dict(pairs)


def _key(written: str, script: str) -> str:
    literal = re.sub(r"\{[nm]\}", " ", written.removeprefix("=")).split()
    if not literal:
        raise ValueError(f"word list entry {written!r} has no word")
    if script != "latin":
        return literal[0][0]
    letters = re.findall(r"[^\W\d_]+", literal[0].lower())  # "mana2", "mana-mana": "mana", as _candidates reads it
    return letters[0] if letters else literal[0].lower()


@lru_cache(maxsize=1)
def _lexicons() -> _Lexicons:
    """Every word list, longest variants first."""
    variants: list[_Variant] = []
    number_words: list[tuple[str, str]] = []
    digits: dict[str, str] = {}
    numerals: dict[str, int] = {}
    counters, week_words, question_words, question_endings = "", [], [], []
    for path in sorted(LEXICONS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique_keys)
        script, language = data["script"], data["language"]
        numerals.update(data.get("numerals", {}))
        counters += data.get("counters", "")
        week_words += data.get("week_before_day", [])
        question_words += data.get("question_words", [])
        question_endings += data.get("question_endings", [])
        for number, written in data.get("numbers", {}).items():
            number_words += [(word, script) for word in written]
            digits |= {word.lower(): number for word in written}
        for english, written in data["words"].items():
            entry = _Entry(english, language, "{n}" in english, "{m}" in english)
            variants += [_Variant(variant, script, entry, _key(variant, script)) for variant in written]
    variants.sort(key=lambda v: -len(v.written.lstrip("=").replace("{n}", "00").replace("{m}", "00")))
    number_words.sort(key=lambda w: -len(w[0]))
    numbers = re.compile("|".join(f"(?:{_variant_pattern(w, script)})" for w, script in number_words), re.IGNORECASE)
    # ("同一时间": 时间 is the word "time", not a clock's hour)
    # ("晚一点": a bit later, not one o'clock: a numeral right after a comparative is "a bit")
    numeral = re.compile(rf"(?<![晚早快慢多少好近远遠])[{''.join(numerals)}]{{1,3}}(?=\s*[{counters}])"
                         r"(?!\s*[时時][间間])") if (
        numerals and counters) else None
    week_words.sort(key=len, reverse=True)
    week = re.compile(rf"({'|'.join(map(re.escape, week_words))})(?=[一二三四五六日天1-6])") if week_words else None
    return _Lexicons(tuple(variants), numbers, digits, numeral, numerals, week,
                     _asks(sorted(question_words, key=len, reverse=True), question_endings))


_CLAUSE_END = "。！!？?，,;；\n"


def _asks(words: list[str], endings: list[str]) -> re.Pattern | None:
    """A clause that asks without a question mark: one holding a question word ("一个班多少个学生": how many
    children in a class), up to its end, but not a negation ("没什么": nothing), or a question ending closing it
    ("pakai uniform ke"). `gloss` marks it with a question mark, as parents often type none."""
    parts = []
    if words:
        parts.append(rf"(?<![没沒])(?:{'|'.join(map(re.escape, words))})[^{_CLAUSE_END}]*?(?<![吗嗎呢])"
                     rf"(?=\s*(?:[{_CLAUSE_END}]|$))(?!\s*[？?])")
    if endings:
        parts.append(rf"(?<!\w)(?:{'|'.join(map(re.escape, endings))})(?=\s*(?:[.!,;\n]|$))")
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


@lru_cache(maxsize=512)
def _pattern(chosen: tuple[int, ...]) -> tuple[re.Pattern, dict[int, _Entry]]:
    """One pattern for these variants (positions in _Lexicons.variants) and the entry of each group."""
    parts, entries, group = [], {}, 1
    for position in chosen:
        variant = _lexicons().variants[position]
        parts.append(f"({_variant_pattern(variant.written, variant.script)})")
        entries[group] = variant.entry
        group += 1 + variant.numbers
    return re.compile("|".join(parts), re.IGNORECASE), entries


def _candidates(text: str) -> tuple[int, ...]:
    """The variants whose first word (or character) the text holds: only those are tried."""
    present = set(re.findall(r"[^\W\d_]+", text.lower())) | set(text)
    return tuple(i for i, variant in enumerate(_lexicons().variants) if variant.key in present)


def _han_number(digits: str, numerals: dict[str, int]) -> int:
    """"四" -> 4, "十" -> 10, "十二" -> 12, "二十" -> 20, "两" -> 2."""
    values = [numerals[c] for c in digits]
    if 10 not in values:
        return int("".join(str(v) for v in values))
    tens, _, units = digits.partition(next(c for c in digits if numerals[c] == 10))
    return (numerals[tens] if tens else 1) * 10 + (numerals[units] if units else 0)


def _digits(match: re.Match, lex: _Lexicons) -> str:
    """A number word in digits ("empat" -> "4"; "நான்கு" with its case ending -> "4")."""
    word = match.group(0).lower()
    while word and word not in lex.digits:
        word = word[:-1]
    return lex.digits.get(word, match.group(0))


def _spaced(english: str, text: str, match: re.Match) -> str:
    """`english` with a space on each side where a word of it would otherwise touch the text around it."""
    before = text[match.start() - 1 : match.start()]
    after = text[match.end() : match.end() + 1]
    lead = " " if before and not before.isspace() and english[:1].isalnum() else ""
    punctuation = unicodedata.category(after).startswith("P") if after else True
    tail = " " if after and not after.isspace() and english[-1:].isalnum() and not punctuation else ""
    return f"{lead}{english}{tail}"


def _asked(match: re.Match) -> str:
    """A clause asking by a question word gets its question mark; a question ending ("ke", "tak") is one."""
    said = match.group(0)
    return f"{said}？" if _SCRIPT.search(said) else "?"


@lru_cache(maxsize=4096)
def gloss(text: str) -> Glossed:
    """`text` with every listed word of another language in English (see the module docstring).

    Cached: a turn reads the same messages several times, and the FAQ index reads every entry."""
    lex = _lexicons()
    source, index = text, list(range(len(text) + 1))
    if lex.numeral and _SCRIPT.search(text):
        text, index = rewrite(text, index, lex.numeral, lambda m: str(_han_number(m.group(0), lex.numerals)))
    if lex.week and _SCRIPT.search(text):  # "下星期三": "next week" then the day, read as "星期三"
        text, index = rewrite(text, index, lex.week, lambda m: f"{m.group(1)} 星期")
    if lex.asks:
        text, index = rewrite(text, index, lex.asks, _asked)
    text, index = rewrite(text, index, lex.numbers, lambda m: _digits(m, lex))
    chosen = _candidates(text)
    if not chosen:
        return Glossed(text, tuple(index), source, frozenset())
    pattern, entries = _pattern(chosen)
    languages: set[str] = set()

    def english(match: re.Match) -> str:
        group = match.lastindex or 0
        while group not in entries:  # lastindex may name a number group inside the entry's group
            group -= 1
        entry = entries[group]
        languages.add(entry.language)
        words = entry.english
        if entry.numbered:
            words = words.replace("{n}", match.group(group + 1))
        if entry.minutes:
            words = words.replace("{m}", f"{int(match.group(group + 1 + entry.numbered)):02d}")
        return _spaced(words, match.string, match)

    glossed, index = rewrite(text, index, pattern, english)
    glossed, index = rewrite(glossed, index, _SPACES, " ")  # two glossed words side by side
    glossed, index = rewrite(glossed, index, _POSSESSIVE, "")
    return Glossed(glossed, tuple(index), source, frozenset(languages))

