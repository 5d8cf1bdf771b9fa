"""FAQ retrieval for the `get_faq_answer` tool: BM25 over a school's FAQ entries.

Parents write informally ("how much r the fees", "do kids get food at school?"),
so text is normalised before ranking: school phrases and synonyms map to one
token ("tuition", "price", "how much" -> "cost"), words are stemmed (Snowball English), and
a query word the index has never seen is corrected to a known word one edit
away. A follow-up such as "is it compulsory?" is first rewritten into a
standalone question with the topic of the parent's previous question.

Honesty over coverage: a match is an answer only when the entry covers enough of
what was asked (`confidence`, below): a question about a topic the FAQ never
mentions ("is there a policy on smartwatches?") is refused with status
`no_match`, which tells the model to say it is not sure and to offer a callback,
and which puts the question on the dashboard's "no answer" list. Conversational
lead-ins ("btw", "quick question -") are dropped before retrieval, and a message
asking two things ("what are the fees and is there a bus?") is answered part by
part, the parts without a confident answer listed as `unanswered`.
"""

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from django.db.models import Count, Max, Q
from rank_bm25 import BM25Okapi
from snowballstemmer import stemmer

from chatbot import language
from chatbot.agent.offline.gloss import HAN, TAMIL, gloss
from chatbot.models import FaqEntry

QUESTION_WEIGHT = 2.0  # a word in the question or tags counts twice a word in the answer
# The best entry must score this many times the idf of the rarest word (a word of a single entry),
# so the bar scales with the size of the school's FAQ.
MIN_SCORE_RATIO = 1.3
# Confidence: the share of the question's weight (idf) the entry covers, a word of its question or tags
# counting fully and a word found only in its answer text BODY_CREDIT of it. A word no entry uses weighs
# UNKNOWN_WORD_WEIGHT times the rarest known word: it is most often the very topic the FAQ lacks
# ("smartwatches", "piercings"). Below MIN_CONFIDENCE the match is not an answer (measured on
# quality/faq_eval/questions.json: see tests/chatbot/test_faq_honesty.py).
MIN_CONFIDENCE = 0.55
BODY_CREDIT = 0.75
UNKNOWN_WORD_WEIGHT = 1.0
GENERIC_WEIGHT = 0.25
CLOSE_RATIO = 0.8  # a runner-up this close to the best is offered as a related topic
MAX_RELATED = 4
MAX_TOPIC_WORDS = 6
_ENGLISH_STEMMER = stemmer("english")
STEM_CACHE_SIZE = 50_000  # distinct words kept stemmed: bounded, as questions bring words of their own
MAX_PARTS = 4  # questions answered from one message; the rest of a long message is one last part
SUGGEST = "request_callback"
LANGUAGE_KEYS = ("answer_language", "question_language")  # set when the answer is not in the question's language
NO_MATCH_MESSAGE = (
    "The school's FAQ has no confident answer to this question. Don't guess: tell the parent you're not sure "
    "about it and offer a callback from the admissions team (request_callback)."
)
NO_QUESTION_MESSAGE = (
    "This message asks the FAQ nothing (a greeting, thanks, or a wish to book or visit): answer it with the "
    "other tools, not from the FAQ."
)
UNANSWERED_MESSAGE = (
    "The FAQ answers only some parts of this message. For each question in `unanswered`, tell the parent "
    "you're not sure about it rather than guess, and offer a callback from the admissions team."
)

# Conversational openers dropped before retrieval, longest first; one per line. Those in FOLLOW_UP_OPENERS
# are kept until the follow-up rewriting has seen them ("and is it compulsory?").
LEAD_INS = """
    before that
    btw
    by the way
    one more thing
    one last thing
    i have a question
    also
    and also
    and
    plus
    so
    oh and
    oh
    sorry
    excuse me
    hi
    hi there
    hello
    hello there
    hey
    hey there
    good morning
    good afternoon
    good evening
    dear sir or madam
    ok so
    okay so
    ok
    okay
    ok thanks
    thanks
    thank you
    great
    cool
    perfect
    alright
    well
    um
    umm
    hmm
    anyway
    actually
    just wondering
    i was wondering
    i wanted to ask
    just to check
    just checking
    quick one
    oh wait
    ah wait
    wait actually
    wait ah
    wait lah
    wait wait
    hold on
    hang on
    wait a sec
    wait a minute
"""
LEAD_IN_PHRASES = tuple(sorted({" ".join(line.split()) for line in LEAD_INS.splitlines() if line.strip()},
                               key=lambda phrase: (-len(phrase), phrase)))
