"""Settings, read from the environment (``.env.example`` lists every variable).

With no ``DATABASE_URL`` the embedded PostgreSQL + pgvector (``memoryproject.embedded_db``)
is started in ``EMBEDDED_DB_DIR``; with no ``OPENAI_API_KEY`` the offline models are used.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env")

# This process is the background worker (`manage.py qcluster`, which forks its worker processes).
IN_WORKER = "qcluster" in sys.argv
# This process serves the API (`manage.py serve`, or a WSGI or ASGI server run by hand).
_SERVERS = {"cheroot", "gunicorn", "uvicorn", "daphne", "hypercorn"}
IN_WEB_SERVER = sys.argv[1:2] == ["serve"] or Path(sys.argv[0]).name in _SERVERS

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
    "memories",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Records which staff member made each audited change (django-simple-history).
    "simple_history.middleware.HistoryRequestMiddleware",
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

ASGI_APPLICATION = "memoryproject.asgi.application"
WSGI_APPLICATION = "memoryproject.wsgi.application"

# --- Database -----------------------------------------------------------------------
# Relative paths are taken from the project directory.
EMBEDDED_DB_DIR = BASE_DIR / env.str("EMBEDDED_DB_DIR", default="var/postgres")
if env.str("DATABASE_URL", default=""):
    DATABASES = {"default": env.db_url("DATABASE_URL")}
else:
    from memoryproject.embedded_db import default_shared_buffers_mb, embedded_database_url

    # PostgreSQL's buffer cache of the embedded server, MiB (default: a quarter of the memory).
    EMBEDDED_DB_SHARED_BUFFERS_MB = int(
        env.str("EMBEDDED_DB_SHARED_BUFFERS_MB", default="") or default_shared_buffers_mb()
    )
    DATABASES = {
        "default": env.db_url_config(
            embedded_database_url(data_dir=EMBEDDED_DB_DIR, shared_buffers_mb=EMBEDDED_DB_SHARED_BUFFERS_MB)
        )
    }
    # pgserver's URL names its socket directory as a query parameter; Django wants HOST.
    DATABASES["default"]["HOST"] = DATABASES["default"].pop("OPTIONS", {}).get("host", "")
# 0: no connection kept per thread (under ASGI, Django's docs advise against it: each request
# may run on another thread and leave its connection behind). A connection pool instead
# (psycopg_pool, Django's "pool" option): a new PostgreSQL connection costs several
# milliseconds per request. Not in the worker: it forks its processes, and a pool's open
# connections must not cross a fork.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=0)
# Never in the worker, whatever DATABASE_POOL says: it forks (see above), and its processes
# keep one connection each instead (WORKER_CONN_MAX_AGE).
DATABASE_POOL = env.bool("DATABASE_POOL", default=True) and not IN_WORKER
if IN_WORKER and not env.bool("Q_SYNC", default=False):
    # Each worker process runs one task at a time in one thread, and django-q2 closes every
    # connection before it forks (unless in sync mode): a connection can live across tasks
    # there. A new one per task (and per queue poll, and per result saved) cost more than the
    # tasks themselves when most find their messages already embedded. Health checks replace
    # a connection that broke while idle before a task uses it.
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("WORKER_CONN_MAX_AGE", default=600)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

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

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"pgserver": {"level": "WARNING"}},
}

# --- Models for embeddings and text generation (memories.llm) -----------------------
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="") or None
OPENAI_TIMEOUT_SECONDS = env.float("OPENAI_TIMEOUT_SECONDS", default=30.0)
OPENAI_MAX_RETRIES = env.int("OPENAI_MAX_RETRIES", default=2)
_default_backend = "openai" if OPENAI_API_KEY else "local"
EMBEDDING_BACKEND = env.str("EMBEDDING_BACKEND", default=_default_backend)
CHAT_BACKEND = env.str("CHAT_BACKEND", default=_default_backend)
EMBEDDING_MODEL = env.str(
    "EMBEDDING_MODEL",
    default="text-embedding-3-small" if EMBEDDING_BACKEND == "openai" else "all-MiniLM-L6-v2",
)
# The vector columns' dimension; it must match what the embedding model returns.
EMBEDDING_DIMENSIONS = env.int("EMBEDDING_DIMENSIONS", default=384)
# Sent to the OpenAI API as `dimensions` only when set (other servers may reject it).
OPENAI_EMBEDDING_DIMENSIONS = env.int("OPENAI_EMBEDDING_DIMENSIONS", default=None)
# How the local model runs: "onnxruntime" (its transformer exported to ONNX once, into
# MODEL_CACHE_DIR; a query embedded in a third of torch's time, the same vectors) or "torch"
# (sentence-transformers). memories/llm/onnx_encoder.py.
EMBEDDING_RUNTIME = env.str("EMBEDDING_RUNTIME", default="onnxruntime")
MODEL_CACHE_DIR = BASE_DIR / env.str("MODEL_CACHE_DIR", default="var/models")
# Texts per embedding call (per request with openai); the worker claims this many new
# messages per call (memories/services/embeddings.py).
EMBEDDING_BATCH_SIZE = env.int("EMBEDDING_BATCH_SIZE", default=64)
# CPU threads of the local model per process; 0: automatic, which is cores // Q_WORKERS in
# each worker process, every core but one in the web server and every core elsewhere
# (commands such as reembed). Torch's threads spin while they wait for one another: 2 worker
# processes of 2 threads each on 2 cores embedded 1.6x slower than 2 of 1 thread. The web
# server embeds a query while the request's thread queries the database
# (memories/search.py): on 2 cores, a search took a median 33-35 ms with one torch thread and
# 37-41 ms with two (README, Benchmarks).
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
if IN_WORKER:
    _AUTOMATIC_THREADS = max(1, _CORES // env.int("Q_WORKERS", default=2))
else:
    _AUTOMATIC_THREADS = max(1, _CORES - 1) if IN_WEB_SERVER else _CORES
EMBEDDING_THREADS = env.int("EMBEDDING_THREADS", default=0) or _AUTOMATIC_THREADS
# The local model runs in a child process of its own (memories/llm/model_process.py) rather
# than in a thread of this one: by default in the web server, whose request threads run
# Python while a query is embedded and would stall the model's thread (README, Benchmarks).
# Empty or unset: automatic.
EMBEDDING_PROCESS = env.bool("EMBEDDING_PROCESS") if env.str("EMBEDDING_PROCESS", default="") else IN_WEB_SERVER
CHAT_MODEL = env.str("CHAT_MODEL", default="gpt-4o-mini")

# --- Memory behaviour -----------------------------------------------------------------
SUMMARY_IDLE_MINUTES = env.int("SUMMARY_IDLE_MINUTES", default=30)
SUMMARY_SWEEP_MINUTES = env.int("SUMMARY_SWEEP_MINUTES", default=5)
SUMMARY_MAX_SENTENCES = env.int("SUMMARY_MAX_SENTENCES", default=8)
# A summary reads at most this many characters of a session (its newest), plus its previous summary.
SUMMARY_MAX_INPUT_CHARS = env.int("SUMMARY_MAX_INPUT_CHARS", default=24000)
SEARCH_DEFAULT_TOP_K = env.int("SEARCH_DEFAULT_TOP_K", default=5)
SEARCH_MAX_TOP_K = env.int("SEARCH_MAX_TOP_K", default=50)
# Vector search over at most this many rows of the caller's scope is exact (no index);
# above it the HNSW index is used (memories/search.py, _nearest).
EXACT_SEARCH_MAX_ROWS = env.int("EXACT_SEARCH_MAX_ROWS", default=10000)
# pgvector's hnsw.ef_search, set on every connection. HNSW returns at most ef_search rows, so
# it is raised to the largest candidate list a search asks for (5 x SEARCH_MAX_TOP_K, >= 50).
HNSW_EF_SEARCH = max(env.int("HNSW_EF_SEARCH", default=100), 5 * SEARCH_MAX_TOP_K, 50)
# The search statements are prepared once per connection (memories/search.py, _fetch):
# parsing and planning them took 2.5 to 3 ms each per request at 1M messages, more than
# running them. Off behind a pooler that does not keep prepared statements (PgBouncer before
# 1.21 in transaction mode). Django's own queries are never prepared.
SEARCH_PREPARED_STATEMENTS = env.bool("SEARCH_PREPARED_STATEMENTS", default=True)
_options = DATABASES["default"].setdefault("OPTIONS", {})
_options["options"] = f"{_options.get('options', '')} -c hnsw.ef_search={HNSW_EF_SEARCH}".strip()

# --- API limits (each rejected with a message naming the limit) --------------------------
MAX_PAGE_SIZE = env.int("MAX_PAGE_SIZE", default=1000)
MAX_MESSAGES_PER_CALL = env.int("MAX_MESSAGES_PER_CALL", default=1000)
MAX_MESSAGE_CHARS = env.int("MAX_MESSAGE_CHARS", default=32000)
MAX_METADATA_BYTES = env.int("MAX_METADATA_BYTES", default=16384)
# A request body larger than this is refused (HTTP 413, PAYLOAD_TOO_LARGE) before it is read
# whole: 1,000 chat turns of a few hundred characters are well under 1 MiB of JSON.
MAX_REQUEST_BYTES = env.int("MAX_REQUEST_BYTES", default=10 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BYTES
MAX_QUERY_DEPTH = env.int("MAX_QUERY_DEPTH", default=10)
MAX_ALIASES = env.int("MAX_ALIASES", default=15)
EXTRACTIVE_SUFFICIENT_SIMILARITY = env.float("EXTRACTIVE_SUFFICIENT_SIMILARITY", default=0.7)
# Facts raised from conversations: staff approve them first (default), or they are active at once.
KNOWLEDGE_CANDIDATES_NEED_APPROVAL = env.bool("KNOWLEDGE_CANDIDATES_NEED_APPROVAL", default=True)
# A fact within this cosine distance of an existing one of the same user is a duplicate.
KNOWLEDGE_DUPLICATE_DISTANCE = env.float("KNOWLEDGE_DUPLICATE_DISTANCE", default=0.1)

# --- Background work (django-q2, ORM broker) -----------------------------------------
Q_CLUSTER = {
    "name": "memories",
    "orm": "default",
    "workers": env.int("Q_WORKERS", default=2),
    "timeout": env.int("Q_TIMEOUT_SECONDS", default=300),
    # retry must exceed timeout, or a slow task is started twice.
    "retry": env.int("Q_TIMEOUT_SECONDS", default=300) + 60,
    "max_attempts": env.int("Q_MAX_ATTEMPTS", default=3),
    "catch_up": False,
    "sync": env.bool("Q_SYNC", default=False),
    "poll": 0.5,
    # A worker process is replaced after this many tasks (django-q2's default is 500), and the
    # new one loads the embedding model again (2-7 s of CPU): most embedding tasks take
    # milliseconds, as another task has already embedded their messages.
    "recycle": 10000,
    # A worker process whose peak RSS passes this is replaced once its current task is done
    # (django-q2's max_rss, in KiB; 0: no limit), so a leak or an outsized batch cannot grow it
    # without bound. The largest worker process peaked at 647 MiB in the speed benchmark.
    "max_rss": env.int("Q_MAX_RSS_MB", default=1536) * 1024 or None,
    # Successful tasks are not stored; failures always are (the admin lists them, with their
    # attempts). Most tasks are embedding tasks that find their messages already embedded,
    # and storing each success cost a write plus django-q2 reading every kept success to
    # prune them (43 ms per task with 1000 kept, 8 with 100): 9% of the worker's embedding
    # throughput in the speed benchmark, with 100 kept.
    "save_limit": -1,
}

STRAWBERRY_DJANGO = {
    "MUTATIONS_DEFAULT_HANDLE_ERRORS": True,
}

# --- Serving (manage.py serve / make run) ---------------------------------------------
HOST = env.str("HOST", default="127.0.0.1")
PORT = env.int("PORT", default=8000)
# Threads that run requests in the web process (cheroot's, memoryproject/wsgi.py; a2wsgi's
# under an ASGI server, memoryproject/asgi.py); each holds at most one database connection
# at a time, from the pool (DATABASE_POOL_MAX_SIZE).
WEB_THREADS = env.int("WEB_THREADS", default=10)
# Threads per web process that run a retrieval-only search's stage 1 (summaries, knowledge,
# diaries) on a connection of their own while the request's thread runs stage 2 (messages)
# (memories/search.py, _beside); 0: the request's thread runs both, one after the other.
SEARCH_STAGE_THREADS = max(env.int("SEARCH_STAGE_THREADS", default=2), 0)
# Under an ASGI server, requests through Django's ASGI handler (the admin, GraphiQL, GraphQL
# GETs) run in a thread of their own each, with a connection of their own: the default pool
# leaves room for this many of them at once besides the threads above.
_ASGI_HANDLER_CONNECTIONS = 4
if DATABASE_POOL:
    # Room for every request thread and stage thread at once (a request thread holds its
    # connection while it waits for a stage thread's), and for a few admin requests.
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": int(env.str("DATABASE_POOL_MAX_SIZE", default="") or 0)
        or WEB_THREADS + SEARCH_STAGE_THREADS + _ASGI_HANDLER_CONNECTIONS,
        "timeout": 30,
    }
