"""Filling vector columns with the configured embedding model."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from django.conf import settings
from django.db import models, transaction

from memories.kinds import KINDS, MemoryKind
from memories.llm import Embedder, ModelBackendError, get_embedder
from memories.llm.acts import dialogue_act
from memories.llm.person import first_person
from memories.llm.text import split_sentences
from memories.models import Knowledge, Message, Role

__all__ = [
    "MAX_SENTENCE_PARTS",
    "embedding_parts",
    "embeddings_compute",
    "embeddings_fill",
    "embeddings_pending",
    "messages_embed_claimed",
    "user_subjects",
]

# The most speaker names of one user taken as the subject of their facts.
_MAX_SPEAKER_NAMES = 5
# The most sentence texts one message adds to what the model embeds for it.
MAX_SENTENCE_PARTS = 16
# Content longer than this is cut into runs of words rather than split into sentences (the
# sentence splitter's time grows faster than the text).
_MAX_SPLIT_CHARS = 4000


def user_subjects(*, user_pk: int) -> tuple[str, ...]:
    """The words a fact about this end user opens with: "The user", "User", and the speaker names their
    own messages carry (``metadata["speaker"]``)."""
    names = (
        Message.objects.filter(user_id=user_pk, role=Role.USER, metadata__has_key="speaker")
        .values_list("metadata__speaker", flat=True)
        .distinct()[:_MAX_SPEAKER_NAMES]
    )
    return ("The user", "User", *(str(name) for name in names if isinstance(name, str)))


def embedding_parts(row: models.Model, *, subjects: Sequence[str] | None = None) -> list[str]:
    """The texts whose vectors are averaged into ``row``'s vector, without repeats.

    A message: its whole ``embedding_text``, then each sentence of its content and its photo
    caption, each as said by its speaker when the client named one (``"Mel: I play the clarinet."``,
    ``"Mel shared a photo: a cat"``); a one-sentence message without a photo is its whole text alone. A message of more
    than ``MAX_SENTENCE_PARTS`` sentences has at most that many runs of consecutive sentences
    instead, and one of more than 4,000 characters that many runs of consecutive words. A fact of an
    end user: its text in the first person, as the user would ask about it (``first_person``; its
    ``subjects`` default to ``user_subjects``). Other kinds: their ``embedding_text``.
    """
    if isinstance(row, Knowledge) and row.user_id is not None:
        return [first_person(row.embedding_text, subjects=subjects or user_subjects(user_pk=row.user_id))]
    if not isinstance(row, Message):
        return [row.embedding_text]
    # At most MAX_MESSAGE_CHARS of it, whatever is stored (a row written before the limit, or around the API).
    content = row.content[: settings.MAX_MESSAGE_CHARS].strip()
    if len(content) > _MAX_SPLIT_CHARS:
        sentences = _runs(content.split(), MAX_SENTENCE_PARTS)
    else:
        sentences = split_sentences(content)
        if len(sentences) > MAX_SENTENCE_PARTS:
            sentences = _runs(sentences, MAX_SENTENCE_PARTS)
    if sentences == [content]:
        sentences = []  # one sentence: the whole text already says it
    said_by = f"{row.speaker}: " if row.named_speaker else ""
    parts = [row.embedding_text[: settings.MAX_MESSAGE_CHARS]] + [f"{said_by}{sentence}" for sentence in sentences]
    if caption := (row.metadata or {}).get("image_caption"):
        parts.append(f"{row.speaker} shared a photo: {caption}")
    return list(dict.fromkeys(parts))


def _runs(pieces: list[str], count: int) -> list[str]:
    """``pieces`` joined into at most ``count`` runs of consecutive pieces, in order."""
    size = -(-len(pieces) // count)
    return [" ".join(pieces[i : i + size]) for i in range(0, len(pieces), size)]


def embeddings_compute(
    *, embedder: Embedder, rows: Sequence[models.Model], subjects: Sequence[str] | None = None
) -> list[list[float]]:
    """One vector per row, in order: the L2-normalised mean of the vectors of its ``embedding_parts``.

    Each statement of a turn that says several things then weighs the same however long the
    others are, and a turn longer than the model reads in one text (all-MiniLM-L6-v2: 256
    tokens) counts past that point too. Every part of every row goes to the embedder in one call.
    ``subjects``: for facts of one end user, the words they open with (default: looked up per fact).

    Raises:
        ModelBackendError: the embedding backend failed.
    """
    parts = [embedding_parts(row, subjects=subjects) for row in rows]
    vectors = np.asarray(embedder.embed([text for texts in parts for text in texts]).vectors, dtype=np.float64)
    pooled, start = [], 0
    for texts in parts:
        mean = vectors[start : start + len(texts)].mean(axis=0)
        start += len(texts)
        norm = np.linalg.norm(mean)
        pooled.append((mean / norm if norm else mean).tolist())
    return pooled


def embeddings_pending(*, kind: str) -> models.QuerySet:
    """Rows of ``kind`` with no vector, or one made by another model than the configured one."""
    model = KINDS[kind].model
    return model.objects.filter(models.Q(embedding__isnull=True) | ~models.Q(embedding_model=settings.EMBEDDING_MODEL))


def embeddings_fill(*, kind: str, ids: Iterable[int] | None = None, batch_size: int | None = None) -> int:
    """Embed the rows of ``kind`` (all pending ones, or those of ``ids``) that need it.

    Idempotent: rows already embedded by the configured model are left alone.

    Args:
        kind: a ``MemoryKind`` (``message``, ``summary``, ``knowledge`` or ``diary``).
        ids: primary keys to consider; ``None`` for every pending row.
        batch_size: texts per embedding call (default ``EMBEDDING_BATCH_SIZE``).

    Returns:
        How many rows were embedded.

    Raises:
        KeyError: unknown ``kind``.
        ModelBackendError: the embedding backend failed (rows embedded so far are kept).
    """
    embedder = get_embedder()
    batch_size = batch_size or settings.EMBEDDING_BATCH_SIZE
    queryset = embeddings_pending(kind=kind).order_by("pk")
    if ids is not None:
        queryset = queryset.filter(pk__in=list(ids))
    done = 0
    batch: list[models.Model] = []
    for row in queryset.iterator(chunk_size=batch_size):
        batch.append(row)
        if len(batch) == batch_size:
            done += _embed_batch(embedder, batch)
            batch = []
    if batch:
        done += _embed_batch(embedder, batch)
    return done


def _embed_batch(embedder, rows: list[models.Model]) -> int:
    vectors = embeddings_compute(embedder=embedder, rows=rows)
    model = type(rows[0])
    for row, vector in zip(rows, vectors, strict=True):
        row.embedding = vector
        row.embedding_model = embedder.model_name
    if model is Message:  # messages never change: one bulk write
        for row in rows:
            row.dialogue_act = dialogue_act(row.content, role=row.role)
        model.objects.bulk_update(rows, ["embedding", "embedding_model", "dialogue_act"])
        return len(rows)
    # Editable rows: write the vector only if the text was not changed while it was being
    # embedded (the change queued its own embedding).
    return sum(
        model.objects.filter(pk=row.pk, updated_at=row.updated_at).update(
            embedding=row.embedding, embedding_model=row.embedding_model
        )
        for row in rows
    )


def messages_embed_claimed(*, ids: Iterable[int], batch_size: int | None = None) -> int:
    """Embed the messages of ``ids`` that need it, each model call filled up with other new messages.

    What the worker's embedding task runs. Every ``addMessages`` call queues one task for its
    own messages, so with small calls most tasks hold a message or two, and a model call per
    task would run far below the model's batch throughput. Here each call takes up to
    ``batch_size`` rows: the task's own messages that need a vector (none yet, or one of
    another model) first, then the oldest other messages with no vector. Rows are claimed
    with ``SELECT ... FOR UPDATE SKIP LOCKED`` for the length of the model call, so
    concurrent workers never embed the same message and never wait for each other: own
    rows another worker holds are left to it (it writes their vectors), and the tasks
    queued for messages embedded this way find nothing left to do. (Messages are never
    edited, so the row locks only make a concurrent delete of those messages wait for the
    call.)

    Args:
        ids: the task's own message ids.
        batch_size: texts per embedding call (default ``EMBEDDING_BATCH_SIZE``).

    Returns:
        How many messages were embedded (own and others).

    Raises:
        ModelBackendError: the embedding backend failed on the task's own messages (that call's
            rows keep their old vector or none). When a topped-up call fails, the own messages
            are embedded alone, so one message the backend refuses never blocks the others.
    """
    embedder = get_embedder()
    batch_size = batch_size or settings.EMBEDDING_BATCH_SIZE
    own = set(ids)
    done = 0
    while own:
        with transaction.atomic():
            rows = list(
                embeddings_pending(kind=MemoryKind.MESSAGE)
                .filter(pk__in=own)
                .select_for_update(skip_locked=True)
                .order_by("pk")[:batch_size]
            )
            if not rows:
                # Own rows all embedded, or being embedded by another worker right now.
                return done
            mine = len(rows)
            if mine < batch_size:
                rows += list(
                    Message.objects.filter(embedding__isnull=True)
                    .exclude(pk__in=own)
                    .select_for_update(skip_locked=True)
                    .order_by("pk")[: batch_size - mine]
                )
            try:
                done += _embed_batch(embedder, rows)
            except ModelBackendError:
                if mine == len(rows):
                    raise
                # One of the other messages may be what the backend refuses (too long, say),
                # and it would be in every topped-up batch: the own messages alone, then.
                rows = rows[:mine]
                done += _embed_batch(embedder, rows)
            own -= {row.pk for row in rows}
    return done
