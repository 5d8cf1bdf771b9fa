"""Running scenarios k times each, in fresh worlds, and scoring them with pass^1 and pass^k.

A run: build the world (fresh school, parents, setup) -> snapshot -> the
conversation (script, then the rule-driven parent) through the real entry point
`chatbot.services.receive` and the configured model -> snapshot -> checks ->
delete the world. Database work runs through `sync_to_async` (on the caller's
thread when the suite is started with `async_to_sync`), model calls overlap
when `concurrency` > 1.

pass^k follows tau-bench: for a scenario with c successes in n runs,
pass^k = C(c, k) / C(n, k) (with n = k: 1 if every run passed); pass^1 is the
plain success rate. Both are averaged over the scenarios of a flow.
"""

import asyncio
import datetime as dt
import platform
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from math import comb

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection

from chatbot.agent import claims
from chatbot.models import Channel, Message, ReasoningStep
from chatbot.services import receive
from quality.evaluation.checks import check_state, check_told, diff, snapshot
from quality.evaluation.parent import FOLLOW_UP, Burst, Respond, SimulatedParent
from quality.evaluation.scenarios import Scenario
from quality.evaluation.world import OtherFamilyCancels, World, build_world, destroy_world

CHANNEL = Channel.CLI  # no channel observer: nothing is delivered anywhere


@dataclass
class RunResult:
    scenario: str
    flow: str
    run: int
    passed: bool
    failures: list[str]
    transcript: list[dict]
    turns: int
    seconds: float
    models: list[str] = field(default_factory=list)
    fallbacks: int = 0
    error: str = ""
    school: str = ""  # the run's school slug (kept with --keep-failed)


def _replies_since(contact_id: int, after_id: int) -> list[dict]:
    replies = []
    for message in (Message.objects.filter(conversation__contact_id=contact_id, role=Message.Role.ASSISTANT,
                                           pk__gt=after_id).prefetch_related("steps").order_by("pk")):
        steps = list(message.steps.all())
        tools = [f"{s.tool_name}({_short_args(s.tool_arguments)})" for s in steps if s.kind == ReasoningStep.Kind.ACT]
        entry = {"role": "concierge", "text": message.text, "id": message.pk, "model": message.model, "tools": tools}
        if any(s.kind == ReasoningStep.Kind.ANSWER for s in steps):  # a turn's reply (not a seat offered meanwhile)
            observed = [(s.tool_name, s.tool_result) for s in steps if s.kind == ReasoningStep.Kind.OBSERVE]
            entry["unbacked"] = [str(claim) for claim in claims.unbacked(message.text, observed)]
        replies.append(entry)
    return replies


def _short_args(arguments) -> str:
    if isinstance(arguments, dict):
        return ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return str(arguments or "")


def _last_reply_id(contact_id: int) -> int:
    last = Message.objects.filter(conversation__contact_id=contact_id).order_by("-pk").values_list("pk", flat=True)
    return last.first() or 0


