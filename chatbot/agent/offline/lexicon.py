"""The phrasings the offline policy recognises: intents, names, ages, choices.

Only wording lives here. Dates and times are parsed by dateparser (when.py),
phone numbers by phonenumbers (understanding.py).
"""

import json
import re
from pathlib import Path

_I = re.IGNORECASE
LEXICONS = Path(__file__).with_name("lexicons")
# The English words below (contractions, number words, what is no name...) are data, as the other languages' are
ENGLISH: dict = json.loads(Path(__file__).with_name("english.json").read_text(encoding="utf-8"))


def _rx(pattern: str) -> re.Pattern:
    return re.compile(pattern, _I)


def _alternation(words: list[str]) -> str:
    return "(?:" + "|".join(map(re.escape, sorted(words, key=len, reverse=True))) + ")"


# --- intents -------------------------------------------------------------------------------------------------------

GREETING = _rx(
    r"^\s*(?:hi+|hello+|hey+|hiya|heya|howdy|(?:good )?(?:morning|afternoon|evening)(?=\s*[,!.])|good day|greetings)"
    r"\b[\s,!.]*"
)
THANKS = _rx(r"\b(?:thanks|thank you|thank u|thx|tks|tq|tqvm|ty|cheers|much appreciated|appreciate it)\b")
BYE = _rx(
    r"\b(?:bye|goodbye|good bye|see you|see ya|see u|c u|cya|ttyl|that'?s all|that is all|nothing else"
    r"|have a (?:good|nice|great) day"
    # leaving for now: "will come back later", "let me think about it", "maybe next time"
    r"|(?:i'?ll|i will|will|let me|lemme) (?:come back|check back|get back to you|think about it|think it over"
    r"|revert)(?: (?:later|again|another time|next time))?|maybe (?:later|next time|another time)"
    r"|(?:talk|chat|speak) (?:to you )?later|catch you later)\b"
)
_TOUR = (
    r"(?:a |the |another |one more |)(?:campus |school )?"
    r"(?:tour|visit|look (?:a)?round|viewing|come (?:and |to |n |& )?see|see the (?:school|campus)"
    r"|come (?:by|over|down|in|round|along)|(?:pop|drop|swing|stop) (?:by|in|over|down|round|along)"
    r"|(?:have|take|get|grab) (?:a |a quick |a little )?(?:look|peek|peep|nosy|nose|squiz|gander|look-see|wander)"
    r"|(?:peek|peep|look) (?:at|inside|in) (?:the|your) (?:school|campus|place|premises|facilities|classrooms?|centre)"
    r"|walk (?:a)?round|walk-?through|show (?:us|me) (?:a)?round|check (?:it|you|the place) out"
    r"|check out the (?:school|campus|place)"
    r"|appointment|reservation|see (?:it|you|the \w+|your \w+|(?:a)?round)|view (?:it|the \w+))"
)
# Ways of asking to do something ("could we ...", "any chance we can ...", "keen to ..."): with a tour, a booking
_ASK_TO = (
    r"want|would like|'d like|wanna|like to|love to|'d love|interested in|keen|eager|looking for|hoping|hope to"
    r"|need|plan(?:ning)? to|thinking of|can (?:i|we)|could (?:i|we)|may (?:i|we)|(?:i|we) (?:can|could|may|might)"
    r"|any chance|possible|mind if|ok(?:ay)? (?:if|for)|alright if|is there (?:a|any) way"
    r"|(?:do|does) (?:you|u|the school)(?: guys| all)? (?:do|offer|have|run|arrange)|(?:wondering|wonder|asking)"
    r" (?:if|whether)|arrange|schedule|plan"
)
BOOK = _rx(
    r"\bbook\b(?!\s+(?:club|fair|list))|\bbooking (?:a|an|another|one|for|in)\b|\breserve\b|\bsign (?:me |us )?up\b"
    rf"|\b(?:{_ASK_TO})\b[^.?!]*\b{_TOUR}"
    rf"|^\s*{_TOUR}\s*(?:please|pls)?\s*[.!?]*\s*$"
    r"|\b(?:a |the )?(?:campus |school )?(?:tour|visit)\s+(?:for|on|please|pls|next|this|tomorrow)\b"
    rf"|\b{_TOUR}\b[^.?!]*\b(?:i|we) (?:want|would like)\W*$"  # the wish said last, as Tamil does
    rf"|\bcan\s+{_TOUR}"  # "can visit Thursday?", "can come by?" (Singapore English, Malay "boleh datang")
)
ANOTHER = _rx(r"\b(?:another|second|other|younger|youngest|older|eldest|elder|one more)\b")
RESCHEDULE = _rx(
    r"\b(?:re-?schedul\w*|postpone\w*|push (?:it|my tour|the tour) back|bring (?:it )?forward|move (?:it|T-)"
    r"|(?:move|shift|change) (?:one of )?(?:(?:my|our|the) )?(?:tour|booking|visit|appointment)"
    r"|different (?:day|date|time) for (?:my|the|our)"
    # a tour booked before, to change: "i booked a tour for my daughter last week but need to change"
    r"|(?:i|we)(?: have|'ve)? (?:booked|made|got) (?:a |the |one )?(?:tour|booking|visit)\b[^.?!]*"
    r"\b(?:change|move|shift|reschedul\w*)\b)"
)
# A change asked for with no object, as a parent with a tour asks it: "can change or not?", Malay "boleh tukar
# tak?", Tamil "அதை மாத்தணும்" (that, change), Chinese "可以改吗"; and a move turned down ("no need reschedule").
BARE_CHANGE = _rx(
    r"\b(?:change|move|shift)\s*(?:it|that|this|(?:the |my )?(?:date|day|time|tour|booking))?"
    r"\s*(?:not|or not|can|please|pls|\?|$)"
)
NO_MOVE = _rx(
    r"\b(?:no need(?: to)?|no|don'?t(?: need to| want to)?|do not(?: need to)?|not)\s+(?:re-?schedul\w*|move|change)\b"
)
CANCEL = _rx(r"\b(?:cancel\w*|call off|can'?t (?:make|come|attend)|won'?t be able to (?:make|come|attend))")
CANCEL_WORD = _rx(r"\bcancel")
# "I can't make it on Wednesday, can we do Friday instead?" moves the tour rather than cancelling it
RATHER_MOVE = _rx(r"\b(?:instead|another (?:day|time|date)|different|other (?:day|time|date)|move|change)\b")
# Looking, not booking ("just browsing", "not ready to book yet"): no details are asked for until a task needs them.
BROWSING = _rx(
    r"\b(?:just|only|merely) (?:browsing|looking(?! to\b| for (?!now\b))|researching|(?:asking|checking|curious"
    r"|wondering|enquiring)(?! (?:if|whether|about|abt|when|what|how|why|where|which|who|for)\b))\b"  # not "just
    # asking if ...": a question, or a visit asked for
    r"|\bnot (?:ready|looking|planning|going) to (?:book|visit|come)\b|\bno need to (?:book|visit|come)\b"
    r"|\b(?:won'?t|don'?t want to|not) book(?:ing)? (?:yet|now|for now|just yet|anything)\b"
)
KEEP = _rx(
    r"\b(?:don'?t|do not|no need to|not|never mind(?: the)?|no)\s+cancel\w*|\bkeep (?:my|the|our) (?:tour|booking)"
)
CALLBACK = _rx(
    r"\b(?:call me|call (?:me |us )?back|callback|call-back|ring me|phone me|give me a (?:call|ring)"
    r"|someone (?:to )?call|contact me|get in touch with me|call (?:please|pls|plz)"  # "call பண்ணுங்க" too
    r"|(?:speak|talk) (?:to|with) (?:someone|somebody|a person|a human|a real person|staff|admissions|the school"
    r"|a teacher))\b"
)
MY_TOUR = _rx(
    r"\b(?:when|what time|what day|which day|what date)\b[^?.!]*\bmy (?:tour|booking|visit|appointment)"
    r"|\bdo (?:i|we) (?:still )?have (?:a|any) (?:tour|booking)|\b(?:my|our) (?:tour|booking) details"
    r"|\bremind me\b[^?.!]*\b(?:tour|booking)|\b(?:check|see|show)\b[^?.!]*\bmy (?:tour|booking)"
    # "is that still on??", "are we still booked", "still on for wed?", "did my booking go through"
    r"|\b(?:is|are|r) (?:it|that|this|we|u|you|my (?:tour|booking|visit)|the (?:tour|booking|visit)|our "
    r"(?:tour|booking|visit))\s+still\s+(?:on|ok|okay|booked|confirmed|happening|going ahead|good)\b"
    r"|^\W*(?:(?:so|and|ok|okay)\s+)?(?:we(?:'re| are)\s+)?still\s+on\b"
    r"|\b(?:did|has|have) (?:it|that|my (?:tour|booking)|the (?:tour|booking)) (?:go|gone|went) through"
    r"|\bis (?:my|the|our) (?:tour|booking|visit) (?:confirmed|booked)"
)
YES = _rx(  # also what the tools take as a yes to a read-back (chatbot.agent.confirmation)
    r"^\W*(?:(?:oh+|ah+|wow)\b[\s,.!]*)?(?:y|yes+|yeah|yea|yep|yup|ya|yah|sure|ok|okay|k|alright|all right|correct"
    r"|confirm(?:ed)?|absolutely|definitely|of course|go ahead|please do|please go ahead|do it|book it|perfect|great"
    r"|lovely|fine|right|please"
    r"|(?:that|this|it)(?: one)?(?:'s|'ll| is| will| would)?(?: be)? (?:right|correct|perfect|great|good)"
    r"|(?:that|this)(?: one)?(?:'s|'ll| is| will| would)?(?: be)? (?:fine|ok|okay)"
    r"|(?:(?:that|this|it)(?: (?!not\b|never\b|hardly\b)\w+)? )?(?:all )?(?:sounds?|looks?|works?)"
    r"(?: (?:good|great|perfect|fine|right|nice|for me))?|works for me"
    r"|(?:that|this|it)(?: \w+)? seems? (?:good|great|perfect|fine|right|nice|ok|okay)"
    r"|(?:i|we)(?:'?ll| will| would like to) take (?:it|that|the (?:seat|place|spot|one))"
    # approval of what was offered or read back, as people word it (classes measured on SGD's SELECT and AFFIRM
    # turns): "that one works for me", "I like that one", "that's a good one", "you got it", "indeed"
    r"|(?:that|this|it)(?: one| slot| time| all)?(?:'s| is| will| would| seems| sounds| looks)?(?: be)?(?: just)?"
    r" (?:accurate|confirmed|nice|wonderful|excellent|ideal|better|what i (?:want|need|asked for)\w*|the one)"
    r"|(?:that|this|it)(?: one| slot| time)?(?: will| would)? (?:works?|suits?)(?: me| us)?"
    r"|(?:that|this|it)(?:'s| is) (?:a|the) (?:good|great|perfect|nice|fine) one"
    r"|(?:i|we) (?:like|love) (?:that|this|it)(?: one)?|(?:i|we) confirm|you got it|indeed|excellent|fantastic"
    r"|awesome|wonderful|let'?s do (?:it|that|this)(?: one)?|go for (?:it|that|this)(?: one)?|that'?s it)\b"
    r"|^\W*can(?:\s+(?:can|lah|la|ah))?\W*$"  # Singapore English: a bare "can!" is a yes
    r"|^\s*(?:(?:tq|ty|thx|thanks|thank you|ok|okay)\W*)?[\U0001F44D\U0001F44C\u2705]"  # "tq 👍", "👌"
)
WAITLIST = _rx(  # joining a full tour's waitlist; "let me know if someone cancels" is no cancellation
    r"\bwait(?:ing)?[- ]?list|\b(?:put|add|pop) (?:me|us|my \w+|our \w+) (?:on|in|down)\b[^.?!]*\b(?:list|queue)\b"
    r"|\b(?:let (?:me|us) know|tell (?:me|us)|notify (?:me|us)|message (?:me|us)) (?:if|when) "
    r"(?:a |one |any )?(?:seat|place|spot|space|someone|somebody|anyone|one)\b"
)
OPEN_DAY = _rx(r"\bopen (?:days?|house|morning|evening|afternoon)s?\b|\bopen-days?\b")
# A sound a message may start with before what it says ("eh, actually...", "aiyo no"): read past it.
INTERJECTION = r"(?:(?:eh+|oh+|ah+|um+|erm+|hmm+|uh+|aiyo+h?|aiya|alamak|wah|oops)\b[\s,.!]*)?"
NO = _rx(rf"^\s*{INTERJECTION}(?:no|nope|nah|not now|no thanks|no thank you|not really|maybe later)\b")
# On the way to a tour, or late for it: "running 10 mins late", "we'll be there by 9:15", "omw"
ARRIVING = _rx(
    r"\b(?:running|be|bit|abit|slightly|little|coming|reach|arrive|arriving) (?:there |here )?"
    r"(?:a (?:bit|little) |abit |\d+ ?(?:mins?|minutes) )?late\b|\blate for (?:my|our|the) (?:tour|visit|appointment)\b"
    r"|\b(?:will|'ll|ll|gonna|going to|shall) (?:be|reach|get) (?:there|here|reaching|arriving)\b"
    r"|\b(?:on (?:the|our|my) way|omw|otw)\b|\bstuck in (?:traffic|a jam)\b"
)
# A no, then why, however long: "no, i booked it with my husband's number", "nope we already have one"
NO_THEN_WHY = _rx(r"^\s*(?:no|nope|nah)[\s,.!]+(?:i|we|it|its|it's|that|thats|that's|my|our)\b")
HELP = _rx(r"\b(?:what can you do|how does this work|what do you do|what can you help)\b|^\s*help\b")
INJECTION = _rx(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.?!]*\b(?:rules|instructions|prompt|guidelines"
    r"|polic(?:y|ies)|previous|above|everything)\b"
    r"|\bsystem prompt\b|\byou are now\b|\bpretend (?:to be|you)\b|\bact as\b|\bdeveloper mode\b|\bjailbreak\b"
    r"|\b(?:admin|root|god) (?:access|mode)\b"
    r"|\b(?:cancel|delete|remove|wipe|show|list|export)\b[^.?!]*\b(?:all|every|everyone'?s"
    r"|other (?:people|parents)'?s?)\b(?! (?:my|our|of my|of our))[^.?!]*"
    r"\b(?:bookings?|tours?|records?|data|contacts?)\b"
)
OFFTOPIC = _rx(
    r"\b(?:poem|poetry|haiku|song|lyrics|joke|bitcoin|btc|crypto\w*|ethereum|stocks?|share price|forex|weather"
    r"|recipe|football|soccer|nba|movie|film|celebrity|president|election|politics|homework|essay|translate"
    r"|python|javascript|programming|lottery|horoscope|girlfriend|boyfriend|dating|game score|write me"
    r"|tell me a story)\b"
)
SCHOOL_WORDS = _rx(
    r"\b(?:school|fees?|tuition|costs?|price|pay\w*|lunch|meals?|food|snacks?|curriculum|syllabus|class\w*"
    r"|teachers?|staff|ratio|uniforms?|bus|transport|pick-?up|drop-?off|hours|terms?|holidays?|enrol\w*"
    r"|admissions?|apply|application|wait-?list|nursery|kindergarten|preschool|primary|playground|facilit\w*"
    r"|canteen|languages?|chinese|mandarin|english|bilingual|naps?|allerg\w*|halal|vegetarian|sports?|music|art"
    r"|swimming|scholarships?|discounts?|siblings?|deposit|registration|open house|parking|address|located"
    r"|location|campus|tour|visit|principal|teach\w*|students?|children|kids?|age|grades?|year|exam\w*|cca"
    r"|after-?school|sch)\b"
)
TOUR_WORD = _rx(r"\b(?:tour|visit)")
LEAD_IN = (  # "Before that, what are the fees?" is still a question
    r"(?:(?:before that|by the way|btw|also|and|so|ok(?:ay)?|oh|one more thing|sorry|hi|hello"
    r"|(?:(?:a|one|another|quick|small|random|silly|short|just|1)\s+)*(?:question|qn|qns|q|query|enquiry))\W+)*"
)
QUESTION_START = _rx(
    rf"^\s*{LEAD_IN}(?:what|what's|whats|wat|wats|how|do|does|did|is|are|can|could|will|would|when|where|which|who|why|should|may"
    r"|any|is there|are there)\b"
)
# a question said by its ending, as Singapore and Malaysian parents ask: "after school care got or not", "can or not"
QUESTION_END = _rx(r"\b(?:or not|or no|anot|or nt)\W*$|^\W*got\b[^.?!]*\bor\b")  # "got instalment or must pay one shot"
# A question word inside a sentence about the school, as Chinese, Malay and Tamil put it (read in English:
# "校服要在哪里买" -> "uniform want to where buy"), or a Tamil verb with the question ending -ஆ ("தருவீங்களா").
QUESTION_INSIDE = _rx(
    r"\b(?:what|wat|where|which|how|is there|are there)\b|[\u0b95-\u0bb9]\u0bbe\W*$"
)
INFO_REQUEST = _rx(
    r"\b(?:tell me about|info(?:rmation)? (?:on|about)|i'?d like to know|want to know|wondering|curious"
    r"|(?:want|wanna|would like|like) to ask|(?:can|may|could) i ask|let me ask)\b"  # Malay "nak tanya ..."
)
# About the school, a request for information said as a statement ("pls send me the fee schedule", "need to know
# the uniform policy"), or a topic in a few words, as busy parents ask mid-booking ("fees pls", "btw lunch")
INFO_ASK = _rx(r"\b(?:tell|send|show|share with) (?:me|us)\b|\blet (?:me|us) know\b|\bneed to know\b"
               r"|\b(?:details|info) (?:on|abt|of|for)\b")
