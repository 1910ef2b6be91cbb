"""django-q2 entry points. Thin: they take ids and call services.

A task that raises is retried by django-q2 up to ``Q_CLUSTER["max_attempts"]`` times; the
messages are already stored by then, and the sweep picks up whatever is still missing: stale
summaries, rows without a vector, and failed fact extractions (``EXTRACTION_SWEEP_ROUNDS`` more
times, after which the failed task stays listed in the admin's "Failed tasks"). A task that fails
on a schema changed under the worker (a restore, a migration) runs again at once on new
connections (``retry_after_schema_change``): every task is safe to run twice. While maintenance
is on (``manage.py maintenance``, a restore) a task waits for it to end before it starts
(``guarded_task``); a task on a user forgotten meanwhile ends quietly.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django_q.tasks import async_task

from memories.database import retry_after_schema_change
from memories.kinds import KINDS, MemoryKind
from memories.maintenance import guarded_task
from memories.selectors import session_newest_message_id
from memories.services.embeddings import embeddings_fill, embeddings_pending
from memories.services.jobs import job_record_failure, job_record_success, jobs_requeue_failed
from memories.services.knowledge import knowledge_extract
from memories.services.progress import session_facts_read_mark
from memories.services.reading import messages_embed_claimed
from memories.services.summaries import summaries_enqueue_stale, summary_create

__all__ = [
    "embed_rows",
    "extract_knowledge",
    "record_failure",
    "record_success_after_failure",
    "summarize_session",
    "sweep",
]

_SWEEP_EMBED_LIMIT = 5000
# A session's failed fact extraction is queued again by at most this many sweeps.
EXTRACTION_SWEEP_ROUNDS = 3


@guarded_task
@retry_after_schema_change
def embed_rows(kind: str, ids: list[int]) -> int:
    """Embed the rows of ``kind`` with these ids that still need it. Returns how many were embedded.

    Messages are embedded in full model batches, topped up with other new messages, and
    never twice at once by concurrent workers (``messages_embed_claimed``); other kinds with
    ``embeddings_fill``. A row with a vector of another model (a configuration change) is
    embedded again as well.
    """
    if kind == MemoryKind.MESSAGE:
        return messages_embed_claimed(ids=ids)
    return embeddings_fill(kind=kind, ids=ids)


@guarded_task
@retry_after_schema_change
def summarize_session(session_id: int, force: bool = False) -> int | None:
    """Summarise one session if its summary is missing or behind (or ``force``). Returns the summary id."""
    summary = summary_create(session_id=session_id, force=force)
    return summary.pk if summary else None


@guarded_task
@retry_after_schema_change
def extract_knowledge(session_id: int, sweep_round: int = 0) -> int:
    """Raise facts from a just-summarised session into knowledge (candidates). Returns how many.

    ``sweep_round``: how many sweeps have queued this again after it failed (0: first queued
    by the summary); kept in the task so the sweep knows when to stop.
    """
    # Messages arriving while it reads may be left out: they wait for the next summary's extraction.
    through = session_newest_message_id(session_id=session_id)
    created = knowledge_extract(session_id=session_id)
    session_facts_read_mark(session_id=session_id, through_message_id=through)
    return len(created)


@guarded_task
@retry_after_schema_change
def sweep() -> dict[str, int]:
    """Periodic: queue summaries of idle, stale sessions, embeddings a failed task left out, and
    fact extractions that failed (at most ``EXTRACTION_SWEEP_ROUNDS`` times each)."""
    queued = {"summaries": len(summaries_enqueue_stale())}
    # Rows younger than a task's retry time may still have their own task queued.
    settled = timezone.now() - timedelta(seconds=settings.Q_CLUSTER["retry"])
    queued["extractions"] = len(
        jobs_requeue_failed(
            func="memories.tasks.extract_knowledge", stopped_before=settled, max_rounds=EXTRACTION_SWEEP_ROUNDS
        )
    )
    for kind, spec in KINDS.items():
        pending = embeddings_pending(kind=kind).filter(**{f"{spec.changed_at}__lt": settled})
        ids = list(pending.order_by("pk").values_list("pk", flat=True)[:_SWEEP_EMBED_LIMIT])
        if ids:
            async_task("memories.tasks.embed_rows", kind.value, ids)
        queued[kind.value] = len(ids)
    return queued


def record_success_after_failure(sender: object, task: dict, **kwargs: object) -> None:
    """django-q2's ``post_execute`` receiver (connected in ``MemoriesConfig.ready``): a task
    that succeeds after a failed attempt is recorded as a success (``job_record_success``)."""
    if task.get("success"):
        job_record_success(task_id=task["id"], result=task.get("result"), stopped=task.get("stopped"))


def record_failure(sender: object, task: dict, **kwargs: object) -> None:
    """django-q2's ``post_execute`` receiver (connected in ``MemoriesConfig.ready``): a failed task is
    always listed among the failed tasks, even when django-q2 could not save it (``job_record_failure``)."""
    if not task.get("success"):
        job_record_failure(task=task)
