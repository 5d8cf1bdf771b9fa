"""Dates and times in a parent's words ("next Tuesday", "15 Sept", "tomorrow morning", "half past 2", "four pm").

Three steps, shared by the offline policy (find_when) and the tools (read_time, via
chatbot.agent.datetimes):

1. `normalise` rewrites the ways people *say* a time into the digits dateparser reads
   ("half past 9" -> "9:30", "quarter to 2" -> "1:45", "four pm" -> "4 pm",
   "6 o'clock" -> "6:00"), keeping a map back to the original characters.
2. Small patterns only *spot* the phrases that can be a date or a time; dateparser
   parses each phrase against TODAY from the prompt. Parsing only the spotted phrases
   keeps a call fast and stops dateparser from reading dates into names or ages.
3. What dateparser cannot know is decided here, once:
   - a 12-hour time without am/pm takes the part of day said nearest to it in the
     sentence ("afternoon 2:45", "4 in the evening", "morning 10"); without one, hours
     1-7 are the afternoon (a school tour "at 3" is 15:00) unless the timetable has
     only the other reading; a zero-padded "07:30" is a 24-hour time;
   - "<weekday> next week / this week" is one day of that week ("this week" alone
     stays a range);
   - a day and month without a year that is today stays today (dateparser's "future"
     preference would push "1 March" said on 1 March to next year).
"""

import calendar
import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from difflib import get_close_matches
from functools import lru_cache

from dateparser.date import DateDataParser

from bookings.intake import in_window, part_of_day, window_part
from chatbot.agent.offline.lexicon import ENGLISH

WEEKDAYS: list[str] = ENGLISH["weekdays"]
PARTS_OF_DAY = ("morning", "afternoon", "evening")
MIN_RANGE_DAYS = 3
RECENT_PAST = dt.timedelta(days=31)  # a day and month up to a month gone is that (past) day, not next year's
HOUR_WORDS = {word: n for n, word in enumerate(ENGLISH["hour_words"], start=1)}
MINUTE_WORDS: dict[str, int] = ENGLISH["minute_words"]

_WEEKDAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?"
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?"
          r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?")  # whole words: "maybe" is not May
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_NOT_A_TIME = r"(?![:.]?\d|\s*[ap]m\b)"  # "March 11:30", "Friday 10am": the number is a time, not a day
# A week said relative to this one: "next week", "the week after next", "next next week", "in 2 weeks"
_WEEK = (r"(?:(?:next\s+next|next|this|coming|the\s+following|the\s+coming)\s+week|(?:the\s+)?week\s+after\s+next"
         r"|in\s+(?:a|one|two|three|four|\d)\s+weeks?(?:'?\s+time)?)")
WEEK_COUNTS: dict[str, int] = ENGLISH["week_counts"]
_PART = r"(?:morning|afternoon|arvo|evening|night)"
# After "around 3" / "about 3", only these make it a time: "about 3 questions" is a count.
_THEN_WHEN = (r"(?=\s*(?:[,.!?;)]|$)|\s+(?:on|this|next|tomorrow|today|tonight|in|or|if|please|then|would|works?"
              r"|is|suits?|ish|can|ok|okay)\b|-ish)")
# Nouns that make a number a count, not a time: "at two of them", "about 3 people".
_COUNTED = (r"(?:people|persons?|of|kids|children|adults|guests|students|parents|tickets|seats|places|spots"
            r"|years?|yrs|months?|weeks?|days?|hours?|hrs|minutes?|mins)\b")


def _words(items: list[str]) -> str:
    """An alternation of the phrases (longest first), any run of spaces between their words."""
    return "|".join(re.escape(item).replace(r"\ ", r"\s+") for item in sorted(items, key=len, reverse=True))


BOUNDS: dict[str, list[str]] = ENGLISH["date_bounds"]
PERIOD_PARTS: dict[str, list[str]] = ENGLISH["period_parts"]
# A part of a week or a month: "early next week", "end of the month", "mid-December", "later this week"
_PERIOD = (rf"(?:the\s+)?(?:{_words([w for words in PERIOD_PARTS.values() for w in words])})[\s-]+(?:the\s+)?"
           rf"(?:{_WEEK}|week\b|{_MONTH}|(?:this|next|the\s+following)\s+month\b|month\b)")
# A bound whose day the reader cannot know ("before the holidays", "by the time term starts"): the soonest days
_UNKNOWN_BOUND = (rf"(?:{_words(BOUNDS['before'])}|by(?:\s+the\s+time)?)\s+(?:the\s+|our\s+|my\s+|his\s+|her\s+)?"
                  rf"(?:school\s+)?(?:{_words(BOUNDS['unknown'])})\b")
SOONEST_DAYS = 7  # the days offered for a bound the reader cannot place, or after a day ("after the 10th")
# Said right before a date, they make it a bound: "before Christmas", "no later than the 18th", "after the 10th"
BOUND_LEAD = re.compile(
    rf"\b(?:(?P<before>{_words(BOUNDS['before'])})|(?P<until>{_words(BOUNDS['until'])})|(?P<by>{_words(BOUNDS['by'])})"
    rf"|(?<!\bday\s)(?P<after>{_words(BOUNDS['after'])})|(?P<from>{_words(BOUNDS['from'])}))\s+(?:on\s+)?$",
    re.IGNORECASE,
)
# Said right after it: "the 18th at the latest", "Friday or earlier", "the 14th onwards"
BOUND_TAIL = re.compile(
    rf"^,?\s*(?:(?P<until>{_words(BOUNDS['until_tails'])})|(?P<from>{_words(BOUNDS['from_tails'])}))\b",
    re.IGNORECASE,
)
PERIOD_END = re.compile(r"(?:the\s+)?(?:late|end|towards)\b", re.IGNORECASE)  # "by end of next week": a bound
WEAK_FROM = re.compile(r"^(?:from|starting(?:\s+from)?)$", re.IGNORECASE)  # "from Tuesday" alone is Tuesday