FOLLOW_UP_OPENERS = frozenset({"and", "also", "and also", "plus", "so"})
# "quick q", "random qn", "1 more question", "a silly question": a question announced, in any of its chat forms
QUESTION_ANNOUNCED = re.compile(r"(?:(?:a|one|1|another|quick|small|random|silly|short|just|last|more)\s+)*"
                                r"(?:question|qn|qns|q|query|enquiry)\b")
# "wait how much are the fees": a "wait" before the question it opens ("wait list for year 2?" asks about the list)
WAIT_BEFORE_QUESTION = re.compile(r"(?:wait|w8|hold on)(?=\s+(?:how|what|when|where|which|who|why|is|are|do|does|did"
                                  r"|can|could|got|u|you|r)\b)")
LEAD_IN_SEPARATORS = " ,;:.!-\u2013\u2014"

# Where one message asks two things: after a sentence, or at "and"/"also"/"plus" followed by a new question.
SPLIT_WORDS = ("and also", "and", "also", "plus")
QUESTION_STARTS = (
    "do does did is are was were can could will would should shall have has what whats how when where which "
    "who whos whose why any"
)
SENTENCE_END = re.compile(r"(?<=[?!.])\s+|\n+")
PART_BREAK = re.compile(  # ("... to come and have a look": one wish, "have" asking nothing)
    rf",?\s+(?:{'|'.join(SPLIT_WORDS)})\s+(?=(?:{'|'.join(QUESTION_STARTS.split())})\b)(?!have a\b)", re.IGNORECASE
)
# "We'd love to come and see the campus": a wish to do something (book, visit), which the FAQ does not
# answer, whatever words it shares with an entry. "I'd like to know ..." is a question.
WISH_OPENERS = (
    "i'd like to", "i would like to", "we'd like to", "we would like to", "i'd love to", "we'd love to",
    "i would love to", "we would love to", "i want to", "we want to", "i wish to", "we wish to",
    "i'm hoping to", "we're hoping to", "i'm looking to", "we're looking to", "i need to", "we need to",
    "can i please", "please",
)
WISH_VERBS = "arrange book cancel change come meet move reschedule schedule speak talk tour visit"
WISH = re.compile(rf"^(?:{'|'.join(WISH_OPENERS)}) (?:{'|'.join(WISH_VERBS.split())})\b")
# A visit asked for as a question or an idiom ("could we pop in for a look round?", "any chance we can come see the
# school?", "keen to have a peek at the campus"): a request to book a tour, not a question for the FAQ.
VISIT_OPENERS = (
    "can i", "can we", "could i", "could we", "may i", "may we", "might we", "we can", "we could", "i could",
    "any chance i can", "any chance we can",
    "any chance i could", "any chance we could", "any chance to", "is it possible to", "would it be possible to",
    "is it ok to", "is it okay to", "is it ok if we", "is it okay if we", "would it be ok if we", "mind if we",
    "would you mind if we", "keen to", "i'm keen to", "we're keen to", "we are keen to", "we'd be keen to",
    "i'd be keen to", "hoping to", "we were hoping to", "i was hoping to",
)
VISIT_VERBS = (
    r"come|pop|drop|swing|stop by|visit|tour|look (?:a)?round|have a (?:look|peek|nosy|wander)|take a look"
    r"|check out (?:the|your) (?:school|campus|place)|see (?:the|your) (?:school|campus|place|premises|facilities"
    r"|grounds|centre|kindergarten|preschool)"
)
VISIT = re.compile(rf"(?:^|(?<=\s))(?:(?:{'|'.join(VISIT_OPENERS)}) (?:please |maybe |just )?(?:{VISIT_VERBS})"
                   r"|(?:(?:do|does) (?:you|u|the school)|(?:if|whether) (?:you|u))(?: guys| all)?"
                   r" (?:do|offer|run|arrange) (?:school |campus )?"
                   r"(?:tours?|visits?|viewings?))\b")
# A request for information is a question too ("Tell me the address please.").
REQUEST_STARTS = ("tell me", "please tell me", "let me know", "i want to know", "i would like to know",
                  "i need to know", "could you tell me", "can you tell me")
QUESTION_START = re.compile(
    rf"^(?:{'|'.join(QUESTION_STARTS.split())}|{'|'.join(REQUEST_STARTS)})\b", re.IGNORECASE
)
COORDINATION = re.compile(r"\b(?:and|or|plus)\b|[&/]", re.IGNORECASE)  # "parking or bus?": maybe two topics
CONTRACTION = re.compile(r"['\u2019](?:d|ll|re|ve|m|s)\b")

