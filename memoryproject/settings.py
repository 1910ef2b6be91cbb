"""Settings, read from the environment (``.env.example`` lists every variable).

Importing this module starts nothing. With no ``DATABASE_URL`` the database is the embedded
PostgreSQL + pgvector in ``EMBEDDED_DB_DIR``, started by what serves or tests
(``memoryproject.embedded_db``); with no ``OPENAI_API_KEY`` the offline models are used.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from memoryproject.embedded_db import default_shared_buffers_mb, embedded_database_settings

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env")


def _number(name: str, default: float | None, *, minimum: float, maximum: float | None = None, cast: type = int):
    """The number in the environment variable ``name`` (``default`` when unset or empty), checked at start.

    Raises:
        ImproperlyConfigured: not a number, or outside ``minimum``..``maximum``; the message names the variable.
    """
    raw = env.str(name, default="")
    if raw == "":
        return default
    try:
        value = cast(raw)
    except ValueError:
        raise ImproperlyConfigured(
            f"{name} must be {'an integer' if cast is int else 'a number'}, not {raw!r}."
        ) from None
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise ImproperlyConfigured(f"{name} must be {bounds}, not {raw!r}.")
    return value


SECRET_KEY = env.str("SECRET_KEY", default="dev-only-insecure-secret-key-change-me")
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "strawberry_django",
    "django_q",
    "simple_history",
    # Throttles logins to the admin (django-axes): a locked-out login answers HTTP 429.
    "axes",
    # CORS headers for the browsers of CORS_ALLOWED_ORIGINS (django-cors-headers); none by default.
    "corsheaders",
    "memories",
]

MIDDLEWARE = [
    # First, as django-cors-headers asks: its headers go on every answer, a preflight's and an error's too.
    "corsheaders.middleware.CorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # While `manage.py maintenance` runs (a restore), requests are answered 503 MAINTENANCE (memories.maintenance).
    "memories.maintenance.MaintenanceMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Records which staff member made each audited change (django-simple-history).
    "simple_history.middleware.HistoryRequestMiddleware",
    # A view that fails because the database is down or changed answers HTTP 503 JSON (memories.http).
    "memories.http.DatabaseFaultMiddleware",
    # Last, as django-axes asks: it answers a locked-out login.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "memoryproject.urls"

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

WSGI_APPLICATION = "memoryproject.wsgi.application"

# --- Database -----------------------------------------------------------------------
# Relative paths are taken from the project directory.
EMBEDDED_DB_DIR = BASE_DIR / env.str("EMBEDDED_DB_DIR", default="var/postgres")
# Without DATABASE_URL, the embedded server in EMBEDDED_DB_DIR: named here, started by what needs
# it (memoryproject.embedded_db.ensure_embedded_database).
EMBEDDED_DB = not env.str("DATABASE_URL", default="")
if EMBEDDED_DB:
    DATABASES = {"default": embedded_database_settings(data_dir=EMBEDDED_DB_DIR)}
else:
    DATABASES = {"default": env.db_url("DATABASE_URL")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend, failing fast while the database is down (memoryproject/postgresql/base.py).
    DATABASES["default"]["ENGINE"] = "memoryproject.postgresql"
# PostgreSQL's buffer cache of the embedded server, MiB (default: a quarter of the memory).
EMBEDDED_DB_SHARED_BUFFERS_MB = _number("EMBEDDED_DB_SHARED_BUFFERS_MB", None, minimum=1) or default_shared_buffers_mb()
# 0: a connection per request; the web process pools them instead (DATABASE_POOL). The worker's
# processes, which fork and must not share a pool, keep one each: the Procfile sets
# DATABASE_POOL=false and CONN_MAX_AGE=600 for it.
DATABASES["default"]["CONN_MAX_AGE"] = _number("CONN_MAX_AGE", 0, minimum=0)
# A connection is checked before it is reused (a persistent one at each request or task, a pooled one
# at each checkout), so one lost with a database restart is replaced instead of failing a request.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = env.bool("CONN_HEALTH_CHECKS", default=True)
DATABASE_POOL = env.bool("DATABASE_POOL", default=True)
# How long a request waits for a pooled connection before it is answered DATABASE_UNAVAILABLE (HTTP
# 503): with DATABASE_POOL_MAX_SIZE >= WEB_THREADS only a database that does not answer makes one wait.
DATABASE_POOL_TIMEOUT_SECONDS = _number("DATABASE_POOL_TIMEOUT_SECONDS", 3.0, minimum=0.1, cast=float)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# django-axes counts failed logins first: ADMIN_LOGIN_FAILURE_LIMIT wrong passwords for one username from
# one address lock that pair out (HTTP 429, even with the right password) for ADMIN_LOGIN_LOCKOUT_MINUTES.
# A pair, not the address alone: behind a proxy every client has the proxy's address.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = _number("ADMIN_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=_number("ADMIN_LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True

# Behind HTTPS (a proxy that ends TLS): the session and CSRF cookies are sent only over HTTPS, and
# browsers are told to use HTTPS only (HSTS; Django sends it on requests it sees as HTTPS, so name the
# proxy's header too). All off by default: `make run` serves plain HTTP.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=False)
SECURE_HSTS_SECONDS = _number("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
# The header by which the proxy says a request came over HTTPS, e.g. X-Forwarded-Proto (value "https").
if _https_header := env.str("SECURE_PROXY_SSL_HEADER", default=""):
    SECURE_PROXY_SSL_HEADER = (f"HTTP_{_https_header.upper().replace('-', '_')}", "https")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# WhiteNoise serves the admin's static files straight from the apps (no collectstatic step).
WHITENOISE_USE_FINDERS = True

# LOG_FORMAT=json: one JSON object per line (python-json-logger), for log collectors.
LOG_FORMAT = env.str("LOG_FORMAT", default="text")
if LOG_FORMAT not in {"text", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be 'text' or 'json', not {LOG_FORMAT!r}.")
LOG_LEVEL = env.str("LOG_LEVEL", default="INFO").upper()
if LOG_LEVEL not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
    raise ImproperlyConfigured(f"LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL, not {LOG_LEVEL!r}.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "filters": {"task_failures": {"()": "memories.log_filters.TaskFailureFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "pgserver": {"level": "WARNING"},
        # Strawberry logs every GraphQL error with its traceback; memories.graphql.errors logs them
        # instead: client errors as one line per request, server errors with their traceback.
        "strawberry.execution": {"level": "CRITICAL"},
        # A failed task's line names its error's type only: the error may quote a user.
        "django-q": {"filters": ["task_failures"]},
        # django-axes: failed logins and lockouts (WARNING), not its start and housekeeping lines.
        "axes": {"level": "WARNING"},
    },
}

# --- Models for embeddings and text generation (memories.llm) -----------------------
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="") or None
OPENAI_TIMEOUT_SECONDS = _number("OPENAI_TIMEOUT_SECONDS", 30.0, minimum=0.001, cast=float)
OPENAI_MAX_RETRIES = _number("OPENAI_MAX_RETRIES", 2, minimum=0)
# Embeddings from another OpenAI-compatible server than chat (vLLM and many gateways serve them
# apart); empty: the shared OPENAI_BASE_URL / OPENAI_API_KEY.
OPENAI_EMBEDDING_BASE_URL = env.str("OPENAI_EMBEDDING_BASE_URL", default="")
OPENAI_EMBEDDING_API_KEY = env.str("OPENAI_EMBEDDING_API_KEY", default="")
_default_backend = "openai" if OPENAI_API_KEY else "local"
EMBEDDING_BACKEND = env.str("EMBEDDING_BACKEND", default=_default_backend)
CHAT_BACKEND = env.str("CHAT_BACKEND", default=_default_backend)
EMBEDDING_MODEL = env.str(
    "EMBEDDING_MODEL",
    default="text-embedding-3-small" if EMBEDDING_BACKEND == "openai" else "all-MiniLM-L6-v2",
)
# The vector columns' dimension; it must match what the embedding model returns.
EMBEDDING_DIMENSIONS = _number("EMBEDDING_DIMENSIONS", 384, minimum=1)
# Sent to the OpenAI API as `dimensions` only when set (other servers may reject it).
OPENAI_EMBEDDING_DIMENSIONS = _number("OPENAI_EMBEDDING_DIMENSIONS", None, minimum=1)
# How the local model runs: "onnxruntime" (its transformer exported to ONNX once, into
# MODEL_CACHE_DIR; the same vectors, faster on a CPU) or "torch" (sentence-transformers).
# memories/llm/onnx_encoder.py.
EMBEDDING_RUNTIME = env.str("EMBEDDING_RUNTIME", default="onnxruntime")
MODEL_CACHE_DIR = BASE_DIR / env.str("MODEL_CACHE_DIR", default="var/models")
# Texts per embedding call (per request with openai); the worker claims this many new
# messages per call (memories/services/embeddings.py).
EMBEDDING_BATCH_SIZE = _number("EMBEDDING_BATCH_SIZE", 64, minimum=1)
# CPU threads of the local model per process; 0: cores // Q_WORKERS. The web process and each of
# the worker's processes embed on the same cores, and runtime threads beyond their share spin.
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
EMBEDDING_THREADS = _number("EMBEDDING_THREADS", 0, minimum=0) or max(1, _CORES // _number("Q_WORKERS", 2, minimum=1))
CHAT_MODEL = env.str("CHAT_MODEL", default="gpt-4o-mini")

# --- Memory behaviour -----------------------------------------------------------------
SUMMARY_IDLE_MINUTES = _number("SUMMARY_IDLE_MINUTES", 30, minimum=0)
SUMMARY_SWEEP_MINUTES = _number("SUMMARY_SWEEP_MINUTES", 5, minimum=1)
# A session that keeps going is summarised again each time this many messages arrive (0: only when idle).
SUMMARY_EVERY_MESSAGES = _number("SUMMARY_EVERY_MESSAGES", 50, minimum=0)
SUMMARY_MAX_SENTENCES = _number("SUMMARY_MAX_SENTENCES", 8, minimum=1)
# A summary reads at most this many characters of a session (its newest), plus its previous summary.
SUMMARY_MAX_INPUT_CHARS = _number("SUMMARY_MAX_INPUT_CHARS", 24000, minimum=1)
# The most tokens a search's hits take together: longer turns are shown by their parts that match the query.
SEARCH_MAX_TOKENS = _number("SEARCH_MAX_TOKENS", 1500, minimum=1)
# Hits a search returns unless it asks for topK.
SEARCH_DEFAULT_TOP_K = _number("SEARCH_DEFAULT_TOP_K", 10, minimum=1)
# The relevance gate: a hit less similar (cosine) to the query than this is not relevant; with no
# relevant hit, an answer says "not found in memory" and a context holds no memories.
SEARCH_MIN_SIMILARITY = _number("SEARCH_MIN_SIMILARITY", 0.3, minimum=-1.0, maximum=1.0, cast=float)
# context: the session's last turns returned (the recent window) and the token budget of its memories.
CONTEXT_WINDOW_TURNS = _number("CONTEXT_WINDOW_TURNS", 10, minimum=0)
CONTEXT_MAX_TOKENS = _number("CONTEXT_MAX_TOKENS", 1000, minimum=0)
SEARCH_MAX_TOP_K = _number("SEARCH_MAX_TOP_K", 50, minimum=1)
if SEARCH_DEFAULT_TOP_K > SEARCH_MAX_TOP_K:  # every search without topK would be refused
    raise ImproperlyConfigured(
        f"SEARCH_DEFAULT_TOP_K ({SEARCH_DEFAULT_TOP_K}) must not exceed SEARCH_MAX_TOP_K ({SEARCH_MAX_TOP_K})."
    )
# Vector search over at most this many rows of the caller's scope is exact (no index);
# above it the HNSW index is used (memories/search/sql/nearest.sql).
EXACT_SEARCH_MAX_ROWS = _number("EXACT_SEARCH_MAX_ROWS", 10000, minimum=0)
# pgvector's hnsw.ef_search, set on every connection. HNSW returns at most ef_search rows, so
# it is raised to the largest candidate list a search asks for (5 x SEARCH_MAX_TOP_K, >= 50).
HNSW_EF_SEARCH = max(_number("HNSW_EF_SEARCH", 100, minimum=1), 5 * SEARCH_MAX_TOP_K, 50)
_options = DATABASES["default"].setdefault("OPTIONS", {})
_options["options"] = f"{_options.get('options', '')} -c hnsw.ef_search={HNSW_EF_SEARCH}".strip()
# libpq waits for ever on a server that does not answer; a connection attempt gives up after this
# (?connect_timeout= in DATABASE_URL overrides it).
_options.setdefault("connect_timeout", 5)
# Server-side binding, and a statement run 5 times on a connection is prepared (psycopg's
# prepare_threshold): each search's statements are then planned once per connection, and the
# query vector is sent in binary. Off for PgBouncer in transaction mode before 1.21.
DATABASE_PREPARED_STATEMENTS = env.bool("DATABASE_PREPARED_STATEMENTS", default=True)
if DATABASE_PREPARED_STATEMENTS:
    _options.update(server_side_binding=True, prepare_threshold=5)

# --- API limits (each rejected with a message naming the limit) --------------------------
MAX_PAGE_SIZE = _number("MAX_PAGE_SIZE", 1000, minimum=1)
MAX_MESSAGES_PER_CALL = _number("MAX_MESSAGES_PER_CALL", 1000, minimum=1)
MAX_MESSAGE_CHARS = _number("MAX_MESSAGE_CHARS", 32000, minimum=1)
# The longest fact (addKnowledge, updateKnowledge) and diary entry (upsertDiary), in characters.
MAX_KNOWLEDGE_CHARS = _number("MAX_KNOWLEDGE_CHARS", 4000, minimum=1)
MAX_DIARY_CHARS = _number("MAX_DIARY_CHARS", 32000, minimum=1)
MAX_METADATA_BYTES = _number("MAX_METADATA_BYTES", 16384, minimum=1)
# Metadata nested deeper than this (objects and lists within each other) is refused.
MAX_METADATA_DEPTH = _number("MAX_METADATA_DEPTH", 32, minimum=1, maximum=500)
# A request body larger than this is refused (HTTP 413, PAYLOAD_TOO_LARGE) before it is read
# whole: 1,000 chat turns of a few hundred characters are well under 1 MiB of JSON.
MAX_REQUEST_BYTES = _number("MAX_REQUEST_BYTES", 10 * 1024 * 1024, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BYTES
MAX_QUERY_DEPTH = _number("MAX_QUERY_DEPTH", 10, minimum=1)
MAX_ALIASES = _number("MAX_ALIASES", 15, minimum=0)
# A document of more tokens (names, punctuation, values) is refused before it is parsed whole.
MAX_QUERY_TOKENS = _number("MAX_QUERY_TOKENS", 5000, minimum=100)
# The expensive fields (search, context, addMessages and its context, exportUser, deleteHistory,
# forgetUser) one request may ask for; exportUser at most once (memories.graphql.cost).
MAX_QUERY_COST = _number("MAX_QUERY_COST", 4, minimum=1)
# The largest exportUser answered (about, in bytes of its document); `manage.py export_user` writes any size.
EXPORT_MAX_BYTES = _number("EXPORT_MAX_BYTES", 2 * 1024 * 1024, minimum=1)
# Seconds a client has to send a request's whole body (memoryproject/asgi.py).
REQUEST_BODY_TIMEOUT_SECONDS = _number("REQUEST_BODY_TIMEOUT_SECONDS", 20.0, minimum=0.1, cast=float)
# A statement of the web process (or the MCP server) running longer than this is cancelled (0: never).
REQUEST_STATEMENT_TIMEOUT_SECONDS = _number("REQUEST_STATEMENT_TIMEOUT_SECONDS", 30.0, minimum=0.0, cast=float)
# Facts raised from conversations are used at once, not reviewed (default), or wait for a person's approval.
KNOWLEDGE_CANDIDATES_NEED_APPROVAL = env.bool("KNOWLEDGE_CANDIDATES_NEED_APPROVAL", default=False)
# A fact within this cosine distance of an existing one of the same user is a duplicate.
KNOWLEDGE_DUPLICATE_DISTANCE = _number("KNOWLEDGE_DUPLICATE_DISTANCE", 0.1, minimum=0.0, maximum=2.0, cast=float)

# --- Background work (django-q2) -----------------------------------------------------------
# The task queue: "orm" (a table in the database, the embedded default) or "redis" (REDIS_URL),
# for several workers and web processes on more than one machine.
Q_BROKER = env.str("Q_BROKER", default="orm")
REDIS_URL = env.str("REDIS_URL", default="redis://127.0.0.1:6379/0")
if Q_BROKER not in {"orm", "redis"}:
    raise ImproperlyConfigured(f"Q_BROKER must be 'orm' or 'redis', not {Q_BROKER!r}.")
Q_CLUSTER = {
    "name": "memories",
    **({"redis": REDIS_URL} if Q_BROKER == "redis" else {"orm": "default"}),
    "workers": _number("Q_WORKERS", 2, minimum=1),
    "timeout": _number("Q_TIMEOUT_SECONDS", 300, minimum=1),
    # retry must exceed timeout, or a slow task is started twice.
    "retry": _number("Q_TIMEOUT_SECONDS", 300, minimum=1) + 60,
    "max_attempts": _number("Q_MAX_ATTEMPTS", 3, minimum=0),
    "catch_up": False,
    "sync": env.bool("Q_SYNC", default=False),
    "poll": 0.5,
    # A new worker process loads the embedding model again, which costs more than most tasks.
    "recycle": 10000,
    # A worker process whose peak RSS passes this is replaced after its task (KiB; 0: no limit).
    "max_rss": _number("Q_MAX_RSS_MB", 1536, minimum=0) * 1024 or None,
    # Only failures are stored (the admin lists them): storing and pruning successes costs a write per task.
    "save_limit": -1,
}

STRAWBERRY_DJANGO = {
    "MUTATIONS_DEFAULT_HANDLE_ERRORS": True,
    # The library cuts pages at this (its default: 100); ours refuse a larger limit first.
    "PAGINATION_MAX_LIMIT": MAX_PAGE_SIZE,
}

# --- Browsers (docs/integrations.md, "Browser frontends") ------------------------------
# Pages of these origins (scheme://host[:port]) may call /graphql/ from a browser; empty: none may.
CORS_ALLOWED_ORIGINS = env.list("CORS_ALLOWED_ORIGINS", default=[])
CORS_URLS_REGEX = r"^/graphql/?$"
# A browser holds a user token (createUserToken), never an API key: signed with USER_TOKEN_SECRET
# (empty: SECRET_KEY; change it to revoke every token), valid USER_TOKEN_SECONDS unless minted for
# less, at most USER_TOKEN_MAX_SECONDS.
USER_TOKEN_SECRET = env.str("USER_TOKEN_SECRET", default="")
USER_TOKEN_MAX_SECONDS = _number("USER_TOKEN_MAX_SECONDS", 86400, minimum=1)
USER_TOKEN_SECONDS = _number("USER_TOKEN_SECONDS", 900, minimum=1, maximum=USER_TOKEN_MAX_SECONDS)

# --- Health and metrics (memories.health, memories.metrics) ----------------------------
# /metrics is served to clients sending this as a Bearer token (empty: to no one).
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
# /readyz lists the worker as degraded (still ready) once its sweep is SUMMARY_SWEEP_MINUTES plus this overdue.
WORKER_HEARTBEAT_GRACE_SECONDS = _number("WORKER_HEARTBEAT_GRACE_SECONDS", 120, minimum=0)

# --- Serving (manage.py serve / make run) ---------------------------------------------
HOST = env.str("HOST", default="127.0.0.1")
PORT = _number("PORT", 8000, minimum=0, maximum=65535)
# The MCP server (manage.py mcp): its streamable HTTP port (on HOST), and the API key its stdio
# transport acts as (a desktop agent passes it in the server's environment).
MCP_PORT = _number("MCP_PORT", 8001, minimum=0, maximum=65535)
MCP_API_KEY = env.str("MCP_API_KEY", default="")
# Threads that run requests in each web process (gunicorn's gthread workers, memoryproject/gunicorn.conf.py),
# and tool calls at once in each MCP server process.
WEB_THREADS = _number("WEB_THREADS", 10, minimum=1)
# A web process whose resident memory passes this (MiB) is replaced once its request is answered (0: never).
WEB_MAX_RSS_MB = _number("WEB_MAX_RSS_MB", 1536, minimum=0)
# manage.py serve starts a process (or the embedded PostgreSQL) that stops again, at most this many
# times in 10 minutes; once more, and it stops everything and exits with an error.
SERVE_MAX_RESTARTS = _number("SERVE_MAX_RESTARTS", 5, minimum=0)
if DATABASE_POOL:
    # Each request thread holds at most one connection at a time.
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        # One more than the requests running at once: the health checks, which never wait for a slot.
        "max_size": _number("DATABASE_POOL_MAX_SIZE", None, minimum=1) or WEB_THREADS + 1,
        "timeout": DATABASE_POOL_TIMEOUT_SECONDS,
        # While the database is down the pool retries with a growing delay; ending a round of retries
        # after 5 s lets the next request start over at once, so the pool is back seconds after it.
        "reconnect_timeout": 5,
    }