TOPIC_ASK = _rx(r"^\W*(?:and|also|plus|oh and|oh|btw|by the way|what abt|how abt)\b|\b(?:pls|plz|please)\W*$")
SHORT_ASK_WORDS = 6
# where a question about the school starts inside a sentence that asks for something else ("book the 2pm slot pls
# how much r the fees"): read from there
QUESTION_INSIDE_REQUEST = _rx(
    r"(?<=\s)(?:how much|how many|how long|what|what's|whats|wat|is there|are there|do you|does (?:it|the)|where"
    r"|which)\b"
)
# what makes such a sentence a detail about the family rather than a question ("also my kids are coming")
ABOUT_US = _rx(r"\b(?:my|our|i|we|i'm|we're|i've|we've|he|she|he's|she's|they|they're)\b")
# school words that name who or what is visited, not a topic to ask about ("and 2 kids", "tour pls")
NO_TOPIC = frozenset({"school", "sch", "children", "kids", "kid", "students", "student", "age", "year", "grade",
                      "grades", "tour", "visit", "campus"})
ASKS_WHAT_IS_OPEN = _rx(  # "do you have anything on Friday?" asks; "can we come Friday at 9?" books
    r"\b(?:do you have|have you got|is there|are there|any|anything|what (?:times?|days?|dates?|slots?)"
    r"|which (?:times?|days?|dates?)|when (?:can|could|are|is)|available|availability|free|open)\b"
)
AVAILABILITY = _rx(
    r"\b(?:slots?|availab\w*|free (?:on|at|slots?|times?|spots?)|openings?|open on|any (?:space|room)|any chance"
    r"|(?:is|would|will) (?:it|that|a \S+(?: \S+)? tour) (?:be )?possible|room for"
    r"|other (?:days?|times?|dates?))\b"
)
CORRECTION = _rx(
    rf"^\s*{INTERJECTION}(?:sorry|oops|actually|correction|wait|no\b|nope\b|hmm|nvm\b|never\s*mind\b|scratch that)"
    r"|\bi mean[t]?\b|\bmake it\b"
    r"|\b(?:change|switch|move) (?:it|that|this|the\s+\w+(?:\s+\w+)?)\s+to\b|\bchanged my mind\b"
    r"|\b(?:how|what) about\b|\brather\b|\bshould (?:be|have been)\b|\binstead\b|\bnot\s+\S+|\bmisspel\w*"
    r"|\btypo\b|\bwrong\b|\bwith an? [a-z]\b(?!')|\bspel(?:t|led|ling)\b"
)

