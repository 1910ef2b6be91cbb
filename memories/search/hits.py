"""What a search returns per retrieved row (``Hit``), loaded from the ranked ids."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time
from typing import ClassVar

from django.conf import settings
from pgvector.django import CosineDistance

from memories.kinds import KINDS, MemoryKind
from memories.models import DialogueAct, Diary, Knowledge, Message, Summary
from memories.search.candidates import Candidate, Ranked
from memories.search.retrievers import Neighbours

__all__ = ["Hit", "Turn", "bounded", "load_hits"]


@dataclass(frozen=True)
class Turn:
    """One message shown with a hit: the hit itself or a turn next to it."""

    id: int
    role: str
    speaker: str
    content: str
    text: str  # speaker, content and any photo caption (``Message.text``)
    created_at: datetime
    is_hit: bool
    excerpt: bool = False  # ``content`` holds only the parts matching the query (``memories.search.excerpts``)

    # The message columns ``of`` reads: a query for turns need read no others (not the vectors).
    COLUMNS: ClassVar[tuple[str, ...]] = ("role", "content", "metadata", "created_at", "dialogue_act")

    @classmethod
    def of(cls, message: Message, *, is_hit: bool = False) -> Turn:
        return cls(
            id=message.pk,
            role=message.role,
            speaker=message.speaker,
            content=message.content,
            text=message.text,
            created_at=message.created_at,
            is_hit=is_hit,
        )


@dataclass(frozen=True)
class Hit:
    """One retrieved row of any kind (``message``, ``summary``, ``knowledge``, ``diary``).

    ``score`` is cosine similarity to the query (-1..1), ``None`` for a message not embedded
    yet; ``relevance`` is its fused score (``memories.search.fusion``), which orders the hits.
    A message hit carries its neighbouring ``turns`` (itself included, acknowledgements left out),
    in order; a fact the turns it was raised from. ``conversation_time`` is when it was said (a
    fact: its latest source turn). ``replaced_at``: a message that said what a later fact replaced,
    when that was said. ``reviewed``: for a fact, whether a person approved, added or edited it.
    """

    kind: str
    id: int
    score: float | None
    relevance: float
    content: str
    user_external_id: str
    session_external_id: str | None
    conversation_time: datetime | None
    speaker: str | None = None
    role: str | None = None
    turns: tuple[Turn, ...] = ()
    found_by: tuple[str, ...] = ()  # the rankings that found it and its place in each, e.g. "words #1"
    replaced_at: datetime | None = None
    reviewed: bool | None = None
    # A fact that bears on the topic the query asks about, or the user telling it (``memories.search.topics``).
    topical: bool = False
    question_score: float | None = None  # a turn found through the question it answers: that question's score
    # A fact: the later turn that spoke of its slot without a fact of its own there, and when: it may hold no more.
    changed_by: int | None = None
    changed_at: datetime | None = None
    ends: bool = False  # a fact that says a value ended

    def block(self, *, multi_user: bool = False) -> str:
        """The hit as a labelled, timestamped text block, e.g. ``[message | session s3 | ...]\\n...``."""
        who = f" | user {self.user_external_id}" if multi_user and self.user_external_id else ""
        if self.kind == MemoryKind.MESSAGE:
            until = f" | until {self.replaced_at:%Y-%m-%d}" if self.replaced_at else ""
            label = f"[message | session {self.session_external_id}{who} | {_when(self.conversation_time)}{until}]"
            body = "\n".join(("> " if t.is_hit else "") + t.text for t in self.turns)
            return f"{label}\n{body}"
        if self.kind == MemoryKind.SUMMARY:
            label = f"[summary | session {self.session_external_id}{who} | from {_when(self.conversation_time)}]"
        elif self.kind == MemoryKind.KNOWLEDGE:
            user = self.user_external_id
            labels = ["shared"] if not user else [f"user {user}"] if multi_user else []
            labels += [f"said {self.conversation_time:%Y-%m-%d}"] if self.conversation_time else []
            labels += ["not reviewed"] if self.reviewed is False else []
            labels += [f"a later turn ({self.changed_at:%Y-%m-%d}) may have changed it"] if self.changed_at else []
            label = "[" + " | ".join(["knowledge", *labels]) + "]"
            # The turns it was raised from say more than the fact ("Hello from Saigon! We live in District 7").
            cited = "".join(f"\n(from {t.speaker}: \u201c{_shortened(t.content)}\u201d)" for t in self.turns)
            return f"{label}\n{self.content}{cited}"
        else:
            label = f"[diary | {self.conversation_time:%Y-%m-%d}{who}]"
        return f"{label}\n{self.content}"


# The most characters of a fact's source turn its block quotes.
_CITED_CHARS = 240


def _shortened(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _CITED_CHARS else text[: _CITED_CHARS - 1].rsplit(" ", 1)[0] + "\u2026"


def bounded(messages: list[Message]) -> list[Message]:
    """``messages``, each with at most ``MAX_MESSAGE_CHARS`` characters of content: what a search or a
    context reads of a turn, whatever is stored (a row written before the limit, or around the API)."""
    for message in messages:
        message.content = message.content[: settings.MAX_MESSAGE_CHARS]
    return messages


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "undated"


# The columns of a message and its session and user that a hit shows (``Hit``, ``Turn``).
_SHOWN = (*Turn.COLUMNS, "session__external_id", "user__external_id")


def load_hits(
    *,
    ranked: Sequence[Ranked],
    neighbours: Mapping[int, Neighbours],
    vector: Sequence[float],
    sources: Mapping[int, Sequence[int]] | None = None,
    replaced: Mapping[int, datetime] | None = None,
    changed: Mapping[int, tuple[int, datetime]] | None = None,
    hidden_message_ids: frozenset[int] = frozenset(),
    found_by: Mapping[Candidate, list[str]] | None = None,
    turns_after: int = 1,
    topical: frozenset[Candidate] = frozenset(),
    asked: Mapping[int, int] | None = None,
) -> list[Hit]:
    """``Hit`` objects for ``ranked`` (best first), in that order.

    Args:
        neighbours: each message's place in its session (``retrievers.neighbours``).
        vector: the query embedding, to score every hit by (``Hit.score``).
        sources: for a fact, the messages it was raised from (shown as its turns).
        replaced: for a message, when a later fact replaced what it said (``Hit.replaced_at``).
        changed: for a fact, the later turn that spoke of its slot and when (``Hit.changed_by``, ``changed_at``).
        hidden_message_ids: turns never shown beside a hit (a chatbot's recent window).
        found_by: for each candidate, the rankings that found it (``Hit.found_by``).
        turns_after: the turns after a message hit shown with it (1 or 2; the turn before is shown too).
        topical: the facts on the topic the query asks about and the user's statements telling it
            (``Hit.topical``).
        asked: for a message found through the question it answers, that question's id.
    """
    sources, replaced, found_by, changed = sources or {}, replaced or {}, found_by or {}, changed or {}
    ids: dict[str, list[int]] = {}
    for (kind, pk), _ in ranked:
        ids.setdefault(kind, []).append(pk)
    message_ids = ids.get(MemoryKind.MESSAGE, [])
    around = {pk: (n.before, n.after, n.after_next)[: 1 + turns_after] for pk, n in neighbours.items()}
    asked = asked or {}
    turn_ids = {n for pk in message_ids for n in around.get(pk, ()) if n and n not in hidden_message_ids}
    turn_ids |= {asked[pk] for pk in message_ids if pk in asked}
    turn_ids |= {m for pk in ids.get(MemoryKind.KNOWLEDGE, []) for m in sources.get(pk, ())}
    messages = {
        m.pk: m
        # Only the columns a hit shows: the vector and full-text columns are large and unused here.
        for m in bounded(
            list(
                Message.objects.filter(pk__in=set(message_ids) | turn_ids)
                .select_related("session", "user")
                .only(*_SHOWN)
                .annotate(distance=CosineDistance("embedding", vector))
            )
        )
    }
    related = {
        MemoryKind.SUMMARY: ("session", "user"),
        MemoryKind.KNOWLEDGE: ("user", "source_session"),
        MemoryKind.DIARY: ("user",),
    }
    rows = {
        (kind, row.pk): row
        for kind, shown in related.items()
        if ids.get(kind)
        for row in KINDS[kind]
        .model.objects.filter(pk__in=ids[kind])
        .select_related(*shown)
        .defer("embedding")
        .annotate(distance=CosineDistance("embedding", vector))
    }
    hits = []
    for candidate, relevance in ranked:
        kind, pk = candidate
        if kind == MemoryKind.MESSAGE:
            if (message := messages.get(pk)) is None:
                continue  # deleted since it was ranked
            shown = [messages.get(n) for n in around.get(pk, ()) if n and n not in hidden_message_ids]
            shown = [m for m in shown if m is not None and m.dialogue_act != DialogueAct.BACKCHANNEL]
            turns = sorted([*shown, message], key=lambda m: (m.created_at, m.pk))
            hits.append(
                Hit(
                    kind=kind,
                    id=pk,
                    score=None if message.distance is None else 1 - message.distance,
                    relevance=relevance,
                    content=message.content,
                    user_external_id=message.user.external_id,
                    session_external_id=message.session.external_id,
                    conversation_time=message.created_at,
                    speaker=message.speaker,
                    role=message.role,
                    turns=tuple(Turn.of(m, is_hit=m.pk == pk) for m in turns),
                    found_by=tuple(found_by.get(candidate, ())),
                    replaced_at=replaced.get(pk),
                    question_score=_score(messages.get(asked[pk])) if pk in asked else None,
                    topical=candidate in topical,
                )
            )
        elif (row := rows.get(candidate)) is not None:
            hit = _memory_hit(kind, row, relevance, row.distance)
            if kind == MemoryKind.KNOWLEDGE:
                # A fact a person corrected stands alone: its turns said what it no longer says.
                said = sorted(
                    (messages[m] for m in sources.get(pk, ()) if m in messages and not row.corrected),
                    key=lambda m: (m.created_at, m.pk),
                )
                changed_by, changed_at = changed.get(pk, (None, None))
                hit = replace(
                    hit,
                    turns=tuple(Turn.of(m, is_hit=True) for m in said),
                    changed_by=changed_by,
                    changed_at=changed_at,
                )
            hits.append(replace(hit, found_by=tuple(found_by.get(candidate, ())), topical=candidate in topical))
    return hits


def _score(message: Message | None) -> float | None:
    return None if message is None or message.distance is None else 1 - message.distance


def _memory_hit(kind: str, row: Summary | Knowledge | Diary, relevance: float, distance: float | None) -> Hit:
    if kind == MemoryKind.SUMMARY:
        session_id, when = row.session.external_id, row.covers_from
    elif kind == MemoryKind.DIARY:
        session_id, when = None, datetime.combine(row.diary_date, time.min, tzinfo=UTC)
    else:  # a fact: the session it was raised from, if any
        session_id, when = (row.source_session.external_id if row.source_session_id else None), row.said_at
    return Hit(
        kind=kind,
        id=row.pk,
        score=None if distance is None else 1 - distance,
        relevance=relevance,
        content=row.content,
        user_external_id=row.user.external_id if row.user_id else "",
        session_external_id=session_id,
        conversation_time=when,
        reviewed=row.reviewed if kind == MemoryKind.KNOWLEDGE else None,
        ends=kind == MemoryKind.KNOWLEDGE and row.ends,
    )
