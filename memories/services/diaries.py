"""Diaries: one entry per end user per date."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from memories.models import Diary, EndUser
from memories.services.curation import curated_save
from memories.services.validation import field_errors, raise_if, user_id_check, user_id_errors

__all__ = ["diary_delete", "diary_upsert"]


@transaction.atomic
def diary_upsert(
    *, user_external_id: str, diary_date: date, content: str, metadata: dict[str, Any] | None = None
) -> Diary:
    """Create or replace the user's diary entry for ``diary_date``; re-embedded when the text changes.

    Safe to call concurrently for the same new date: when another call inserts that day's entry
    first, this one replaces it (the last call's text wins) instead of failing.

    Raises:
        ValidationError: what ``Diary``'s and ``EndUser``'s fields refuse, keyed ``user_external_id``,
            ``content``, ``metadata``: empty content or over ``MAX_DIARY_CHARS``, metadata that is not
            an object, over ``MAX_METADATA_BYTES`` as JSON or holds NaN or Infinity, an empty or
            too long user id, a NUL character or lone surrogate in any of them.
    """
    # Checked before the user is created; the row is ``full_clean``-ed again as it is saved.
    raise_if(
        [
            ("user_external_id", user_id_errors(user_external_id)),
            ("content", field_errors(Diary, "content", content)),
            ("metadata", field_errors(Diary, "metadata", metadata) if metadata is not None else []),
        ]
    )
    user, _ = EndUser.objects.get_or_create(external_id=user_external_id)
    diary = _locked(user=user, diary_date=diary_date)
    if diary is None:
        try:
            # In a savepoint: if a concurrent call inserted the day's entry since the lookup
            # above (the lock there had no row to take), only this insert is undone. It fails
            # on the unique constraint, or already in full_clean when that call has committed.
            with transaction.atomic():
                return curated_save(row=_filled(Diary(user=user, diary_date=diary_date), content, metadata))
        except (IntegrityError, ValidationError):
            diary = _locked(user=user, diary_date=diary_date)
            if diary is None:  # not a concurrent insert: a real error
                raise
    return curated_save(row=_filled(diary, content, metadata))


def _locked(*, user: EndUser, diary_date: date) -> Diary | None:
    """The user's entry for that date, locked until the transaction ends; ``None`` when there is none."""
    return Diary.objects.select_for_update().filter(user=user, diary_date=diary_date).first()


def _filled(diary: Diary, content: str, metadata: dict[str, Any] | None) -> Diary:
    """``diary`` with the new content, and the new metadata unless ``None`` (kept)."""
    diary.content = content
    if metadata is not None:
        diary.metadata = metadata
    return diary


def diary_delete(*, user_external_id: str, diary_date: date) -> bool:
    """Delete the user's entry for that date. Returns whether there was one.

    Raises:
        ValidationError: a user id over its column's length or with a NUL character.
    """
    user_id_check(user_external_id=user_external_id)
    deleted, _ = Diary.objects.filter(user__external_id=user_external_id, diary_date=diary_date).delete()
    return bool(deleted)


def diaries_delete_all(*, user_external_id: str) -> int:
    """Delete every diary entry of a user, each as ``diary_delete`` does. Returns how many.

    Raises:
        ValidationError: a user id over its column's length or with a NUL character.
    """
    user_id_check(user_external_id=user_external_id)
    dates = list(Diary.objects.filter(user__external_id=user_external_id).values_list("diary_date", flat=True))
    for diary_date in dates:
        diary_delete(user_external_id=user_external_id, diary_date=diary_date)
    return len(dates)
