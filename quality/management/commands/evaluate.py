"""`python manage.py evaluate`: run the scenario suite against a model and score it (pass^1, pass^k).

    python manage.py evaluate                       # every scenario, k=3, offline/policy
    python manage.py evaluate --flow booking --k 1
    python manage.py evaluate --model gpt-4o-mini --k 5 --json /tmp/eval.json --fail-under 0.9
    python manage.py evaluate --list
    python manage.py evaluate --saved               # also the regression scenarios saved from reviewed conversations
    python manage.py evaluate --saved-only --model gpt-4o-mini --k 3
    python manage.py evaluate --corpus PATH --show-failures 40   # date/time reading on a labelled corpus
    python manage.py evaluate --recorded            # conversations held with a capable model, replayed
    python manage.py evaluate --chat quality/evaluation/chat_dev --show-failures 5   # chat-style conversations

Each run gets a fresh evaluation school (deleted afterwards), so it is safe on
a database with real data; nothing is sent to any channel or CRM.
"""

import datetime as dt
import json
import time
from contextlib import nullcontext
from pathlib import Path

import time_machine
from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test import override_settings
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from quality.evaluation import recorded, reviewed
from quality.evaluation import scenarios as suite
from quality.evaluation.chat_conversations import measure_chats
from quality.evaluation.corpus import measure_turns
from quality.evaluation.corpus_dialogues import measure_dialogues
from quality.evaluation.runner import RunResult, build_report, run_suite
from quality.evaluation.world import destroy_world, leftover_schools

MAX_FAILURES_SHOWN = 20


