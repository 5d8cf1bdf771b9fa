"""What every benchmark shares: options, progress lines, results, bench schools, servers, counters."""

import contextlib
import datetime as dt
import os
import resource
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from django.conf import settings
from django.db import connection, connections, transaction

SLUG_PREFIX = "bench-"
LOCALHOST = "127.0.0.1"
SERVER_START_TIMEOUT = 60.0
SERVER_STOP_TIMEOUT = 15.0
# Never reach outside this machine from a server the bench starts: no hosted model, no CRM, no messaging platform.
EXTERNAL_VARIABLES = (
    "LLM_API_BASE", "LLM_API_KEY", "LANGSMITH_API_KEY", "PIPEDRIVE_API_TOKEN", "CHATWOOT_URL", "CHATWOOT_API_TOKEN",
    "CHATWOOT_USER_TOKEN", "WHATSAPP_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
)


# --- options, progress, results -------------------------------------------------------------------------------
@dataclass
class Options:
    quick: bool = False
    turns: int = 1000
    sockets: tuple[int, ...] = (50, 200, 500)
    contacts: int = 100
    messages_per_contact: int = 5
    conversation_messages: int = 40
    race_threads: int = 100
    seats_per_slot: int = 3
    idle_sockets: int = 500
    console_conversations: int = 10_000
    console_messages: int = 200_000
    slow_model_seconds: float = 1.0
    seed: int = 7
    peer: bool = False  # turn_overhead: also run LangGraph's ReAct agent (quality/bench/peer) beside ours
    # concurrency: web processes, as the Procfile's `web` runs them (WEB_CONCURRENCY, default 2)
    web_processes: int = field(default_factory=lambda: int(os.environ.get("WEB_CONCURRENCY") or 2))

    @classmethod
    def quick_defaults(cls) -> "Options":
        return cls(quick=True, turns=15, sockets=(10, 25), contacts=8, messages_per_contact=3,
                   conversation_messages=12, race_threads=20, idle_sockets=50, console_conversations=60,
                   console_messages=600, slow_model_seconds=0.5)


class Progress:
    """Plain progress lines on stderr (never on stdout, which carries the table or the JSON)."""

    def __init__(self, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self._last = 0.0
        self._lock = threading.Lock()

    def say(self, text: str) -> None:
        if self.enabled:
            with self._lock:
                self.stream.write(f"[bench {time.strftime('%H:%M:%S')}] {text}\n")
                self.stream.flush()

    def count(self, what: str, done: int, total: int, every: float = 2.0) -> None:
        """A line at most every `every` seconds, and always at the end."""
        now = time.monotonic()
        if done >= total or now - self._last >= every:
            self._last = now
            self.say(f"  {what}: {done}/{total}")


@dataclass
class Row:
    """One line of the table: a figure beside its baseline, and their ratio."""

    figure: str
    value: str
    baseline: str = ""
    ratio: str = ""
    note: str = ""


@dataclass
class Result:
    name: str
    title: str
    status: str = "ok"  # ok | skipped | failed
    reason: str = ""
    seconds: float = 0.0
    figures: dict[str, Any] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"status": self.status, "title": self.title, "reason": self.reason, "seconds": round(self.seconds, 1),
                "figures": self.figures}


class Skip(Exception):
    """The benchmark cannot run here (e.g. needs PostgreSQL); the message says why."""


@dataclass
class Context:
    options: Options
    progress: Progress
    run_id: str = field(default_factory=lambda: secrets.token_hex(3))


# --- numbers ------------------------------------------------------------------------------------------------
def percentile(values: list[float], fraction: float) -> float:
    """Linear-interpolated percentile (fraction 0..1); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def ratio(value: float, baseline: float) -> float | None:
    return round(value / baseline, 2) if baseline else None


def fmt_ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


# --- environment --------------------------------------------------------------------------------------------
def is_postgres() -> bool:
    return connection.vendor == "postgresql"


def has_real_redis() -> bool:
    return bool(settings.REDIS_URL)


def database_url() -> str:
    """The URL of the database this process uses (the test database under pytest), for the servers it starts."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    if connection.vendor == "postgresql":
        user = quote(db.get("USER") or "", safe="")
        password = quote(db.get("PASSWORD") or "", safe="")
        auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
        host = db.get("HOST") or "localhost"
        port = f":{db['PORT']}" if db.get("PORT") else ""
        return f"postgres://{auth}{host}{port}/{quote(db['NAME'], safe='')}"
    raise Skip(f"servers started by the bench support SQLite and PostgreSQL, not {connection.vendor}")