# "hes Ethan", "im Jon", "cant make it": apostrophes people leave out, put back before reading
CONTRACTIONS: dict[str, str] = ENGLISH["contractions"]
CONTRACTION = _rx(r"\b(" + "|".join(CONTRACTIONS) + r")\b")

# --- details -------------------------------------------------------------------------------------------------------

SENTENCE_BREAK = _rx(  # also a question glued to a full stop: "ok.what time is it?"
    r"(?<=[.!?])\s+|(?<=[a-z][.!?])(?=(?:what|how|when|where|who|which|is|are|do|does|can|could|will|would)\b)|\n+|,?\s+(?:and|also|plus)\s+(?=(?:do|does|is|are|can|what|how|when|where|who|will|would)\b)"
    r"|,\s+(?=(?:what|how|when|where|who|which|is there|are there|do (?:you|they)|does (?:it|the)|can you|could you)\b)"
)
SPECIAL = _rx(
    r"\b(?:wheelchair|pram|stroller|buggy|allerg\w*|special (?:needs|requirements?)|accessib\w*|mobility"
    r"|interpreter|translator|autis\w*|adhd|hearing|sign language)\b"
)
EMAIL = _rx(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
BOOKING_REF = _rx(r"\bT-[A-Z0-9]{4,12}\b")
CALLBACK_REF = _rx(r"\bC-[A-Z0-9]{6}\b")
_A_CALL = r"(?:(?:my|the|our|that|this|your)\s+)?(?:call(?:-|\s)?back|call)\b"
# "cancel my callback", "we don't need the call any more"; "change my call back to Monday", "move the call"
CALLBACK_CANCEL = _rx(rf"\b(?:cancel\w*|call off|(?:do not|don'?t|no longer) need)\s+{_A_CALL}")
CALLBACK_CHANGE = _rx(rf"\b(?:change|move|reschedul\w*|update|postpone|push back|shift)\s+{_A_CALL}")
PHONE_LIKE = re.compile(r"\+?\d[\d\s-]{5,}\d")
REASON = _rx(r"\b(?:because|since|due to|reason(?: is)?:?|as (?=we|i|my|our|the))\s*(.{3,})")
NO_REASON = _rx(  # what follows "cancel it," that is no reason: fillers, politeness, a yes
    r"(?:\W*(?:please|pls|plz|thanks?|thank you|thx|ty|sorry|so sorry|very sorry|apologies|yes|yeah|yep|ok|okay"
    r"|asap|now|right now|today|then|lah|ya|sure|for me|for us|the tour|the booking|it|that|about that"
    r"|for the (?:trouble|inconvenience|hassle))\W*)+"
)
TOPIC = _rx(r"\b(?:about|abt|regarding|re:|(?<!')re(?=\s)|concerning|to discuss)\s+"
            r"(?:the |your |our )?([^?.!,;]{2,80})")
TOPIC_TAIL = _rx(r"\s+(?:please|pls|thanks?)$")
CALL_TIME = _rx(
    r"\b(?:any ?time|asap|as soon as possible|right now|later today|after work"
    r"|(?:between|from) \d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)? ?(?:and|n|&|to|-|–) ?\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)?"
    r"|\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)? ?(?:to|till|until|-|–) ?\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)"  # "2 to 4pm"
    r"|(?:after|from|before|until|till) (?:at )?\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)?)(?!\w)"
)
ANY_TIME = _rx(r"any ?time")
RELATION = _rx(r"\b(son|daughter|boy|girl|child|kid|toddler|little one)\b")
HIS_HER = _rx(r"\b(?:his|her)\b")

# --- choosing from a numbered list ----------------------------------------------------------------------------------

ORDINAL = _rx(
    r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|last)\b"
    r"(?!\s+(?:child|son|daughter|kid|tour|time|week|month|year|name|thoughts?|though|look|opinion|half))"
)
ORDINALS: dict[str, int] = ENGLISH["ordinals"]
NUMBERED = _rx(
    r"(?:\b(?:option|number|no\.?|slot|choice)\s*|#)(\d{1,2})\b(?![:.]\d|\s*[ap]m\b)|\b(\d)(?:st|nd|rd|th)\s+(?:one|option|slot)\b"
    r"|^\W*(?:the\s+)?(\d)(?:st|nd|rd|th)\W*(?:please|pls|plz)?\W*$"  # a bare "the 2nd" while options are listed
)
# The soonest or the latest of the options listed (of those that fit the day or time said with it)
# ("the earlier one", "the later slot": of two, said as a comparison)
_OF_LIST = r"(?:one|slot|time|option|session|tour)s?"
_ALONE = r"(?=\s*(?:la+h?|leh|pls|please)?\s*[.!]*\s*$)"  # "the earlier pls": nothing follows
EXTREME = _rx(rf"\b(?:(soonest|earliest|first available|next available|(?:the\s+)?(?:earlier|sooner)\s+{_OF_LIST}"
              rf"|the\s+(?:earlier|sooner){_ALONE})|(latest|(?:the\s+)?later\s+{_OF_LIST}|the\s+later{_ALONE}))\b")
