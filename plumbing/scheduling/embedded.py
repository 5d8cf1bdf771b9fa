"""The embedded scheduler: under the embedded default (`make run`: eager Celery, no beat) a daemon thread of
the web process runs the registry's jobs when they are due, so nothing needs a second command.

It starts only when Celery is eager (no broker, so no beat would run the jobs) and EMBEDDED_SCHEDULER is on
(tests turn it off), and once per process. Several web processes may each run one: the runs are claimed in
the database (plumbing.scheduling.runner), so each job still runs once per interval.
"""

import logging
import threading
import time

from django.conf import settings
from django.db import close_old_connections

from plumbing.scheduling import runner

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_thread: threading.Thread | None = None


def enabled() -> bool:
    return bool(settings.CELERY_TASK_ALWAYS_EAGER and settings.EMBEDDED_SCHEDULER)


def start() -> bool:
    """Start the scheduler thread if it should run here and is not running yet; True if this call started it."""
    global _thread
    with _lock:
        if _thread is not None or not enabled():
            return False
        _thread = threading.Thread(target=_loop, name="embedded-scheduler", daemon=True)
        _thread.start()
    logger.info("embedded scheduler started: due jobs run every %ss", settings.SCHEDULER_TICK_SECONDS)
    return True


def running() -> bool:
    return _thread is not None and _thread.is_alive()


def tick() -> list[runner.Outcome]:
    """One pass: run what is due, log what ran."""
    try:
        outcomes = runner.run_due()
    finally:
        close_old_connections()
    for outcome in outcomes:
        if outcome.ran:
            (logger.warning if outcome.error else logger.info)("scheduler: %s", outcome.line())
    return outcomes


def _loop() -> None:
    time.sleep(settings.SCHEDULER_FIRST_RUN_SECONDS)
    while True:
        try:
            tick()
        except Exception:  # e.g. the database is unreachable for a moment: try again next tick
            logger.exception("embedded scheduler tick failed")
        time.sleep(settings.SCHEDULER_TICK_SECONDS)
