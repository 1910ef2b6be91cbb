"""What a search returns per retrieved row (``Hit``), loaded from the ranked ids."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time
from typing import ClassVar

from pgvector.django import CosineDistance

from memories.models import Diary, Knowledge, Message, Summary

__all__ = ["Hit", "Turn", "load_hits"]


@dataclass(frozen=True)
class Turn:
    """One message shown with a hit: the hit itself or a turn next to it."""

    id: int
    role: str
    speaker: str
    content: str
    text: str  # speaker, content and any photo caption, as embedded
    created_at: datetime
    is_hit: bool

    # The message columns ``of`` reads: a query for turns need read no others (not the vectors).
    COLUMNS: ClassVar[tuple[str, ...]] = ("role", "content", "metadata", "created_at")

    @classmethod
    def of(cls, message: Message, *, is_hit: bool = False) -> Turn:
        return cls(
            id=message.pk,
            role=message.role,
            speaker=message.speaker,
            content=message.content,
            text=message.embedding_text,
            created_at=message.created_at,
            is_hit=is_hit,
        )


@dataclass(frozen=True)
class Hit:
    """One retrieved row of any kind (``message``, ``summary``, ``knowledge``, ``diary``).

    ``score`` is cosine similarity to the query (-1..1), ``None`` for a message not embedded
    yet; ``relevance`` is its fused score (``memories.search.fusion``), which orders the hits.
    A message hit carries its neighbouring ``turns`` (itself included), in order.
    """

    kind: str
    id: int
    score: float | None
    relevance: float
    content: str
    user_id: str
    session_id: str | None
    conversation_time: datetime | None
    speaker: str | None = None
    role: str | None = None
    turns: tuple[Turn, ...] = ()
    found_by: tuple[str, ...] = ()  # the rankings that found it and its place in each, e.g. "words #1"

    def block(self, *, multi_user: bool = False) -> str:
        """The hit as a labelled, timestamped text block, e.g. ``[message | session s3 | ...]\\n...``."""
        who = f" | user {self.user_id}" if multi_user and self.user_id else ""
        if self.kind == "message":
            label = f"[message | session {self.session_id}{who} | {_when(self.conversation_time)}]"
            body = "\n".join(("> " if t.is_hit else "") + t.text for t in self.turns)
            return f"{label}\n{body}"
        if self.kind == "summary":
            label = f"[summary | session {self.session_id}{who} | from {_when(self.conversation_time)}]"
        elif self.kind == "knowledge":
            label = f"[knowledge | {f'user {self.user_id}' if self.user_id else 'shared'}]"
        else:
            label = f"[diary | {self.conversation_time:%Y-%m-%d}{who}]"
        return f"{label}\n{self.content}"


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "undated"


# The columns of a message and its session and user that a hit shows (``Hit``, ``Turn``).
_SHOWN = (*Turn.COLUMNS, "session__external_id", "user__external_id")


def load_hits(
    *,
    ranked: list[tuple[tuple[str, int], float]],
    distances: dict[tuple[str, int], float],
    neighbours: dict[int, tuple[int | None, int | None]],
    vector: Sequence[float],
    hidden_message_ids: frozenset[int] = frozenset(),
    found_by: dict[tuple[str, int], list[str]] | None = None,
) -> list[Hit]:
    """``Hit`` objects for ``ranked`` (``((kind, id), relevance)``, best first), in that order.

    Args:
        distances: cosine distance of each candidate a dense ranking found.
        neighbours: for a message id, the ids of the turns before and after it.
        vector: the query embedding, to score messages only the lexical ranking found.
        hidden_message_ids: turns never shown beside a hit (a chatbot's recent window).
        found_by: for each candidate, the rankings that found it (``Hit.found_by``).
    """
    ids: dict[str, list[int]] = {}
    for (kind, pk), _ in ranked:
        ids.setdefault(kind, []).append(pk)
    message_ids = ids.get("message", [])
    turn_ids = {n for pk in message_ids for n in neighbours.get(pk, ()) if n and n not in hidden_message_ids}
    messages = {
        m.pk: m
        # Only the columns a hit shows: the vector and full-text columns are large and unused here.
        for m in Message.objects.filter(pk__in=set(message_ids) | turn_ids)
        .select_related("session", "user")
        .only(*_SHOWN)
        .annotate(distance=CosineDistance("embedding", vector))
    }
    related = {"summary": ("session", "user"), "knowledge": ("user",), "diary": ("user",)}
    rows = {
        (kind, row.pk): row
        for kind, model in (("summary", Summary), ("knowledge", Knowledge), ("diary", Diary))
        if ids.get(kind)
        for row in model.objects.filter(pk__in=ids[kind]).select_related(*related[kind]).defer("embedding")
    }
    hits = []
    for candidate, relevance in ranked:
        kind, pk = candidate
        if kind == "message":
            if (message := messages.get(pk)) is None:
                continue  # deleted since it was ranked
            around = [messages.get(n) for n in neighbours.get(pk, ()) if n and n not in hidden_message_ids]
            turns = sorted([m for m in around if m is not None] + [message], key=lambda m: (m.created_at, m.pk))
            hits.append(
                Hit(
                    kind=kind,
                    id=pk,
                    score=None if message.distance is None else 1 - message.distance,
                    relevance=relevance,
                    content=message.content,
                    user_id=message.user.external_id,
                    session_id=message.session.external_id,
                    conversation_time=message.created_at,
                    speaker=message.speaker,
                    role=message.role,
                    turns=tuple(Turn.of(m, is_hit=m.pk == pk) for m in turns),
                    found_by=tuple((found_by or {}).get(candidate, ())),
                )
            )
        elif (row := rows.get(candidate)) is not None:
            hit = _memory_hit(kind, row, relevance, distances.get(candidate))
            hits.append(replace(hit, found_by=tuple((found_by or {}).get(candidate, ()))))
    return hits


def _memory_hit(kind: str, row: Summary | Knowledge | Diary, relevance: float, distance: float | None) -> Hit:
    if kind == "summary":
        session_id, when = row.session.external_id, row.covers_from
    elif kind == "diary":
        session_id, when = None, datetime.combine(row.diary_date, time.min, tzinfo=UTC)
    else:
        session_id, when = None, None
    return Hit(
        kind=kind,
        id=row.pk,
        score=None if distance is None else 1 - distance,
        relevance=relevance,
        content=row.content,
        user_id=row.user.external_id if row.user_id else "",
        session_id=session_id,
        conversation_time=when,
    )