# Any of the options listed will do: the soonest of those that fit is taken ("either is fine", "any time ok",
# "whichever", "both work"); "either"/"both" speak of two, so of more than two the parent is asked which
_FINE = r"(?:is\s+|are\s+|r\s+|also\s+|would be\s+|will be\s+)?(?:fine|ok|okay|good|works?|can|alright|suits?)\b"
_ANY_OF = r"(?:\s+(?:one|1|ones|time|times|slot|slots|of them|of those|of these|of the \d))?"
ANY_OPTION = _rx(
    rf"\b(?:(?P<two>either{_ANY_OF}(?:\s+{_FINE}|\s*[.!]*\s*$|\s+honestly|\s+really)|both{_ANY_OF}\s+{_FINE})"
    rf"|any ?(?:one|1|time|times|slot|slots|of them|of those|of these)\s+{_FINE}|whichever\b|all{_ANY_OF}\s+{_FINE}"
    r"|(?:i\s+)?(?:don'?t|do not)\s+mind\s+which\b|no preference\b)"
)
# The time of the tour being moved, kept on the new day ("thurs same time instead", "friday, same slot")
SAME_TIME = _rx(r"\b(?:the\s+)?same\s+(?:time|slot|hour)\b")
BARE_NUMBER = _rx(r"^\s*(\d{1,2})\s*[.)!]?\s*(?:please|pls)?\s*$")
CLAUSE_BREAK = re.compile(r"[.,;!?\n]|\s[-–—]\s")  # where one clause of a message ends
HOUR_ONLY = _rx(r"^\D*?\b(\d{1,2})\b(?!\s*(?:years?|yrs?|y/?o|yo|kids?|children|people|:))\D*$")