def server_env(**overrides: str) -> dict[str, str]:
    """The environment of a server the bench starts: this process's database and Redis, nothing external."""
    env = {k: v for k, v in os.environ.items() if k not in EXTERNAL_VARIABLES}
    env.update({
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL or "",
        # Production-like: no per-query logging, less console noise.
        "DEBUG": "False",
        "SECRET_KEY": "bench-" + secrets.token_hex(24),
        "SECURE_SSL_REDIRECT": "False",
        "SESSION_COOKIE_SECURE": "False",
        "CSRF_COOKIE_SECURE": "False",
        "SECURE_HSTS_SECONDS": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": os.environ.get("BENCH_SERVER_LOG_LEVEL", "WARNING"),
        "LOG_JSON": "False",
        "PYTHONUNBUFFERED": "1",
        # Every bench client comes from 127.0.0.1 and writes to one school: lift the per-address and per-school
        # abuse limits (chatbot/channels/web/limits.py), which would otherwise be what the bench measures.
        "CHAT_RATE_LIMIT_PER_ADDRESS_PER_MINUTE": "1000000",
        "CHAT_RATE_LIMIT_PER_SCHOOL_PER_MINUTE": "1000000",
        "CHAT_HANDSHAKES_PER_ADDRESS_PER_MINUTE": "1000000",
    })
    env.update(overrides)
    return env


def machine() -> dict:
    cpu = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as handle:
        cpu = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "")
    memory_kb = 0
    with contextlib.suppress(OSError), open("/proc/meminfo") as handle:
        memory_kb = next((int(line.split()[1]) for line in handle if line.startswith("MemTotal")), 0)
    return {
        "nproc": os.cpu_count(),
        "memory_gb": round(memory_kb / 1024 / 1024, 1),
        "cpu": cpu,
        "python": sys.version.split()[0],
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "settings": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings"),
        "database": f"{connection.vendor} ({connection.settings_dict['NAME']})",
        "db_pool": connection.settings_dict["OPTIONS"].get("pool") or "none",
        "redis": settings.REDIS_URL or "embedded (fakeredis)",
        "channel_layer": settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1],
    }