DATE_PHRASE = re.compile(
    rf"""\b{_PERIOD} | \b{_UNKNOWN_BOUND}
    | \b{_WEEKDAY},?\s+(?:of\s+)?{_WEEK}\b | \b{_WEEK}(?:'s)?,?\s+(?:on\s+)?{_WEEKDAY}\b
    | \b(?:day\ after\ tomorrow|today|tonight|tomorrow|tmrw?)\b
    | \b(?:(?:next\s+)+|(?:this|coming|this\ coming)\s+)?{_WEEKDAY}\b
      (?:,?\s+(?:the\s+)?{_DAY}(?:\s+(?:of\s+)?{_MONTH})?\b{_NOT_A_TIME})?
    | \b(?:the\s+)?(?<![:.]){_DAY}\s+(?:of\s+)?{_MONTH}(?:\s+\d{{4}})?
    | \b{_MONTH}\s+(?:the\s+)?{_DAY}\b{_NOT_A_TIME}(?:,?\s+\d{{4}})?
    | \b\d{{4}}-\d{{2}}-\d{{2}}\b
    | \b\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?\b
    | \b(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)\b(?:\s+of\s+(?:this|next|the\s+following)\s+month\b
      | (?!\s+(?:one|option|slot|grade|year|floor|birthday|time|place|child|kid)))
    | \b(?:this|next)\s+(?:week(?:end)?)\b | \b(?:the\s+)?weekend\b | \b{_WEEK}\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
# Spotted in normalised text, so "half past 2" is already "2:30" and "four pm" is "4 pm".
TIME_PHRASE = re.compile(
    rf"""\b\d{{1,2}}(?:[:.]\d{{2}})?\s*(?:am|pm)\b | \b\d{{1,2}}:\d{{2}}\b | \b(?:noon|midday)\b
    | (?<![$£€.\d])\b\d{{1,2}}\.[0-5]\d\b(?![.,]?\d|\s*%)
    | (?:(?<=\bat\s)|(?<=morning\s)|(?<=afternoon\s)|(?<=evening\s)|(?<=night\s))
      \d{{1,2}}\b(?![:/.]?\d)(?!\s+{_COUNTED})
    | (?:(?<=\baround\s)|(?<=\babout\s))\d{{1,2}}\b(?![:/.]?\d){_THEN_WHEN}  # not "about 3 questions"
    | \b\d{{1,2}}(?=\s+(?:in\s+the|this|at|tomorrow|today)\s+{_PART}\b|\s+tonight\b)
    """,
    re.IGNORECASE | re.VERBOSE,
)
PART_OF_DAY = re.compile(
    r"\b(morning|afternoon|arvo|evening|lunch ?time|after school|tonight|(?:at|in the) night|night(?=\s+\d))s?\b",
    re.IGNORECASE,
)
# A window of the day: "after 5", "before 10", "from 9am", "between 12 n 2", "after lunch" (not "after 5 days",
# "between 3 and 6 years", "ages from 3 to 6"). Lunch ends a morning at 12:00 and starts an afternoon at 13:00.
_CLOCK = r"(?:\d{1,2}(?:[:.][0-5]\d)?(?:\s*[ap]m)?|noon|midday|lunch(?:\s?time)?)"
_CLOCK_END = rf"(?![\d/])(?!\s*(?:st|nd|rd|th)\b)(?!\s+(?:of\s+)?{_MONTH})(?!\s+{_COUNTED})"
WINDOW = re.compile(
    rf"(?<!\bages\s)(?<!\baged\s)(?<!\bage\s)"
    rf"(?:\b(?:between|from)\s+(?:at\s+)?(?P<start>{_CLOCK})\s*(?:and|n|&|to|till|until|-|–)\s*(?:at\s+)?"
    rf"(?P<end>{_CLOCK}){_CLOCK_END}"
    rf"|\b(?:after|from|not\s+before|later\s+than)\s+(?:at\s+)?(?P<after>{_CLOCK}){_CLOCK_END}"
    rf"|\b(?:before|until|till|not\s+later\s+than)\s+(?:at\s+)?(?P<before>{_CLOCK}){_CLOCK_END})",
    re.IGNORECASE,
)
NOT_EARLY_FROM = "10am"  # "not too early": from late morning on, past the day's first tours
PART_ENDS = {"morning": "12:00"}  # where a window said within a part of the day ends ("afternoon after 3": open)
LUNCH = {"start": "13:00", "end": "12:00"}  # "after lunch" starts at 13:00; "before lunch" ends at 12:00
LUNCH_TIME = ("12:00", "14:00")  # "at lunch time", "waktu lunch", "午饭时间", "மதிய உணவு நேரம்": a part of the day
EITHER_JOIN = re.compile(r"\s*,?\s*(?:or|or\s+maybe|atau|ke)\s*", re.IGNORECASE)
EITHER_DAYS = dt.timedelta(days=2)  # "thurs or fri", "mon or wed": offered together as the days between
RANGE_JOIN = re.compile(r"\s*(?:and|to|till|until|through|-|–)\s*", re.IGNORECASE)
REASON = re.compile(  # "as my husband finishes at 3.30", "I get off at 4:30": background, not the time asked for
    r"\b(?:because|bcos|bcoz|bcz|cos|coz|cuz|cause)\b|\b(?:as|since)\s+(?:my|our|his|her|the|we|i|he|she|they)\b"
    r"|\b(?:finish(?:es|ed)?|gets?\s+off|ends?|(?:work|works|working)\s+(?:until|till))\b",
    re.IGNORECASE,
)
OLD_VALUE = re.compile(r"\b(?:not|instead of|from|rather than|(?<!later\s)(?<!earlier\s)than)\s+(?:the\s+)?$",
                       re.IGNORECASE)  # "no later than the 18th" is a bound (BOUND_LEAD), not the old value
# What follows a time or part of the day the parent turns down: "9 is tough", "mornings are hard", "3pm no"
REJECTED = re.compile(
    r"\W*(?:is|are|'s|would\s+be|will\s+be|seems?)?\s*(?:(?:a\s+bit|abit|too|quite|very|really|kinda|bit)\s+)*"
    r"(?:tough|hard|difficult|bad|tricky|impossible|not\s+possible|no\s+good|not\s+good|not\s+ok(?:ay)?|a\s+problem"
    r"|problematic|no(?!\s+(?:problem|issue|worries))|cannot|can'?t|can\s+not)\b",
    re.IGNORECASE,
)
# A weekday said alone ("thursday", "fri?") names a day of the week already talked about; "this coming Monday" is
# the next Monday from today, whatever was said before
BARE_WEEKDAY = re.compile(rf"^{_WEEKDAY}$", re.IGNORECASE)
BARE_DAY = re.compile(r"^(?:the\s+)?\d{1,2}(?:st|nd|rd|th)$", re.IGNORECASE)
SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|\n")
BARE_HOUR = re.compile(r"\d{1,2}h?")

# --- step 1: say it in digits ----------------------------------------------------------------

_ORDINALS: list[str] = ENGLISH["ordinal_words"]
ORDINAL_WORDS = {word: n for n, word in enumerate(_ORDINALS, start=1)} | {
    f"{tens}{sep}{unit}": base + n for tens, base in (("twenty", 20), ("thirty", 30))
    for n, unit in enumerate(_ORDINALS[:9], start=1) for sep in ("-", " ") if base + n <= 31} | {"thirtieth": 30}
_ORDINAL = "|".join(sorted(ORDINAL_WORDS, key=len, reverse=True))
_HOUR = r"\d{1,2}"
_MINUTES = rf"(?:\d{{1,2}}|{'|'.join(sorted(MINUTE_WORDS, key=len, reverse=True))})"
_TIME_LEAD = re.compile(r"\b(?:at|around|about|past|after|before|between|from|to|till|half)\s+$", re.IGNORECASE)
_TIME_TAIL = re.compile(
    rf"\s*(?::\d|[ap]m\b)|\s+(?:(?:in\s+the|this|at)\s+)?{_PART}\b|\s+tonight\b|\s+(?:fifteen|thirty|forty[- ]?five)\b",
    re.IGNORECASE,
)


def _hour_word(match: re.Match) -> str:
    """"four pm", "at seven", "quarter to two" -> digits; "at two of them", "the afternoon one" stay words.

    "one" is so often a pronoun ("look at one more", "at one point") that after "at" it must end the phrase."""
    word, after = match.group(0), match.string[match.end() :]
    before = match.string[max(0, match.start() - 15) : match.start()]
    if re.match(rf"\s+{_COUNTED}", after, re.IGNORECASE):
        return word
    lead = _TIME_LEAD.search(before)
    if lead and word.lower() == "one" and re.match(r"(?:at|around|about)\b", lead.group(0), re.IGNORECASE):
        lead = re.match(_THEN_WHEN, after, re.IGNORECASE)
    return str(HOUR_WORDS[word.lower()]) if _TIME_TAIL.match(after) or lead else word


def _ordinal(match: re.Match) -> str:
    n = ORDINAL_WORDS[re.sub(r"\s+", " ", match.group("ordinal").lower())]
    suffix = "th" if 10 <= n <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{match.group('month') or ''}{n}{suffix}"


def _minutes(how: str) -> int:
    """"half" -> 30, "a quarter" -> 15, "twenty five minutes" -> 25, "10" -> 10."""
    how = re.sub(r"\s+minutes?$", "", how.lower()).replace("-", " ")
    if how == "half":
        return 30
    if how.endswith("quarter"):
        return 15
    return int(how) if how.isdigit() else MINUTE_WORDS[how]


def _past(match: re.Match) -> str:
    """"half past 9", "quarter past 9", "20 past 9" -> "9:30", "9:15", "9:20"."""
    minutes = _minutes(match.group("how"))
    return f"{match.group('hour')}:{minutes:02d}" if minutes < 60 else match.group(0)


def _to(match: re.Match) -> str:
    """"quarter to 2", "10 minutes to 2" -> "1:45", "1:50" ("quarter to 13" -> "12:45")."""
    minutes, hour = _minutes(match.group("how")), int(match.group("hour"))
    return f"{hour - 1 if hour > 1 else 12}:{60 - minutes:02d}" if 0 < minutes < 60 else match.group(0)


# Date words people misspell ("tommorow", "wensday", "nxt"): put right when close enough, as data.
DATE_WORDS = [*WEEKDAYS, *ENGLISH["date_words"]]
SIMILAR_ENOUGH = 0.8  # "satuday" -> saturday (0.93), but not "satay" (0.77), "mandy" (0.73) or "marc"
SPELT_RIGHT = frozenset(ENGLISH["spelt_right"])  # words close to a date word that are not typos
# Days of the year people name instead of a date: "christmas eve" -> "24 December".
HOLIDAYS = {
    r"christmas\s+eve|xmas\s+eve": "24 December", r"christmas(?:\s+day)?|xmas(?:\s+day)?": "25 December",
    r"boxing\s+day": "26 December", r"new\s+year'?s?\s+eve|nye": "31 December",
    r"new\s+year'?s?\s+day": "1 January",
}


def _spelling(match: re.Match) -> str:
    word = match.group(0)
    lowered = word.lower()
    if lowered in SPELT_RIGHT or lowered.removesuffix("s") in DATE_WORDS or re.fullmatch(_WEEKDAY, word, re.I):
        return word  # "weeks", "mornings" are spelt right
    close = get_close_matches(lowered, DATE_WORDS, n=1, cutoff=SIMILAR_ENOUGH)
    return close[0] if close else word


def _spaced_time(match: re.Match) -> str:
    """"4 30pm" -> "4:30pm"; after a month name the number is the day ("Dec 3 30pm" stays as it is)."""
    if re.search(rf"{_MONTH}\s*$", match.string[: match.start()], re.IGNORECASE):
        return match.group(0)
    return f"{match.group(1)}:{match.group(2)}{match.group(3)}"


_ONWARD_CLOCK = r"\d{1,2}(?::\d{2})?(?:\s*[ap]m)?"
_SPOKEN: list[tuple[re.Pattern, str | Callable[[re.Match], str]]] = [
    (re.compile(r"\b[a-z]{3,10}\b", re.IGNORECASE), _spelling),
    (re.compile(rf"\b(?:{'|'.join(HOLIDAYS)})\b", re.IGNORECASE),
     lambda m: next(day for pattern, day in HOLIDAYS.items() if re.fullmatch(pattern, m.group(0), re.IGNORECASE))),
    (re.compile(r"\bthis\s+(morning|afternoon|evening)\b", re.IGNORECASE), r"today \1"),
    # "the Thursday after next": not next Thursday but the one after it, the Thursday of the week after next
    (re.compile(rf"\b(?:the\s+)?({_WEEKDAY})\s+after\s+next\b", re.IGNORECASE), r"\1 the week after next"),
    (re.compile(r"(?<=\d)\s*-?\s*ish\b", re.IGNORECASE), " ish"),  # "3ish", "3-ish" -> "3 ish"
    (re.compile(r"(?<!\bfrom\s)(?<!\bbetween\s)\b(\d{1,2}(?::\d{2})?\s*(?:[ap]m)?)\s*[-–]\s*(\d{1,2}(?::\d{2})?\s*[ap]m)\b",
                re.IGNORECASE), r"between \1 and \2"),  # "2-4pm": a window
    # "2 to 4pm", "10 till 12pm": from one to the other, the am/pm said once at the end being both ends' (_window)
    (re.compile(r"(?<!\bfrom\s)(?<!\bbetween\s)(?<![\d.:])\b(\d{1,2})\s*\b(?:to|till|til|until)\s*"
                r"(\d{1,2}(?::\d{2})?\s*[ap]m)\b", re.IGNORECASE), r"from \1 to \2"),
    # "10:00 to 12:00" (Chinese "10点到12点之间"), "9am until 11", "morning 9 to 11": a window from one to the other
    (re.compile(r"(?<!\bfrom\s)(?<!\bbetween\s)\b(\d{1,2}:\d{2}|\d{1,2}\s*[ap]m)\s*(?:to|until|till|-|–)\s*"
                r"(\d{1,2}(?::\d{2})?(?:\s*[ap]m)?)(?![\d:/])", re.IGNORECASE), r"from \1 to \2"),
    # ("lunch time, 12 to 2", "tmr 2 to 4", "friday 9-11": after a day or a part of it, a window too)
    (re.compile(rf"\b(morning|afternoon|evening|tonight|night|lunch ?time|today|tomorrow|tmrw?|tmw|{_WEEKDAY})"
                r"(?:\s*,?\s*(?:la|lah|ah|ya|ok|then))?\s*,?\s+(\d{1,2})\s*(?:to|until|till|-|–)\s*(\d{1,2})\b(?![\d:/])",
                re.IGNORECASE), r"\1 from \2 to \3"),
    (re.compile(rf"\b({_WEEKDAY})\s+week\b", re.IGNORECASE), r"\1 next week"),  # British "Friday week"
    # "the 18th, Friday" (Chinese "18号星期五", Malay "18hb Jumaat"): the weekday says which 18th, as "Friday the 18th"
    (re.compile(rf"\bthe\s+(\d{{1,2}}(?:st|nd|rd|th))\s*,?\s+(?:a\s+)?({_WEEKDAY})\b", re.IGNORECASE), r"\2 the \1"),
    (re.compile(r"\b([01]?\d|2[0-3])([0-5]\d)\s?(?:hrs|hours|h)\b", re.IGNORECASE), r"\1:\2"),  # "1430hrs"
    (re.compile(r"\b(1[0-2]|0?[1-9])([0-5]\d)\s?([ap]m)\b", re.IGNORECASE), r"\1:\2\3"),  # "1030am"
    (re.compile(r"\b(1[0-2]|0?[1-9])\s(15|30|45)\s?([ap]m)\b", re.IGNORECASE), _spaced_time),  # "4 30pm"
    (re.compile(r"(?<=\bat\s)([01]\d|2[0-3])([0-5]\d)\b(?!\s*(?:hrs|am|pm))", re.IGNORECASE), r"\1:\2"),  # "at 1400"
    (re.compile(r"\b(?:2mor+o+w*|2morrow|tmrw?|tmw|tomoz)\b", re.IGNORECASE), "tomorrow"),
    # "not too early", "nothing so early pls" (glossed "jangan terlalu awal", "不要太早"): not the first tours of the
    # day, a window from late morning on (NOT_EARLY_FROM)
    (re.compile(r"\b(?:not|nothing|no)\s+(?:(?:too|so|very|that|super|really|overly)\s+)*early\b"
                r"(?:\s+(?:ones?|slots?|times?|timings?))?", re.IGNORECASE), f"after {NOT_EARLY_FROM}"),
    (re.compile(r"\b(?:a|one|1)\s+week\s+(?:today|from\s+(?:today|now))\b", re.IGNORECASE), "in 1 week"),
    (re.compile(r"\b(two|three|four|2|3|4)\s+weeks\s+(?:today|from\s+(?:today|now))\b", re.IGNORECASE),
     lambda m: f"in {HOUR_WORDS.get(m.group(1).lower(), m.group(1))} weeks"),
    (re.compile(r"\b([ap])\.\s?m\b\.?", re.IGNORECASE), r"\1m"),
    (re.compile(rf"\b(\d{{1,2}}|{'|'.join(HOUR_WORDS)})\s*o\s?['\"’`]?\s?clock\b", re.IGNORECASE), r"\1:00"),
    # "the second of March", "March the third", "the first of next month" -> "2nd", "3rd", "1st"
    (re.compile(rf"(?P<month>\b{_MONTH}\s+(?:the\s+)?)?\b(?P<ordinal>{_ORDINAL})\b"
                rf"(?(month)|(?=\s+of\s+(?:{_MONTH}|(?:this|next)\s+month)))", re.IGNORECASE), _ordinal),
    (re.compile(rf"\b(?:{'|'.join(HOUR_WORDS)})\b", re.IGNORECASE), _hour_word),
    (re.compile(rf"\b({_HOUR})\s+(fifteen|thirty|forty[- ]?five)\b(?!\s+{_COUNTED})", re.IGNORECASE),
     lambda m: f"{m.group(1)}:{_minutes(m.group(2)):02d}"),
    (re.compile(rf"\b(?P<how>half|(?:a\s+)?quarter|{_MINUTES}(?:\s+minutes?)?)\s+(?:past|after)\s+(?P<hour>{_HOUR})\b"
                r"(?![:.]\d)", re.IGNORECASE), _past),
    # "to" only after words that cannot start a range: "ten to twelve" may be 10-12, "twenty to ten" is 9:40
    (re.compile(rf"\b(?P<how>(?:a\s+)?quarter|twenty(?:[- ]five)?|{_MINUTES}\s+minutes?)\s+(?:to|till|til|of)\s+"
                rf"(?P<hour>{_HOUR})\b(?![:.]\d)", re.IGNORECASE), _to),
    (re.compile(rf"\bhalf\s+({_HOUR})\b(?![:.]\d)(?!\s+{_COUNTED})", re.IGNORECASE), r"\1:30"),  # British "half 3"
    # "3 ish" is a time, "at 3" ("half 3 ish" is "3:30 ish" by now, a time as it is)
    (re.compile(r"(?<![:.\d])(?<!\baround\s)(?<!\babout\s)(?<!\bat\s)\b(\d{1,2}) ish\b", re.IGNORECASE), r"at \1"),
    # "from half 2 onwards, til 4" ("half 2" is "2:30" by now): a window from one to the other; "3 onwards": from 3
    (re.compile(rf"(?:\bfrom\s+)?\b({_ONWARD_CLOCK})\s+onwards?\s*,?\s*(?:and\s+)?(?:til|till|until|to|up\s+to)\s+"
                rf"({_ONWARD_CLOCK})(?![\d:])", re.IGNORECASE), r"from \1 to \2"),
    (re.compile(rf"(?:\bfrom\s+)?\b({_ONWARD_CLOCK})\s+onwards?\b", re.IGNORECASE), r"from \1"),
]


def rewrite(text: str, index: list[int], pattern: re.Pattern, repl: str | Callable[[re.Match], str]
            ) -> tuple[str, list[int]]:
    """`text` with every match of `pattern` replaced, and `index` (where each character came from) kept in step."""
    out: list[str] = []
    out_index: list[int] = []
    last = 0
    for match in pattern.finditer(text):
        new = match.expand(repl) if isinstance(repl, str) else repl(match)
        out.append(text[last : match.start()] + new)
        out_index += index[last : match.start()] + [index[match.start()]] * len(new)
        last = match.end()
    if not out:
        return text, index
    return "".join(out) + text[last:], out_index + index[last:]


def normalise(text: str) -> tuple[str, list[int]]:
    """`text` with spoken times in digits, and for each character of it (and its end) where it was in `text`."""
    index = list(range(len(text) + 1))
    for pattern, repl in _SPOKEN:
        text, index = rewrite(text, index, pattern, repl)
    return text, index


# --- step 2: spot and parse -------------------------------------------------------------------


@dataclass(frozen=True)
class When:
    """What a message says about when: a date (or a range), a time, a part of the day."""

    date: dt.date | None = None
    kind: str = ""  # "exact", "weekday" (a bare "Thursday") or "day" (a bare "the 25th")
    start: dt.date | None = None
    end: dt.date | None = None
    time: str | None = None  # "HH:MM"
    part_of_day: str | None = None
    after: str | None = None  # a window: "after 5" starts at "17:00", "before 10" ends at "10:00"
    before: str | None = None
    date_phrase: str = ""
    time_phrase: str = ""

    @property
    def has_date(self) -> bool:
        return self.date is not None or self.start is not None

    @property
    def is_empty_of_time(self) -> bool:
        """Whether it says nothing of the time of day (no time, window or part of the day)."""
        return not (self.time or self.part_of_day or self.after or self.before)

    @property
    def is_empty(self) -> bool:
        return not (self.has_date or self.time or self.part_of_day or self.after or self.before)

    def fits_time(self, time: str) -> bool:
        """Whether a start time ("14:00") is the time, in the window, or in the part of the day asked for."""
        if self.time:
            return time == self.time
        if self.after or self.before:
            return in_window(time, self.after, self.before)
        return not self.part_of_day or part_of_day(time) == self.part_of_day

    @property
    def phrase(self) -> str:
        """The parent's own words, for tools that take loose input ("tomorrow morning", "明天晚上8点")."""
        return " ".join(p for p in (self.date_phrase, self.time_phrase or self.part_of_day or "") if p)


@lru_cache(maxsize=16)
def _parser(base: dt.datetime) -> DateDataParser:
    settings = {
        "RELATIVE_BASE": base,
        "PREFER_DATES_FROM": "future",
        "DATE_ORDER": "DMY",
        "RETURN_TIME_AS_PERIOD": True,
    }
    return DateDataParser(languages=["en"], settings=settings)


def _parse(phrase: str, base: dt.datetime):
    try:
        return _parser(base).get_date_data(phrase)
    except (ValueError, OverflowError, TypeError):
        return None


def _full_weekday(match: re.Match) -> str:
    """"thurs", "weds", "tue" -> the weekday's whole name, which dateparser reads ("thurs" it does not)."""
    return next(name for name in WEEKDAYS if name.startswith(match.group(0).lower()[:3]))


def _date_words(phrase: str) -> str:
    phrase = re.sub(rf"\b{_WEEKDAY}\b", _full_weekday, phrase, flags=re.IGNORECASE)
    phrase = re.sub(r"\btmrw?\b", "tomorrow", phrase, flags=re.IGNORECASE)
    phrase = re.sub(r"\btonight\b", "today", phrase, flags=re.IGNORECASE)
    phrase = re.sub(r"^(?:this\s+)?coming\s+", "", phrase, flags=re.IGNORECASE)
    return re.sub(r"(?<=[a-z])s$", "", phrase) if BARE_WEEKDAY.match(phrase) else phrase


def _on_weekday(day: dt.date, weekday: str, today: dt.date) -> dt.date:
    """`day`, or the first later month's same day of the month that falls on `weekday` (within a year)."""
    wanted = WEEKDAYS.index(weekday)
    candidate = day
    for _ in range(12):
        if candidate >= today and candidate.weekday() == wanted:
            return candidate
        month = candidate.replace(day=1) + dt.timedelta(days=32)
        try:
            candidate = month.replace(day=day.day)
        except ValueError:  # no 31st that month
            candidate = (month + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)
    return day


def _week(day: dt.date) -> tuple[dt.date, dt.date]:
    monday = day - dt.timedelta(days=day.weekday())
    return monday, monday + dt.timedelta(days=6)


def _weeks_ahead(week: str) -> int:
    """How many weeks after this one a week phrase names: "this week" 0, "next week" 1, "the week after next" and
    "next next week" 2, "in 3 weeks" 3."""
    week = week.lower()
    if re.search(r"after\s+next|next\s+next", week):
        return 2
    count = re.match(r"in\s+(\w+)", week)
    if count:
        return int(count.group(1)) if count.group(1).isdigit() else WEEK_COUNTS[count.group(1)]
    return 0 if week.startswith("this") else 1


def _day_of_week(phrase: str, today: dt.date) -> dt.date | None:
    """"Friday next week", "this week on Sunday", "in 2 weeks, Wednesday": that day of the week named."""
    week = re.search(_WEEK, phrase, re.IGNORECASE).group(0)
    day = re.search(_WEEKDAY, re.sub(_WEEK, "", phrase, flags=re.IGNORECASE), re.IGNORECASE)
    if day is None:
        return None
    weekday = next(i for i, name in enumerate(WEEKDAYS) if name.startswith(day.group(0).lower()[:3]))
    found = _week(today)[0] + dt.timedelta(weeks=_weeks_ahead(week), days=weekday)
    return found + dt.timedelta(days=7) if found < today else found  # "Friday this week" said on a Sunday


MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
# The share of a week (its days, Monday 0) or a month (its days of the month) that "early", "mid", "late" name
WEEK_SHARES = {"early": (0, 2), "mid": (1, 3), "late": (3, 6)}
MONTH_SHARES = {"early": (1, 10), "mid": (11, 20), "late": (21, 31)}


def _period(phrase: str, today: dt.date) -> When:
    """"early next week" (its Monday to Wednesday), "end of the month" (from the 21st), "mid-December" (the 11th to
    the 20th): the days of that share of the week or month, from today on."""
    lowered = phrase.lower()
    part = next(name for name, words in PERIOD_PARTS.items()
                if re.match(rf"(?:the\s+)?(?:{_words(words)})\b", lowered))
    rest = re.sub(rf"^(?:the\s+)?(?:{_words(PERIOD_PARTS[part])})[\s-]+(?:the\s+)?", "", lowered)
    week = re.match(_WEEK, rest)
    if week or rest.startswith("week"):
        monday = _week(today)[0] + dt.timedelta(weeks=_weeks_ahead(week.group(0)) if week else 0)
        first, last = (monday + dt.timedelta(days=d) for d in WEEK_SHARES[part])
    else:
        month = re.match(_MONTH, rest)
        if month:
            number = next(i for i, name in enumerate(MONTHS, 1) if name.startswith(month.group(0).rstrip(".")[:3]))
            year = today.year + (number < today.month)
        else:  # "this month", "next month", "the month"
            ahead = rest.startswith(("next", "the following"))
            number, year = (today.month % 12 + 1, today.year + (today.month == 12)) if ahead else (today.month,
                                                                                                   today.year)
        days = calendar.monthrange(year, number)[1]
        first, last = (dt.date(year, number, min(d, days)) for d in MONTH_SHARES[part])
    return When(start=max(first, today) if last >= today else first, end=last, date_phrase=phrase)


def _bounded(when: When, lead: re.Match | None, tail: re.Match | None, today: dt.date) -> When | None:
    """A date said as a bound, as the days it leaves ("before Christmas": from today to 24 December; "no later than
    the 18th", "Friday at the latest": to that day; "after the 10th": a week from the 11th; "the 14th onwards": a
    week from the 14th); None when it is no bound. "by Friday" is Friday ("can we come by Friday?") and "from
    Tuesday" is Tuesday, unless a tail or the end of a period makes them one ("by Friday at the latest", "by end of
    next week", "from the 14th onwards")."""
    first, last = when.date or when.start, when.date or when.end or when.start
    lead_kind = next((name for name, value in lead.groupdict().items() if value), "") if lead else ""
    tail_kind = next((name for name, value in tail.groupdict().items() if value), "") if tail else ""
    if lead_kind == "by":
        lead_kind = "until" if tail_kind == "until" or PERIOD_END.match(when.date_phrase) else ""
    if lead_kind == "from" and WEAK_FROM.match(lead.group("from")) and tail_kind != "from":
        lead_kind = ""
    kind = lead_kind or tail_kind
    if first is None or not kind:
        return None
    if kind == "before":
        start, end = today, first - dt.timedelta(days=1)
    elif kind == "until":
        start, end = today, last
    elif kind == "after":
        start = last + dt.timedelta(days=1)
        end = start + dt.timedelta(days=SOONEST_DAYS - 1)
    else:  # "from"
        start, end = first, max(last, first + dt.timedelta(days=SOONEST_DAYS - 1))
    return When(start=start, end=end, date_phrase=when.date_phrase) if start <= end else None


def _date_of(phrase: str, today: dt.date, base: dt.datetime) -> When | None:
    lowered = phrase.lower()
    if re.fullmatch(_UNKNOWN_BOUND, lowered, re.IGNORECASE):  # "before the holidays": the soonest days
        return When(start=today, end=today + dt.timedelta(days=SOONEST_DAYS - 1), date_phrase=phrase)
    if re.fullmatch(_PERIOD, lowered, re.IGNORECASE):
        return _period(phrase, today)
    if re.search(_WEEKDAY, lowered) and re.search(_WEEK, lowered):
        day = _day_of_week(phrase, today)
        return When(date=day, kind="exact", date_phrase=phrase) if day else None
    if re.fullmatch(_WEEK, lowered) and not lowered.startswith("in") and _weeks_ahead(lowered) > 1:
        start, end = _week(today + dt.timedelta(weeks=_weeks_ahead(lowered)))  # "the week after next": that week
        return When(start=start, end=end, date_phrase=phrase)
    again = re.match(r"next\s+(?=next\s)", lowered)
    if again:  # "next next Tuesday": a week after "next Tuesday"
        later = _date_of(phrase[again.end() :], today, base)
        return replace(later, date=later.date + dt.timedelta(weeks=1), kind="exact", date_phrase=phrase) if (
            later and later.date) else None
    if "weekend" in lowered:
        saturday = today + dt.timedelta(days=(5 - today.weekday()) % 7)
        if "next" in lowered:
            saturday += dt.timedelta(days=7)
        return When(start=saturday, end=saturday + dt.timedelta(days=1), date_phrase=phrase)
    weeks = re.fullmatch(r"in\s+(\d|a|one|two|three|four)\s+weeks?(?:'?\s+time)?", lowered)
    if weeks:  # "in 2 weeks", "in two weeks' time" ("two weeks from today"): that day, not that week
        count = weeks.group(1)
        ahead = int(count) if count.isdigit() else 1 if count == "a" else HOUR_WORDS[count]
        return When(date=today + dt.timedelta(weeks=ahead), kind="exact", date_phrase=phrase)
    numeric = re.fullmatch(r"(\d{1,2})/(\d{1,2})(/\d{2,4})?", phrase.strip())
    if numeric and int(numeric.group(2)) > 12 >= int(numeric.group(1)):  # "12/18": no 18th month, so month first
        phrase = f"{numeric.group(2)}/{numeric.group(1)}{numeric.group(3) or ''}"
    data = _parse(_date_words(phrase), base)
    if data is None or data.date_obj is None:
        return None
    day = data.date_obj.date()
    if data.period == "week":
        start, end = _week(day)
        start = max(start, today)
        end = max(end, start + dt.timedelta(days=MIN_RANGE_DAYS))  # "this week" said on a Sunday
        return When(start=start, end=end, date_phrase=phrase)
    earlier = _year_earlier(day) if day.year == today.year + 1 and not re.search(r"\d{4}", phrase) else None
    if earlier and dt.timedelta(0) <= today - earlier <= RECENT_PAST:
        day = earlier  # "1 March" said on 1 March or on 10 March is this year's, not next (a past date is past)
    named = re.match(_WEEKDAY, lowered)
    if named and re.search(r"\d", phrase):  # "Monday 7th": the next 7th that is a Monday
        day = _on_weekday(day, _full_weekday(named), today)
    kind = "exact"
    if BARE_WEEKDAY.match(phrase.strip()):
        kind = "weekday"
    elif BARE_DAY.match(phrase.strip()):
        kind = "day"
        if day < today:  # "the 3rd" late in a month means next month's
            day = (day.replace(day=1) + dt.timedelta(days=32)).replace(day=day.day)
    return When(date=day, kind=kind, date_phrase=phrase)


def _year_earlier(day: dt.date) -> dt.date | None:
    try:
        return day.replace(year=day.year - 1)
    except ValueError:  # 29 February
        return None


def _twelve_hour(hour: int, minute: int, half: str | None, tour_times: tuple[str, ...]) -> int:
    """The 24-hour hour of a 1-12 hour said without am/pm; `half` is "am"/"pm" from a part of day said near it."""
    if half == "pm":
        return hour % 12 + 12
    if half == "am" and hour >= 6:  # "morning ... at 2" is more likely 2 pm than 2 a.m.
        return hour
    readings = (hour + 12, hour) if hour < 8 else (hour, hour % 12 + 12)
    return next((h for h in readings if f"{h:02d}:{minute:02d}" in tour_times), readings[0])


def _time_of(phrase: str, half: str | None, base: dt.datetime, tour_times: tuple[str, ...]) -> str | None:
    if phrase in ("noon", "midday"):
        return "12:00"
    if phrase.isdigit():
        hour, minute = int(phrase), 0
    else:
        data = _parse(phrase.replace(".", ":") if re.search(r"\d\.\d", phrase) else phrase, base)
        if data is None or data.date_obj is None or data.period != "time":
            return None
        hour, minute = data.date_obj.hour, data.date_obj.minute
    if 1 <= hour <= 12 and not re.search(r"[ap]m|^0\d", phrase):
        hour = _twelve_hour(hour, minute, half, tour_times)
    return f"{hour:02d}:{minute:02d}" if 0 <= hour < 24 else None


def _nearest_part(text: str, match: re.Match, parts: list[re.Match]) -> re.Match | None:
    """The part of the day said closest to a time in its sentence ("evening 6:30", "4 in the evening")."""
    same = [p for p in parts
            if not SENTENCE_END.search(text[min(p.end(), match.end()) : max(p.start(), match.start())])]
    return min(same, key=lambda p: min(abs(p.start() - match.end()), abs(match.start() - p.end()))) if same else None


def _half_of_day(part: re.Match | None) -> str | None:
    """"am" or "pm" from the part of the day said with a time. "Lunchtime" and "after school" say nothing about
    am/pm: the hour decides."""
    word = part.group(1).lower() if part else ""
    return "am" if word == "morning" else "pm" if word.endswith(("afternoon", "evening", "night")) else None


def _preferred(matches: list[re.Match], text: str) -> list[re.Match]:
    """Drop the values a correction names as wrong ("Thursday, not Wednesday"), the ones a reason gives
    ("4.15 would be easier as my husband finishes at 3.30") and the ones turned down ("9 is tough")."""
    kept = [m for m in matches if not OLD_VALUE.search(text[max(0, m.start() - 15) : m.start()])]
    kept = [m for m in kept if not _in_reason(text, m.start(), m.end())] or kept
    kept = [m for m in kept if not REJECTED.match(text, m.end())] or kept  # "9 is tough", "mornings are hard"
    return kept or matches


def _in_reason(text: str, position: int, end: int) -> bool:
    """Whether the phrase from `position` to `end` is inside a "because ..." clause of its sentence (or is one:
    "I work till 6")."""
    start = max((m.end() for m in SENTENCE_END.finditer(text, 0, position)), default=0)
    return bool(REASON.search(text, start, end))


def _outside(matches: list[re.Match], taken: list[re.Match]) -> list[re.Match]:
    """The matches that do not overlap any of `taken`."""
    return [m for m in matches if not any(t.start() < m.end() and m.start() < t.end() for t in taken)]


def _times(text: str, dates: list[re.Match]) -> list[re.Match]:
    """The time phrases that are not part of a date ("March 5 in the morning" has no time)."""
    return _outside(list(TIME_PHRASE.finditer(text)), dates)


def spans(text: str) -> list[tuple[int, int]]:
    """Where the date and time phrases (and windows: "after 5") are in `text`, so other extractors can skip them."""
    norm, index = normalise(text)
    dates = list(DATE_PHRASE.finditer(norm))
    found = dates + _times(norm, dates) + _outside(list(WINDOW.finditer(norm)), dates)
    return [(index[m.start()], index[m.end()]) for m in found]


def _window(match: re.Match, half: str | None, base: dt.datetime, tour_times: tuple[str, ...]
            ) -> tuple[str | None, str | None]:
    """(start, end) of a window ("between 12 n 2": 12:00-14:00; "after lunch": 13:00-); (None, None) when its
    ends are not times or come in the wrong order. A start without am/pm takes its end's ("between 2 and 4pm")."""

    def clock(said: str | None, role: str, half: str | None) -> str | None:
        said = (said or "").strip().lower()
        if not said:
            return None
        return LUNCH[role] if said.startswith("lunch") else _time_of(said, half, base, tour_times)

    end_said = match.group("end") or match.group("before")
    end_half = re.search(r"[ap]m", end_said or "", re.IGNORECASE)
    start_said = match.group("start") or match.group("after")
    start_half = end_half.group(0).lower() if end_half and match.group("start") and not re.search(
        r"[ap]m|:|noon|midday|lunch", start_said, re.IGNORECASE) else half
    start, end = clock(start_said, "start", start_half), clock(end_said, "end", half)
    if start and end and end <= start and start_half != half:  # "10 to 2pm": from 10:00, not from 22:00
        start = clock(start_said, "start", half)
    if start and end and end <= start:
        return None, None
    return start, end


# "tues 11": a weekday and a bare number that could be the hour; it is the day of the month only when that day
# falls on that weekday soon ("wed 9" said in late November is Wednesday 9 December), else it is the hour
WEEKDAY_AND_NUMBER = re.compile(
    rf"\b(?P<weekday>{_WEEKDAY}),?\s+(?P<number>\d{{1,2}})\b(?![:./]\d|\s*(?:st|nd|rd|th|[ap]\.?m)\b)"
    rf"(?!\s+(?:of\s+)?{_MONTH})",
    re.IGNORECASE,
)
WEEKDAY_DATE_SOON = dt.timedelta(days=31)


def _is_day_of_month_soon(weekday: str, number: int, today: dt.date) -> bool:
    """Whether the `number`th of this month or the next is a `weekday` within WEEKDAY_DATE_SOON of `today`."""
    first = today.replace(day=1)
    for month_start in (first, (first + dt.timedelta(days=32)).replace(day=1)):
        try:
            day = month_start.replace(day=number)
        except ValueError:  # no 31st that month
            continue
        if today <= day <= today + WEEKDAY_DATE_SOON and WEEKDAYS[day.weekday()] == weekday:
            return True
    return False


def _hours_after_weekdays(norm: str, index: list[int], today: dt.date) -> tuple[str, list[int]]:
    """`norm` with "at" put between a weekday and a number that is its hour, not its day of the month."""
    out, out_index, last = [], [], 0
    for match in WEEKDAY_AND_NUMBER.finditer(norm):
        number = int(match.group("number"))
        weekday = _full_weekday(re.match(_WEEKDAY, match.group("weekday"), re.IGNORECASE))
        if not 1 <= number <= 12 or _is_day_of_month_soon(weekday, number, today):
            continue
        gap = match.end("weekday")
        out.append(norm[last:gap] + " at ")
        out_index += index[last:gap] + [index[match.start("number")]] * 4
        last = match.start("number")
    if not out:
        return norm, index
    return "".join(out) + norm[last:], out_index + index[last:]


@lru_cache(maxsize=2048)
def find_when(text: str, today: dt.date, now: dt.time, tour_times: tuple[str, ...] = ()) -> When:
    """The date/range, time and part of day that `text` asks for; later mentions win.

    Cached: every model call of a turn re-reads the same earlier messages."""
    norm, index = _hours_after_weekdays(*normalise(text), today)

    def said(start: int, end: int) -> str:  # the parent's own words for a span of `norm`
        return text[index[start] : index[end]].strip()

    base = dt.datetime.combine(today, now)
    when = When()
    all_dates = list(DATE_PHRASE.finditer(norm))
    dates = _preferred(all_dates, norm)
    for match in dates:
        parsed = _date_of(match.group(0).strip(), today, base)
        same_day = when.kind == "exact" and when.date and parsed and parsed.kind == "weekday" and (
            parsed.date.weekday() == when.date.weekday())
        if parsed is not None and not same_day:  # "3/12 (Thursday)": the weekday only agrees with the date
            start, end = match.span()
            lead = BOUND_LEAD.search(norm, max(0, start - 30), start)
            tail = BOUND_TAIL.match(norm[end:])
            bound = _bounded(parsed, lead, tail, today)
            if bound:  # "before Christmas", "the 18th at the latest": the days it leaves, said with its cue
                parsed, start = bound, lead.start() if lead else start
                end += tail.end() if tail else 0
            when = replace(parsed, time=when.time, part_of_day=when.part_of_day, date_phrase=said(start, end))
    between = norm[dates[-2].end() : dates[-1].start()] if len(dates) >= 2 else ""
    if len(dates) >= 2 and (RANGE_JOIN.fullmatch(between) or EITHER_JOIN.fullmatch(between)):
        first = _date_of(dates[-2].group(0).strip(), today, base)
        either = bool(EITHER_JOIN.fullmatch(between)) and first is not None and first.date is not None
        if either and when.kind == "weekday" and when.date and when.date < first.date:
            when = replace(when, date=when.date + dt.timedelta(weeks=1))  # "next thurs or fri": next week's Friday
        # "between Tuesday and Wednesday"; "thurs or fri" (two days side by side: both, not the later alone)
        far_apart = either and when.date is not None and when.date - first.date > EITHER_DAYS
        if first and first.date and when.date and first.date < when.date and not far_apart:
            when = When(start=first.date, end=when.date, date_phrase=said(dates[-2].start(), dates[-1].end()))
    parts = list(PART_OF_DAY.finditer(norm))
    windows = _preferred(_outside(list(WINDOW.finditer(norm)), all_dates), norm)
    times = _preferred(_outside(_times(norm, all_dates), windows), norm)
    windows = [] if times else windows  # "midday, as she naps after lunch": an exact time says more than a window
    for match in sorted(times + windows, key=lambda m: m.start()):  # later mentions win
        part = _nearest_part(norm, match, parts)
        half = _half_of_day(part)
        if match.re is WINDOW:  # "after 3pm", "between 12 n 2": a window, not an exact time
            start, end = _window(match, half, base, tour_times)
            ranged = match.group(0).lower().startswith("from") and match.group("end")
            if ranged and end in tour_times and not any(in_window(t, start, end) for t in tour_times):
                # "10am to 11am" where tours start at 9 and 11: no start lies before 11, so it means 11
                when = replace(when, time=end, after=None, before=None, time_phrase=said(*match.span()))
            elif start or end:
                when = replace(when, time=None, after=start, before=end, part_of_day=window_part(start, end),
                               time_phrase=said(*match.span()))
            continue
        parsed_time = _time_of(match.group(0).strip().lower(), half, base, tour_times)
        if parsed_time:  # the words said, with the part of the day that decided am or pm ("晚上8点", "8 malam")
            words = (min(part.start(), match.start()), max(part.end(), match.end())) if half else match.span()
            when = replace(when, time=parsed_time, after=None, before=None, time_phrase=said(*words))
    # "petang lagi bagus sbb pagi i kerja": the afternoon; "mornings are hard": no part of the day
    parts = [p for p in _preferred(parts, norm) if not REJECTED.match(norm, p.end())] if parts else parts
    if parts:
        part = parts[-1].group(1).lower()
        if part.startswith("lunch") and not (when.time or when.after or when.before):  # lunch time: 12:00-14:00
            when = replace(when, after=LUNCH_TIME[0], before=LUNCH_TIME[1], time_phrase=said(*parts[-1].span()))
        part = "afternoon" if part in ("after school", "lunchtime", "lunch time", "arvo") else part
        when = replace(when, part_of_day="evening" if part.endswith("night") else part)
        end = PART_ENDS.get(when.part_of_day or "")
        if when.after and not when.before and end and when.after < end:  # "Mon morning after 10": 10:00-12:00
            when = replace(when, before=end)
    if when.time and when.part_of_day:  # "4 in the evening" is 16:00, which the timetable calls afternoon
        when = replace(when, part_of_day=part_of_day(when.time))
    elif when.after or when.before:  # "下午5点以后" (afternoon, after 5): after 17:00, the timetable's evening
        when = replace(when, part_of_day=window_part(when.after, when.before) or when.part_of_day)
    return when


def read_time(text: str, tour_times: tuple[str, ...] = ()) -> str | None:
    """A time said on its own ("3", "15:00", "half past 2", "four pm", "2 in the afternoon") as "HH:MM"."""
    text = text.strip()
    if BARE_HOUR.fullmatch(text):  # a bare "3" (or "15h") as a time field's whole value
        text = f"at {text.rstrip('h')}"
    return find_when(text, _ANY_DAY, _NOON, tour_times).time


_ANY_DAY, _NOON = dt.date(2000, 1, 3), dt.time(12)


def warm_up() -> None:
    """dateparser loads its language data on first use (~0.1 s); pay that at start-up, not in a turn."""
    find_when("tomorrow at 9am", dt.date.today(), dt.time(9, 0))