# --- names and ages ------------------------------------------------------------------------------------------------

_NAME = r"(?:[A-Za-z][A-Za-z'-]*|[\u4e00-\u9fff]{2,4}|[\u0b80-\u0bff]{2,})"  # Latin, Chinese or Tamil letters
HAN_WORD = re.compile(r"[\u4e00-\u9fff]+")
MAX_HAN_NAME = 4  # a Chinese name has two to four characters
# between the parts of a name: "Muhammad Irfan bin Ahmad", "Nur Alya binti Rahman", "Ravi s/o Kumar"
PATRONYMICS = tuple(ENGLISH["patronymics"])  # not counted as parts
NAME_CONNECTORS = frozenset([*PATRONYMICS, *ENGLISH["name_particles"]])
_CONNECTOR = "(?:" + "|".join(map(re.escape, PATRONYMICS)) + ")"
# A letter's name in Tamil script with its dot ("எஸ். பிரியா": S. Priya): an initial
TAMIL_INITIAL = r"[\u0b80-\u0bff]{1,3}\."
# "R. Priya", "Priya R", "எஸ். பிரியா": an initial, kept only beside a name
_INITIAL = rf"(?:[A-Z]\.?|{TAMIL_INITIAL})"
# one capitalised name word, as names are written: "Mia", "McAllister", "O'Neill", "Whitfield-Jones", "DeShawn"
_CAP_WORD = r"(?:[A-Z]')?[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+|[A-Z][a-z]+)*"
# a name of up to six parts (its words are checked by understanding._clean_name)
# ("Marcus T. Delgado": an initial with its dot inside a name is one of its parts)
# ("J. R. Tan": two initials before it)
_NAMES = (rf"(?:{_INITIAL}\s*){{0,2}}{_NAME}(?:\s+(?:{_CONNECTOR}\s+)?(?:[A-Z]\.(?=\s*[A-Za-z])|{_NAME})){{0,5}}"
          rf"(?:\s+{_INITIAL}\b)?")
_CHILD = (r"(?:son|daughter|boy|girl|child|kid|toddler|little one|little boy|little girl"
          r"|(?:youngest|eldest|oldest)(?!\s+(?:son|daughter|boy|girl|child|kid|one)\b))")  # "our youngest, Theo"
_CHILD_WORD = r"(?i:son|daughter|boy|girl|child|kid)"
# a name as it is written: capitalised Latin words, or Chinese or Tamil letters
_WRITTEN_NAME = (rf"(?:[A-Z][a-z'-]+(?:\s+(?:(?i:{_CONNECTOR})\s+)?[A-Z][a-z'-]+){{0,4}}"
                 r"|[\u4e00-\u9fff]{2,4}|[\u0b80-\u0bff]{2,})")
# not a surname after a title ("Mdm Tan my son is 4": Tan is the parent)
_TITLE = "(?i:" + "|".join(map(re.escape, ENGLISH["titles"])) + ")"
_UNTITLED = ("(?<![\\w'])" + "".join(rf"(?<!\b(?i:{re.escape(title)}) )" for title in ENGLISH["titles"])
             + rf"(?!{_TITLE}\s)")
_SPEAKER = r"i am|i'm|im|this is"  # the parent speaking of themself
# "my child's name is ...", "daughter name is ..." (Tamil "மகள் பேரு"), "he name ..." (Malay "dia nama"): not the
# parent's
_OTHERS = "".join(rf"(?<!\b{word} )" for word in (
    "'s", "his", "her", "their", "he", "she", "son", "daughter", "boy", "girl", "child", "kid", "toddler", "one"))
