"""Background work (django-q2): enqueueing it once the current transaction commits, and its record."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import F
from django_q.models import Failure, Task
from django_q.tasks import async_task

__all__ = ["job_enqueue", "job_record_success", "jobs_requeue_failed"]


def job_enqueue(*, func: str, args: tuple[object, ...] = ()) -> None:
    """Queue ``func(*args)`` for the worker after the current transaction commits.

    Args:
        func: dotted path of a function in ``memories.tasks``.
        args: ids and plain values only (the payload is pickled), never model instances.
    """
    # robust: a failure to enqueue (or, in sync mode, of the task itself) is logged and never
    # turns the caller's committed write into an error; the periodic sweep retries the work.
    transaction.on_commit(lambda: async_task(func, *args), robust=True)


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
