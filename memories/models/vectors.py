"""The vector columns every embedded model shares.

Every vector column has the dimension of ``settings.EMBEDDING_DIMENSIONS``, an HNSW index
with cosine operators (pgvector's ``vector_cosine_ops``, paired with ``CosineDistance`` in
queries), and records in ``embedding_model`` which model produced it.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from pgvector.django import HnswIndex, VectorField

__all__ = ["embedding_field", "embedding_model_field", "hnsw_index"]


def embedding_field() -> VectorField:
    return VectorField(dimensions=settings.EMBEDDING_DIMENSIONS, null=True, blank=True, editable=False)


def embedding_model_field() -> models.CharField:
    return models.CharField(max_length=200, blank=True, default="", editable=False)


def hnsw_index(name: str) -> HnswIndex:
    # m=16, ef_construction=64 are pgvector's defaults (pgvector README, "HNSW").
    return HnswIndex(name=name, fields=["embedding"], m=16, ef_construction=64, opclasses=["vector_cosine_ops"])
