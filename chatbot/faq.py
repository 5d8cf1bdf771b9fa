"""FAQ retrieval for the `get_faq_answer` tool: BM25 over a school's FAQ entries.

Parents write informally ("how much r the fees", "do kids get food at school?"),
so text is normalised before ranking: school phrases and synonyms map to one
token ("tuition", "price", "how much" -> "cost"), words are lightly stemmed, and
a query word the index has never seen is corrected to a known word one edit
away. A follow-up such as "is it compulsory?" is first rewritten into a
standalone question with the topic of the parent's previous question.
"""

import re
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Max, Q
from rank_bm25 import BM25Okapi

from chatbot.models import FaqEntry

QUESTION_WEIGHT = 2.0  # a word in the question or tags counts twice a word in the answer
# The best entry must score this many times the idf of the rarest word (a word of a single entry),
# so the bar scales with the size of the school's FAQ.
MIN_SCORE_RATIO = 1.3
MIN_COVERAGE = 0.35  # share of the question's weight (idf) the best entry must contain
UNKNOWN_WORD_WEIGHT = 0.5  # a word no entry uses weighs this share of the rarest known word
CLOSE_RATIO = 0.8  # a runner-up this close to the best is offered as a related topic
MAX_RELATED = 4
MAX_TOPIC_WORDS = 6
NO_MATCH_MESSAGE = (
    "The school's FAQ has no answer to this question. Don't guess: offer a callback from the admissions "
    "team, or suggest asking during a campus tour."
)

