"""The periodic work django-q2 runs."""

from __future__ import annotations

from django.conf import settings
from django_q.models import Schedule

__all__ = ["schedules_ensure"]

SWEEP_NAME = "memories-sweep"


def schedules_ensure() -> Schedule:
    """Create or update the sweep schedule (every ``SUMMARY_SWEEP_MINUTES`` minutes). Idempotent.

    The sweep summarises idle sessions, embeds rows a failed task left without a vector and
    queues failed fact extractions again (``memories.tasks.sweep``).
    """
    schedule, _ = Schedule.objects.update_or_create(
        name=SWEEP_NAME,
        defaults={
            "func": "memories.tasks.sweep",
            "schedule_type": Schedule.MINUTES,
            "minutes": settings.SUMMARY_SWEEP_MINUTES,
            "repeats": -1,
        },
    )
    return schedule
