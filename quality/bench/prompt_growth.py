"""prompt_growth: how many prompt tokens a turn sends as a conversation gets long.

A scripted parent has a 40-message conversation (FAQ questions, a booking drip, a correction, a reschedule,
a callback, a second booking, a cancellation, small talk) with the offline policy, through the real loop,
tools and services. The model is `benchrec/offline`: the offline policy behind a wrapper that measures
every call's messages with `chatbot.agent.prompt.count_tokens` (the tokenizer the budget uses).

"Prompt tokens of a turn" is the first model call of the turn (system prompt + history + the parent's
message): that is what the history budget bounds. The later calls of a turn add this turn's tool results;
they are reported as "all calls" beside it. The same conversation is then replayed with compression off
(LLM_PROMPT_TOKEN_BUDGET = 10**9). The hosted-model figure is the median over the first 30 turns, which
are exactly a 30-message conversation (later messages cannot change earlier prompts).

Tokens per completed booking: a parent books a tour in five messages (BOOKING_LINES: the request with the
child, a day, the slot, name and phone, "yes"); every model call of that conversation is counted as a hosted
model would bill it, in the same tokenizer: the prompt with the tool schemas, plus what the model produced
(text, tool names and arguments). The booking must exist at the end.
"""

import datetime as dt
import statistics

from asgiref.sync import async_to_sync
from django.conf import settings
from django.test import override_settings

from quality.bench.common import Context, Result, Row, bench_school, fmt_ratio, make_contact, next_open_day, ratio
from quality.bench.models import RECORDING_MODEL, register_recording

NAME = "prompt_growth"
TITLE = "Prompt tokens per turn over a long conversation"
NO_COMPRESSION_BUDGET = 10**9
EARLY_TURN = 5
HOSTED_TURNS = 30
BOOKING_TOKEN_TARGET = 12_000  # issue 14: prompt + completion tokens of a whole completed booking

FAQ = [
    ("What curriculum do you follow?", "We follow the English National Curriculum from Nursery to Year 6, with "
     "IPC topics and daily Mandarin. Our Year 6 pupils sit the Cambridge Primary Checkpoint.", ["curriculum"]),
    ("How much are the school fees?", "Fees for the 2026/27 year are SGD 9,800 per term for Nursery and "
     "Reception and SGD 11,400 per term from Year 1. There is a one-off enrolment fee of SGD 3,500.",
     ["fees", "cost", "tuition"]),
    ("Is lunch provided?", "Yes: a hot lunch is cooked on site every day, with vegetarian, halal and "
     "allergy-safe options. It is included in the fees from Year 1.", ["lunch", "food", "meals"]),
    ("Do you have a school bus?", "Our bus partner runs routes across the east of Singapore, door to door. "
     "The admissions team can check whether your address is on a route.", ["bus", "transport"]),
    ("What should we bring to the tour?", "Nothing at all. Children are very welcome to join; the tour takes "
     "about an hour and ends with time for your questions.", ["tour", "bring"]),
    ("What time does school finish?", "The school day runs from 8:00 to 14:45 for Nursery and Reception and "
     "to 15:15 from Year 1, with after-school clubs until 16:30.", ["hours", "finish", "times"]),
    ("Are there after-school activities?", "Yes, more than 40 clubs each term: football, swimming, robotics, "
     "art, drama, coding and music among them.", ["clubs", "activities", "after-school"]),
    ("How big are the classes?", "Classes have at most 22 children, with a teacher and a full-time teaching "
     "assistant in every class up to Year 2.", ["class size", "classes"]),
    ("Is there a sibling discount?", "The second child gets 5% off tuition and the third and later 10%.",
     ["sibling", "discount"]),
    ("Where is the school?", "We are at 1 Bench Road, a five-minute walk from the MRT station. Visitor parking "
     "is at the main gate.", ["location", "address", "parking"]),
    ("What is the uniform?", "A white polo shirt with the school crest, navy shorts or skirt, and a PE kit. "
     "The uniform shop is open on Tuesday and Thursday mornings.", ["uniform"]),
    ("Do you have an open day?", "Our next open day is on the first Saturday of next month, 9:00 to 12:00. "
     "Private tours run every weekday.", ["open day", "events"]),
]


def spoken(day: dt.date) -> str:
    return f"{day:%A} {day.day} {day:%B}"


def booking_lines(school) -> list[str]:
    """A parent booking a tour in five messages."""
    day = next_open_day(school, 3, 0)
    return ["Hi! I'd like to book a campus tour for my daughter Mia, she's 5.", f"{spoken(day)} morning if possible",
            "the first one", "I'm Sarah Tan, 91234567", "yes please"]