PARENT_NAME = [
    _rx(rf"\b(?:{_SPEAKER}|my name is|my name's)\s+({_NAMES})"),
    # "call me Jo" names the parent only as a name is written: "call me explain", "call me tmr" ask for a call
    _rx(r"\bcall me\s+((?-i:[A-Z][a-z'-]+)(?:\s+(?-i:[A-Z][a-z'-]+)){0,3})"),
    _rx(rf"{_OTHERS}\b(?:name is|name's)\s+({_NAMES})"),
    _rx(rf"{_OTHERS}\bname:?\s+({_NAMES})"),
    # "James R. Whitfield here", "Kumar s/o Muthu here"
    _rx(rf"^\s*({_NAME}(?:\s+(?:{_CONNECTOR}|(?-i:[A-Z]\.?)))?(?:\s+{_NAME}){{0,2}})\s+here\b"),
]
# a name said as whose parent the speaker is ("I'm 小美 mum", "Divya அம்மா"): the child's, not the parent's
# (`parent_words` in english.json: "Jayden mummy", "Kavin appa", "Adam papa": Singapore, Malay and Tamil ways too)
PARENT_WORDS = frozenset(ENGLISH["parent_words"])
_PARENT_WORD = _alternation(ENGLISH["parent_words"])
PARENT_OF = rf"(?:'s)?\s+{_PARENT_WORD}\b"
# a reason given by the way ("petang sbb pagi sy kerja": afternoon, as I work mornings): says no one's name
BECAUSE_CLAUSE = _rx(r"\b(?:because|coz|cos|cuz|bc|since)\b[^.?!,;\n]*")
# the speaker naming themself; without it, a bare "name is Aisha" names whoever was just asked about
OWN_NAME = _rx(rf"\b(?:{_SPEAKER}|my name)\b")
# a child named in so many words: the whole name is taken ("my child's name is Nur Aisyah")
CHILD_NAMED = [
    _rx(rf"\b{_CHILD}(?:(?:'s)?\s+name(?:\s+is|:)?|\s+is called|\s+called|\s+named)\s+({_NAMES})"),
    _rx(rf"\b(?:his|her|their|child's|kid's|he|she|he's|she's) name(?: is|'s|:)?\s+({_NAMES})"),
    _rx(rf"\b(?:he|she)(?:'s| is) called\s+({_NAMES})"),
]
# a child named by the way: the name's further words only when they are capitalised ("my son Sam Lee", not
# "my son Sam wants...")
CHILD_NAME = [
    _rx(rf"\b{_CHILD}(?:\s+is|,|:)?\s+({_NAMES})"),
    re.compile(rf"\b(?i:he|she)(?:'s| is)\s+({_CAP_WORD})\b"),  # "he's Ethan" (a capitalised name, not "he's 5")
    _rx(rf"\bfor\s+({_NAME})\s*(?:,|\()?\s*(?:aged?\s*|(?:he|she)(?:'s| is)\s+)?\d{{1,2}}\b"),
    _rx(rf"\b(?:mum|mom|mother|dad|father|parent) of\s+({_NAMES})"),
]
# a capitalised name said without saying whose it is ("it's for Mira", "Mira is coming too"): asked about first
MAYBE_CHILD = [
    re.compile(rf"\b(?i:for)\s+(?!(?i:me|us|my|our|the|a|an)\b)({_CAP_WORD}(?:\s+{_CAP_WORD})?)\b"),
    re.compile(rf"^\W*({_CAP_WORD})\s+(?i:is|will be)\s+(?i:coming|joining)\b"),
]
# a child's name right before what says it is one ("a tour for Nur Aisyah (5)" -> "Nur Aisyah")
CHILD_NAME_BEFORE = [
    _rx(rf"\b({_NAMES})\s*\(\s*\d{{1,2}}\s*\)"),
    _rx(rf"\b({_NAMES}),?\s+who(?:'s| is)\s+\d"),
    _rx(rf"\b({_NAMES})(?:'s\s+|(?<!'s)\s+){_PARENT_WORD}\b"),  # "Divya அம்மா", "小美妈妈", "Jayden mummy" too
    # the parent word first, as Malay puts it ("saya mak Aisyah", "ibu kepada Aisyah": glossed "i am mum of Aisyah")
    # ("Mama Tan", capitalised, is a name)
    _rx(rf"\b(?:{_SPEAKER}|this|here is|it's)\s+(?-i:{_PARENT_WORD})\s+(?:of\s+|to\s+)?((?-i:{_WRITTEN_NAME}))"
        r"\s*(?:[,.!?]|$)"),
    # the name, then the word for a child, as Tamil, Malay and Chinese put it: "Divya என் மகள்" (Divya my daughter),
    # "Aisyah anak sy", "林欣怡是我女儿", "Ali is my son" (a name written as one: "Sorry my son..." is no name)
    re.compile(rf"{_UNTITLED}({_WRITTEN_NAME})\s+(?:(?i:is|was|this|that|tu|ni)\s+){{0,2}}(?i:my|our)\s+{_CHILD_WORD}"
               r"\b(?!')"),
    # "Divya, my girl, 4" (not "Sarah, my daughter is 4": Sarah may be the parent signing)
    re.compile(rf"{_UNTITLED}({_WRITTEN_NAME}),\s+(?i:my|our)\s+{_CHILD_WORD}\b(?=\s*(?:[,(]|$|\d))"),
    re.compile(rf"{_UNTITLED}({_WRITTEN_NAME})\s+(?:(?i:is)\s+)?{_CHILD_WORD}\b(?!')"
               rf"(?!\s*,?\s*(?:(?i:name|is|called|named)\b|{_WRITTEN_NAME}))"),
]
# a sentence that is a child's name and what says it is one ("Aisyah, 5"; not "It has two bedrooms, 1 bathroom")
CHILD_NAME_FIRST = [
    _rx(rf"^\s*({_NAMES})\s*,?\s+(?:he|she)(?:'s| is)\s+\d"),
    _rx(rf"(?:^|[.!?]\s+)({_NAMES}) is \d{{1,2}}\b(?!\s*(?:am|pm|:|/|\.\d))"),  # "Mia is 5."
    _rx(rf"^\W*({_NAMES})\s*,\s*(?:aged?\s*)?\d{{1,2}}\b(?!\s*(?:am|pm|:|/|\.\d|\d))"),  # "Aisyah, 5": a child
    _rx(rf"^\W*({_NAMES})\s+(?:aged?\s+)?\d{{1,2}}\s*(?:-\s*)?(?:years?|yrs?|y/?o|yo)\b"),  # "Chloe 2yo", "Mia 4 yrs"
]
# --- several children in one booking ("my twins, Leo and Mia", "Sam (6) and Ella (3)", "and her brother Max, 4")

_CAP = rf"(?:{_CAP_WORD}|[\u4e00-\u9fff]{{2,4}})"  # a capitalised name, or a Chinese one
AND_WORDS = tuple(ENGLISH["and_words"])  # "Leo n Mia", "Leo + Mia": how parents type "and"
_AND = "(?:" + "|".join(map(re.escape, AND_WORDS)) + ")"
_KIDS = r"(?:kids|children|boys|girls|sons|daughters|little ones|ones|twins|triplets)"
GROUP_SIZES: dict[str, int] = ENGLISH["group_sizes"]  # a group word and how many children it is
GROUP = _rx(r"\b(" + "|".join(GROUP_SIZES) + r")\b")
# "my two boys" (words are digits by now); "2 anak" (Malay has no plural: "2 child")
CHILD_COUNT = _rx(rf"\b([2-9])\s+(?:(?:little|young|small)\s+)?(?:{_KIDS}|child|kid)\b")
# ("my child Ali and Abu": Malay "anak", Tamil "பிள்ளை" have no plural, so a word for a child before a list of names)
CHILDREN_CUE = _rx(rf"\b(?:{_KIDS}|[2-9]\s+(?:child|kid)|both|brother|sister|siblings?|for|named|called|names are"
                   rf"|they(?:'re| are)|(?:child|kid)(?=\s+(?-i:{_CAP})\s*,?\s+(?:{_AND})\s+(?-i:{_CAP})))\b")
