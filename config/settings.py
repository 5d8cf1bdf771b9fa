"""Settings for the school tour concierge.

Everything comes from the environment (or a `.env` file beside manage.py), read
with django-environ. With nothing set, the project runs on the embedded default:
SQLite, the in-memory channel layer, an in-process Redis stand-in, eager Celery
and the offline policy model. `.env.example` documents every variable.
"""

import datetime as dt
from pathlib import Path

import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# The environment wins, then `.env` (yours), then `.env.local`: the development settings `make run` writes once
# per checkout (DEBUG on, a fresh random SECRET_KEY and demo password; git-ignored, see config/local_env.py).
for _file in (".env", ".env.local"):
    if (BASE_DIR / _file).exists():
        environ.Env.read_env(BASE_DIR / _file, overwrite=False)

# Safe by default: production unless told otherwise. No secret ships in the repository; a missing one stops the
# start instead of falling back to a key anyone could read (and forge visitor tokens and links with).
DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY must be set (DEBUG is on or off alike). For development run `make run`, which writes a "
        ".env.local with a fresh random key; in production set SECRET_KEY in the environment."
    )

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "daphne",
    "adminpanel.apps.ConsoleAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_prometheus",
    "csp",
    "plumbing",
    "bookings",
    "crm",
    "chatbot",
    "adminpanel",
    "quality",
    # Admin login throttling: failed attempts per username and address, locked out past AXES_FAILURE_LIMIT.
    "axes",
    # After chatbot: its `runworker` (the agent worker that reconnects to Redis and PostgreSQL) replaces
    # channels' own (Django takes a command from the first app that has it).
    "channels",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
    # Last, as django-axes asks: it answers a locked-out login with 429.
    "axes.middleware.AxesMiddleware",
]

# django-axes first: it refuses a locked-out username + address before the password is even checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Admin login throttling (issue 26: 40 wrong passwords in a row met no delay). A username tried from one address
# is locked out after AXES_FAILURE_LIMIT failures in a row, for AXES_COOLOFF_MINUTES (the pair, not the username
# alone: a stranger cannot lock a member of staff out from elsewhere). Staff unlock it by deleting the "Access
# attempts" row in the admin, or `manage.py axes_reset_username <name>`. A success resets the count.
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = dt.timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------
DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several threads (daphne + database_sync_to_async) write at once: wait for
    # the lock instead of failing, and take the write lock at BEGIN so a
    # read-then-write transaction cannot deadlock.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
else:
    # Database hops (plumbing/hops.py; a turn makes three, one per phase) run on pooled connections: a hop
    # thread keeps one while busy and gives it back after DB_POOL_CHECK_IDLE_SECONDS idle, and every other
    # close hands the connection back instead of ending it. A connection is pinged when taken only if it was
    # last taken longer ago than that (plumbing/postgresql): no health-check round trip per hop on a busy server.
    # A process never holds more than DB_POOL_MAX_SIZE connections (PostgreSQL's max_connections is shared
    # by every web, agent and Celery process).
    DATABASES["default"]["ENGINE"] = "plumbing.postgresql"
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool replaces persistent connections
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = False  # plumbing.postgresql checks idle connections only
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        # Open from the start: one per hop thread (DB_HOP_THREADS' default), and one for the rest.
        "min_size": env.int("DB_POOL_MIN_SIZE", default=5),
        "max_size": env.int("DB_POOL_MAX_SIZE", default=10),
        "timeout": env.float("DB_POOL_TIMEOUT_SECONDS", default=30.0),
    }
    # The hot path's statements (plumbing.rows.hot_cursor) are prepared on a connection after this many runs:
    # PostgreSQL then skips planning them (most of their time; plumbing/postgresql). 0 turns preparing off (behind
    # PgBouncer in transaction mode, which cannot keep a prepared statement on one server connection).
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = env.int("DB_PREPARE_THRESHOLD", default=2) or None
DB_POOL_CHECK_IDLE_SECONDS = env.float("DB_POOL_CHECK_IDLE_SECONDS", default=5.0)
# Threads a process runs its turns' database hops on (plumbing/hops.py): while one waits for the database the
# others go on. Each keeps a pooled connection while it is busy, so keep it below DB_POOL_MAX_SIZE.
# SQLite takes one writer at a time: there, one thread runs the hops in the order they come (a parent's messages
# are stored in the order sent), where several would only queue on its lock.
DB_HOP_THREADS = env.int("DB_HOP_THREADS", default=1 if DATABASES["default"]["ENGINE"].endswith("sqlite3") else 4)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis, channel layer, Celery ------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
# Connections of a process's asyncio Redis client (locks, active context, queues, rate limits). Callers wait
# for a free one; opening a connection costs more than waiting for one (a burst of 500 parents opened 200).
REDIS_MAX_CONNECTIONS = env.int("REDIS_MAX_CONNECTIONS", default=32)

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [REDIS_URL],
                "prefix": env.str("CHANNEL_PREFIX", default="asgi"),
                # channels-redis keeps ONE Redis list per process for all of its sockets and silently drops
                # group messages past `capacity` (default 100): a burst of 200 sockets lost replies (bench).
                "capacity": env.int("CHANNEL_LAYER_CAPACITY", default=10_000),
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL or "memory://")
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not REDIS_URL)
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# A task taken by a worker that died comes back after this long (Redis broker). It must stay above the
# longest retry countdown (600 s) plus the task time limit, or delayed retries would be delivered twice.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT_SECONDS", default=900)}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 120
CELERY_TASK_SOFT_TIME_LIMIT = 100
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
# Scheduled work: one registry (plumbing/scheduling/jobs.py) for beat, the embedded scheduler and `run_scheduled`;
# config/celery.py gives it to beat (the settings import no app code).
# The embedded default has no beat: with eager Celery a thread of the web process runs the due jobs
# (plumbing/scheduling/embedded.py). Off turns it off (tests do); with a broker it never runs (beat does the work).
EMBEDDED_SCHEDULER = env.bool("EMBEDDED_SCHEDULER", default=True)
SCHEDULER_TICK_SECONDS = env.float("SCHEDULER_TICK_SECONDS", default=15.0)
SCHEDULER_FIRST_RUN_SECONDS = env.float("SCHEDULER_FIRST_RUN_SECONDS", default=5.0)

