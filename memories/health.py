"""Health checks for load balancers and orchestrators: ``/healthz`` (alive) and ``/readyz`` (able to serve).

``/readyz`` answers HTTP 200 when every check passes and 503 otherwise, with each check's result
as JSON: the database answers, every migration is applied, the embedding backend embeds a text,
the worker ran the sweep schedule on time (its heartbeat), and how many messages wait for a vector.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from django_q.models import Schedule

from memories.backlog import backlog_get
from memories.services.schedules import SWEEP_NAME

__all__ = ["healthz", "readiness", "readyz"]

logger = logging.getLogger(__name__)


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """The process is up and answers HTTP: ``{"status": "ok"}``."""
    return JsonResponse({"status": "ok"})


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """``readiness()`` as JSON; HTTP 503 when any check fails."""
    checks = readiness()
    ready = all(check["ok"] for check in checks.values())
    return JsonResponse({"status": "ready" if ready else "not ready", "checks": checks}, status=200 if ready else 503)


def readiness() -> dict[str, dict[str, object]]:
    """Each check by name: ``{"ok": bool, ...details}``. Never raises: a failing check says why."""
    checks = {"database": _database()}
    if checks["database"]["ok"]:
        checks["migrations"] = _migrations()
        checks["worker"] = _worker()
        checks["embedding_backlog"] = {"ok": True, "messages": backlog_get().messages_waiting_for_vector}
    checks["embedding_backend"] = _embedding_backend()
    return checks


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


def _worker() -> dict[str, object]:
    """The worker's heartbeat: the sweep schedule it runs every ``SUMMARY_SWEEP_MINUTES`` is not overdue."""
    schedule = Schedule.objects.filter(name=SWEEP_NAME).values_list("next_run", flat=True).first()
    if schedule is None:
        return {"ok": False, "error": "the sweep schedule is missing (run `manage.py migrate`)"}
    late = timezone.now() - schedule
    allowed = timedelta(minutes=settings.SUMMARY_SWEEP_MINUTES, seconds=settings.WORKER_HEARTBEAT_GRACE_SECONDS)
    return {"ok": late <= allowed, "sweep_overdue_seconds": max(0, round(late.total_seconds()))}


def _embedding_backend() -> dict[str, object]:
    from memories.llm import get_embedder

    try:
        embedder = get_embedder()
        embedder.embed(["ready"])
    except Exception as exc:  # noqa: BLE001 - any failure (ModelBackendError, a missing model) means not ready
        logger.warning("readiness: embedding backend failed: %s", exc)
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return {"ok": True, "model": embedder.model_name}
