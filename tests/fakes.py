"""Test stand-ins chosen through settings, never by patching module globals."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.utils.module_loading import import_string

from memories.llm import EMBEDDING_BACKENDS, EmbeddingBatch, ModelBackendError, get_embedder
from memories.llm.base import Completion
from memories.llm.extractive import ExtractiveChatModel

__all__ = ["DownEmbedder", "HashingEmbedder", "RecordingChatModel", "RecordingEmbedder", "RefusingEmbedder"]


class HashingEmbedder:
    """A deterministic, instant ``Embedder`` for tests where ranking is not under test.

    Each lower-cased word is hashed (SHA-1) into one of ``EMBEDDING_DIMENSIONS`` buckets; the
    counts are L2-normalised. Texts sharing words are similar, nothing is loaded. Select it
    with ``EMBEDDING_BACKEND = "tests.fakes.HashingEmbedder"`` and ``EMBEDDING_MODEL = "hashing"``.
    """

    def __init__(self, *, model: str | None = None) -> None:
        self.model_name = model or settings.EMBEDDING_MODEL
        self.dimensions = settings.EMBEDDING_DIMENSIONS

    @classmethod
    def from_settings(cls, *, model: str | None = None) -> HashingEmbedder:
        return cls(model=model)

    def embed(self, texts: Sequence[str]) -> EmbeddingBatch:
        vectors = []
        for text in texts:
            vector = np.zeros(self.dimensions)
            for word in re.findall(r"\w+", text.lower()):
                vector[int(hashlib.sha1(word.encode()).hexdigest(), 16) % self.dimensions] += 1.0
            norm = np.linalg.norm(vector)
            if norm:
                vector /= norm
            else:  # no words: a fixed unit vector rather than zeros (cosine is undefined on zeros)
                vector[0] = 1.0
            vectors.append(vector.tolist())
        return EmbeddingBatch(vectors=vectors)


class DownEmbedder:
    """An ``Embedder`` whose backend is down: every call raises ``MODEL_BACKEND_UNAVAILABLE``.

    Select it with ``EMBEDDING_BACKEND = "tests.fakes.DownEmbedder"``; it reports the configured
    ``EMBEDDING_MODEL`` and ``EMBEDDING_DIMENSIONS``.
    """

    def __init__(self) -> None:
        self.model_name = settings.EMBEDDING_MODEL
        self.dimensions = settings.EMBEDDING_DIMENSIONS

    @classmethod
    def from_settings(cls, *, model: str | None = None) -> DownEmbedder:
        return cls()

    def embed(self, texts: Sequence[str]) -> EmbeddingBatch:
        raise ModelBackendError("MODEL_BACKEND_UNAVAILABLE", "down")


class RecordingEmbedder:
    """The local embedder, keeping the texts of each call in ``batches`` (one list per call).

    Select it with ``EMBEDDING_BACKEND = "tests.fakes.RecordingEmbedder"``; ``get_embedder()``
    then returns the instance every caller uses, so a test reads ``get_embedder().batches``.
    """

    def __init__(self, *, model: str | None = None) -> None:
        backend = import_string(EMBEDDING_BACKENDS["local"])
        self.inner = backend.from_settings(model=model)
        self.model_name = self.inner.model_name
        self.dimensions = self.inner.dimensions
        self.batches: list[list[str]] = []

    @classmethod
    def from_settings(cls, *, model: str | None = None) -> RecordingEmbedder:
        return cls(model=model)

    def embed(self, texts: Sequence[str]) -> EmbeddingBatch:
        self.batches.append(list(texts))
        return self.inner.embed(texts)


class RefusingEmbedder(RecordingEmbedder):
    """A ``RecordingEmbedder`` whose backend refuses any call holding a text with ``REFUSED`` in it.

    Select it with ``EMBEDDING_BACKEND = "tests.fakes.RefusingEmbedder"``; the refusal is the
    ``MODEL_BACKEND_ERROR`` an OpenAI-compatible server gives for an input it will not take.
    """

    REFUSED = "poison"

    def embed(self, texts: Sequence[str]) -> EmbeddingBatch:
        if any(self.REFUSED in text for text in texts):
            raise ModelBackendError("MODEL_BACKEND_ERROR", "input too long")
        return super().embed(texts)


class RecordingChatModel(ExtractiveChatModel):
    """The local (extractive) chat model, keeping the ``lines`` of each ``summarize`` call in ``summarized``.

    Select it with ``CHAT_BACKEND = "tests.fakes.RecordingChatModel"``; ``get_chat_model()`` then
    returns the instance every caller uses.
    """

    def __init__(self) -> None:
        super().__init__(embedder=get_embedder())
        self.summarized: list[list[str]] = []

    @classmethod
    def from_settings(cls) -> RecordingChatModel:
        return cls()

    def summarize(self, *, lines: Sequence[str], max_sentences: int) -> Completion:
        self.summarized.append(list(lines))
        return super().summarize(lines=lines, max_sentences=max_sentences)
