"""`manage.py seed_load`: many synthetic conversations, messages and reasoning steps, fast, for load and speed tests.

    manage.py seed_load                                  # 10,000 conversations, 200,000 messages
    manage.py seed_load --conversations 500 --messages 8000 --days 30

Rows go in with bulk_create, a batch of conversations at a time (their messages,
then the steps of the concierge's answers), with a progress line per batch. The
conversations spread over the last `--days` days across the existing schools (a
"Load Test School" is made when there is none), with the mix a real install has:
outcomes, ratings, handoffs, model fallbacks, FAQ questions with no answer.
Adds rows; it never deletes any.
"""

import contextlib
import datetime as dt
import json
import random
import time
from decimal import Decimal

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.test.utils import override_settings
from django.utils import timezone

from bookings.models import School
from chatbot.faq import NO_MATCH_MESSAGE
from chatbot.models import Channel, Conversation, Message, ReasoningStep
from crm.models import Contact

FIRST_NAMES = ["Mei", "Aisha", "Tom", "Priya", "Wei Ling", "Sophie", "James", "Nur", "Arjun", "Hannah", "Kenji",
               "Fatimah", "Oliver", "Siti", "Daniel", "Chloe", "Ravi", "Grace", "Ahmad", "Lucy"]
LAST_NAMES = ["Tan", "Lim", "Khan", "Okafor", "Clarke", "Fischer", "Ng", "Rahman", "Smith", "Lee", "Kumar", "Wong",
              "Goh", "Ong", "Patel", "Brown", "Chua", "Ismail", "Teo", "Davies"]
PARENT_LINES = [
    "Hi, could we book a campus tour next week?",
    "How much are the fees for Year 1?",
    "Do you have a school bus from Pasir Ris?",
    "Tuesday morning works for us",
    "My daughter is 4, is that the right age for kindergarten?",
    "Can I move my tour to Thursday?",
    "What time does school finish?",
    "Please call me back tomorrow afternoon",
    "Is lunch included?",
    "Thank you!",
    "Can I speak to a person please?",
    "We need to cancel the tour, sorry",
]
CONCIERGE_LINES = [
    "I'd be happy to help you book a tour. Which day suits you?",
    "Here are the open tour times for next week.",
    "Your tour is booked. You'll get a reminder the day before.",
    "Our fees for Year 1 are listed below; there is a sibling discount.",
    "I'm sorry, I don't have an answer to that. Shall I ask the admissions team to call you?",
    "Done: your tour has been moved.",
    "The admissions team will call you back tomorrow afternoon.",
]
NO_MATCH_QUESTIONS = [
    "Do you have a swimming pool?",
    "Is there a discount for twins?",
    "Can my child bring a pet to school?",
    "Do you teach Mandarin as a first language?",
    "Are the teachers vaccinated?",
    "Can grandparents do the pick-up?",
    "Do you offer chess lessons?",
    "Is there a parent association?",
]
FAQ_QUESTIONS = ["How much are the fees?", "What time does school finish?", "Is lunch included?",
                 "Do you have a school bus?"]
TOOLS = ["check_availability", "book_tour", "manage_tour_booking", "request_callback", "update_context"]
OUTCOMES = [("", 20), ("booked", 20), ("rescheduled", 4), ("cancelled", 3), ("callback", 8), ("faq_only", 25),
            ("handed_off", 5), ("abandoned", 15)]
MODELS = [("gpt-4o-mini", 80), ("gpt-4o-mini -> offline/policy", 6), ("offline/policy", 14)]
CHANNELS = [(Channel.WEB, 55), (Channel.WHATSAPP, 30), (Channel.CHATWOOT, 15)]
BATCH = 500  # conversations per batch


def _pick(weighted: list[tuple], rng: random.Random):
    return rng.choices([value for value, _ in weighted], weights=[weight for _, weight in weighted])[0]


@contextlib.contextmanager
def own_timestamps():
    """Let bulk_create keep the generated started_at / created_at instead of "now"."""
    fields = [Conversation._meta.get_field("started_at"), Message._meta.get_field("created_at")]
    saved = [f.auto_now_add for f in fields]
    for f in fields:
        f.auto_now_add = False
    try:
        yield
    finally:
        for f, value in zip(fields, saved, strict=True):
            f.auto_now_add = value