_STOP_WORDS_TEXT = """
    a about above after again all along also am an and any anything are arent as ask at be been before being but
    by can cant could did didnt do does doesnt doing dont exactly for from get gets getting go going got had has
    have having he hello help her here hey hi him his how i id if im in into is isnt it its ive just kind know
    like ll me mine more most much my need needs no not now of ok okay on one only or other our ours out over
    own please pls plz r re really school schools send she should so some something tell than thank thanks that
    thats the their them then there these they thing things this those to too u ur very want wanted was we were
    what whats when where which while who why will with wonder wondering wont would ye yes you your yours
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

# A follow-up leans on the previous question: it opens with "and ..."/"what about ...", or it asks
# about a property ("how much", "compulsory", "what time") of something it only names with a pronoun.
PRONOUNS = frozenset({"it", "that", "this", "they", "them", "those", "these"})
FOLLOW_UP_OPENER = re.compile(r"^(?:and|also|plus|but|or|so|what about|how about|what if|same for)\b[\s,]*(\w*)")
# ... unless the opener starts a question of its own: "and do you have a bus?"
NEW_QUESTION_WORDS = frozenset({
    "do", "does", "did", "is", "are", "was", "were", "can", "could", "will", "would", "should", "have", "has",
    "what", "how", "when", "where", "which", "who", "why", "i", "we", "my", "there",
})
REPLACEABLE_PRONOUN = re.compile(r"\b(it|that|this)\b", re.IGNORECASE)
PROPERTY_WORDS = (
    "cost compulsory duration age start finish hour time day weekend available free included pay discount often "
    "open closed possible allowed book booked work"
)

# Multi-word phrases first (applied to the lower-cased text), then single-word synonym groups.
PHRASES = [
    (r"(?:s\$|us\$|\$|£|€)\s?\d[\d,.]*", " cost "),  # a price in an answer is about cost
    (r"\bhow much\b\s*(?=(?:is|are|r|does|do|will|would|for|per|to)\b|[?.!]|$)", " cost "),
    (r"\bhow much\b", " "),  # "how much homework": a quantity, not a price
    (r"\bhow long\b", " duration "),
    (r"\bschool (?:hours|day|timings?|times?)\b", " schoolday "),
    (r"\b\d+ ?(?:years?|yrs?|months?) old\b", " age "),
    (r"\b\d+ months?\b", " age "),
    (r"\bhow old\b", " age "),
    (r"\bdress code\b", " uniform "),
    (r"\bafter school care\b", " wraparound "),
    (r"\bbefore school care\b", " wraparound "),
    (r"\bwrap ?around\b", " wraparound "),
    (r"\bbreakfast club\b", " wraparound "),
    (r"\blate (stay|pick ?up)\b", " wraparound "),
    (r"\bafter school\b", " afterschool "),
    (r"\bspecial (educational )?needs\b", " sen "),
    (r"\b(additional|learning) (needs|support|difficult(y|ies))\b", " sen "),
    (r"\bfinancial (aid|assistance|help|support)\b", " scholarship "),
    (r"\bhigh school\b", " secondary "),
    (r"\bmiddle school\b", " secondary "),
    (r"\bearly years\b", " preschool "),
    (r"\bhalf term\b", " holiday "),
    (r"\bfirst aid\b", " health "),
    (r"\b(?:toilet|potty) train(?:ed|ing)?\b", " toilet "),
    (r"\bopen (day|morning|house)\b", " tour "),
    (r"\b(look|show) (a)?round\b", " tour "),
    (r"\bcar ?park\b", " park "),
    (r"\bpe\b", " sport "),
    (r"\b(real|actual) (person|human)\b", " human "),
    (r"\bpersonal (data|information|details)\b", " privacy "),
    (r"\bpublic transport\b", " location "),
    (r"\bget there\b", " location "),
    (r"\bstudent'?s? pass\b", " visa "),
    (r"\bspeak english\b", " eal "),
]
PHRASE_PATTERNS = [(re.compile(pattern), replacement) for pattern, replacement in PHRASES]

SYNONYM_GROUPS = {
    "cost": "fee fees tuition cost costs price prices pricing charge charges expensive afford affordable pricey",
    "meal": "lunch lunches meal meals canteen food eat eating cafeteria menu snack snacks dinner",
    "diet": "diet diets dietary halal vegetarian vegan kosher gluten",
    "allergy": "allergy allergies allergic nut nuts intolerance intolerant",
    "bus": "bus buses transport transportation shuttle coach minibus",
    "uniform": "uniform uniforms clothes clothing wear outfit attire",
    "child": "child children kid kids son daughter boy girl student students pupil pupils",
    "enrol": "enrol enroll enrolment enrollment admission admissions apply application applying register "
             "registration join joining",
    "age": "age ages aged old older young younger",
    "tour": "tour tours visit visiting viewing",
    "park": "park parking",
    "stem": "stem steam robotics coding code programming technology engineering lego",
    "club": "club clubs cca ccas extracurricular activity activities",
    "language": "language languages bilingual",
    "mandarin": "mandarin chinese",
    "sen": "sen dyslexia dyslexic adhd autism autistic asd disability disabilities senco",
    "scholarship": "scholarship scholarships bursary bursaries",
    "sibling": "sibling siblings brother brothers sister sisters twin twins",
    "discount": "discount discounts reduction cheaper",
    "holiday": "holiday holidays vacation vacations break breaks",
    "term": "term terms semester calendar",
    "safe": "safe safety secure security cctv guard guards safeguarding",
    "health": "nurse nurses clinic medical medicine medicines medication sick ill illness doctor health unwell "
              "injury injured fever temperature",
    "homework": "homework assignment assignments",
    "assess": "assessment assessments assess exam exams examination test tests testing grade grades grading "
              "mark marks report reports",
    "communicate": "communicate communication app updates update newsletter informed",
    "curriculum": "curriculum syllabus subjects subject teach teaches teaching taught",
    "qualification": "qualification qualifications qualified certified certification",
    "hour": "hour hours timing timings",
    "day": "day days daily today everyday",
    "start": "start starts begin begins",
    "finish": "finish finishes end ends dismissal",
    "weekend": "weekend weekends saturday saturdays sunday sundays",
    "primary": "primary elementary junior",
    "secondary": "secondary senior",
    "preschool": "preschool nursery kindergarten kinder reception",
    "compulsory": "compulsory mandatory required obligatory",
    "toilet": "toilet potty nappy nappies diaper diapers",
    "nap": "nap naps napping sleep rest naptime",
    "device": "laptop laptops ipad ipads tablet tablets device devices computer computers chromebook",
    "trip": "trip trips excursion excursions camp camps outing outings",
    "sport": "sport sports swimming swim pool football athletics gym",
    "teacher": "teacher teachers staff educator educators",
    "religion": "religion religious christian faith church secular",
    "visa": "visa visas permit immigration",
    "location": "location located address directions mrt train station",
    "human": "human person bot chatbot ai",
    "privacy": "privacy gdpr pdpa",
    "pay": "pay paying payment payments instalment instalments installment installments",
}


def _stem(word: str) -> str:
    """A light suffix stripper: plurals, -ing, -ed and a final -e, applied alike to entries and questions."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in (("ies", "y"), ("sses", "ss"), ("uses", "us"), ("xes", "x"), ("ches", "ch"),
                                ("shes", "sh")):
        if word.endswith(suffix):
            word = word[: -len(suffix)] + replacement
            break
    else:
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            word = word[:-1]
    if len(word) > 6 and word.endswith("ion"):
        word = word[:-3]  # inspection -> inspect
    elif len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
        if len(word) > 2 and word[-1] == word[-2]:
            word = word[:-1]  # swimming -> swim
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


