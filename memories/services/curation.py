"""Saving curated rows (knowledge, diaries) so their vectors never describe old text."""

from __future__ import annotations

from django.db import transaction

from memories.models import Diary, Knowledge
from memories.services.jobs import job_enqueue

__all__ = ["curated_save"]

_KINDS: dict[type, str] = {Knowledge: "knowledge", Diary: "diary"}


@transaction.atomic
def curated_save(*, row: Knowledge | Diary) -> Knowledge | Diary:
    """Validate and save a new or edited knowledge or diary row.

    When what is embedded (``embedding_text``) changed, the old vector is dropped in the same
    transaction and a new embedding is queued for the worker; until then the row is not
    ranked by vector search.

    Raises:
        ValidationError: the row is invalid (``full_clean``).
    """
    model = type(row)
    previous = model.objects.filter(pk=row.pk).first() if row.pk else None
    changed = previous is None or previous.embedding_text != row.embedding_text
    if changed:
        row.embedding = None
        row.embedding_model = ""
    row.full_clean()
    row.save()
    if changed:
        job_enqueue(func="memories.tasks.embed_rows", args=(_KINDS[model], [row.pk]))
    return row