# --- Conversation engine ----------------------------------------------------
LLM_MODEL = env.str("LLM_MODEL", default="offline/policy")
LLM_API_BASE = env.str("LLM_API_BASE", default="") or None
LLM_API_KEY = env.str("LLM_API_KEY", default="") or None
LLM_TIMEOUT_SECONDS = env.float("LLM_TIMEOUT_SECONDS", default=30.0)
LLM_MAX_CYCLES = env.int("LLM_MAX_CYCLES", default=5)
LLM_PROMPT_TOKEN_BUDGET = env.int("LLM_PROMPT_TOKEN_BUDGET", default=600)
LANGSMITH_API_KEY = env.str("LANGSMITH_API_KEY", default="")
ACTIVE_CONTEXT_TTL_SECONDS = env.int("ACTIVE_CONTEXT_TTL_SECONDS", default=3600)
# The session lock is a lease: a running turn renews it every third of this (chatbot.services._keep_lease), so
# a turn whose process died leaves it to lapse within these seconds, and the agent worker takes the turn over.
SESSION_LOCK_TTL_SECONDS = env.int("SESSION_LOCK_TTL_SECONDS", default=9)
CHAT_MAX_MESSAGE_CHARS = env.int("CHAT_MAX_MESSAGE_CHARS", default=2000)
# A web chat visitor token unused this long (each connection signs it afresh) no longer resumes the visitor's
# contact and conversations: that browser starts as a new visitor.
VISITOR_TOKEN_MAX_AGE_DAYS = env.int("VISITOR_TOKEN_MAX_AGE_DAYS", default=90)
# Abuse limits of the web chat (chatbot/channels/web/limits.py, in Redis when REDIS_URL is set). Per visitor a token
# bucket: a burst of 20 messages (a parent's clicks, quick replies and typing in a flurry), then one every 3 s
# (20 a minute, above ordinary chat's one every five seconds). Per client address and per school, and socket
# handshakes per client address: moving windows of one minute (the `limits` library).
CHAT_VISITOR_BURST = env.int("CHAT_VISITOR_BURST", default=20)
CHAT_VISITOR_REFILL_SECONDS = env.float("CHAT_VISITOR_REFILL_SECONDS", default=3.0)
CHAT_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = env.int("CHAT_RATE_LIMIT_PER_ADDRESS_PER_MINUTE", default=30)
CHAT_RATE_LIMIT_PER_SCHOOL_PER_MINUTE = env.int("CHAT_RATE_LIMIT_PER_SCHOOL_PER_MINUTE", default=600)
CHAT_HANDSHAKES_PER_ADDRESS_PER_MINUTE = env.int("CHAT_HANDSHAKES_PER_ADDRESS_PER_MINUTE", default=30)
# Websites that may embed the chat widget (exact origins, e.g. https://www.school.sg), besides ALLOWED_HOSTS.
CHAT_ALLOWED_ORIGINS = env.list("CHAT_ALLOWED_ORIGINS", default=[])
# A burst of fragments typed within this window is answered with one reply.
CHAT_BURST_WINDOW_SECONDS = env.float("CHAT_BURST_WINDOW_SECONDS", default=0.8)
# The window where the answer is streamed (the web chat, a hosted model): the parent reads along from the first
# words, so the turn starts sooner; a fragment that lands later is taken into the turn and answered with the rest.
CHAT_STREAMED_BURST_WINDOW_SECONDS = env.float("CHAT_STREAMED_BURST_WINDOW_SECONDS", default=0.3)
# A tool round's reasoning steps are stored and sent as progress when the turn has not answered within this after
# the round; a turn that answers sooner stores them with its answer and sends them with its reply (chatbot.agent.loop).
CHAT_PROGRESS_AFTER_SECONDS = env.float("CHAT_PROGRESS_AFTER_SECONDS", default=0.15)

