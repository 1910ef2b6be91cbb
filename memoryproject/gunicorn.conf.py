"""gunicorn's configuration for the web process: ``gunicorn -c memoryproject/gunicorn.conf.py``.

What the ``web`` line of the ``Procfile`` runs: one process (``WEB_CONCURRENCY`` processes if set,
each loading its own embedding model) of gunicorn's ``asgi`` worker, serving Django through
``memoryproject.asgi`` on ``HOST``:``PORT``. Its event loop reads every request's body before a
thread is taken for it (so a slow client holds no thread), and at most ``WEB_THREADS`` requests
run in Django at once. The master process starts (or joins) the embedded PostgreSQL before any
worker starts, and replaces a worker that dies, or that grew past ``WEB_MAX_RSS_MB`` (it stops
taking requests and finishes those it has first). Each worker's statements are cancelled after
``REQUEST_STATEMENT_TIMEOUT_SECONDS``.
Reference: https://docs.gunicorn.org/en/stable/settings.html
"""

import os

from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")

wsgi_app = "memoryproject.asgi:application"
bind = f"{settings.HOST}:{settings.PORT}"
worker_class = "asgi"
# Django answers no ASGI lifespan events (gunicorn would log that it does not, at each start).
asgi_lifespan = "off"
workers = int(os.environ.get("WEB_CONCURRENCY", "1"))
# Errors and start/stop lines on stderr; no access log (the service logs through Django's LOGGING).
errorlog = "-"
loglevel = settings.LOGGING["root"]["level"].lower()
proc_name = "memories-web"
# gunicorn's control socket has one path per user: two services (or test runs) would share it.
control_socket_disable = True


def on_starting(server) -> None:  # gunicorn's Arbiter
    """In the master, before the workers are forked: start (or join) the embedded PostgreSQL, and
    export the local embedding model once (a worker must boot within gunicorn's ``timeout``)."""
    from memories.llm import get_embedder
    from memories.llm.local import LocalEmbedder
    from memoryproject.embedded_db import ensure_embedded_database

    ensure_embedded_database()
    embedder = get_embedder()
    if isinstance(embedder, LocalEmbedder):
        embedder.prepare()


def post_fork(server, worker) -> None:  # gunicorn's Arbiter and Worker
    """In each worker, before it connects to the database: its statements give up after
    ``REQUEST_STATEMENT_TIMEOUT_SECONDS``."""
    from memories.database import statement_timeout_for_requests

    statement_timeout_for_requests()


def post_request(worker, req, environ, resp) -> None:  # gunicorn's Worker
    """After each request: a worker whose memory passed ``WEB_MAX_RSS_MB`` stops taking requests,
    finishes the ones it has and exits; the master starts a new one in its place."""
    import psutil

    rss_mb = psutil.Process().memory_info().rss / 2**20
    if settings.WEB_MAX_RSS_MB and rss_mb > settings.WEB_MAX_RSS_MB and worker.alive:
        worker.log.warning(
            "Web worker %s uses %.0f MiB, over WEB_MAX_RSS_MB (%s): replacing it.",
            worker.pid,
            rss_mb,
            settings.WEB_MAX_RSS_MB,
        )
        worker.alive = False


def post_worker_init(worker) -> None:  # gunicorn's Worker
    """Load the local embedding model before the worker takes requests, not during the first search."""
    from memories.llm import get_embedder
    from memories.llm.local import LocalEmbedder

    embedder = get_embedder()
    if isinstance(embedder, LocalEmbedder):
        embedder.embed(["warm up"])