_STOP_WORDS_TEXT = """
    a about above after again all along also am an and any anything are arent as ask at be been before being but
    by can cant could did didnt do does doesnt doing dont during exactly for from get gets getting go going got
    had has have having he hello help her here hey hi him his how i id if im in into is isnt it its ive just
    kind know like ll me mine more most much my need needs no not now of ok okay on one only or other our ours
    out over own please pls plz r re really sch school schools send she should so some something tell than thank
    thanks that thats the their them then there these they thing things this those to too u ur very want wanted
    was we were what whats when where which while who why will with wonder wondering wont would ye yes you your
    yours
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

# Everyday words that carry no topic of their own ("do you provide ...", "my son loves robots"). They
# weigh GENERIC_WEIGHT of their idf when an entry uses them, and nothing when none does, so that only an
# unknown word with a meaning ("smartwatches", "piercings") counts against a match.
_GENERIC_WORDS_TEXT = """
    able about absolutely actual actually add advance advice afternoon afternoons again ago ahead allow allowed
    almost already although always american another anybody anyone anything anyway anywhere appreciate approx
    approximately around asap aware awesome bad basic basically best better big bit both bring bringing brought
    btw busy buy care certain certainly chance check checking choose clarify clear close come comes coming
    complete concern confirm consider considering cope could couldnt curious currently deal dear definitely
    detail details different discuss does each earlier early easy eight either else enough especially etc even
    evening evenings ever every everyone everything exact example exist exists expect find first five follow
    following four fyi general generally give given gives glad good great guess guy guys handle handled happen
    happens happy hear heard hello hey hi hope hoping idea important include includes including info information
    interest interested just keen kind kindly know last later learn learning learns least leave less let lets
    little look looking lot lots love lovely loves main make makes manage managed many maybe mean means mention
    might mind moment morning mornings move moving much must near nearby nearest need needed nice nine normal
    normally note offer offered offering offers often ok okay one option options own particular particularly
    month monthly months people per perhaps period plan planning please pls plz point policies policy possible
    possibly prefer pretty
    probably procedure process provide provided provides providing put quick quickly quite rather real reason
    recent recently regard regarding related relocate relocating right rule rules same say see seem seven share
    should since six small soon sort specific specifically step steps still sure take talk taught teach teaches
    teaching ten thing think though thought three til till top total totally track tried true try trying twice
    two type typical typically understand until usual usually various via wat wats watt way well whatever
    whether while whole wish within without wonder wondered wonderful wondering worry would yeah yep yet
    yall ya ye yer ur ppl gonna wanna gotta kinda lemme dunno hv hav thx tq tks question questions qn qns
    query enquiry somewhere someplace sometime