class Conversation:
    """Sends the parent's messages through `receive` and collects the replies into a transcript."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.transcript: list[dict] = []
        self.turns = 0
        self.last_reply = ""

    async def send(self, step: str | Burst) -> str:
        world = self.world
        texts = [world.fmt(t) for t in (step.messages if isinstance(step, Burst) else (step,))]
        after = await sync_to_async(_last_reply_id)(world.contact.pk)
        entry = {"role": "parent", "text": "\n".join(texts), "burst": isinstance(step, Burst)}
        self.transcript.append(entry)
        for position, text in enumerate(texts):
            await receive(school=world.school, contact=world.contact, channel=CHANNEL, text=text,
                          run=position == len(texts) - 1)
        replies = await sync_to_async(_replies_since)(world.contact.pk, after)
        entry["replies"] = len(replies)
        self.transcript += replies
        self.turns += 1
        self.last_reply = "\n".join(r["text"] for r in replies)
        return self.last_reply

    async def happen(self, event: OtherFamilyCancels) -> str:
        """Something happens in the school between the parent's messages; what the concierge then sends (a seat
        offered from the waitlist) is the reply the parent answers next."""
        world = self.world
        after = await sync_to_async(_last_reply_id)(world.contact.pk)
        self.transcript.append({"role": "event", "text": str(event)})
        await sync_to_async(event.apply)(world)
        replies = await sync_to_async(_replies_since)(world.contact.pk, after)
        self.transcript += replies
        self.last_reply = "\n".join(r["text"] for r in replies) or self.last_reply
        return self.last_reply


async def converse(scenario: Scenario, world: World, parent: SimulatedParent, chat: Conversation) -> Conversation:
    """The script, with rule-driven answers where the script says RESPOND and after it (FOLLOW_UP)."""
    steps = [*scenario.script, *([FOLLOW_UP] if scenario.follow_up else [])]
    for step in steps:
        if chat.turns >= scenario.max_turns:
            break
        if isinstance(step, Respond):
            while chat.turns < scenario.max_turns:
                if step.until_done and not parent.pursuing:
                    break
                text = parent.answer(chat.last_reply)
                if text is None:
                    break
                parent.sent_message(text)
                parent.notice(await chat.send(text))
                if not step.until_done:
                    break
            continue
        if isinstance(step, OtherFamilyCancels):
            parent.notice(await chat.happen(step))
            continue
        parent.notice(await chat.send(step))
    return chat


async def run_scenario(scenario: Scenario, number: int = 1, *, keep_failed: bool = False) -> RunResult:
    """One run of one scenario in a world of its own."""
    started = time.perf_counter()
    try:
        world = await sync_to_async(build_world)(
            fixture=scenario.fixture, persona_name=scenario.persona.name if scenario.known else "",
            persona_phone=scenario.persona.phone if scenario.known else "", setup=scenario.setup,
        )
    except Exception as exc:  # a scenario whose setup can't be built (e.g. a slot outside the window)
        return RunResult(scenario=scenario.id, flow=scenario.flow, run=number, passed=False,
                         failures=[f"setup failed: {type(exc).__name__}: {exc}"], transcript=[], turns=0,
                         seconds=round(time.perf_counter() - started, 3), error=traceback.format_exc())
    failures: list[str] = []
    error = ""
    chat = Conversation(world)
    try:
        before = await sync_to_async(snapshot)(world.school, world.contact.pk)
        await converse(scenario, world, SimulatedParent(scenario.persona, scenario.goal, world), chat)
        after = await sync_to_async(snapshot)(world.school, world.contact.pk)
        failures += check_state(diff(before, after), world, list(scenario.expect))
        failures += check_told(chat.transcript, world, list(scenario.told))
    except Exception as exc:  # a crash is a failed run, reported with its traceback
        error = traceback.format_exc()
        failures.append(f"error: {type(exc).__name__}: {exc}")
    wanted = settings.LLM_MODEL  # a reply any other model wrote is the offline fallback after a provider failure
    models = [r["model"] for r in chat.transcript if r["role"] == "concierge" and r["model"]]  # not offers
    fallbacks = sum(any(m != wanted for m in used.split(" -> ")) for used in models)
    if fallbacks:  # the run doesn't measure the model under test
        failures.append(f"{fallbacks} repl{'y' if fallbacks == 1 else 'ies'} came from the offline fallback "
                        f"because {wanted} failed")
    passed = not failures
    if passed or not keep_failed:
        try:
            await sync_to_async(destroy_world)(world.school.pk)
        except Exception as exc:  # e.g. the database went away: the run's result still counts
            failures.append(f"cleanup failed ({type(exc).__name__}: {exc}); `manage.py evaluate --cleanup` "
                            "deletes what is left")
            passed = False
    return RunResult(
        scenario=scenario.id, flow=scenario.flow, run=number, passed=passed, failures=failures,
        transcript=chat.transcript, turns=chat.turns, seconds=round(time.perf_counter() - started, 3),
        models=sorted(set(models)), fallbacks=fallbacks, error=error,
        school=world.school.slug,
    )


async def run_suite(
    scenarios: list[Scenario], k: int, *, concurrency: int = 1, keep_failed: bool = False,
    on_result: Callable[[RunResult], None] | None = None,
) -> list[RunResult]:
    """Every scenario k times; results in scenario order."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(scenario: Scenario, number: int) -> RunResult:
        async with gate:
            result = await run_scenario(scenario, number, keep_failed=keep_failed)
        if on_result:
            on_result(result)
        return result

    return list(await asyncio.gather(*[one(s, n) for s in scenarios for n in range(1, k + 1)]))


# --- scoring ----------------------------------------------------------------------------------------------------------


def pass_hat(successes: int, runs: int, k: int) -> float:
    """tau-bench's pass^k estimate for one scenario: the chance that k runs drawn from these all pass."""
    if runs < k or k < 1:
        return 0.0
    return comb(successes, k) / comb(runs, k)


def _rate(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def _scores(rows: list[dict], k: int) -> dict:
    return {
        "scenarios": len(rows),
        "runs": sum(r["runs"] for r in rows),
        "passed_runs": sum(r["passed_runs"] for r in rows),
        "pass_1": _rate([r["pass_1"] for r in rows]),
        "pass_k": _rate([r["pass_k"] for r in rows]),
        "pass_hat": {str(j): _rate([pass_hat(r["passed_runs"], r["runs"], j) for r in rows]) for j in range(1, k + 1)},
        "avg_turns": round(sum(r["avg_turns"] for r in rows) / len(rows), 2) if rows else 0.0,
    }


def build_report(scenarios: list[Scenario], results: list[RunResult], *, k: int, model: str, seconds: float,
                 started_at: dt.datetime) -> dict:
    """The JSON report: per scenario, per flow and overall pass^1 / pass^k, with every failed run's transcript."""
    by_scenario: dict[str, list[RunResult]] = {}
    for result in results:
        by_scenario.setdefault(result.scenario, []).append(result)
    rows = []
    for scenario in scenarios:
        runs = sorted(by_scenario.get(scenario.id, []), key=lambda r: r.run)
        passed = sum(r.passed for r in runs)
        rows.append({
            "id": scenario.id, "flow": scenario.flow, "title": scenario.title, "runs": len(runs),
            "passed_runs": passed, "pass_1": round(passed / len(runs), 4) if runs else 0.0,
            "pass_k": pass_hat(passed, len(runs), k),
            "avg_turns": round(sum(r.turns for r in runs) / len(runs), 2) if runs else 0.0,
            "results": [asdict(r) for r in runs],
        })
    flows = {}
    for flow in dict.fromkeys(s.flow for s in scenarios):
        flows[flow] = _scores([r for r in rows if r["flow"] == flow], k)
    return {
        "model": model,
        "k": k,
        "started_at": started_at.isoformat(timespec="seconds"),
        "seconds": round(seconds, 1),
        "environment": {
            "database": connection.vendor,
            "redis": "redis" if settings.REDIS_URL else "embedded (fakeredis)",
            "machine": platform.node(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "overall": _scores(rows, k),
        "flows": flows,
        "scenarios": rows,
        "fallback_replies": sum(r.fallbacks for r in results),
    }
