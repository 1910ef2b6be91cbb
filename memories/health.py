"""Health checks for load balancers and orchestrators: ``/healthz`` (alive) and ``/readyz`` (able to serve).

``/readyz`` answers within about a second, HTTP 503 only when this process cannot serve: the
database does not answer (or a restore holds its tables), maintenance is on (``manage.py
maintenance``: then it checks nothing else), a migration is not applied, a statement
like a search's fails on this process's connections (after replacing them once: a schema changed
under it, ``memories.database``), or its embedding model cannot embed a text (it failed to load).
The worker (no worker process connected to the database, or its sweep overdue), the embedding
backlog and a remote embedding backend that does not answer (``ModelBackendError``) are reported in
the body but never fail it: they affect every web process alike, which still serve history,
addMessages and search (new messages wait for their vector; with the backend down a search answers
``MODEL_BACKEND_ERROR``), so they must not take every web process out of rotation. Alert on the
metrics instead (``memory_worker_sweep_overdue_seconds``, ``memory_embedding_backlog_messages``,
``memory_summary_lag_seconds``; docs/operations.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from django_q.models import Schedule
from pgvector.psycopg import register_vector

from memories.backlog import backlog_messages_count
from memories.database import first_line, retry_after_schema_change
from memories.maintenance import maintenance_active
from memories.services.schedules import SWEEP_NAME
from memoryproject import WORKER_APPLICATION_NAME
from memoryproject.postgresql.base import patience

__all__ = ["CHECK_SECONDS", "REQUIRED", "healthz", "readiness", "readyz", "worker_sweep_overdue_seconds"]

logger = logging.getLogger(__name__)

# The longest a check waits for a connection, or for one statement (a restore's locks hold them up).
CHECK_SECONDS = 0.8


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """The process is up and answers HTTP: ``{"status": "ok"}``."""
    return JsonResponse({"status": "ok"})


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """``readiness()`` as JSON; HTTP 503 when a check this process needs to serve fails."""
    with patience(CHECK_SECONDS):  # a request waits DATABASE_POOL_TIMEOUT_SECONDS for a connection
        body = readiness()
    return JsonResponse(body, status=200 if body["status"] == "ready" else 503)


# Checks whose failure means this process cannot serve requests; the others are informational.
REQUIRED = ("database", "maintenance", "migrations", "search", "embedding_backend")


def readiness() -> dict[str, object]:
    """Whether this process can serve, and why not.

    Returns:
        ``{"status": "ready" | "not ready", "failed": [...], "degraded": [...], "checks": {...}}``:
        each check by name as ``{"ok": bool, ...details}``; ``failed`` names the failing checks of
        ``REQUIRED`` (any makes the status "not ready"), ``degraded`` the failing informational ones
        (``worker``: none connected, or its heartbeat is stale), and ``embedding_backend`` when only its
        remote server failed.
        Never raises: a failing check says why.
    """
    checks: dict[str, dict[str, object]] = {"database": _checked(_database)}
    if checks["database"]["ok"]:
        checks["maintenance"] = _checked(_maintenance)
        if not checks["maintenance"]["ok"]:  # a restore may hold every table: touch none
            return {"status": "not ready", "failed": ["maintenance"], "degraded": [], "checks": checks}
        checks["migrations"] = _checked(_migrations)
    if checks.get("migrations", {}).get("ok"):  # the other checks read tables a migration makes
        checks["search"] = _checked(retry_after_schema_change(_search))
        checks["worker"] = _checked(_worker)
        checks["embedding_backlog"] = _checked(lambda: {"ok": True, "messages": backlog_messages_count()})
    checks["embedding_backend"] = _embedding_backend()
    failing = [name for name, check in checks.items() if not check["ok"]]
    failed = [name for name in failing if name in REQUIRED and not checks[name].get("remote")]
    degraded = [name for name in failing if name not in failed]
    return {"status": "not ready" if failed else "ready", "failed": failed, "degraded": degraded, "checks": checks}


def _checked(check: Callable[[], dict[str, object]]) -> dict[str, object]:
    """``check()``, or why the database failed it."""
    try:
        return check()
    except DatabaseError as exc:
        return {"ok": False, "error": first_line(exc)}


@contextmanager
def _time_limited() -> Iterator[None]:
    """A transaction whose statements give up after ``CHECK_SECONDS`` (a lock held by a restore)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL statement_timeout = {round(CHECK_SECONDS * 1000)}")
        yield


def _database() -> dict[str, object]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"ok": True}


def _maintenance() -> dict[str, object]:
    with _time_limited():
        on = maintenance_active()
    return {"ok": not on, **({"error": "maintenance is on (manage.py maintenance)"} if on else {})}


def _migrations() -> dict[str, object]:
    with _time_limited():
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return {"ok": not pending, "pending": [f"{m.app_label}.{m.name}" for m, _ in pending]}


def _search() -> dict[str, object]:
    """A statement as a search sends them: a vector parameter in binary, a vector column returned."""
    connection.ensure_connection()
    if connection.connection.adapters.types.get("vector") is None:  # as the search registers it
        with connection.wrap_database_errors:
            register_vector(connection.connection)
    with _time_limited(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT embedding FROM memories_message WHERE %s IS NOT NULL LIMIT 1", [np.zeros(1, dtype=np.float32)]
        )
        cursor.fetchall()
    return {"ok": True}


def worker_sweep_overdue_seconds() -> int | None:
    """The worker's heartbeat: seconds since its sweep schedule was due (0 while it is not yet due).

    The worker moves the schedule's ``next_run`` forward each time it runs the sweep, every
    ``SUMMARY_SWEEP_MINUTES``; a worker that stopped leaves it in the past.

    Returns:
        The seconds, or ``None`` when the schedule is missing (``manage.py migrate`` makes it).
    """
    next_run = Schedule.objects.filter(name=SWEEP_NAME).values_list("next_run", flat=True).first()
    return None if next_run is None else max(0, round((timezone.now() - next_run).total_seconds()))


def _worker() -> dict[str, object]:
    """A worker is connected to this database now, and its sweep ran on time."""
    with _time_limited():
        overdue = worker_sweep_overdue_seconds()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = %s",
                [WORKER_APPLICATION_NAME],
            )
            (connected,) = cursor.fetchone()
    if overdue is None:
        return {"ok": False, "error": "the sweep schedule is missing (run `manage.py migrate`)"}
    allowed = settings.SUMMARY_SWEEP_MINUTES * 60 + settings.WORKER_HEARTBEAT_GRACE_SECONDS
    return {"ok": overdue <= allowed and connected > 0, "sweep_overdue_seconds": overdue, "connections": connected}


def _embedding_backend() -> dict[str, object]:
    from memories.llm import ModelBackendError, get_embedder

    try:
        embedder = get_embedder()
        embedder.embed(["ready"])
    except ModelBackendError as exc:  # a remote server that did not answer: every web process alike
        logger.warning("readiness: embedding backend failed: %s", exc)
        return {"ok": False, "remote": True, "error": f"{type(exc).__name__}: {exc}"}
    except Exception as exc:  # any other failure (a model that cannot load) means not ready
        logger.warning("readiness: embedding backend failed: %s", exc)
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return {"ok": True, "model": embedder.model_name}