SYNONYMS = {_stem(word): canonical for canonical, words in SYNONYM_GROUPS.items() for word in words.split()}
WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    """Lower-cased words with school phrases replaced; stop words still in."""
    text = text.lower().replace("'", "").replace("\u2019", "").replace("-", " ")
    for pattern, replacement in PHRASE_PATTERNS:
        text = pattern.sub(replacement, text)
    return WORD.findall(text)


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1:] for i in range(len(word))}


@dataclass
class _Speller:
    """Corrects an unknown word to a known one at most one edit (or one swap) away."""

    known: frozenset[str]
    by_deletion: dict[str, list[str]]

    @classmethod
    def build(cls, words: set[str]) -> "_Speller":
        by_deletion: dict[str, list[str]] = {}
        for word in sorted(words):
            if len(word) >= 4 and word.isalpha():
                for variant in _deletions(word) | {word}:
                    by_deletion.setdefault(variant, []).append(word)
        return cls(frozenset(words), by_deletion)

    def correct(self, word: str) -> str:
        if word in self.known or len(word) < 6 or not word.isalpha():
            return word
        candidates: set[str] = set()
        for variant in _deletions(word) | {word}:
            candidates.update(c for c in self.by_deletion.get(variant, ()) if c[0] == word[0])
        if not candidates:
            return word
        # Typos rarely hit the first letter; then the closest length, then alphabetical (deterministic).
        return min(candidates, key=lambda c: (abs(len(c) - len(word)), c))


def _tokens(text: str, speller: _Speller | None = None) -> list[str]:
    """Search tokens: stop words out, stemmed, spelling-corrected (queries only), synonyms mapped."""
    tokens = []
    for word in _words(text):
        if word in STOP_WORDS:
            continue
        stem = _stem(word)
        if speller is not None:
            stem = speller.correct(stem)
            if stem in STOP_WORDS:
                continue
        tokens.append(SYNONYMS.get(stem, stem))
    return tokens


PROPERTY_TOKENS = frozenset(_tokens(PROPERTY_WORDS))


@dataclass
class _Index:
    entries: list[dict]
    titles: BM25Okapi
    bodies: BM25Okapi
    doc_tokens: list[frozenset[str]]
    title_tokens: list[frozenset[str]]
    idf: dict[str, float]
    min_score: float
    vocabulary: frozenset[str]
    speller: _Speller


_cache: dict[int | None, tuple[tuple, _Index]] = {}