def parent_lines(school) -> list[str]:
    first, second, third = (next_open_day(school, 3, n) for n in (0, 2, 4))
    return [
        "Hi there!",
        "We're moving to Singapore next year and are looking at schools for our daughter.",
        "What curriculum do you follow?",
        "How much are the fees?",
        "Is lunch provided?",
        "Do you have a school bus?",
        "OK, I'd like to book a campus tour please.",
        "It's for my daughter Mia",
        "She's 5",
        f"{spoken(first)} morning if possible",
        "the first one",
        "I'm Sarah Tan",
        "91234567",
        "Thank you! What should we bring to the tour?",
        "Can my husband come too?",
        "sorry, my daughter's name is spelled Miya, not Mia",
        f"Actually, can we move the tour to {spoken(second)} at 2pm?",
        "Great, thanks",
        "What time does school finish?",
        "Are there after-school activities?",
        "Do you teach Mandarin?",
        "How big are the classes?",
        "Is there a sibling discount?",
        "My son Leo might join later, he's 3",
        "Could someone from admissions call me back about the fees?",
        "Tomorrow afternoon works",
        "Thanks a lot",
        "One more thing, where exactly is the school?",
        "Is there parking?",
        "What's the uniform like?",
        "Do you have a swimming pool?",
        f"Can we also book a tour for Leo on {spoken(third)} at 11am?",
        "Leo, he's 3",
        "yes please",
        "When is my tour again?",
        "Can we cancel Leo's tour? Something came up.",
        "yes, cancel it",
        "Do you have an open day?",
        "OK, thank you for all your help",
        "Bye!",
    ]


async def _converse(school, contact, lines: list[str], recorder, progress, label: str) -> list[str]:
    from chatbot.models import Message
    from chatbot.services import receive

    replies = []
    for turn, text in enumerate(lines, start=1):
        recorder.turn = turn
        received = await receive(school=school, contact=contact, channel="web", text=text)
        reply = await Message.objects.filter(conversation=received.conversation, role=Message.Role.ASSISTANT)\
            .order_by("-id").afirst()
        replies.append(reply.text if reply else "")
        progress.count(f"{label} turns", turn, len(lines))
    return replies


def _per_turn(calls: list[tuple[int, int, int]], turns: int) -> tuple[list[int], list[int], list[int], list[int]]:
    """(first-call tokens, all-calls tokens, calls, first-call system-prompt tokens) per turn, from turn 1."""
    first, total, count, system = [0] * turns, [0] * turns, [0] * turns, [0] * turns
    for turn, tokens, system_tokens in calls:
        index = turn - 1
        if count[index] == 0:
            first[index] = tokens
            system[index] = system_tokens
        total[index] += tokens
        count[index] += 1
    return first, total, count, system


def _one_conversation(ctx: Context, label: str, budget: int, lines_for) -> dict:
    recorder = register_recording()
    with override_settings(LLM_MODEL=RECORDING_MODEL, LLM_PROMPT_TOKEN_BUDGET=budget, CHAT_BURST_WINDOW_SECONDS=0,
                           PIPEDRIVE_API_TOKEN=""), bench_school(ctx, f"{NAME}-{label}") as school:
        _faq(school)
        lines = lines_for(school)
        contact = make_contact(school, 0)
        replies = async_to_sync(_converse)(school, contact, lines, recorder, ctx.progress, label)
        booked = school.bookings.count()
    first, total, count, system = _per_turn(recorder.calls, len(lines))
    return {"first": first, "total": total, "calls": count, "system": system, "replies": replies,
            "billed_prompt": sum(p for p, _ in recorder.billed),
            "billed_completion": sum(c for _, c in recorder.billed), "model_calls": len(recorder.billed),
            "bookings": booked}


def _faq(school) -> None:
    from chatbot.models import FaqEntry

    FaqEntry.objects.bulk_create([FaqEntry(school=school, question=q, answer=a, tags=tags, related_topics=[])
                                  for q, a, tags in FAQ])


def _tool_schema_tokens() -> int:
    import litellm

    from chatbot.agent.prompt import TOKENIZER_MODEL
    from chatbot.agent.tools import TOOL_SCHEMAS

    with_tools = litellm.token_counter(model=TOKENIZER_MODEL, messages=[{"role": "user", "content": "x"}],
                                       tools=TOOL_SCHEMAS)
    without = litellm.token_counter(model=TOKENIZER_MODEL, messages=[{"role": "user", "content": "x"}])
    return with_tools - without