# the one child of several who comes: "only Noah would be starting", "just the little one", "Hana just (je)",
# "Divya க்கு only (தான்)" (a Tamil case ending may sit between the name and the word); "Ava just turned 6" is no such
_YOUNGER = r"younger|youngest|small|smaller|little|baby"
_OLDER = r"older|oldest|elder|eldest|big|bigger"
_WHICH_ONE = rf"(?:the\s+)?(?:(?P<younger>{_YOUNGER})|(?P<older>{_OLDER}))\s+(?:one|1)"  # numbers are digits
ONLY_CHILD = _rx(
    rf"\b(?:only|just)\s+(?:for\s+)?(?:{_WHICH_ONE}|(?P<name>{_NAME}))\b"
    rf"|\b(?:{_WHICH_ONE.replace('?P<', '?P<then_')}|(?P<then_name>{_NAME}))"
    r"(?=(?:\s+[\u0b80-\u0bff]+)?\s+(?:only|just)\b(?!\s+(?:turned|\d)))"  # "but just Tess": its word stays
)
# a child said by their place among the siblings, with a name or an age or both ("大的9岁小的6岁": the older one 9, the
# younger one 6; "abang 8 tahun, adik 5"; "பெரியவன் Karthik 8 வயசு"; "the big one 7, small one 4")
BIRTH_ORDER = {"older": 0, "middle": 1, "younger": 2}  # the older first, as families list their children
_SIBLING = r"(?:one|1|child|kid|boy|girl|son|daughter|brother|sister|sibling)"
BY_ORDER = _rx(
    r"\b(?:the\s+)?(?:(?P<older>older|elder|eldest|oldest|big(?:ger)?)|(?P<middle>middle)"
    r"|(?P<younger>younger|youngest|small(?:er)?|little|baby))"
    rf"(?:\s+{_SIBLING})?(?:\s+(?:is\s+)?(?:called|named)|\s+is|'s)?"
    rf"(?:\s*[,:]?\s*(?P<name>(?-i:{_CAP})))?"
    rf"(?:\s*,?\s*(?:(?:is|'s|aged?|age)\s*)?(?P<age>\d{{1,2}})\b(?!\s*(?:am|pm|:|/|\.\d|\d|st|nd|rd|th)\b))?"
)
# "Leo and Mia", "Leo, Mia and Sam": capitalised names joined by commas and a final and/&
NAME_LIST = re.compile(rf"\b{_CAP}(?:\s*,\s*{_CAP})*\s*,?\s+(?i:{_AND})\s+{_CAP}\b")
CAP_NAME = re.compile(rf"\b{_CAP}\b")
# a run of capitalised words, maybe after an initial ("Mark Reyes", "S. Suresh"): a name typed again, fuller or respelt
CAP_RUN = re.compile(rf"(?<![\w.])(?:[A-Z]\.\s*)?{_CAP_WORD}(?:\s+(?:{_CONNECTOR}\s+|[A-Z]\.\s+)?{_CAP_WORD})*")
CALLED_NAME = re.compile(rf"\b(?i:called|named)\s+({_CAP})\b")  # "the older one is called Ming"
# the same in lower case, only right after a word for children: "my twins leo and mia"
LOWER_NAME_LIST = _rx(rf"\b{_KIDS}\s*(?:,|:|-|are|called|named)?\s*([a-z][a-z'-]+)\s+{_AND}\s+([a-z][a-z'-]+)\b")
# a name with its age: "Sam (6)", "Mia, 4", "Aiden is 7", "Chloe who's 4", "Max aged 2", "Leo 5yo"
NAME_AGE = re.compile(
    rf"\b({_CAP}(?:\s+{_CAP})?)\s*(?:\(\s*|,\s*|\s+(?:(?i:is|'s|who is|who's|aged?|age|just turned)\s+)?)(\d{{1,2}})"
    rf"(?:\s*(?i:years?|yrs?|y/?o|yo))?\b(?!\s*(?i:am|pm|:|/|\.\d|st|nd|rd|th)\b)"
    rf"(?!\s*(?:,\s*\d|(?i:{_AND})\s+\d))"  # "Leo and Mia, 5 and 3": the ages of a list (AGE_LIST), not Mia's
)
# between a child's name (one the concierge asked about, in any case) and their age: "chloe just turned 4"
NAME_TO_AGE = r"(?:'s)?\s*(?:is|'s|,|just turned|turned|aged?|who is|who's|will be)?\s*(\d{1,2})\b"
# ages for the children in the order named: "they're 5 and 3", "aged 6 and 4", "5 and 3 years old"
AGE_LIST = _rx(
    r"(?:\b(?:they(?:'re| are)|aged?|ages|who are|are)\s+|^\W*|(?<=[A-Za-z]),\s*)"
    rf"(\d{{1,2}})((?:\s*,\s*\d{{1,2}})*)\s*,?\s+{_AND}\s+(\d{{1,2}})\b(?!\s*(?:am|pm|:|/|\.\d)\b)"
)
SAME_AGE = _rx(
    r"\b(?:both|all|they(?:'re| are)(?: both| all)?|each)\s+(?:are\s+|aged?\s+)?(\d{1,2})\b(?!\s*(?:am|pm|:|/))"
)
# one more child, said on its own: "and her brother Max, 4", "also my daughter Zoe", "his sister too"
ADDS_CHILD = _rx(
    r"\b(?:brother|sister|sibling)\b|^\W*(?:and|also|plus|oh and|oh,? and)\b[^.?!]*\b(?:son|daughter|boy|girl|child"
    r"|kid|baby|toddler|little one)\b|\b(?:too|as well)\W*$"
)
SIBLING_NAME = _rx(rf"\b(?:brother|sister|sibling|son|daughter|boy|girl|baby|toddler)\s*,?\s+(?-i:({_CAP}))")
# where a bare answer's name ends: not at the dot of an initial or a title ("R. Priya", "Mr. Tan")
LEADING_NAME = re.compile(r"[,(!?;:]|(?<!\b[A-Z])(?<!\b[Mm]r)(?<!\b[Mm]rs)(?<!\b[Mm]s)(?<!\b[Dd]r)(?<!\b[Mm]dm)\.")
# "Jon 91234567", "S. Muthukumar, 8456 7890", "Jon Tan, phone 9123 4567", "Priya, hp: 9123 4567", "陈太太，电话 ...":
# the name, then maybe a label;
# three or four words only when each is capitalised ("Mei Ling Ong, 8123 4567"; not "i want to book 9123...")
# (`phone_labels` in english.json, in the four languages: "mob", "hp", "no.", "nombor telefon saya", "电话号码", "எண்")
PHONE_LABELS = frozenset(ENGLISH["phone_labels"])


_LABEL_WORD = _alternation(ENGLISH["phone_labels"]) + r"\.?"
_LABEL_OWNER = _alternation(ENGLISH["phone_label_owners"])
_PHONE_LABEL = (rf"(?:{_LABEL_OWNER}\s*)?{_LABEL_WORD}(?:\s*{_LABEL_WORD}){{0,2}}(?:\s*{_LABEL_OWNER})?"
                rf"(?:\s*{_alternation(ENGLISH['phone_label_verbs'])})?")
# ("Mohd Faizal bin Ahmad, 9333 4455": a patronymic joins two names of any length)
NAME_BEFORE_PHONE = _rx(rf"(?:^|[,.;:!?]\s*)((?-i:[A-Z]\.\s*)?{_NAME}(?:\s+{_NAME}){{0,2}}\s+{_CONNECTOR}\s+{_NAME}"
                        rf"(?:\s+{_NAME}){{0,2}}|(?-i:[A-Z]\.\s*)?{_NAME}(?:\s+(?-i:[A-Z]\.))?(?:\s+{_NAME})?|(?-i:{_CAP}(?:\s+{_CAP}){{2,3}}))"
                        rf"[\s,:(-]*(?:{_PHONE_LABEL})?[\s,:.(-]*$")