class Command(BaseCommand):
    help = "Generate many conversations, messages and reasoning steps quickly (load and speed tests)."

    def add_arguments(self, parser):
        parser.add_argument("--conversations", type=int, default=10_000)
        parser.add_argument("--messages", type=int, default=200_000,
                            help="Messages in all (parent and concierge), at least 2 per conversation.")
        parser.add_argument("--days", type=int, default=90, help="Spread the conversations over the last N days.")
        parser.add_argument("--seed", type=int, default=None, help="Random seed, for a reproducible data set.")

    def handle(self, *args, conversations: int, messages: int, days: int, seed: int | None, **options):
        if conversations < 1 or messages < 2 * conversations:
            raise CommandError("Give at least one conversation and two messages per conversation.")
        rng = random.Random(seed)
        started = time.perf_counter()
        schools = list(School.objects.filter(is_active=True)) or [self._load_school()]
        counts = self._message_counts(conversations, messages, rng)
        totals = {"conversations": 0, "messages": 0, "steps": 0}
        now = timezone.now()
        with own_timestamps(), override_settings(DEBUG=False):  # DEBUG would keep every INSERT in memory
            contact_numbers = Contact.objects.count()
            for first in range(0, conversations, BATCH):
                batch = counts[first:first + BATCH]
                with transaction.atomic():
                    made = self._batch(batch, schools, now, days, rng, contact_numbers + first)
                for key, value in made.items():
                    totals[key] += value
                self.stdout.write(
                    f"  {totals['conversations']:>7,}/{conversations:,} conversations  "
                    f"{totals['messages']:>9,}/{messages:,} messages  {totals['steps']:>9,} steps  "
                    f"{time.perf_counter() - started:6.1f} s"
                )
        with connection.cursor() as cursor:  # fresh planner statistics, as a long-running database would have
            cursor.execute("ANALYZE")
        self.stdout.write(self.style.SUCCESS(
            f"Made {totals['conversations']:,} conversations, {totals['messages']:,} messages and "
            f"{totals['steps']:,} reasoning steps in {time.perf_counter() - started:.1f} s."
        ))

    @staticmethod
    def _load_school() -> School:
        school, _ = School.objects.get_or_create(slug="load-test", defaults={
            "name": "Load Test School", "tour_start_times": ["09:00", "14:00"], "closed_weekdays": [5, 6]})
        return school

    @staticmethod
    def _message_counts(conversations: int, messages: int, rng: random.Random) -> list[int]:
        """Messages per conversation: at least 2 each, the rest spread at random (skewed, like real chats)."""
        counts = [2] * conversations
        weights = [rng.paretovariate(2.0) for _ in range(conversations)]
        for index in rng.choices(range(conversations), weights=weights, k=messages - 2 * conversations):
            counts[index] += 1
        return counts

    def _batch(self, counts: list[int], schools: list[School], now, days: int, rng: random.Random,
               contact_offset: int) -> dict:
        contacts = Contact.objects.bulk_create([
            Contact(school=schools[i % len(schools)], name=f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}",
                    phone=f"+658{contact_offset + i:07d}")
            for i in range(len(counts))
        ])
        conversations, plans = [], []
        for contact, count in zip(contacts, counts, strict=True):
            started_at = now - dt.timedelta(seconds=rng.uniform(0, days * 86_400))
            outcome = _pick(OUTCOMES, rng)
            status = (Conversation.Status.HANDED_OFF if outcome == "handed_off"
                      else rng.choice([Conversation.Status.ENDED, Conversation.Status.ENDED,
                                       Conversation.Status.ACTIVE]))
            plan = self._plan_messages(count, started_at, rng)
            tokens = sum(m["prompt_tokens"] + m["completion_tokens"] for m in plan)
            cost = sum((m["cost"] for m in plan), Decimal(0))
            rating = rng.choices(["", "good", "bad"], weights=[70, 24, 6])[0]
            conversations.append(Conversation(
                school=contact.school, contact=contact, channel=_pick(CHANNELS, rng), status=status, outcome=outcome,
                started_at=started_at, last_message_at=plan[-1]["created_at"],
                ended_at=plan[-1]["created_at"] if status == Conversation.Status.ENDED else None,
                total_tokens=tokens, total_cost=cost, rating=rating,
                rating_note="Synthetic rating." if rating else "", rated_at=now if rating else None,
            ))
            plans.append(plan)
        Conversation.objects.bulk_create(conversations)
        rows = []
        for conversation, plan in zip(conversations, plans, strict=True):
            for item in plan:
                fields = {k: v for k, v in item.items() if k != "steps"}
                rows.append((Message(conversation=conversation, channel=conversation.channel, **fields), item["steps"]))
        Message.objects.bulk_create([message for message, _ in rows], batch_size=2000)
        steps = [{**step, "message_id": message.pk} for message, planned in rows for step in planned]
        self._insert_steps(steps)
        return {"conversations": len(conversations), "messages": len(rows), "steps": len(steps)}

    @staticmethod
    def _insert_steps(steps: list[dict]) -> None:
        """The steps are most of the rows: one executemany, without building model instances (3x faster)."""
        if not steps:
            return
        meta = ReasoningStep._meta
        fields = [f for f in meta.concrete_fields if not f.primary_key]
        quote = connection.ops.quote_name
        columns = ", ".join(quote(f.column) for f in fields)
        placeholders = ", ".join(["%s"] * len(fields))
        sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({placeholders})"  # noqa: S608 - model names
        json_fields = {"tool_arguments", "tool_result"}
        rows = [
            [json.dumps(step[f.attname]) if f.attname in json_fields and step[f.attname] is not None
             else f.get_db_prep_save(step[f.attname], connection) if f.attname == "created_at"
             else step[f.attname]
             for f in fields]
            for step in steps
        ]
        with connection.cursor() as cursor:
            cursor.executemany(sql, rows)

    def _plan_messages(self, count: int, started_at: dt.datetime, rng: random.Random) -> list[dict]:
        plan, at = [], started_at
        for index in range(count):
            at += dt.timedelta(seconds=rng.uniform(2, 90))
            if index % 2 == 0:
                plan.append({"role": Message.Role.USER, "text": rng.choice(PARENT_LINES), "created_at": at,
                             "processed_at": at, "model": "", "latency_ms": None, "prompt_tokens": 0,
                             "completion_tokens": 0, "cost": Decimal(0), "steps": []})
                continue
            model = _pick(MODELS, rng)
            steps = self._plan_steps(at, model, rng)
            latency = sum(s["latency_ms"] or 0 for s in steps)
            prompt = sum(s["prompt_tokens"] for s in steps)
            completion = sum(s["completion_tokens"] for s in steps)
            paid = not model.startswith("offline")
            plan.append({
                "role": Message.Role.ASSISTANT, "text": rng.choice(CONCIERGE_LINES), "created_at": at,
                "processed_at": None, "model": model, "latency_ms": latency, "prompt_tokens": prompt,
                "completion_tokens": completion,
                "cost": Decimal(prompt * 15 + completion * 60) / Decimal(100_000_000) if paid else Decimal(0),
                "steps": steps,
            })
        return plan

    @staticmethod
    def _plan_steps(at: dt.datetime, model: str, rng: random.Random) -> list[dict]:
        """think -> act -> observe (one or two tool cycles) -> answer, or a plain answer."""
        steps, position = [], 0
        answering = model.split(" -> ")[-1]

        def add(cycle, kind, content="", **fields):
            nonlocal position
            base = {"cycle": cycle, "position": position, "kind": kind, "content": content, "tool_name": "",
                    "tool_call_id": "", "tool_arguments": None, "tool_result": None, "model": "",
                    "created_at": at + dt.timedelta(milliseconds=50 * position), "latency_ms": None,
                    "prompt_tokens": 0, "completion_tokens": 0}
            base.update(fields)
            steps.append(base)
            position += 1

        cycles = rng.choices([0, 1, 2], weights=[25, 60, 15])[0]
        for cycle in range(1, cycles + 1):
            add(cycle, ReasoningStep.Kind.THINK, "Calling a tool.", model=answering,
                latency_ms=int(rng.lognormvariate(6.6, 0.5)), prompt_tokens=rng.randint(900, 2400),
                completion_tokens=rng.randint(15, 80))
            call_id = f"call_{rng.getrandbits(48):012x}"
            if rng.random() < 0.45:
                no_match = rng.random() < 0.25
                question = rng.choice(NO_MATCH_QUESTIONS if no_match else FAQ_QUESTIONS)
                result = ({"status": "no_match", "message": NO_MATCH_MESSAGE, "standalone_question": question}
                          if no_match else {"status": "success", "answer": "From the FAQ.",
                                            "question_matched": question, "standalone_question": question})
                add(cycle, ReasoningStep.Kind.ACT, tool_name="get_faq_answer", tool_call_id=call_id,
                    tool_arguments={"question": question})
                add(cycle, ReasoningStep.Kind.OBSERVE, f"{result['status']}: {result.get('message', '')}"[:200],
                    tool_name="get_faq_answer", tool_call_id=call_id, tool_result=result,
                    latency_ms=rng.randint(3, 40))
            else:
                tool = rng.choice(TOOLS)
                add(cycle, ReasoningStep.Kind.ACT, tool_name=tool, tool_call_id=call_id,
                    tool_arguments={"preferred_date": "2026-03-10", "preferred_time": "09:00"})
                add(cycle, ReasoningStep.Kind.OBSERVE, "success", tool_name=tool, tool_call_id=call_id,
                    tool_result={"status": "success", "slots": [{"date": "2026-03-10", "time": "09:00"}]},
                    latency_ms=rng.randint(5, 120))
        add(max(cycles, 1), ReasoningStep.Kind.ANSWER, "Answer.", model=answering,
            latency_ms=int(rng.lognormvariate(6.9, 0.45)), prompt_tokens=rng.randint(900, 2600),
            completion_tokens=rng.randint(30, 160))
        return steps
