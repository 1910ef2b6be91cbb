"""Curated knowledge: facts owned by an end user, or shared (system-wide, no owner)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from memories.models import EndUser, Knowledge
from memories.services.curation import curated_save

__all__ = ["knowledge_add", "knowledge_delete", "knowledge_update"]


def _owned(*, knowledge_id: int, user_external_id: str | None) -> Knowledge:
    """The entry with this id owned by this user (``None``: a shared entry).

    Raises:
        Knowledge.DoesNotExist: no such entry for that owner.
    """
    queryset = Knowledge.objects.select_for_update()
    if user_external_id is None:
        return queryset.get(pk=knowledge_id, user__isnull=True)
    return queryset.get(pk=knowledge_id, user__external_id=user_external_id)


def _clean_content(content: str) -> str:
    if not content.strip():
        raise ValidationError({"content": ["content must not be empty."]})
    return content.strip()


@transaction.atomic
def knowledge_add(*, user_external_id: str | None, content: str) -> Knowledge:
    """Add a fact for an end user, or a shared one (``user_external_id=None``); embedded by the worker.

    Raises:
        ValidationError: empty content.
    """
    content = _clean_content(content)
    user = EndUser.objects.get_or_create(external_id=user_external_id)[0] if user_external_id else None
    return curated_save(row=Knowledge(user=user, content=content))


@transaction.atomic
def knowledge_update(*, knowledge_id: int, user_external_id: str | None, content: str) -> Knowledge:
    """Change a fact's text; its old vector is dropped at once and a new one made by the worker.

    Raises:
        ValidationError: empty content.
        Knowledge.DoesNotExist: no such entry for that owner.
    """
    content = _clean_content(content)
    knowledge = _owned(knowledge_id=knowledge_id, user_external_id=user_external_id)
    if knowledge.content == content:
        return knowledge
    knowledge.content = content
    return curated_save(row=knowledge)


@transaction.atomic
def knowledge_delete(*, knowledge_id: int, user_external_id: str | None) -> int:
    """Delete a fact. Returns its id.

    Raises:
        Knowledge.DoesNotExist: no such entry for that owner.
    """
    knowledge = _owned(knowledge_id=knowledge_id, user_external_id=user_external_id)
    knowledge.delete()
    return knowledge_id
