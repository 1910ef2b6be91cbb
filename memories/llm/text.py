"""Sentence splitting for the extractive mode, with pySBD (rule-based, offline).

Source: Sadvilkar & Neumann, "PySBD: Pragmatic Sentence Boundary Disambiguation", 2020.
"""

from __future__ import annotations

from functools import lru_cache

import pysbd

__all__ = ["split_sentences"]


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences.

    Returns:
        Non-empty, stripped sentences in order (``[]`` for blank text).
    """
    if not text.strip():
        return []
    return [s.strip() for s in _segmenter().segment(text) if s.strip()]
