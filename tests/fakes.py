"""Test stand-ins chosen through settings, never by patching module globals."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
from django.conf import settings

from memories.llm import EmbeddingBatch

__all__ = ["HashingEmbedder"]


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