def _entries_for(school) -> Q:
    school_id = getattr(school, "pk", None)
    if school_id is None:
        return Q(is_active=True, school__isnull=True)
    return Q(is_active=True) & (Q(school_id=school_id) | Q(school__isnull=True))


def _okapi(docs: list[list[str]]) -> BM25Okapi:
    """BM25Okapi with the always-positive (Lucene) idf.

    Okapi's own idf is zero or below for a word in half the entries or more,
    which in a school's FAQ of a few dozen entries can be most of its words.
    """
    bm25 = BM25Okapi([doc or ["_"] for doc in docs])
    n = bm25.corpus_size
    document_frequency: dict[str, int] = {}
    for frequencies in bm25.doc_freqs:
        for word in frequencies:
            document_frequency[word] = document_frequency.get(word, 0) + 1
    bm25.idf = {word: float(np.log((n - df + 0.5) / (df + 0.5) + 1)) for word, df in document_frequency.items()}
    return bm25


def _build_index(school) -> _Index | None:
    rows = list(
        FaqEntry.objects.filter(_entries_for(school)).order_by("school_id", "id")
        .values("id", "question", "answer", "tags", "related_topics")
    )
    if not rows:
        return None
    title_docs, body_docs, raw_words = [], [], set()
    for row in rows:
        title_text = " ".join([row["question"], *[str(t) for t in row["tags"] or []]])
        title_docs.append(list(dict.fromkeys(_tokens(title_text))))  # tags are alternatives, not frequency
        body_docs.append(_tokens(row["answer"]))
        raw_words.update(_stem(w) for w in _words(f"{title_text} {row['answer']}") if w not in STOP_WORDS)
    doc_tokens = [frozenset(t) | frozenset(b) for t, b in zip(title_docs, body_docs, strict=True)]
    n = len(rows)
    document_frequency: dict[str, int] = {}
    for tokens in doc_tokens:
        for token in tokens:
            document_frequency[token] = document_frequency.get(token, 0) + 1
    idf = {token: float(np.log((n - df + 0.5) / (df + 0.5) + 1)) for token, df in document_frequency.items()}
    return _Index(
        entries=rows,
        titles=_okapi(title_docs),
        bodies=_okapi(body_docs),
        doc_tokens=doc_tokens,
        title_tokens=[frozenset(t) for t in title_docs],
        idf=idf,
        min_score=MIN_SCORE_RATIO * max(idf.values()),
        vocabulary=frozenset(idf),
        speller=_Speller.build(raw_words | set(SYNONYMS) | STOP_WORDS),
    )


def _index_for(school) -> _Index | None:
    """The school's index, rebuilt when an entry is added, removed, (de)activated or edited."""
    stamp = FaqEntry.objects.filter(_entries_for(school)).aggregate(count=Count("id"), latest=Max("updated_at"))
    key = (stamp["count"], stamp["latest"])
    school_id = getattr(school, "pk", None)
    cached = _cache.get(school_id)
    if cached and cached[0] == key:
        return cached[1]
    index = _build_index(school)
    _cache[school_id] = (key, index)
    return index


def _content_words(text: str) -> list[str]:
    """The topic words of a message as written, for carrying over to a follow-up."""
    words = []
    for word in re.findall(r"[\w'\u2019-]+", text.lower()):
        bare = word.replace("'", "").replace("\u2019", "")
        if bare not in STOP_WORDS and bare not in PRONOUNS and word not in words:
            words.append(word)
    return words[:MAX_TOPIC_WORDS]


def _is_follow_up(question: str) -> bool:
    """ "is it compulsory?" is; "do they get lunch?" names its topic and is not."""
    text = question.lower().strip()
    content = set(_tokens(text))
    opener = FOLLOW_UP_OPENER.match(text)
    if opener and opener.group(1) not in NEW_QUESTION_WORDS:
        return len(content) <= 4
    if set(WORD.findall(text.replace("'", ""))) & PRONOUNS:
        return content <= PROPERTY_TOKENS
    return not content


