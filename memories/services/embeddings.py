"""Filling vector columns with the configured embedding model."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from django.conf import settings
from django.db import models

from memories.kinds import KINDS
from memories.llm import Embedder, get_embedder
from memories.llm.person import first_person
from memories.llm.text import split_sentences
from memories.models import Knowledge, Message, Role

__all__ = [
    "MAX_SENTENCE_PARTS",
    "embedding_parts",
    "embeddings_compute",
    "embeddings_fill",
    "embeddings_pending",
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
        sentences = list(split_sentences(content))
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
    *,
    embedder: Embedder,
    rows: Sequence[models.Model],
    subjects: Sequence[str] | None = None,
    parts_out: dict[str, np.ndarray] | None = None,
) -> list[list[float]]:
    """One vector per row, in order: the L2-normalised mean of the vectors of its ``embedding_parts``.

    Each statement of a turn that says several things then weighs the same however long the
    others are, and a turn longer than the model reads in one text (all-MiniLM-L6-v2: 256
    tokens) counts past that point too. Every part of every row goes to the embedder in one call.
    ``subjects``: for facts of one end user, the words they open with (default: looked up per fact).
    ``parts_out``: filled with each part's own vector, by its text (the reader reuses a turn's sentences').

    Raises:
        ModelBackendError: the embedding backend failed.
    """
    parts = [embedding_parts(row, subjects=subjects) for row in rows]
    texts = [text for texts in parts for text in texts]
    vectors = np.asarray(embedder.embed(texts).vectors, dtype=np.float64)
    if parts_out is not None:
        parts_out.update(zip(texts, vectors.astype(np.float32), strict=True))
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
    model = type(rows[0])
    if model is Message:  # a message is read as it is embedded
        from memories.services.reading import messages_embed

        return messages_embed(embedder=embedder, rows=rows)
    vectors = embeddings_compute(embedder=embedder, rows=rows)
    for row, vector in zip(rows, vectors, strict=True):
        row.embedding = vector
        row.embedding_model = embedder.model_name
    # Editable rows: write the vector only if the text was not changed while it was being
    # embedded (the change queued its own embedding).
    return sum(
        model.objects.filter(pk=row.pk, updated_at=row.updated_at).update(
            embedding=row.embedding, embedding_model=row.embedding_model
        )
        for row in rows
    )