NOT_TIME = r"(?!\s*(?:am|pm|:|/|\.\d|\d|st|nd|rd|th)\b)"
AGE = [
    _rx(r"\b(\d{1,2})\s*(?:-\s*)?(?:years?|yrs?|y/?o|yo)\b"),
    _rx(
        r"\b(?:he|she|they|child|son|daughter|kid|boy|girl)\s*(?:'s|is|are|turns?|turned|will be|just turned)"
        rf"\s+(\d{{1,2}})\b{NOT_TIME}"
    ),
    _rx(r"\bage[ds]?:?\s*(\d{1,2})\b"),
    _rx(rf"\bwho(?:'s| is)\s+(\d{{1,2}})\b{NOT_TIME}"),
    _rx(r"\(\s*(\d{1,2})\s*\)"),
    _rx(rf"\b{_CHILD}\s+(?:is\s+)?(\d{{1,2}})\b{NOT_TIME}"),
    _rx(rf"\b(?-i:[A-Z][a-z'-]+)\s*,\s*(\d{{1,2}})\b{NOT_TIME}"),  # "Mia, 4" (a capitalised name, not "rooms, 1")
    _rx(rf"\bfor\s+(?-i:[A-Z][a-z'-]+)\s+(\d{{1,2}})\b{NOT_TIME}"),
]
AGE_TURNING = _rx(r"\bturn(?:s|ing)\s+(\d{1,2})\b(?!\s*(?:am|pm|:|/|\.\d|\d))")  # "turning 6 in March": 5 now
BIRTH = _rx(  # "born 12 May 2021", "DOB is 03/02/2020": the phrase after the cue, up to the sentence's end
    r"\b(?:born(?: on| in)?|d\.?o\.?b\.?|date of birth|birthday is|birthday:)(?:\s+is)?\s*[:\-]?\s*"
    r"((?=[^,;!?]*\d).{3,40}?)(?:[,;!?]|\.\s|\.?$)"
)
NUMBER_WORDS: dict[str, int] = ENGLISH["number_words"]
NUMBER_WORD = _rx(r"\b(" + "|".join(NUMBER_WORDS) + r")\b")
NAME_CORRECTION = [  # (new, old) for "Jon not John"; (old, new) for "not John, Jon"
    _rx(rf"({_NAME})\s*,?\s+not\s+({_NAME})"),
    _rx(rf"\bnot\s+({_NAME})\s*,?\s*(?:but\s+|it'?s\s+)?({_NAME})"),
]
# a name spelt out: "its Markus with a k", "Aisyah spelt with a y", "name is spelled Jon"
SPELLED = _rx(rf"^\W*(?:it'?s|it is|(?:my |his |her )?name(?:'s| is))?\s*(?:spel(?:t|led)\s+)?({_NAME})\s*,?"
              r"(?:\s+(?:with an? [a-z]\b|spel\w*).*)?\W*$")
BARE_CORRECTION = _rx(
    rf"^\W*(?:sorry|oops|actually|correction|no|wait|i meant|i mean)\W+(?:it'?s\s+|its\s+|it is\s+)?({_NAME})\W*$"
)
# ("Jun", "Jan" are not here: given names far more often than a month said without its day, which is masked)
_NOT_A_NAME = frozenset(ENGLISH["not_a_name"])
TITLES = frozenset(ENGLISH["titles"])


def _word_lists() -> list[dict]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(LEXICONS.glob("*.json"))]


def _lexicon_words(lists: list[dict]) -> frozenset[str]:
    """Every word the other languages' word lists are read as (their English side: "tomorrow", "fees", "full")
    and every word they list as no name ("not_names": fillers, school years): what the reader knows as
    something else is never a name."""
    words: set[str] = set()
    for data in lists:
        words |= {w for english in data["words"] for w in re.findall(r"[a-z]{2,}", english.lower())}
        words |= {w.lower() for w in data.get("not_names", [])}
    return frozenset(words)


def _endings(lists: list[dict]) -> re.Pattern:
    """Word endings no name has, per language ("சொன்னேனே", "I told you": a Tamil verb)."""
    endings = sorted({e for data in lists for e in data.get("not_name_endings", [])}, key=len, reverse=True)
    return re.compile("(?:" + "|".join(map(re.escape, endings or ["(?!)"])) + ")$")


_LISTS = _word_lists()
# a phone's label and its owner word ("mob is 9123 4567", "en number ..."), a word for a parent ("mummy"): no name
# ("en", Tamil "my", is left out: a capitalised "En" ends Chinese given names, "Jia En", "Hui En")
NOT_A_NAME = (_NOT_A_NAME | _lexicon_words(_LISTS) | PHONE_LABELS
              | (frozenset(ENGLISH["phone_label_owners"]) - {"en"}) | PARENT_WORDS)
NOT_NAME_ENDING = _endings(_LISTS)
# the first character of a Chinese name: a common surname, or a nickname's prefix (小明, 阿强, 老王); a word in a
# question that starts otherwise ("可以带孩子一起参观吗": 一起, together) is no name
HAN_NAME_START = frozenset("".join(data.get("name_starts", "") for data in _LISTS))
# a Chinese title after a surname ("黄太太": Mrs Huang): a name, which the full name said beside it replaces
HAN_TITLES = tuple(title for data in _LISTS for title in data.get("name_titles", []))
# nor does a Chinese name start with a particle or a pronoun ("的那个": the one; "就这个": this one)
HAN_NOT_NAME_START = frozenset("".join(data.get("not_name_starts", "") for data in _LISTS))
# surnames said first ("Tan Wei Ling"): in a name that starts with one, which word is the given name is unclear
SURNAMES_FIRST = frozenset(ENGLISH["surnames_first"])


def address(name: str) -> str:
    """How to greet a parent of this name: the first word when it is the given name ("Sarah" of "Sarah Tan"); the
    whole name when the first word may be the surname ("Tan Wei Ling", "陈美玲", "R. Priya"); the given name before
    "bin"/"binti"/"s/o" ("Siti Nurhaliza" of "Siti Nurhaliza binti Mohd Yusof"); '' for a surname alone ("Tan")."""
    words = name.split()
    joint = next((i for i, word in enumerate(words) if word.lower() in PATRONYMICS), 0)
    if joint:
        return " ".join(words[:joint])
    if not words:
        return ""
    first = words[0].lower()
    if len(words) == 1:
        return "" if first in SURNAMES_FIRST else name
    if first in SURNAMES_FIRST or HAN_WORD.match(first) or re.fullmatch(rf"[a-z]\.?|{TAMIL_INITIAL}", first):
        return name
    return words[0]