class Command(BaseCommand):
    help = "Run the tau-bench style scenario suite (simulated parents, graded on the final database state)."

    def add_arguments(self, parser):
        parser.add_argument("--k", type=int, default=3, help="Runs per scenario (default 3).")
        parser.add_argument("--model", default="", help="litellm model string; default settings.LLM_MODEL.")
        parser.add_argument("--flow", action="append", default=[], help="Only this flow (repeatable).")
        parser.add_argument("--scenario", action="append", default=[],
                            help="Only this scenario id (repeatable); reviewed-<n> is a saved regression scenario.")
        parser.add_argument("--saved", action="store_true",
                            help="Also run the regression scenarios saved from reviewed conversations (and store "
                                 "their results for the console).")
        parser.add_argument("--saved-only", action="store_true", help="Only the saved regression scenarios.")
        parser.add_argument("--json", dest="json_path", default="", help="Write the JSON report to this path.")
        parser.add_argument("--fail-under", type=float, default=None,
                            help="Exit non-zero if the overall pass^1 is below this (0-1).")
        parser.add_argument("--concurrency", type=int, default=1,
                            help="Runs in flight at once (helps with slow hosted models).")
        parser.add_argument("--keep-failed", action="store_true",
                            help="Keep the schools of failed runs (slug eval-...) to inspect in the console.")
        parser.add_argument("--list", dest="list_only", action="store_true", help="List the scenarios and exit.")
        parser.add_argument("--cleanup", action="store_true",
                            help="Delete evaluation schools left behind (interrupted or --keep-failed runs) and exit.")
        parser.add_argument("--corpus", default="",
                            help="Measure date/time reading on this labelled corpus folder instead of the scenarios.")
        parser.add_argument("--recorded", action="store_true",
                            help="Replay the conversations held with a capable model through model-bridge "
                                 "(quality/evaluation/recorded/) over the hosted path, graded on the database.")
        parser.add_argument("--chat", default="",
                            help="Run the chat-style conversations of this folder's chat.jsonl and score each one "
                                 "RIGHT or WRONG (quality/evaluation/chat_conversations.py).")
        parser.add_argument("--show-failures", type=int, default=0,
                            help="With --corpus: list this many misses (utterance, gold, ours); with --chat: print "
                                 "this many wrong conversations' transcripts.")

    def handle(self, *args, k: int, model: str, flow: list[str], scenario: list[str], json_path: str,
               fail_under: float | None, concurrency: int, keep_failed: bool, list_only: bool, cleanup: bool,
               saved: bool = False, saved_only: bool = False, **options):
        self.stdout.ending = ""  # rich writes whole lines itself
        console = Console(file=self.stdout, highlight=False, soft_wrap=True,
                          width=None if self.stdout.isatty() else 120)  # a log or a pipe: don't squeeze the table
        if cleanup:
            schools = leftover_schools()
            for school in schools:
                destroy_world(school.pk)
            console.print(f"Deleted {len(schools)} evaluation school(s).")
            return
        if options["recorded"]:
            self._recorded(console)
            return
        if options["chat"]:
            with override_settings(LLM_MODEL=model or settings.LLM_MODEL):
                self._chat(console, Path(options["chat"]), options["show_failures"], json_path)
            return
        if options["corpus"]:
            with override_settings(LLM_MODEL=model or settings.LLM_MODEL):
                self._corpus(console, Path(options["corpus"]), options["show_failures"], json_path)
            return
        flows = [*suite.flow_names(), reviewed.FLOW]
        unknown = sorted(set(flow) - set(flows))
        if unknown:
            raise CommandError(f"Unknown flow {', '.join(unknown)}. Flows: {', '.join(flows)}.")
        chosen, saved_rows = self._select(flow, scenario, saved=saved, saved_only=saved_only)
        replays = self._replays(console, saved_rows)
        everything = chosen + [s for s, _moment in replays]
        if not everything:
            raise CommandError("No scenario matches. Use --list to see them.")
        if list_only:
            self._list(console, everything)
            return
        if k < 1:
            raise CommandError("--k must be at least 1.")
        model = model or settings.LLM_MODEL
        started_at, started = dt.datetime.now(dt.UTC), time.perf_counter()
        batches = [(chosen, None)] if chosen else []
        batches += [([scenario_], moment) for scenario_, moment in replays]
        with override_settings(LLM_MODEL=model, CHAT_BURST_WINDOW_SECONDS=0, PIPEDRIVE_API_TOKEN=""):
            results = self._run(console, batches, k, model, concurrency, keep_failed)
        report = build_report(everything, results, k=k, model=model, seconds=time.perf_counter() - started,
                              started_at=started_at)
        if replays:
            stored = reviewed.record_results([row for row in saved_rows if any(
                s.id == row.scenario_id for s, _m in replays)], results, model=model, k=k, run_at=started_at)
            console.print(f"Results of {len(stored)} saved scenario(s) stored: the console lists them under "
                          "Regression scenarios.")
        if options["verbosity"] >= 2:
            for result in results:
                self._print_run(console, result, results, keep_failed)
        self._print(console, report, results, keep_failed)
        if json_path:
            Path(json_path).write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
            console.print(f"Report written to {json_path}")
        overall = report["overall"]["pass_1"]
        if fail_under is not None and overall < fail_under:
            raise CommandError(f"pass^1 {overall:.3f} is below --fail-under {fail_under:.3f}.")

    @staticmethod
    def _recorded(console: Console) -> None:
        """Each recording replayed against its model's recorded answers; non-zero exit if any ends wrong."""
        table = Table("recording", "model calls", "result", title="Conversations held with a capable model")
        failed = 0
        for recording in recorded.recordings():
            result = recorded.replay(recording)
            used = f"{result.answers_used}/{len(recording.answers)}"
            ok = result.passed and result.answers_used == len(recording.answers)
            failed += not ok
            table.add_row(escape(recording.name), used, "pass" if ok else escape("; ".join(result.failures) or
                                                                                 "a different number of model calls"))
        console.print(table)
        if failed:
            raise CommandError(f"{failed} recorded conversation(s) ended wrong.")

    @staticmethod
    def _select(flow: list[str], ids: list[str], *, saved: bool, saved_only: bool):
        """The built-in scenarios and the saved regression scenarios these options choose."""
        saved_ids = [i for i in ids if i.startswith(reviewed.ID_PREFIX)]
        builtin_ids = [i for i in ids if not i.startswith(reviewed.ID_PREFIX)]
        builtin_flows = [f for f in flow if f != reviewed.FLOW]
        only_saved = saved_only or bool(flow and not builtin_flows) or bool(ids and not builtin_ids)
        chosen = [] if only_saved else suite.select(flows=builtin_flows, ids=builtin_ids)
        wants_saved = saved or only_saved or bool(saved_ids) or reviewed.FLOW in flow
        return chosen, reviewed.select(saved_ids) if wants_saved else []

    @staticmethod
    def _replays(console: Console, rows) -> list[tuple]:
        """Each saved scenario as a Scenario with the moment its clock runs at; unreadable ones are skipped."""
        replays = []
        for row in rows:
            try:
                scenario = reviewed.to_scenario(row)
            except reviewed.ExpectationError as exc:
                console.print(f"[yellow]{row.scenario_id} skipped: {escape(str(exc))}[/yellow]")
                continue
            beyond = reviewed.days_beyond_reach(row)
            if beyond:
                console.print(f"[yellow]{row.scenario_id}: {', '.join(beyond)} are beyond the replay's days; "
                              "those checks will fail.[/yellow]")
            replays.append((scenario, reviewed.replay_moment(row)))
        return replays

    def _run(self, console: Console, batches: list[tuple[list, dt.datetime | None]], k: int, model: str,
             concurrency: int, keep_failed: bool) -> list[RunResult]:
        """Each batch in turn; a saved scenario's batch with the clock at its conversation's first message."""
        progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(), console=console,
                            transient=False)
        results: list[RunResult] = []
        with progress:
            task = progress.add_task(f"Evaluating {model}", total=sum(len(b) for b, _m in batches) * k, failed=0)
            failed = 0

            def on_result(result: RunResult) -> None:
                nonlocal failed
                failed += not result.passed
                progress.update(task, advance=1, failed=failed,
                                description=f"Evaluating {model}: {result.scenario} #{result.run}")

            for batch, moment in batches:
                with time_machine.travel(moment, tick=True) if moment else nullcontext():
                    results += async_to_sync(run_suite)(batch, k, concurrency=concurrency, keep_failed=keep_failed,
                                                        on_result=on_result)
        return results

    def _list(self, console: Console, chosen) -> None:
        table = Table(title=f"{len(chosen)} scenarios")
        for column in ("Flow", "Id", "Title", "School"):
            table.add_column(column)
        for s in chosen:
            table.add_row(s.flow, s.id, s.title, s.fixture)
        console.print(table)

    def _print(self, console: Console, report: dict, results: list[RunResult], keep_failed: bool) -> None:
        k = report["k"]
        table = Table(title=f"{report['model']}  k={k}  ({report['environment']['database']}, "
                            f"{report['environment']['redis']}, {report['seconds']} s)")
        for column in ("Flow", "Scenarios", "Runs", "Passed runs", "pass^1", f"pass^{k}", "Turns"):
            table.add_column(column, justify="left" if column == "Flow" else "right")
        for name, scores in report["flows"].items():
            table.add_row(name, *self._cells(scores))
        table.add_section()
        table.add_row("[bold]all[/bold]", *self._cells(report["overall"]))
        console.print(table)
        if report["fallback_replies"]:
            console.print(f"[yellow]{report['fallback_replies']} replies came from the offline fallback because "
                          f"{report['model']} failed: those runs count as failed (check the key, LLM_API_BASE, "
                          "the network).[/yellow]")
        failed = [r for r in results if not r.passed]
        if not failed:
            console.print("[green]Every run passed.[/green]")
            return
        shown: set[str] = set()
        console.print(f"\n[bold red]{len(failed)} failed run(s)[/bold red] (first failing run of each scenario):")
        for result in failed:
            if result.scenario in shown or len(shown) >= MAX_FAILURES_SHOWN:
                continue
            shown.add(result.scenario)
            self._print_run(console, result, results, keep_failed)

    def _print_run(self, console: Console, result: RunResult, results: list[RunResult], keep_failed: bool) -> None:
        runs = [r for r in results if r.scenario == result.scenario]
        status = "[green]passed[/green]" if result.passed else "[red]failed[/red]"
        console.print(f"\n[bold]{result.scenario}[/bold] ({result.flow}) run {result.run} {status}: "
                      f"{sum(r.passed for r in runs)}/{len(runs)} runs of this scenario passed"
                      + (f", kept as school {result.school}" if keep_failed and not result.passed else ""))
        for failure in result.failures:
            console.print(f"  [red]✗ {escape(failure)}[/red]")
        self._print_transcript(console, result.transcript)
        if result.error:
            console.print(f"[dim]{escape(result.error)}[/dim]")

    @staticmethod
    def _print_transcript(console: Console, transcript: list[dict]) -> None:
        for entry in transcript:
            who = {"parent": "Stand-in " if entry.get("stand_in") else "Parent   ",
                   "event": "Meanwhile"}.get(entry["role"], "Concierge")
            text = escape(entry["text"]).replace("\n", "\n" + " " * 15)
            console.print(f"    {who}: {text}")
            if entry.get("tools"):
                console.print(f"               [dim]{escape(' · '.join(entry['tools']))}[/dim]")

    def _chat(self, console: Console, path: Path, show_failures: int, json_path: str) -> None:
        """Each conversation of the folder's chat.jsonl, RIGHT or WRONG, per language and in total."""
        if not (path / "chat.jsonl").is_file():
            raise CommandError(f"No chat.jsonl in {path}.")
        console.print(f"Running the chat conversations of {path} through the concierge ({settings.LLM_MODEL})…")
        try:
            report = async_to_sync(measure_chats)(path, on_progress=lambda done, total: console.print(
                f"[dim]  {done}/{total} conversations[/dim]") if done % 6 == 0 or done == total else None)
        except ValueError as exc:
            raise CommandError(f"{path}/chat.jsonl: {exc}") from None
        table = Table("language", "conversations", "right", title=report["title"])
        for row in report["rows"]:
            table.add_row(row["language"], str(row["conversations"]),
                          f"{row['rate']:.1%} ({row['right']}/{row['conversations']})")
        console.print(table)
        wrong = [r for r in report["results"] if not r["right"]]
        for result in wrong[:show_failures]:
            console.print(f"\n[bold]{escape(result['id'])}[/bold] ({result['language']}) [red]WRONG[/red]"
                          + (f"  [dim]{escape(result['note'])}[/dim]" if result["note"] else ""))
            for reason in result["reasons"]:
                console.print(f"  [red]✗ {escape(reason)}[/red]")
            self._print_transcript(console, result["transcript"])
        if wrong and not show_failures:
            console.print("Wrong: " + ", ".join(f"{r['id']} ({'; '.join(r['reasons'])[:100]})" for r in wrong))
        if json_path:
            Path(json_path).write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
            console.print(f"Report written to {json_path}")

    def _corpus(self, console: Console, path: Path, show_failures: int, json_path: str) -> None:
        """Run the corpus measures and print each one's section (further measures append to `sections`)."""
        if not path.is_dir():
            raise CommandError(f"No corpus folder at {path}.")
        sections = [measure_turns(path)]
        self._print_section(console, sections[0], show_failures)
        console.print(f"Replaying whole dialogues through the concierge ({settings.LLM_MODEL})…")
        sections.append(async_to_sync(measure_dialogues)(path, on_progress=lambda done, total: console.print(
            f"[dim]  {done}/{total} dialogues[/dim]") if done % 20 == 0 or done == total else None))
        self._print_section(console, sections[1], show_failures)
        if json_path:
            Path(json_path).write_text(json.dumps(sections, indent=2, ensure_ascii=False), encoding="utf-8")
            console.print(f"Report written to {json_path}")

    @staticmethod
    def _print_section(console: Console, section: dict, show_failures: int) -> None:
        table = Table(title=section["title"])
        for header in section["columns"].values():
            table.add_column(header, justify="right")
        for row in section["rows"]:
            cells = [row[key] for key in section["columns"]]
            table.add_row(*(f"{c['rate']:.1%} ({c['hits']}/{c['of']})" if isinstance(c, dict) and c["of"]
                            else "-" if isinstance(c, dict) else str(c) for c in cells))
        console.print(table)
        for note in section["notes"]:
            console.print(f"[dim]{escape(note)}[/dim]")
        for failure in section["failures"][:show_failures]:
            missed = escape(", ".join(failure.get("missed", [])))
            console.print(f"  [red]✗ {missed}[/red]  {escape(failure['utterance'])}\n"
                          f"      gold {escape(str(failure['gold']))}  ours {escape(str(failure['ours']))}")

    @staticmethod
    def _cells(scores: dict) -> list[str]:
        return [str(scores["scenarios"]), str(scores["runs"]), str(scores["passed_runs"]),
                f"{scores['pass_1']:.3f}", f"{scores['pass_k']:.3f}", f"{scores['avg_turns']:.1f}"]
