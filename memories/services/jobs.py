"""Background work (django-q2): enqueueing it once the current transaction commits, and its record."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from datetime import datetime

from django.db import DatabaseError, connection, transaction
from django.db.models import F
from django_q.models import Failure, Task
from django_q.tasks import async_task

from memories.kinds import MemoryKind

logger = logging.getLogger(__name__)

__all__ = [
    "embedding_enqueue",
    "job_enqueue",
    "job_record_failure",
    "job_record_success",
    "jobs_forget",
    "jobs_requeue_failed",
]

# How often, and how far apart (doubling), a failed task's record is saved again when it was lost.
RECORD_ATTEMPTS, RECORD_PAUSE_SECONDS = 6, 1.0


def job_enqueue(*, func: str, args: tuple[object, ...] = ()) -> None:
    """Queue ``func(*args)`` for the worker after the current transaction commits.

    Args:
        func: dotted path of a function in ``memories.tasks``.
        args: ids and plain values only (the payload is pickled), never model instances.
    """
    # robust: a failure to enqueue (or, in sync mode, of the task itself) is logged and never
    # turns the caller's committed write into an error; the periodic sweep retries the work.
    transaction.on_commit(lambda: async_task(func, *args), robust=True)


def embedding_enqueue(*, kind: str, ids: Iterable[int]) -> None:
    """Queue the embedding of these rows of ``kind`` (a ``MemoryKind``) after the current transaction commits.

    Raises:
        ValueError: ``kind`` is no ``MemoryKind``.
    """
    # The kind goes into the pickled payload as a plain string, as stored tasks have it.
    job_enqueue(func="memories.tasks.embed_rows", args=(MemoryKind(kind).value, list(ids)))


def job_record_success(*, task_id: str, result: object, stopped: datetime | None) -> int:
    """Record that the task ``task_id``, stored as failed by an earlier attempt, has now succeeded.

    django-q2 stores no success (``save_limit`` -1), so without this a task that failed once and
    succeeded on its retry would stay listed among the failed tasks in the admin. Its row
    becomes a success, its attempts counted, its result the last one. Returns the rows changed
    (0: the task had not failed before).
    """
    return Task.objects.filter(id=task_id, success=False).update(
        success=True, result=result, stopped=stopped, attempt_count=F("attempt_count") + 1
    )


def job_record_failure(*, task: dict, pause: float = RECORD_PAUSE_SECONDS) -> bool:
    """Make sure the failed task ``task`` (django-q2's task package) is listed among the failed tasks.

    django-q2's monitor saves a task's result once; when the database is down at that moment (the
    outage that made the task fail, often), it logs "Could not save task result" and the failure
    is nowhere to be seen. This saves it again (django-q2's own ``save_task``), up to
    ``RECORD_ATTEMPTS`` times, ``pause`` seconds apart and doubling (about a minute in all), until
    the record is there.

    Returns:
        Whether the task is recorded.
    """
    from django_q.brokers import get_broker
    from django_q.monitor import save_task

    for attempt in range(RECORD_ATTEMPTS):
        try:
            if Task.objects.filter(id=task["id"]).exists():
                return True
            save_task(task, get_broker())  # logs its own failure, and raises none
            if Task.objects.filter(id=task["id"]).exists():
                return True
        except DatabaseError:
            connection.close()  # a connection lost with the database: the next attempt opens another
        time.sleep(pause * 2**attempt)
    logger.error("The failure of task %s (%s) could not be recorded: the database did not answer.", task["id"],
                 task.get("func"))  # fmt: skip
    return False


def jobs_requeue_failed(*, func: str, stopped_before: datetime, max_rounds: int) -> list[tuple[object, ...]]:
    """Queue again the failed tasks of ``func`` that stopped before ``stopped_before``.

    Each is queued as django-q2's admin "Resubmit" does (the failed row goes, a new task is
    queued) with one more ``sweep_round`` keyword argument; a task that failed in round
    ``max_rounds`` is left as it is, listed among the failed tasks in the admin with its error
    and round, for staff to see and resubmit.

    Args:
        func: dotted path of a function in ``memories.tasks`` taking a ``sweep_round`` keyword.
        stopped_before: leave newer failures to django-q2's own retries.
        max_rounds: how many times a task is queued again at most.

    Returns:
        The positional arguments of the tasks queued.
    """
    queued = []
    for failure in Failure.objects.filter(func=func, stopped__lt=stopped_before).order_by("stopped"):
        sweep_round = int((failure.kwargs or {}).get("sweep_round", 0)) + 1
        if sweep_round > max_rounds:
            continue
        args = tuple(failure.args or ())
        failure.delete()
        async_task(func, *args, sweep_round=sweep_round)
        queued.append(args)
    return queued


def jobs_forget(*, session_ids: Iterable[int] = (), row_ids: Mapping[str, Iterable[int]] | None = None) -> int:
    """Delete the records of failed tasks that worked on these sessions or rows.

    A failed task's record keeps its error and traceback, which may quote a user's words (a
    constraint's DETAIL, a model server's answer): they go with the words (``deleteHistory``,
    ``forgetUser``). Tasks take ids: ``summarize_session`` and ``extract_knowledge`` a session's,
    ``embed_rows`` a kind and row ids.

    Args:
        session_ids: session pks.
        row_ids: row pks by ``embed_rows`` kind (a ``MemoryKind``).

    Returns:
        How many records were deleted.
    """
    sessions = set(session_ids)
    rows = {kind: set(ids) for kind, ids in (row_ids or {}).items()}

    def names_them(func: str, args: tuple) -> bool:
        if func == "memories.tasks.embed_rows":
            return len(args) == 2 and not rows.get(args[0], set()).isdisjoint(args[1])
        return bool(args) and args[0] in sessions

    # Few failures are kept (a success replaces its failure), and their arguments are pickled: read in Python.
    failed = Failure.objects.filter(func__startswith="memories.tasks.").only("id", "func", "args")
    doomed = [task.pk for task in failed if names_them(task.func, tuple(task.args or ()))]
    return Task.objects.filter(pk__in=doomed).delete()[0]
