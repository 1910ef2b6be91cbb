"""The rows a search passes between its steps, named: what a ranking found, where it ranked it."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Candidate", "Near", "Nearest", "Ranked"]


class Candidate(NamedTuple):
    """A row a ranking found: its kind (``memories.kinds.MemoryKind``) and primary key."""

    kind: str
    pk: int


class Ranked(NamedTuple):
    """A candidate and its fused score (``memories.search.fusion``): higher is better."""

    candidate: Candidate
    relevance: float


class Nearest(NamedTuple):
    """A row by its vector (``retrievers.dense``): cosine distance (0..2) to the query embedding, and
    the pk of its session (``None`` for knowledge and diaries)."""

    kind: str
    pk: int
    distance: float
    session_pk: int | None

    @property
    def candidate(self) -> Candidate:
        return Candidate(self.kind, self.pk)


class Near(NamedTuple):
    """A row of a known kind by its vector: its pk and cosine distance (0..2) to the query or topic."""

    pk: int
    distance: float
