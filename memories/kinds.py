"""The kinds of memory: raw messages and the memory derived from them (summaries, knowledge, diaries).

One registry. ``MemoryKind`` names a kind: its value is what a search ranking, an ``embed_rows``
task and a ``Hit`` carry, and its members are the API's ``HitKind`` (``memories.graphql.enums``).
``KINDS`` holds what differs between kinds, in the order searches rank ties and commands walk
them: the model, the search scope's condition, whether rows belong to a session, whether they
change after they are stored, and the kind's name in ``manage.py reembed --kind``. Every kind is
embedded (``embedding``, ``embedding_model``, ``embedding_text``) and searched.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models

from memories.models import Diary, Knowledge, Message, Summary

__all__ = ["KINDS", "KindSpec", "MemoryKind", "kind_of"]


class MemoryKind(models.TextChoices):
    MESSAGE = "message"
    SUMMARY = "summary"
    KNOWLEDGE = "knowledge"
    DIARY = "diary"


@dataclass(frozen=True)
class KindSpec:
    """What one kind of memory is.

    ``scope_condition``: the ``memories.search.scope.RowScope`` method giving the SQL condition on the
    kind's rows a search may read. ``in_session``: rows belong to one session (a ``session_id``
    column). ``editable``: rows change after they are stored (they carry ``updated_at``; messages
    never change). ``plural``: the kind's name in ``manage.py reembed --kind``.
    """

    model: type[models.Model]
    scope_condition: str
    in_session: bool
    editable: bool
    plural: str

    @property
    def changed_at(self) -> str:
        """The column holding when a row was stored or last changed."""
        return "updated_at" if self.editable else "received_at"


KINDS: dict[MemoryKind, KindSpec] = {
    MemoryKind.MESSAGE: KindSpec(
        model=Message, scope_condition="messages", in_session=True, editable=False, plural="messages"
    ),
    MemoryKind.SUMMARY: KindSpec(
        model=Summary, scope_condition="summaries", in_session=True, editable=True, plural="summaries"
    ),
    MemoryKind.KNOWLEDGE: KindSpec(
        model=Knowledge, scope_condition="knowledge", in_session=False, editable=True, plural="knowledge"
    ),
    MemoryKind.DIARY: KindSpec(
        model=Diary, scope_condition="diaries", in_session=False, editable=True, plural="diaries"
    ),
}


def kind_of(model: type[models.Model]) -> MemoryKind:
    """The kind whose rows ``model`` stores (a proxy model, such as the admin's review queue, is its table's kind).

    Raises:
        KeyError: ``model`` holds no kind of memory.
    """
    return _BY_MODEL[model._meta.concrete_model]


_BY_MODEL = {spec.model: kind for kind, spec in KINDS.items()}
