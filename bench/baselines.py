"""Baselines over one user's turns: BM25 and exact dense (cosine) retrieval.

Both rank the same turns our pipeline searches (one LoCoMo sample = one end user) and
return turn ids best first; ties keep conversation order (stable sort).

- BM25: Okapi BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25
  and Beyond", 2009) as implemented by ``rank_bm25.BM25Okapi`` (k1 = 1.5, b = 0.75), over
  lowercase ``\\w+`` tokens of the text each turn is embedded from
  (``"Speaker: text [shared a photo: caption]"``, ``Message.embedding_text``).
- Dense: cosine similarity between the query vector and the turn vectors stored in the
  database (the service's own embeddings), computed exactly with numpy: no index, no
  approximation, no full-text component.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from rank_bm25 import BM25Okapi

__all__ = ["BM25Ranker", "DenseRanker", "tokenize"]

_WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens: ``"Caroline: I'm in!"`` -> ``["caroline", "i", "m", "in"]``."""
    return _WORD.findall(text.lower())


def _ranked(turn_ids: Sequence[str], scores: np.ndarray, top_k: int) -> list[str]:
    order = np.argsort(-scores, kind="stable")[:top_k]
    return [turn_ids[i] for i in order]


class BM25Ranker:
    """BM25 over a fixed list of turns."""

    def __init__(self, turn_ids: Sequence[str], texts: Sequence[str]) -> None:
        if len(turn_ids) != len(texts) or not texts:
            raise ValueError("Give one text per turn id, at least one.")
        self.turn_ids = list(turn_ids)
        self._bm25 = BM25Okapi([tokenize(t) for t in texts])

    def rank(self, query: str, top_k: int) -> list[str]:
        """The ``top_k`` turn ids by BM25 score for ``query``."""
        return _ranked(self.turn_ids, np.asarray(self._bm25.get_scores(tokenize(query))), top_k)


class DenseRanker:
    """Exact cosine similarity over a fixed list of turn vectors."""

    def __init__(self, turn_ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        if len(turn_ids) != len(vectors) or not vectors:
            raise ValueError("Give one vector per turn id, at least one.")
        self.turn_ids = list(turn_ids)
        matrix = np.asarray(vectors, dtype=np.float64)
        self._matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)

    def rank(self, vector: Sequence[float], top_k: int) -> list[str]:
        """The ``top_k`` turn ids by cosine similarity to ``vector``."""
        query = np.asarray(vector, dtype=np.float64)
        return _ranked(self.turn_ids, self._matrix @ (query / np.linalg.norm(query)), top_k)