"""
GENERIC_WORDS = frozenset(_GENERIC_WORDS_TEXT.split())
EVERYDAY_TOKENS = frozenset({"child"})  # "my son", "the kids": who, not what about

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
    (r"\b(?:(?:in )?one[ -]?shot|lump[ -]?sum|in full)\b", " pay "),  # Singapore "pay one shot": all at once
    (r"\bschool (?:hours|day|timings?|times?)\b", " schoolday "),
    (r"\b(?:half|full)[ -]?days?\b", " schoolday "),  # "is there a half day option?": the school's hours
    (r"\b\d+ ?(?:years?|yrs?|months?) old\b", " age "),
    (r"\b\d+ months?\b", " age "),
    (r"\bhow old\b", " age "),
    (r"\bturns? \d+\b", " age "),
    (r"\b\d+ and a half\b", " age "),
    (r"\blunch ?box(?:es)?\b", " packed lunch "),
    (r"\breport cards?\b", " report "),
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
    (r"\bvideo ?calls?\b", " videocall "),  # a virtual tour, not "can I call you?"
    (r"\b(look|show) (a)?round\b", " tour "),
    (r"\bcar ?park\b", " park "),
    (r"\bpe\b", " sport "),
    (r"\bon (?:site|campus|the premises)\b", " "),
    (r"\b(real|actual) (person|human)\b", " human "),
    (r"\bpersonal (data|information|details)\b", " privacy "),
    (r"\bpublic transport\b", " location "),
    (r"\bget there\b", " location "),
    # "where is the school?", Malay "di mana sekolah ini?": a "where" asking after nothing but the school itself
    (r"\bwhere\b(?=(?:\s+(?:is|are|s|the|this|that|it|your|you|school|campus|located|situated))*\s*[?.!]*\s*$)",
     " location "),
    (r"\bdirections?\b", " location "),  # its stem "direct" is also in "direct debit"
    (r"\bstudent'?s? pass\b", " visa "),
    (r"\bspeak english\b", " eal "),
    # a language as a subject: "mandarin lessons", Chinese 华文课 ("mandarin lessons"): languages taught, not clubs
    (r"\b(mandarin|chinese|malay|tamil|french|spanish|japanese|korean|hindi) (?:lessons?|class(?:es)?|subject)\b",
     r" \1 language taught "),
    # an age for joining is the age asked about, not the joining: "admission age", "age to join", "how old to start"
    (r"\b(?:admission|admissions|entry|entrance|enrol+ment|intake|joining|starting) age\b", " age "),
    (r"\b(age|old)(?: (?:of|for|to|at|when|on))+ (?:admission|entry|enrol+(?:ment|ing)?|join(?:ing)?|start(?:ing)?)\b",
     r" \1 "),
    (r"\bmin(?:imum)? age\b", " minimum age "),  # "min age": not minutes
]
PHRASE_PATTERNS = [(re.compile(pattern), replacement) for pattern, replacement in PHRASES]

SYNONYM_GROUPS = {
    "cost": "fee fees tuition cost costs price prices pricing charge charges expensive afford affordable pricey",
    "meal": "lunch lunches meal meals canteen food eat eating cafeteria menu snack snacks dinner",
    "diet": "diet diets dietary halal vegetarian vegan kosher gluten",
    "allergy": "allergy allergies allergic nut nuts peanut peanuts intolerance intolerant",
    "buggy": "buggy buggies pram prams stroller strollers pushchair pushchairs",
    "annual": "annual annually yearly",
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
    "sport": "sport sports football athletics gym",
    "swim": "swimming swim pool pools",  # not just any sport: a school without a pool has no answer
    "teacher": "teacher teachers staff educator educators",
    "religion": "religion religious christian faith church secular",
    "visa": "visa visas permit immigration",
    "location": "location located address mrt train station",
    "human": "human person bot chatbot ai",
    "privacy": "privacy gdpr pdpa",
    "pay": "pay paying payment payments instalment instalments installment installments",
}


@lru_cache(maxsize=STEM_CACHE_SIZE)
def _stem(word: str) -> str:
    """The word's Snowball (Porter 2) English stem ("inspections" -> "inspect", "swimming" -> "swim"), applied
    alike to entries and questions; numbers and short words as they are."""
    if len(word) <= 3 or not word.isalpha():
        return word
    return _ENGLISH_STEMMER.stemWord(word)


SYNONYMS = {_stem(word): canonical for canonical, words in SYNONYM_GROUPS.items() for word in words.split()}
SYNONYM_WORDS = frozenset(word for words in SYNONYM_GROUPS.values() for word in words.split())
WORD = re.compile(r"[a-z0-9]+")
# A capitalised word that does not open a sentence: "my son Karthik", "from Tampines West".
PROPER_NOUN = re.compile(r"(?<=[\w,] )([A-Z][a-z]+)\b")
CAPITALISED = re.compile(r"\b([A-Z][a-z]+)\b")
UNCASED_SCRIPT = re.compile(f"[{HAN}{TAMIL}]")


def _words(text: str) -> list[str]:
    """Lower-cased words with school phrases replaced; stop words still in. Chinese, Malay and Tamil words are
    read in English first (chatbot.agent.offline.gloss), so an entry and a question in different languages meet;
    lower-cased before, as a word the reader keeps when capitalised, in case it is a name ("Ada", Malay "is
    there"), is no name in a question."""
    text = CONTRACTION.sub("", gloss(text.lower()).text.lower())  # "we'd", "what's": the pronoun, not "wed" or "whats"
    text = text.replace("'", "").replace("\u2019", "").replace("-", " ")
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


def _token_words(text: str, speller: _Speller | None = None) -> list[tuple[str, str]]:
    """(search token, word as written) pairs: stop words out, stemmed, spelling-corrected (queries only),
    synonyms mapped."""
    pairs = []
    for word in _words(text):
        if word in STOP_WORDS:
            continue
        stem = _stem(word)
        if speller is not None and stem not in speller.known:
            fixed = speller.correct(word)  # "tution" -> "tuition", which its stem "tuit" would not find
            stem = _stem(fixed) if fixed != word else speller.correct(stem)
            if fixed in STOP_WORDS or stem in STOP_WORDS:
                continue
        if stem not in STOP_WORDS:  # "ones"
            pairs.append((SYNONYMS.get(stem, stem), word))
    return pairs


def _tokens(text: str, speller: _Speller | None = None) -> list[str]:
    """Search tokens (see _token_words)."""
    return [token for token, _ in _token_words(text, speller)]


PROPERTY_TOKENS = frozenset(_tokens(PROPERTY_WORDS))
PER_PERIOD_TOKENS = frozenset(_tokens("per month monthly weekly"))  # a price's period: "how much a month?"
COST_TOKEN = _tokens("cost")[0]
GENERIC_STEMS = frozenset(_stem(word) for word in GENERIC_WORDS)


def _is_manner_word(word: str) -> bool:
    """An English adverb of manner or degree no entry uses ("roughly", "honestly", "currently"): it says how the
    parent asks, not what about, so it never counts against an entry that covers the rest of the question."""
    return len(word) > 4 and word.isascii() and word.endswith("ly")


def _names_a_property(token: str, word: str) -> bool:
    """A property token reached from a word of a topic ("fees", "tuition" -> cost), not from the property itself
    ("cost", "how much")."""
    return token in PROPERTY_TOKENS and word not in PROPERTY_TOKENS and word not in GENERIC_WORDS


def _is_everyday(token: str, word: str) -> bool:
    """A word that carries no topic: an everyday word, a property ("how much", "compulsory") or a number."""
    return (word in GENERIC_WORDS or _stem(word) in GENERIC_STEMS or token in PROPERTY_TOKENS
            or token in EVERYDAY_TOKENS or token.isdigit())


@dataclass
class _Index:
    entries: list[dict]
    translations: list[dict[str, dict]]  # per entry: language -> its translation
    titles: BM25Okapi
    bodies: BM25Okapi
    doc_tokens: list[frozenset[str]]
    title_tokens: list[frozenset[str]]
    idf: dict[str, float]
    median_idf: float
    min_score: float
    vocabulary: frozenset[str]
    title_vocabulary: frozenset[str]  # the tokens of the entries' questions and tags
    speller: _Speller
    positions: dict[str, int]  # an entry's question -> its position (related topics are named by question)


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


def _translations(rows: list[dict]) -> tuple[list[dict], list[dict[str, dict]]]:
    """The entries in their own right, and for each its translations by language (a translation whose entry is
    not shown stands on its own)."""
    ids = {row["id"] for row in rows}
    entries = [row for row in rows if row["translation_of_id"] not in ids]
    position = {row["id"]: i for i, row in enumerate(entries)}
    translations: list[dict[str, dict]] = [{} for _ in entries]
    for row in rows:
        if row["translation_of_id"] in ids:
            translations[position[row["translation_of_id"]]][row["language"]] = row
    return entries, translations


def _build_index(school) -> _Index | None:
    rows = list(
        FaqEntry.objects.filter(_entries_for(school)).order_by("school_id", "id")
        .values("id", "question", "answer", "tags", "related_topics", "language", "translation_of_id")
    )
    if not rows:
        return None
    rows, translations = _translations(rows)
    title_docs, body_docs, raw_words = [], [], set()
    for row, versions in zip(rows, translations, strict=True):
        title_text = " ".join([row["question"], *[str(t) for t in row["tags"] or []],
                               *[version["question"] for version in versions.values()]])
        title_docs.append(list(dict.fromkeys(_tokens(title_text))))  # tags are alternatives, not frequency
        body_docs.append(_tokens(row["answer"]))
        words = [w for w in _words(f"{title_text} {row['answer']}") if w not in STOP_WORDS]
        raw_words.update(words)
        raw_words.update(_stem(w) for w in words)
    doc_tokens = [frozenset(t) | frozenset(b) for t, b in zip(title_docs, body_docs, strict=True)]
    n = len(rows)
    document_frequency: dict[str, int] = {}
    for tokens in doc_tokens:
        for token in tokens:
            document_frequency[token] = document_frequency.get(token, 0) + 1
    idf = {token: float(np.log((n - df + 0.5) / (df + 0.5) + 1)) for token, df in document_frequency.items()}
    return _Index(
        entries=rows,
        translations=translations,
        titles=_okapi(title_docs),
        bodies=_okapi(body_docs),
        doc_tokens=doc_tokens,
        title_tokens=[frozenset(t) for t in title_docs],
        idf=idf,
        median_idf=float(np.median(list(idf.values()))),
        min_score=MIN_SCORE_RATIO * max(idf.values()),
        vocabulary=frozenset(idf),
        title_vocabulary=frozenset().union(*title_docs),
        speller=_Speller.build(raw_words | set(SYNONYMS) | SYNONYM_WORDS | STOP_WORDS),
        positions={row["question"]: position for position, row in reversed(list(enumerate(rows)))},
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
    # nothing of its own, or a price's period with no topic: "how much per month?" (of the topic before)
    return not content or (bool(content & PER_PERIOD_TOKENS) and COST_TOKEN in content
                           and content <= PROPERTY_TOKENS | PER_PERIOD_TOKENS)


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


def _starts_with(text: str, phrase: str) -> int:
    """The length of `phrase` plus its separators when `text` opens with it as whole words, else 0."""
    if not text.startswith(phrase):
        return 0
    rest = text[len(phrase):]
    if rest and not (rest[0] in LEAD_IN_SEPARATORS[:-3] or (rest[0] in "-\u2013\u2014" and rest[1:2].isspace())):
        return 0  # "hidden", "so-called"
    return len(text) - len(rest.lstrip(LEAD_IN_SEPARATORS))


def strip_lead_ins(question: str, *, keep_follow_up_opener: bool = False) -> str:
    """"Quick question - btw, do you have a bus?" -> "do you have a bus?".

    Drops the openers of LEAD_INS one after the other. With `keep_follow_up_opener`,
    an opener that marks a follow-up ("and", "also") stops the stripping, so that
    rewrite_follow_up still sees it. Returns "" when the message is only lead-ins.
    """
    text = " ".join(question.split())
    while text:
        lowered = text.lower().replace("\u2019", "'")
        announced = QUESTION_ANNOUNCED.match(lowered) or WAIT_BEFORE_QUESTION.match(lowered)
        for phrase in (announced.group(0),) if announced else LEAD_IN_PHRASES:
            length = _starts_with(lowered, phrase)
            if length:
                break
        else:
            return text
        if keep_follow_up_opener and phrase in FOLLOW_UP_OPENERS:
            return text
        text = text[length:]
    return text


def has_topic(question: str) -> bool:
    """Whether a question names something the FAQ could be about ("is there a bus?"), unlike "is that ok?"."""
    return bool(_tokens(strip_lead_ins(question)))


def _is_question(text: str) -> bool:
    return text.rstrip().endswith("?") or bool(QUESTION_START.match(strip_lead_ins(text)))


def _is_wish(text: str) -> bool:
    said = strip_lead_ins(text).lower().replace("\u2019", "'")
    return bool(WISH.match(said) or VISIT.search(said))


def split_question(question: str) -> list[str]:
    """The questions of one message: "What are the fees and is there a bus?" -> two.

    It splits after a sentence, and at "and"/"also"/"plus" when a new question
    follows ("... and do you ..."), never inside one ("allergies and special diets").
    A sentence that only gives context ("My daughter is 4.") stays with the
    question it leads to; greetings, thanks and wishes ("we'd love to visit")
    are dropped, so a message of only those has no question at all.
    """
    pieces = [p.strip(" ,") for sentence in SENTENCE_END.split(question.strip())
              for p in PART_BREAK.split(sentence)]
    parts: list[str] = []
    context = ""
    for piece in pieces:
        if not _tokens(strip_lead_ins(piece)) or _is_wish(piece):  # "Hi!", "thanks so much", "we'd love to visit"
            continue
        if _is_question(piece):
            parts.append(f"{context} {piece}".strip())
            context = ""
        else:
            context = f"{context} {piece}".strip()
    if context:
        if parts:
            parts[-1] = f"{parts[-1]} {context}"
        else:
            parts.append(context)
    if len(parts) > MAX_PARTS:
        parts = [*parts[: MAX_PARTS - 1], " ".join(parts[MAX_PARTS - 1:])]
    return parts


def _proper_nouns(text: str) -> frozenset[str]:
    """The words written with a capital inside a sentence ("Karthik", "Tampines West"), lower-cased: who or
    where the question is about, not what. All-capital words ("SEN", "MRT") and "I" are not among them. In
    Chinese or Tamil writing, whose scripts have no capitals, a capitalised Latin word is a name anywhere."""
    pattern = CAPITALISED if UNCASED_SCRIPT.search(text) else PROPER_NOUN
    return frozenset(match.group(1).lower() for match in pattern.finditer(text))


def _weights(index: _Index, pairs: list[tuple[str, str]], *, names: frozenset[str] = frozenset(),
             foreign: bool = False) -> dict[str, float]:
    """Each distinct query token's weight: its idf, GENERIC_WEIGHT of it for an everyday word ("taught",
    "provide", "7") or a name no entry's question or tags use ("Karthik", "Tampines"); for a token no entry
    uses, UNKNOWN_WORD_WEIGHT x the rarest word's idf, or nothing when it is an everyday word or a fragment.

    In a question `foreign` to English (Malay, Chinese, Tamil, mixed), a word no entry uses is most often a
    word of the parent's language the word lists do not translate ("bekal", "sebulan"), not the topic: when
    the question has a topic word an entry knows, such a word weighs like an everyday word. With no known
    topic word it keeps its full weight, so a question on a topic the FAQ lacks stays unanswered.
    """
    unknown = UNKNOWN_WORD_WEIGHT * max(index.idf.values())
    # a property said by a topic word is the topic ("yuran" and "fees" read as cost, as "how much" does)
    plain = {(token, word): _is_everyday(token, word) and not _names_a_property(token, word) for token, word in pairs}
    everyday = {token for token, word in pairs if plain[token, word]
                or (word in names and token not in index.title_vocabulary)}
    everyday -= {token for token, word in pairs if not plain[token, word] and word not in names}
    topical = any(token in index.idf and token not in everyday for token, _ in pairs)
    weights = {}
    for token, word in pairs:
        if token in weights:
            continue
        if token in index.idf:
            weights[token] = GENERIC_WEIGHT * index.median_idf if token in everyday else index.idf[token]
        elif token.isdigit():  # "what's 25 times 17"
            weights[token] = GENERIC_WEIGHT * unknown
        elif token not in everyday and len(token) > 2 and not _is_manner_word(word):
            weights[token] = GENERIC_WEIGHT * unknown if foreign and topical else unknown  # "bekal"
    return weights


def confidence(index: _Index, weights: dict[str, float], position: int) -> float:
    """How much of the question entry `position` covers, from 0 to 1 (see MIN_CONFIDENCE)."""
    total = sum(weights.values())
    found = sum(weight * _credit(index, token, position) for token, weight in weights.items())
    return found / total if total else 0.0


def _different_topics(index: _Index, first: int, second: int) -> bool:
    a, b = index.title_tokens[first], index.title_tokens[second]
    return len(a & b) / max(len(a | b), 1) < 0.5


def _no_match(standalone: str) -> dict:
    return {"status": "no_match", "message": NO_MATCH_MESSAGE, "suggest": SUGGEST,
            "standalone_question": standalone}


def _nothing_asked(standalone: str) -> dict:
    """A message that asks the FAQ nothing: not on the "no answer" list (`unanswered` is empty)."""
    return {**_no_match(standalone), "message": NO_QUESTION_MESSAGE, "unanswered": []}


def asked_nothing(result: dict) -> bool:
    """Whether a get_faq_answer result is `_nothing_asked`'s: a message that asked the FAQ nothing ("is that
    ok?"), unlike a question it found no answer to."""
    return result.get("unanswered") == []


def _success(index: _Index, position: int, sure: float, standalone: str, asked: str,
             related_first: str = "") -> dict:
    """The entry found, in the language asked in when it has that version (else in its own, which says so)."""
    entry = index.entries[position]
    related = [str(topic) for topic in entry["related_topics"] or []]
    if related_first:
        related = [related_first, *(topic for topic in related if topic != related_first)]
    served = _version(index, position, asked)
    result = {
        "status": "success",
        "answer": served["answer"],
        "question_matched": served["question"],
        "sources": [{"id": served["id"], "question": served["question"]}],
        "related_topics": [_in_language(index, topic, asked) for topic in related
                           if topic != entry["question"]][:MAX_RELATED],
        "confidence": round(sure, 2),
        "standalone_question": standalone,
    }
    if served["language"] != asked:
        result |= {"answer_language": served["language"], "question_language": asked}
    return result


def _version(index: _Index, position: int, language: str) -> dict:
    """Entry `position` in `language` when it has that version, else as written."""
    entry = index.entries[position]
    return entry if entry["language"] == language else index.translations[position].get(language, entry)


def _in_language(index: _Index, question: str, language: str) -> str:
    """A related entry's question in `language` when the entry has that version (the chips a parent taps)."""
    position = index.positions.get(question)
    return question if position is None else _version(index, position, language)["question"]


def _pair(index: _Index, weights: dict[str, float], candidates: list[int]) -> tuple[int, int, float] | None:
    """Two entries on different topics that together cover the question ("parking or bus?", "fees and bus
    times?"), each with a topic word of the question in its own question or tags: (first, second, coverage)."""
    topical = {token for token, weight in weights.items() if weight >= index.idf.get(token, weight)}
    best = None
    for first_rank, first in enumerate(candidates):
        for second in candidates[first_rank + 1:]:
            own_first = (topical & index.title_tokens[first]) - index.title_tokens[second]
            own_second = (topical & index.title_tokens[second]) - index.title_tokens[first]
            if not own_first or not own_second or not _different_topics(index, first, second):
                continue
            covered = sum(weight * max(_credit(index, token, first), _credit(index, token, second))
                          for token, weight in weights.items()) / sum(weights.values())
            if covered >= MIN_CONFIDENCE and (best is None or covered > best[2]):
                best = (first, second, covered)
    return best


def _credit(index: _Index, token: str, position: int) -> float:
    """How much a query word found in entry `position` counts: fully in its question or tags, less in its
    answer only."""
    if token in index.title_tokens[position]:
        return 1.0
    return BODY_CREDIT if token in index.doc_tokens[position] else 0.0


def _answer_part(index: _Index | None, question: str, history: list[str] | None, asked: str) -> list[dict]:
    """The results for one question: the best entry, two entries that together answer it, or no_match when
    no entry (or pair) reaches MIN_CONFIDENCE."""
    vocabulary = index.vocabulary if index else None
    opened = strip_lead_ins(question, keep_follow_up_opener=True) or question
    standalone = strip_lead_ins(rewrite_follow_up(opened, history, vocabulary=vocabulary))
    standalone = standalone or " ".join(question.split())
    if index is None:
        return [_no_match(standalone)]
    pairs = _token_words(standalone, index.speller)
    weights = _weights(index, pairs, names=_proper_nouns(standalone), foreign=asked != language.ENGLISH)
    if not weights:  # "is that ok?", "can or not?": no word with a topic, so nothing for the FAQ
        return [_nothing_asked(standalone)]
    query = [token for token, _ in pairs]
    scores = QUESTION_WEIGHT * index.titles.get_scores(query) + index.bodies.get_scores(query)
    order = [int(i) for i in np.argsort(-scores, kind="stable")]
    candidates = [i for i in order[:3] if scores[i] >= index.min_score]
    contenders = [i for i in candidates if scores[i] >= CLOSE_RATIO * scores[order[0]]]
    sure = {i: confidence(index, weights, i) for i in candidates if set(weights) & index.title_tokens[i]}
    answers = [i for i in contenders if sure.get(i, 0.0) >= MIN_CONFIDENCE]
    if not answers:
        pair = _pair(index, weights, [i for i in candidates if i in sure]) if COORDINATION.search(standalone) else None
        if pair is None:
            return [_no_match(standalone)]
        return [_success(index, position, pair[2], standalone, asked) for position in pair[:2]]
    best = answers[0]
    runner_up = next((i for i in answers if i != best), None)
    other = ""
    if runner_up is not None and _different_topics(index, best, runner_up):
        other = index.entries[runner_up]["question"]
    return [_success(index, best, sure[best], standalone, asked, related_first=other)]


def _as_question(text: str) -> str:
    return text if text.endswith(("?", ".", "!")) else f"{text}?"


def answer_question(school, question: str, history: list[str] | None = None) -> dict:
    """The `get_faq_answer` result (chatbot/agent/CONTRACT.md) for a parent's question.

    A message asking several things gets one result: success with `answers` (one
    per entry found) and `unanswered` (the parts with no confident answer), or
    no_match when no part has one.
    """
    index = _index_for(school)
    asked = language.detect(question, language.ENGLISH)
    parts = split_question(gloss(question).text)
    if not parts:  # a greeting, thanks or a wish to book: nothing for the FAQ, nothing for its to-do list
        return _nothing_asked(" ".join(question.split()))
    earlier = list(history or [])
    results = []
    for part in parts:
        results += _answer_part(index, part, earlier, asked)
        earlier.append(part)  # "is there a bus? and how much is it?": the second leans on the first
    answered = [r for r in results if r["status"] == "success"]
    entries = list(dict.fromkeys(r["sources"][0]["id"] for r in answered))
    unanswered = [r["standalone_question"] for r in results if r["status"] != "success" and not asked_nothing(r)]
    standalone = " ".join(dict.fromkeys(_as_question(r["standalone_question"]) for r in results))
    if len(results) == 1:
        return results[0]
    if len(entries) == 1 and not unanswered:  # "Is there a bus? And how much is it?"
        return {**answered[0], "standalone_question": standalone}
    if not answered:
        return {**_no_match(standalone), "unanswered": unanswered} if unanswered else _nothing_asked(standalone)
    first = {r["sources"][0]["id"]: r for r in reversed(answered)}  # the first result for each entry
    found = [first[entry_id] for entry_id in entries]
    matched = {r["question_matched"] for r in found}
    related = [t for r in found for t in r["related_topics"] if t not in matched]
    result = {
        "status": "success",
        "answer": "\n\n".join(r["answer"] for r in found),
        "question_matched": found[0]["question_matched"],
        "sources": [source for r in found for source in r["sources"]],
        "related_topics": list(dict.fromkeys(related))[:MAX_RELATED],
        "confidence": min(r["confidence"] for r in found),
        "standalone_question": standalone,
        "answers": [{"question": r["standalone_question"], "answer": r["answer"],
                     "question_matched": r["question_matched"], "sources": r["sources"],
                     "confidence": r["confidence"], **{k: r[k] for k in LANGUAGE_KEYS if k in r}} for r in found],
        "unanswered": unanswered,
    }
    other_language = next((r for r in found if "answer_language" in r), None)
    if other_language:
        result |= {k: other_language[k] for k in LANGUAGE_KEYS}
    if unanswered:
        result["message"] = UNANSWERED_MESSAGE
        result["suggest"] = SUGGEST
    return result
