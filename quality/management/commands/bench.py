"""`python manage.py bench`: throughput, latency, safety and memory figures, each beside its baseline.

    manage.py bench                                   # everything, a table on stdout, progress on stderr
    manage.py bench --only turn_overhead,booking_race
    manage.py bench --quick --json                    # a small smoke run, JSON on stdout (the tests use this)
    manage.py bench --only turn_overhead --peer       # our turn beside LangGraph's ReAct agent, same run

Runs against the configured DATABASE_URL / REDIS_URL (PostgreSQL + Redis for the reference figures). Each
benchmark makes its own `bench-...` school and deletes it afterwards; the servers it starts (daphne, Celery)
listen on 127.0.0.1 only and are stopped before it returns. See docs/benchmarks.md.
"""

import json
import os
import signal
import time
import traceback

from django.core.management.base import BaseCommand, CommandError

from quality.bench import BENCHMARKS, module_for
from quality.bench.common import Context, Options, Progress, Result, Skip, machine, stale_schools


def _stop_on_sigterm():
    """SIGTERM (e.g. from `timeout`) unwinds like Ctrl-C, so servers are stopped and bench data deleted."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    try:
        return signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        return None


def _names(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise CommandError(f"Unknown benchmark(s): {', '.join(unknown)}. Choose from: {', '.join(BENCHMARKS)}.")
    return names


def _ints(value: str) -> tuple[int, ...]:
    try:
        numbers = tuple(int(n) for n in value.split(",") if n.strip())
    except ValueError:
        raise CommandError(f"Expected numbers separated by commas, got {value!r}.") from None
    if not numbers or min(numbers) < 1:
        raise CommandError("Give positive numbers.")
    return numbers


class Command(BaseCommand):
    help = "Benchmark the concierge (turn overhead, concurrency, scale-out, prompt growth, booking race, memory)."

    def add_arguments(self, parser):
        parser.add_argument("--only", help=f"Comma-separated benchmarks: {', '.join(BENCHMARKS)}.")
        parser.add_argument("--quick", action="store_true", help="A small, fast smoke run (used by the tests).")
        parser.add_argument("--json", action="store_true", help="Print JSON instead of the table.")
        parser.add_argument("--json-file", help="Also write the JSON report to this file.")
        parser.add_argument("--turns", type=int, help="turn_overhead: timed turns (default 1000).")
        parser.add_argument("--sockets", help="concurrency: socket counts, e.g. 50,200,500.")
        parser.add_argument("--contacts", type=int, help="scale_out: contacts (default 100).")
        parser.add_argument("--web-processes", type=int,
                            help="concurrency: uvicorn workers (default WEB_CONCURRENCY, else 2, as the Procfile).")
        parser.add_argument("--idle-sockets", type=int, help="memory: idle sockets (default 500).")
        parser.add_argument("--race-threads", type=int, help="booking_race: concurrent bookings (default 100).")
        parser.add_argument("--conversation-messages", type=int,
                            help="prompt_growth: parent messages in the conversation (default 40).")
        parser.add_argument("--console-conversations", type=int,
                            help="console: conversations to seed (default 10000; 20 messages each).")
        parser.add_argument("--peer", action="store_true",
                            help="turn_overhead: also time LangGraph's prebuilt ReAct agent (AsyncPostgresSaver) on "
                                 "the same turn and database, installed on first use in .bench/peer-venv.")
        parser.add_argument("--clean", action="store_true",
                            help="Delete leftover bench-... schools of interrupted runs, then exit.")
        parser.add_argument("--no-progress", action="store_true", help="No progress lines on stderr.")

    def handle(self, *args, **opts):
        previous = _stop_on_sigterm()
        try:
            self._handle(**opts)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    def _handle(self, **opts):
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        if opts["clean"]:
            from quality.bench.common import delete_stale_schools

            removed = delete_stale_schools()
            self.stdout.write(f"Deleted {len(removed)} bench school(s): {', '.join(removed) or 'none'}.")
            return
        options = self._options(opts)
        names = _names(opts["only"]) if opts["only"] else list(BENCHMARKS)
        progress = Progress(enabled=not opts["no_progress"])
        ctx = Context(options=options, progress=progress)
        leftovers = stale_schools()
        if leftovers:
            progress.say(f"note: {len(leftovers)} bench school(s) left by an interrupted run "
                         f"({', '.join(leftovers[:5])}); `manage.py bench --clean` removes them")
        env = machine()
        progress.say(f"run {ctx.run_id}: {', '.join(names)}{' (quick)' if options.quick else ''} on "
                     f"{env['database']}, Redis {env['redis']}")
        results = [self._run_one(name, ctx) for name in names]
        payload = {"run": ctx.run_id, "quick": options.quick, "machine": env,
                   "benchmarks": {r.name: r.as_json() for r in results}}
        if opts["json_file"]:
            with open(opts["json_file"], "w") as handle:
                json.dump(payload, handle, indent=2, default=str)
        if opts["json"]:
            self.stdout.write(json.dumps(payload, indent=2, default=str))
        else:
            self._table(results, env, options)

    def _options(self, opts) -> Options:
        options = Options.quick_defaults() if opts["quick"] else Options()
        for name in ("turns", "contacts", "idle_sockets", "race_threads", "conversation_messages",
                     "console_conversations", "web_processes"):
            if opts.get(name) is not None:
                if opts[name] < 1:
                    raise CommandError(f"--{name.replace('_', '-')} must be at least 1.")
                setattr(options, name, opts[name])
        if opts.get("console_conversations") is not None:
            options.console_messages = options.console_conversations * 20
        if opts.get("sockets"):
            options.sockets = _ints(opts["sockets"])
        options.peer = bool(opts.get("peer"))
        return options

    def _run_one(self, name: str, ctx: Context) -> Result:
        module = module_for(name)
        started = time.monotonic()
        ctx.progress.say(f"{name}: start")
        try:
            result = module.run(ctx)
        except Skip as exc:
            result = Result(name, module.TITLE, status="skipped", reason=str(exc))
        except Exception as exc:  # one failing benchmark must not hide the others' figures
            ctx.progress.say(traceback.format_exc())
            result = Result(name, module.TITLE, status="failed", reason=f"{type(exc).__name__}: {exc}")
        result.seconds = time.monotonic() - started
        ctx.progress.say(f"{name}: {result.status} in {result.seconds:.1f} s"
                         + (f" ({result.reason})" if result.reason else ""))
        return result

    def _table(self, results: list[Result], env: dict, options: Options) -> None:
        from rich.console import Console
        from rich.table import Table

        console = Console(file=self.stdout, width=160, highlight=False)
        table = Table(title="Concierge benchmarks" + (" (quick)" if options.quick else ""), show_lines=False)
        for column in ("benchmark", "figure", "value", "baseline", "ratio", "notes"):
            table.add_column(column, overflow="fold")
        for result in results:
            label = result.name + ("" if result.status == "ok" else f" [{result.status.upper()}]")
            if not result.rows:
                table.add_row(label, "", "", "", "", result.reason, end_section=True)
                continue
            for index, row in enumerate(result.rows):
                table.add_row(label if index == 0 else "", row.figure, row.value, row.baseline, row.ratio, row.note,
                              end_section=index == len(result.rows) - 1)
            if result.reason and result.status != "ok":
                table.add_row("", "", "", "", "", result.reason, end_section=True)
        console.print(table)
        console.print(f"{env['nproc']} CPU ({env['cpu']}), {env['memory_gb']} GB, Python {env['python']}, "
                      f"{env['database']}, Redis {env['redis']}, database pool {env['db_pool']}, "
                      f"settings {env['settings']}, {env['date']}")
