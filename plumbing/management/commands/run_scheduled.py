"""`python manage.py run_scheduled`: run every scheduled job that is due now, once (operators, cron, tests)."""

from django.core.management.base import BaseCommand, CommandError

from plumbing.scheduling import runner


class Command(BaseCommand):
    help = "Run every scheduled job that is due now, once, and say what ran (plumbing/scheduling/jobs.py lists them)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--job", action="append", dest="jobs", metavar="NAME",
                            help="Only this job (repeatable). Known: " + ", ".join(j.name for j in runner.JOBS))
        parser.add_argument("--force", action="store_true", help="Run them even if they are not due.")

    def handle(self, *args, jobs: list[str] | None = None, force: bool = False, **options) -> None:
        unknown = set(jobs or []) - {job.name for job in runner.JOBS}
        if unknown:
            raise CommandError(f"Unknown job(s): {', '.join(sorted(unknown))}.")
        outcomes = runner.run_due(force=force, names=jobs)
        for outcome in outcomes:
            style = self.style.ERROR if outcome.error else self.style.SUCCESS if outcome.ran else str
            self.stdout.write(style(outcome.line()))
        ran = sum(o.ran for o in outcomes)
        failed = sum(bool(o.error) for o in outcomes)
        self.stdout.write(f"{ran} job(s) ran, {len(outcomes) - ran} not due, {failed} failed.")
        if failed:
            raise CommandError(f"{failed} scheduled job(s) failed; see above and the log.")