def rewrite_follow_up(question: str, history: list[str] | None, *, vocabulary: frozenset[str] | None = None) -> str:
    """"how much is it?" after "Do you have a school bus?" -> "how much is the bus?".

    `history` is the parent's earlier messages, oldest first. The topic comes from
    the most recent of the last few messages with topic words (those the FAQ knows,
    when `vocabulary` is given), itself rewritten if it was a follow-up too.
    Questions that stand on their own are returned unchanged.
    """
    question = " ".join(question.split())
    recent = [m for m in (history or [])[-4:] if m and m.strip()]
    if not recent or not _is_follow_up(question):
        return question
    for position in range(len(recent) - 1, -1, -1):
        previous = rewrite_follow_up(recent[position], recent[:position], vocabulary=vocabulary)
        if vocabulary is not None and not set(_tokens(previous)) & vocabulary:
            continue
        topic = " ".join(_content_words(previous))
        if not topic:
            continue
        if REPLACEABLE_PRONOUN.search(question):
            return REPLACEABLE_PRONOUN.sub(f"the {topic}", question, count=1)
        return f"{question.rstrip(' ?.!')} ({topic})?"
    return question


def _coverage(index: _Index, query: set[str], position: int) -> float:
    """Share of the question's idf weight found in entry `position`.

    A word no entry uses ("poem", "bitcoin") counts against the match, but less
    than a known word the entry lacks, which points to another topic.
    """
    unknown_weight = UNKNOWN_WORD_WEIGHT * max(index.idf.values())
    total = sum(index.idf.get(token, unknown_weight) for token in query)
    found = sum(index.idf[token] for token in query if token in index.doc_tokens[position])
    return found / total if total else 0.0


def _is_answer(index: _Index, words: set[str], position: int) -> bool:
    """Enough of the question is in the entry, and not only somewhere in its answer text."""
    return bool(words & index.title_tokens[position]) and _coverage(index, words, position) >= MIN_COVERAGE


def _different_topics(index: _Index, first: int, second: int) -> bool:
    a, b = index.title_tokens[first], index.title_tokens[second]
    return len(a & b) / max(len(a | b), 1) < 0.5


def answer_question(school, question: str, history: list[str] | None = None) -> dict:
    """The `get_faq_answer` result (chatbot/agent/CONTRACT.md) for a parent's question."""
    index = _index_for(school)
    standalone = rewrite_follow_up(question, history, vocabulary=index.vocabulary if index else None)
    no_match = {"status": "no_match", "message": NO_MATCH_MESSAGE, "standalone_question": standalone}
    if index is None:
        return no_match
    query = _tokens(standalone, index.speller)
    if not query:
        return no_match
    scores = QUESTION_WEIGHT * index.titles.get_scores(query) + index.bodies.get_scores(query)
    order = [int(i) for i in np.argsort(-scores, kind="stable")]
    words = set(query)
    contenders = [i for i in order[:3] if scores[i] >= max(index.min_score, CLOSE_RATIO * scores[order[0]])]
    best = next((i for i in contenders if _is_answer(index, words, i)), None)
    if best is None:
        return no_match
    entry = index.entries[best]
    related = [str(topic) for topic in entry["related_topics"] or []]
    runner_up = next((i for i in contenders if i != best and _is_answer(index, words, i)), None)
    if runner_up is not None and _different_topics(index, best, runner_up):
        other = index.entries[runner_up]["question"]
        related = [other, *(topic for topic in related if topic != other)]
    return {
        "status": "success",
        "answer": entry["answer"],
        "question_matched": entry["question"],
        "sources": [{"id": entry["id"], "question": entry["question"]}],
        "related_topics": [topic for topic in related if topic != entry["question"]][:MAX_RELATED],
        "standalone_question": standalone,
    }
