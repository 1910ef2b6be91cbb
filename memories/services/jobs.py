"""Enqueueing background work (django-q2) once the current transaction commits."""

from __future__ import annotations

from django.db import transaction
from django_q.tasks import async_task

__all__ = ["job_enqueue"]


def job_enqueue(*, func: str, args: tuple[object, ...] = ()) -> None:
    """Queue ``func(*args)`` for the worker after the current transaction commits.

    Args:
        func: dotted path of a function in ``memories.tasks``.
        args: ids and plain values only (the payload is pickled), never model instances.
    """
    # robust: a failure to enqueue (or, in sync mode, of the task itself) is logged and never
    # turns the caller's committed write into an error; the periodic sweep retries the work.
    transaction.on_commit(lambda: async_task(func, *args), robust=True)