def run(ctx: Context) -> Result:
    options = ctx.options
    messages = options.conversation_messages
    result = Result(NAME, TITLE)

    def lines_for(school) -> list[str]:
        script = parent_lines(school)
        return [script[i % len(script)] for i in range(messages)]

    budget = settings.LLM_PROMPT_TOKEN_BUDGET
    ctx.progress.say(f"prompt_growth: {messages} messages with compression (budget {budget} tokens)")
    compressed = _one_conversation(ctx, "compressed", budget, lines_for)
    ctx.progress.say(f"prompt_growth: the same {messages} messages without compression")
    plain = _one_conversation(ctx, "uncompressed", NO_COMPRESSION_BUDGET, lines_for)
    early = min(EARLY_TURN, messages) - 1
    last = messages - 1
    hosted = min(HOSTED_TURNS, messages)
    growth = ratio(compressed["first"][last], compressed["first"][early])
    growth_plain = ratio(plain["first"][last], plain["first"][early])
    ctx.progress.say("prompt_growth: a tour booked in five messages, every call counted as a hosted model bills it")
    booking = _one_conversation(ctx, "booking", budget, booking_lines)
    booking_tokens = booking["billed_prompt"] + booking["billed_completion"]
    schema_tokens = _tool_schema_tokens()
    median_first = statistics.median(compressed["first"][:hosted])
    median_total = statistics.median(compressed["total"][:hosted])
    median_calls = statistics.median(compressed["calls"][:hosted])
    median_billed = statistics.median([t + c * schema_tokens for t, c in
                                       zip(compressed["total"][:hosted], compressed["calls"][:hosted], strict=True)])
    empty = sum(1 for text in compressed["replies"] + plain["replies"] if not text)
    result.figures = {
        "messages": messages,
        "budget_tokens": budget,
        "early_turn": early + 1,
        "tokens_early_turn": compressed["first"][early],
        "tokens_last_turn": compressed["first"][last],
        "growth_ratio": growth,
        "tokens_early_turn_uncompressed": plain["first"][early],
        "tokens_last_turn_uncompressed": plain["first"][last],
        "growth_ratio_uncompressed": growth_plain,
        "max_tokens_compressed": max(compressed["first"]),
        "hosted_turns": hosted,
        "hosted_median_prompt_tokens": median_first,
        "hosted_median_prompt_tokens_all_calls": median_total,
        "hosted_median_calls_per_turn": median_calls,
        "tool_schema_tokens_per_call": schema_tokens,
        "hosted_median_billed_prompt_tokens": median_billed,
        "per_turn_compressed": compressed["first"],
        "per_turn_uncompressed": plain["first"],
        "per_turn_all_calls_compressed": compressed["total"],
        "per_turn_system_prompt_compressed": compressed["system"],
        "system_prompt_tokens_early_turn": compressed["system"][early],
        "system_prompt_tokens_last_turn": compressed["system"][last],
        "empty_replies": empty,
        "tokens_per_completed_booking": booking_tokens,
        "booking_prompt_tokens": booking["billed_prompt"],
        "booking_completion_tokens": booking["billed_completion"],
        "booking_model_calls": booking["model_calls"],
        "booking_messages": len(booking["replies"]),
        "booking_completed": booking["bookings"] == 1,
    }
    result.rows = [
        Row(f"tokens turn {messages} / turn {early + 1}", fmt_ratio(growth),
            fmt_ratio(growth_plain) + " uncompressed", "",
            f"{compressed['first'][early]} -> {compressed['first'][last]} tokens (uncompressed "
            f"{plain['first'][early]} -> {plain['first'][last]}); budget {budget}"),
        Row(f"turn {messages} prompt", f"{compressed['first'][last]} tokens",
            f"{plain['first'][last]} tokens", fmt_ratio(ratio(compressed['first'][last], plain['first'][last])),
            f"compressed vs uncompressed; system prompt {compressed['system'][early]} -> "
            f"{compressed['system'][last]} tokens (turn {early + 1} -> {messages})"),
        Row(f"median prompt / turn, {hosted}-msg conv.", f"{median_first:g} tokens", "", "",
            f"first call of each turn; all calls {median_total:g} tokens ({median_calls:g} calls)"),
        Row("median billed prompt / turn", f"{median_billed:g} tokens", "", "",
            f"all calls + {schema_tokens} tool-schema tokens per call (every tool: an upper bound, fewer are "
            "offered where some cannot apply)"),
    ]
    result.rows.append(Row("tokens per completed booking", f"{booking_tokens:,} tokens", "12,000",
                           fmt_ratio(ratio(booking_tokens, BOOKING_TOKEN_TARGET)),
                           f"{len(booking['replies'])} parent messages, {booking['model_calls']} model calls: "
                           f"{booking['billed_prompt']:,} prompt (with tool schemas) + "
                           f"{booking['billed_completion']:,} completion"))
    if empty:
        result.status = "failed"
        result.reason = f"{empty} turn(s) got no reply"
    if booking["bookings"] != 1:
        result.status = "failed"
        result.reason = f"the booking conversation made {booking['bookings']} booking(s), not 1"
    return result
