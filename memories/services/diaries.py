"""Diaries: one entry per end user per date."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from memories.models import Diary, EndUser
from memories.services.curation import curated_save

__all__ = ["diary_delete", "diary_upsert"]


@transaction.atomic
def diary_upsert(
    *, user_external_id: str, diary_date: date, content: str, metadata: dict[str, Any] | None = None
) -> Diary:
    """Create or replace the user's diary entry for ``diary_date``; re-embedded when the text changes.

    Raises:
        ValidationError: empty content or non-object metadata.
    """
    if not content.strip():
        raise ValidationError({"content": ["content must not be empty."]})
    if metadata is not None and not isinstance(metadata, dict):
        raise ValidationError({"metadata": ["metadata must be a JSON object."]})
    user, _ = EndUser.objects.get_or_create(external_id=user_external_id)
    diary = Diary.objects.select_for_update().filter(user=user, diary_date=diary_date).first()
    if diary is None:
        diary = Diary(user=user, diary_date=diary_date)
    diary.content = content
    if metadata is not None:
        diary.metadata = metadata
    return curated_save(row=diary)


def diary_delete(*, user_external_id: str, diary_date: date) -> bool:
    """Delete the user's entry for that date. Returns whether there was one."""
    deleted, _ = Diary.objects.filter(user__external_id=user_external_id, diary_date=diary_date).delete()
    return bool(deleted)