# --- Auth, i18n, static -------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-gb"
# The languages parents are answered in (chatbot/language.py); English is every school's fallback.
LANGUAGES = [("en", "English"), ("zh-hans", "中文"), ("ms", "Bahasa Melayu"), ("ta", "தமிழ்")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.str("STATIC_ROOT", default="") or BASE_DIR / "staticfiles"  # where `collectstatic` (release) writes
STATICFILES_DIRS = [BASE_DIR / "static"]
WHITENOISE_USE_FINDERS = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

LOGIN_URL = "admin:login"

# Where parents reach this site (e.g. https://concierge.school.example), for links sent on WhatsApp and Chatwoot
# (the signed "change or cancel" link of a booking). Empty: those messages carry no link.
SITE_URL = env.str("SITE_URL", default="").rstrip("/")
BOOKING_MANAGE_LINK_MAX_AGE_DAYS = env.int("BOOKING_MANAGE_LINK_MAX_AGE_DAYS", default=45)

# /metrics (Prometheus): a scraper sends `Authorization: Bearer <METRICS_TOKEN>`, or comes from an address in
# METRICS_ALLOWED_IPS. Neither set: /metrics answers 404 to everyone.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_ALLOWED_IPS = env.list("METRICS_ALLOWED_IPS", default=[])

# --- Security (production values unless DEBUG) -------------------------------
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy (django-csp) on every page: the chat, the manage page, the admin. Scripts, styles and
# sockets come from this site only, with no inline script or style (pages load theirs from static/); nothing may
# frame a page. The widget embedded on a school's own site runs under that site's policy.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],  # 'self' covers the chat's ws:/wss: socket to this host (CSP level 3)
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# --- Logging: structlog, with phone numbers and e-mails masked ---------------
LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
LOG_JSON = env.bool("LOG_JSON", default=not DEBUG)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "structured": {
            "()": "plumbing.logging.formatter",
            "json": LOG_JSON,
        }
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "structured"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "LiteLLM": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "daphne": {"level": "WARNING"},
        # uvicorn (the Procfile's web process) writes its access log and its websocket lines ("WebSocket
        # /ws/chat/...?visitor=...") through handlers of its own, past the masking formatter: its loggers are
        # handed to ours, so the secrets that travel in URLs are redacted there too (plumbing/logging.py).
        "uvicorn": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "uvicorn.access": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# --- Integrations: Chatwoot, WhatsApp Cloud API, Pipedrive (docs/integrations.md) ---
# The channels parents write on: each a package with its registry entry, `CHANNEL` (chatbot/channels/registry.py).
CHAT_CHANNELS = ["chatbot.channels.web", "chatbot.channels.chatwoot", "chatbot.channels.whatsapp",
                 "chatbot.channels.terminal"]
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Test database as a file (per process): webhook turns run on a background thread while requests write,
    # and an in-memory shared-cache database answers "table is locked" where a file (WAL, timeout) waits.
    import os
    import tempfile

    DATABASES["default"].setdefault("TEST", {}).setdefault(
        "NAME", str(Path(tempfile.gettempdir()) / f"concierge-test-{os.getpid()}.sqlite3"))
# Chatwoot agent bot. Events arrive at POST /webhooks/chatwoot/<CHATWOOT_WEBHOOK_SECRET>/ (empty: endpoint off).
CHATWOOT_URL = env.str("CHATWOOT_URL", default="").rstrip("/")
CHATWOOT_API_TOKEN = env.str("CHATWOOT_API_TOKEN", default="")  # the agent bot's access token (replies, handoff)
CHATWOOT_USER_TOKEN = env.str("CHATWOOT_USER_TOKEN", default="")  # a user's token (contact attributes)
CHATWOOT_WEBHOOK_SECRET = env.str("CHATWOOT_WEBHOOK_SECRET", default="")
CHATWOOT_HMAC_SECRET = env.str("CHATWOOT_HMAC_SECRET", default="")  # the bot's signing secret (Chatwoot >= 4.13)
CHATWOOT_SIGNATURE_MAX_AGE_SECONDS = env.int("CHATWOOT_SIGNATURE_MAX_AGE_SECONDS", default=300)
# WhatsApp Cloud API, direct (GET|POST /webhooks/whatsapp/).
WHATSAPP_VERIFY_TOKEN = env.str("WHATSAPP_VERIFY_TOKEN", default="")
WHATSAPP_APP_SECRET = env.str("WHATSAPP_APP_SECRET", default="")
WHATSAPP_TOKEN = env.str("WHATSAPP_TOKEN", default="")
WHATSAPP_PHONE_NUMBER_ID = env.str("WHATSAPP_PHONE_NUMBER_ID", default="")
WHATSAPP_API_URL = env.str("WHATSAPP_API_URL", default="https://graph.facebook.com/v26.0").rstrip("/")
# Pipedrive (empty token: the local CRM tables only).
PIPEDRIVE_API_TOKEN = env.str("PIPEDRIVE_API_TOKEN", default="")
PIPEDRIVE_API_URL = env.str("PIPEDRIVE_API_URL", default="https://api.pipedrive.com").rstrip("/")
if REDIS_URL:
    # redis-py 8 times socket reads out after 5 s by default, exactly the time channels-redis blocks in
    # BZPOPMIN while receiving: an idle `runworker agent` (or websocket consumer) died with "Timeout reading
    # from redis". Reads get more room than the 5 s block; a dead connection still fails within 15 s.
    # Its pool refuses (MaxConnectionsError) past max_connections, 100 by default: 500 sockets closing at once
    # failed to leave their groups, and the stale members then received every later frame of their visitor.
    CHANNEL_LAYERS["default"]["CONFIG"]["hosts"] = [{
        "address": REDIS_URL, "socket_timeout": 15,
        "max_connections": env.int("CHANNEL_LAYER_MAX_CONNECTIONS", default=1000),
    }]
# Webhook turns: True sends them to `manage.py runworker agent` over the channel layer (needs REDIS_URL);
# False runs them in the web process itself (the embedded default).
AGENT_WORKER = env.bool("AGENT_WORKER", default=bool(REDIS_URL))
AGENT_WORKER_CONCURRENCY = env.int("AGENT_WORKER_CONCURRENCY", default=200)
# How long an agent turn waits out a database outage (retrying with backoff) before leaving it to the sweeper.
AGENT_DATABASE_WAIT_SECONDS = env.int("AGENT_DATABASE_WAIT_SECONDS", default=300)
# How often each agent worker looks for turns whose lease lapsed (a dead process's) and takes them over.
TURN_RECOVERY_INTERVAL_SECONDS = env.float("TURN_RECOVERY_INTERVAL_SECONDS", default=2.0)
# Seconds before an inbound message nobody answered is dispatched again by the sweeper (the fallback when
# Redis, which holds the leases, was unreachable).
INBOUND_REDISPATCH_AFTER_SECONDS = env.int("INBOUND_REDISPATCH_AFTER_SECONDS", default=120)
EXTERNAL_HTTP_TIMEOUT_SECONDS = env.float("EXTERNAL_HTTP_TIMEOUT_SECONDS", default=10.0)
# A send claimed this long ago by a worker that never finished it is treated as possibly done.
EXTERNAL_CALL_CLAIM_TIMEOUT_SECONDS = env.int("EXTERNAL_CALL_CLAIM_TIMEOUT_SECONDS", default=90)

# E-mail (tour reminders of web-chat parents, and the fallback of the other channels), from EMAIL_URL
# (django-environ: smtp+tls://user:password@host:587, smtp+ssl://...:465, consolemail://). Development prints them
# (consolemail://); production without EMAIL_URL refuses to send (config/mail.py: the reminder falls back and staff
# get a note) rather than print parents' addresses and manage links into the log, and `check --deploy` says so.
EMAIL_URL = env.str("EMAIL_URL", default="consolemail://" if DEBUG else "")
if EMAIL_URL:
    globals().update(env.email_url_config(EMAIL_URL))
else:
    EMAIL_BACKEND = "config.mail.NotConfiguredBackend"
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="School tour concierge <no-reply@localhost>")
