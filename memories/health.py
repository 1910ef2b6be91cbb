"""Health checks for load balancers and orchestrators: ``/healthz`` (alive) and ``/readyz`` (able to serve).

``/readyz`` answers HTTP 503 only when this process cannot serve: the database does not answer, a
migration is not applied, or its embedding model cannot embed a text (it failed to load). The worker's
heartbeat, the embedding backlog and a remote embedding backend that does not answer
(``ModelBackendError``) are reported in the body but never fail it: they affect every web process
alike, which still serve history and addMessages (new messages wait for their vector; a search
answers ``MODEL_BACKEND_ERROR``), so they must not take every web process out of rotation. Alert on the metrics instead
(``memory_worker_sweep_overdue_seconds``, ``memory_embedding_backlog_messages``,
``memory_summary_lag_seconds``; docs/operations.md).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from django_q.models import Schedule

from memories.backlog import backlog_messages_count
from memories.services.schedules import SWEEP_NAME

__all__ = ["REQUIRED", "healthz", "readiness", "readyz", "worker_sweep_overdue_seconds"]

logger = logging.getLogger(__name__)


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """The process is up and answers HTTP: ``{"status": "ok"}``."""
    return JsonResponse({"status": "ok"})


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """``readiness()`` as JSON; HTTP 503 when a check this process needs to serve fails."""
    body = readiness()
    return JsonResponse(body, status=200 if body["status"] == "ready" else 503)


# Checks whose failure means this process cannot serve requests; the others are informational.
REQUIRED = ("database", "migrations", "embedding_backend")


def readiness() -> dict[str, object]:
    """Whether this process can serve, and why not.

    Returns:
        ``{"status": "ready" | "not ready", "failed": [...], "degraded": [...], "checks": {...}}``:
        each check by name as ``{"ok": bool, ...details}``; ``failed`` names the failing checks of
        ``REQUIRED`` (any makes the status "not ready"), ``degraded`` the failing informational ones
        (``worker``: its heartbeat is stale), and ``embedding_backend`` when only its remote server failed.
        Never raises: a failing check says why.
    """
    checks: dict[str, dict[str, object]] = {"database": _database()}
    if checks["database"]["ok"]:
        checks["migrations"] = _migrations()
    if checks.get("migrations", {}).get("ok"):  # the informational checks read tables a migration makes
        checks["worker"] = _worker()
        checks["embedding_backlog"] = {"ok": True, "messages": backlog_messages_count()}
    checks["embedding_backend"] = _embedding_backend()
    failing = [name for name, check in checks.items() if not check["ok"]]
    failed = [name for name in failing if name in REQUIRED and not checks[name].get("remote")]
    degraded = [name for name in failing if name not in failed]
    return {"status": "not ready" if failed else "ready", "failed": failed, "degraded": degraded, "checks": checks}


def _database() -> dict[str, object]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as exc:
        return {"ok": False, "error": str(exc).splitlines()[0]}
    return {"ok": True}


def _migrations() -> dict[str, object]:
    executor = MigrationExecutor(connection)
    pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return {"ok": not pending, "pending": [f"{m.app_label}.{m.name}" for m, _ in pending]}


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
    overdue = worker_sweep_overdue_seconds()
    if overdue is None:
        return {"ok": False, "error": "the sweep schedule is missing (run `manage.py migrate`)"}
    allowed = settings.SUMMARY_SWEEP_MINUTES * 60 + settings.WORKER_HEARTBEAT_GRACE_SECONDS
    return {"ok": overdue <= allowed, "sweep_overdue_seconds": overdue}


def _embedding_backend() -> dict[str, object]:
    from memories.llm import ModelBackendError, get_embedder

    try:
        embedder = get_embedder()
        embedder.embed(["ready"])
    except ModelBackendError as exc:  # a remote server that did not answer: every web process alike
        logger.warning("readiness: embedding backend failed: %s", exc)
        return {"ok": False, "remote": True, "error": f"{type(exc).__name__}: {exc}"}
    except Exception as exc:  # noqa: BLE001 - any other failure (a model that cannot load) means not ready
        logger.warning("readiness: embedding backend failed: %s", exc)
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return {"ok": True, "model": embedder.model_name}
