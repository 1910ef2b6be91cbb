"""gunicorn's configuration for the web process: ``gunicorn -c memoryproject/gunicorn.conf.py``.

What the ``web`` line of the ``Procfile`` runs. One process of ``WEB_THREADS`` threads by
default (gunicorn's ``gthread`` worker; ``WEB_CONCURRENCY`` processes if set, each loading
its own embedding model), on ``HOST``:``PORT``. The master process starts (or joins) the
embedded PostgreSQL before any worker starts, and restarts a worker process that dies.
Reference: https://docs.gunicorn.org/en/stable/settings.html
"""

import os

from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryproject.settings")

wsgi_app = "memoryproject.wsgi:application"
bind = f"{settings.HOST}:{settings.PORT}"
worker_class = "gthread"
threads = settings.WEB_THREADS
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


def post_worker_init(worker) -> None:  # gunicorn's Worker
    """Load the local embedding model before the worker takes requests, not during the first search."""
    from memories.llm import get_embedder
    from memories.llm.local import LocalEmbedder

    embedder = get_embedder()
    if isinstance(embedder, LocalEmbedder):
        embedder.embed(["warm up"])
