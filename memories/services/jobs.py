"""Background work (django-q2): enqueueing it once the current transaction commits, and its record."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import F
from django_q.models import Task
from django_q.tasks import async_task

__all__ = ["job_enqueue", "job_record_success"]


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
