"""Sentence splitting for the extractive mode, with pySBD (rule-based, offline).

Source: Sadvilkar & Neumann, "PySBD: Pragmatic Sentence Boundary Disambiguation", 2020.
"""

from __future__ import annotations

from functools import lru_cache

import pysbd

__all__ = ["split_sentences"]

# Texts whose sentences are remembered: a model batch's messages and more.
_CACHED_TEXTS = 1024


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


@lru_cache(maxsize=_CACHED_TEXTS)
def split_sentences(text: str) -> tuple[str, ...]:
    """Split ``text`` into sentences; a text split lately is not split again (the worker splits a message to
    embed its sentences and to read them).

    Returns:
        Non-empty, stripped sentences in order (``()`` for blank text).
    """
    if not text.strip():
        return ()
    return tuple(s.strip() for s in _segmenter().segment(text) if s.strip())