def raise_open_files_limit(needed: int) -> int:
    """Raise the soft limit on open files towards `needed` (within the hard limit); returns the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


# --- bench schools ------------------------------------------------------------------------------------------
def create_school(ctx: Context, name: str, **fields):
    """A school of the bench's own (slug `bench-<name>-<run>`), with the factories' usual tour rules."""
    from bookings.models import School

    defaults = {
        "name": f"Bench {name.replace('_', ' ')} {ctx.run_id}",
        "time_zone": "Asia/Singapore",
        "address": "1 Bench Road, Singapore 123456",
        "contact_email": "admissions@bench.example",
        "tour_start_times": ["09:00", "11:00", "14:00", "16:00"],
        "tour_duration_minutes": 60,
        "seats_per_tour": 5,
        "max_advance_days": 30,
        "min_notice_hours": 24,
        "closed_weekdays": [5, 6],
        "default_phone_region": "SG",
    }
    defaults.update(fields)
    return School.objects.create(slug=f"{SLUG_PREFIX}{name.replace('_', '-')}-{ctx.run_id}", **defaults)


@contextlib.contextmanager
def bench_school(ctx: Context, name: str, **fields) -> Iterator:
    school = create_school(ctx, name, **fields)
    try:
        yield school
    finally:
        delete_school(school.pk)


def delete_school(school_id: int) -> dict:
    """Delete a bench school and everything under it (database rows and the contacts' Redis keys)."""
    from bookings.models import CallbackRequest, School, SchoolClosure, TourBooking, TourSlot
    from chatbot.models import Conversation, FaqEntry, Message, ReasoningStep
    from crm.models import Activity, Child, Contact, Deal

    school = School.objects.filter(pk=school_id).first()
    if school is None or not school.slug.startswith(SLUG_PREFIX):
        return {}
    contact_ids = list(Contact.objects.filter(school_id=school_id).values_list("pk", flat=True))
    _forget_redis(school_id, contact_ids)
    deleted = {}
    # Children before parents; the big tables with plain DELETEs (no per-row cascade collection).
    plan = [
        (ReasoningStep, {"message__conversation__school_id": school_id}),
        (Message, {"conversation__school_id": school_id}),
        (Conversation, {"school_id": school_id}),
        (Activity, {"contact__school_id": school_id}),
        (Deal, {"contact__school_id": school_id}),
        (TourBooking, {"school_id": school_id}),  # with its children's places, which keep the CRM children
        (Child, {"contact__school_id": school_id}),
        (CallbackRequest, {"school_id": school_id}),
        (TourSlot, {"school_id": school_id}),
        (SchoolClosure, {"school_id": school_id}),
        (FaqEntry, {"school_id": school_id}),
        (Contact, {"school_id": school_id}),
    ]
    with transaction.atomic():
        for model, lookup in plan:
            queryset = model.objects.filter(**lookup)
            if model in (ReasoningStep, Message) and _only_known_relations(model):
                ids = queryset.values("pk")
                deleted[model.__name__] = model.objects.filter(pk__in=ids)._raw_delete(queryset.db)
            elif model is TourBooking:
                queryset.update(replaces=None)
                deleted[model.__name__] = queryset.delete()[0]
            else:
                deleted[model.__name__] = queryset.delete()[0]
        School.objects.filter(pk=school_id).delete()
    return deleted


def _only_known_relations(model) -> bool:
    """A plain DELETE is safe only when nothing but the rows deleted just before points at these rows."""
    from chatbot.models import Message, ReasoningStep

    known = {ReasoningStep: set(), Message: {ReasoningStep, Message}}[model]
    return all(rel.related_model in known for rel in model._meta.related_objects)


def _forget_redis(school_id: int, contact_ids: list[int]) -> None:
    """The contacts' session keys, their rate-limit windows, and the channel-layer groups of their web visitors."""
    from chatbot.agent import memory as agent_memory
    from chatbot.channels.web.consumer import visitor_group
    from chatbot.channels.web.limits import KEY_PREFIX
    from crm.models import Contact
    from plumbing.redis import get_redis

    client = get_redis()
    keys = []
    for contact_id in contact_ids:
        keys += [agent_memory.context_key(school_id, contact_id), agent_memory.lock_key(school_id, contact_id),
                 agent_memory.queue_key(school_id, contact_id), agent_memory.flag_key(school_id, contact_id)]
    layer = settings.CHANNEL_LAYERS["default"]
    if layer["BACKEND"].startswith("channels_redis"):
        prefix = layer.get("CONFIG", {}).get("prefix", "asgi")
        visitors = Contact.objects.filter(pk__in=contact_ids).exclude(web_visitor_id="").values_list(
            "web_visitor_id", flat=True)
        keys += [f"{prefix}:group:{visitor_group(school_id, visitor)}" for visitor in visitors]
    for start in range(0, len(keys), 500):
        client.delete(*keys[start:start + 500])
    for key in client.scan_iter(match=f"{KEY_PREFIX}:*/visitor/{school_id}/*", count=1000):
        client.delete(key)


def stale_schools() -> list[str]:
    from bookings.models import School

    return list(School.objects.filter(slug__startswith=SLUG_PREFIX).values_list("slug", flat=True))


def delete_stale_schools() -> list[str]:
    from bookings.models import School

    slugs = []
    for school in School.objects.filter(slug__startswith=SLUG_PREFIX):
        delete_school(school.pk)
        slugs.append(school.slug)
    return slugs


def make_contact(school, n: int, **fields):
    from crm.models import Contact

    return Contact.objects.create(school=school, web_visitor_id=f"bench-{n}", **fields)


def next_open_day(school, min_days_ahead: int = 3, skip: int = 0) -> dt.date:
    """A bookable local date at least `min_days_ahead` days away (the `skip`-th such day)."""
    from bookings.services import local_now

    day = local_now(school).date() + dt.timedelta(days=min_days_ahead)
    found = -1
    while True:
        if day.weekday() not in school.closed_weekdays:
            found += 1
            if found == skip:
                return day
        day += dt.timedelta(days=1)


def close_db_connections() -> None:
    for conn in connections.all(initialized_only=True):
        conn.close()


# --- database pool ------------------------------------------------------------------------------------------
@contextlib.contextmanager
def database_pool(pool: dict | None) -> Iterator[None]:
    """Run with other PostgreSQL pool options (None: no pool, a new connection per hop), then restore them.

    Every thread's connection wrapper shares the alias's settings dict, and the pool is built from it the
    next time a connection is opened, so closing the current pool is enough to switch. No-op on SQLite.
    """
    if connection.vendor != "postgresql":
        yield
        return
    options = connections["default"].settings_dict["OPTIONS"]
    saved = options.get("pool")
    connections.close_all()
    connections["default"].close_pool()
    options["pool"] = pool
    try:
        yield
    finally:
        connections.close_all()
        connections["default"].close_pool()
        options["pool"] = saved


# --- servers ------------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOCALHOST, 0))
        return sock.getsockname()[1]


def _executable(name: str) -> str:
    candidate = Path(sys.executable).with_name(name)
    return str(candidate) if candidate.exists() else name


class Server:
    """A subprocess the bench started; always stopped on exit (SIGTERM, then SIGKILL)."""

    def __init__(self, label: str, argv: list[str], env: dict[str, str]) -> None:
        self.label = label
        self.argv = argv
        self.env = env
        self.process: subprocess.Popen | None = None
        # Set when something went wrong (or BENCH_KEEP_LOGS=1): the log stays for reading (path in the result).
        self.keep_log = os.environ.get("BENCH_KEEP_LOGS") == "1"
        self.tracebacks = 0  # in its log, counted when it stops: an error the clients may never see
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench-{label}-", suffix=".log", delete=False)  # noqa: SIM115

    @property
    def pid(self) -> int:
        return self.process.pid if self.process else 0

    def start(self) -> "Server":
        self.process = subprocess.Popen(  # noqa: S603 (our own interpreter and arguments)
            self.argv, cwd=settings.BASE_DIR, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        self.log.flush()
        try:
            text = Path(self.log.name).read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def rss_kb(self) -> int:
        with open(f"/proc/{self.pid}/status") as handle:
            return next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(SERVER_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(SERVER_STOP_TIMEOUT)
        self.log.close()
        with contextlib.suppress(OSError):
            self.tracebacks = Path(self.log.name).read_text(errors="replace").count("Traceback (most recent call")
        self.keep_log = self.keep_log or bool(self.tracebacks)
        if not self.keep_log:
            with contextlib.suppress(OSError):
                os.unlink(self.log.name)


class WebServer(Server):
    """An ASGI server serving `quality.bench.asgi:application` (the project's ASGI app plus the bench models) on a
    free 127.0.0.1 port; `command(port)` is its argv."""

    def __init__(self, env: dict[str, str], label: str) -> None:
        self.port = free_port()
        super().__init__(label, self.command(self.port), env)

    def command(self, port: int) -> list[str]:
        raise NotImplementedError

    @property
    def ws_base(self) -> str:
        return f"ws://{LOCALHOST}:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://{LOCALHOST}:{self.port}"

    def wait_ready(self, timeout: float = SERVER_START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        url = f"http://{LOCALHOST}:{self.port}/healthz"
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"{self.label} exited at start:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 (127.0.0.1 only)
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"{self.label} not ready on port {self.port} after {timeout:.0f} s:\n{self.log_tail()}")


class Daphne(WebServer):
    """One daphne process."""

    def __init__(self, env: dict[str, str], label: str = "daphne") -> None:
        super().__init__(env, label)

    def command(self, port: int) -> list[str]:
        return [_executable("daphne"), "-b", LOCALHOST, "-p", str(port), "quality.bench.asgi:application"]


class Uvicorn(WebServer):
    """The Procfile's `web` command: uvicorn, `workers` processes sharing one port; each socket's turns run in the
    process that holds it."""

    def __init__(self, env: dict[str, str], workers: int, label: str = "uvicorn") -> None:
        self.workers = workers
        super().__init__(env, label)

    def command(self, port: int) -> list[str]:
        return [_executable("uvicorn"), "--host", LOCALHOST, "--port", str(port), "--workers", str(self.workers),
                "--log-level", "warning", "quality.bench.asgi:application"]


class CeleryWorker(Server):
    def __init__(self, env: dict[str, str], name: str) -> None:
        super().__init__(name, [_executable("celery"), "-A", "config", "worker", "--pool", "solo", "-n",
                                f"{name}@%h", "-l", "info", "--without-gossip", "--without-mingle"], env)

    def wait_ready(self, timeout: float = SERVER_START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"{self.label} exited at start:\n{self.log_tail()}")
            if " ready." in self.log_tail(40):
                return
            time.sleep(0.2)
        raise RuntimeError(f"{self.label} not ready after {timeout:.0f} s:\n{self.log_tail()}")


@contextlib.contextmanager
def servers(*items: Server) -> Iterator[tuple[Server, ...]]:
    """Start every server, wait until each is ready, and stop them all whatever happens."""
    try:
        for item in items:
            item.start()
        for item in items:
            item.wait_ready()
        yield items
    finally:
        for item in items:
            item.stop()
