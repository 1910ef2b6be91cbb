"""Rankings: dense (pgvector, exact or HNSW) and lexical (BM25 over PostgreSQL full text).

Each retriever runs one statement from ``sql/`` and returns ids best first. The query vector is
sent through pgvector's psycopg adapter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import DataError, connection, models, transaction
from pgvector.psycopg import register_vector
from psycopg import sql

from memories.kinds import KINDS, MemoryKind
from memories.models import Entity, Knowledge, Message
from memories.search.candidates import Candidate, Near, Nearest
from memories.search.scope import RowScope
from memories.services.entities import entities_named_in

__all__ = [
    "by_slots",
    "excerpts",
    "by_topic",
    "Neighbours",
    "Provenance",
    "ReembeddingNeeded",
    "by_entities",
    "dense",
    "lexical",
    "neighbours",
    "provenance",
]

# BM25's k1 (Robertson & Zaragoza 2009, their usual value), and b: no length normalisation, since in a
# conversation the long turns carry the facts.
BM25_K1 = 1.2
BM25_B = 0.0


class ReembeddingNeeded(Exception):
    """Stored vectors were made by another embedding model than the configured one.

    Raised rather than ranking vectors of two models together; ``manage.py reembed`` fixes it.
    ``code`` is ``REEMBEDDING_NEEDED``.
    """

    code = "REEMBEDDING_NEEDED"

    @classmethod
    def of(cls, *kinds: type[models.Model]) -> ReembeddingNeeded:
        """The error for vectors of these kinds (one of them made by another model)."""
        names = " or ".join(str(model._meta.verbose_name) for model in kinds)
        return cls(
            f"Stored {names} vectors were made by another embedding model than the configured "
            f"{settings.EMBEDDING_MODEL!r}: run `manage.py reembed`, or configure the model that made them."
        )


def dense(*, limits: dict[str, int], scope: RowScope, vector: Sequence[float]) -> list[Nearest]:
    """The rows in ``scope`` nearest to ``vector``, up to ``limits[kind]`` of each kind, in one statement.

    One ranking for every kind: one embedding model made all the vectors, so their similarities
    compare. Rows nearest first; equal distances in the order of ``limits``, then by id.

    Args:
        limits: rows wanted per kind, each kind one of ``memories.search.scope.SOURCES``.
        vector: the query embedding (``EMBEDDING_DIMENSIONS`` floats).

    Raises:
        ReembeddingNeeded: a ranked vector was made by another embedding model.
    """
    branches, kinds = [], []
    for position, (kind, limit) in enumerate(limits.items()):
        condition = getattr(scope, KINDS[kind].scope_condition)()
        if condition is None or not scope.user_pks and kind != MemoryKind.KNOWLEDGE:
            continue
        nearest = _statement("nearest.sql").format(
            table=sql.Identifier(KINDS[kind].model._meta.db_table),
            scope=condition,
            limit=sql.Literal(limit),
            session=sql.SQL("session_id" if KINDS[kind].in_session else "NULL::bigint"),
        )
        branches.append(
            sql.SQL("SELECT {kind} AS kind, {position} AS position, * FROM ({nearest}) AS {alias}").format(
                kind=sql.Literal(kind), position=sql.Literal(position), nearest=nearest, alias=sql.Identifier(kind)
            )
        )
        kinds.append(KINDS[kind].model)
    if not branches:
        return []
    statement = sql.SQL("{} ORDER BY distance, position, id").format(sql.SQL(" UNION ALL ").join(branches))
    params = {
        **scope.params(),
        "vector": np.asarray(vector, dtype=np.float32),
        "exact_max_rows": settings.EXACT_SEARCH_MAX_ROWS,
    }
    rows = _fetch(statement, params, *kinds)
    for kind, _, _, embedding_model, _, _ in rows:
        if embedding_model != settings.EMBEDDING_MODEL:
            raise ReembeddingNeeded.of(KINDS[kind].model)
    return [Nearest(kind, pk, distance, session) for kind, _, pk, _, session, distance in rows]


def by_topic(*, scope: RowScope, topic: Sequence[float], classes: Sequence[Sequence[float]], limit: int) -> list[Near]:
    """The active facts in ``scope`` of a topic (``memories.search.topics``): those nearer the topic's
    centroid than any other class centroid of ``classes``, nearest first (distance to the topic).

    Raises:
        ReembeddingNeeded: a fact's vector was made by another embedding model.
    """
    condition = scope.knowledge()
    if condition is None or not scope.user_pks:
        return []
    statement = _statement("topical.sql").format(
        table=sql.Identifier(Knowledge._meta.db_table), scope=condition, limit=sql.Literal(limit)
    )
    params = {
        **scope.params(),
        "topic": np.asarray(topic, dtype=np.float32),
        "classes": [np.asarray(c, dtype=np.float32) for c in classes],
    }
    rows = _fetch(statement, params, Knowledge)
    if any(model != settings.EMBEDDING_MODEL for _, model, _ in rows):
        raise ReembeddingNeeded.of(Knowledge)
    return [Near(pk, distance) for pk, _, distance in rows]


def by_slots(*, scope: RowScope, heads: Sequence[str], limit: int) -> list[int]:
    """The active facts in ``scope`` whose slot's first word is one of ``heads`` (``job``, ``pet``,
    ``sister``...), said last first."""
    condition = scope.knowledge()
    if condition is None or not scope.user_pks or not heads:
        return []
    statement = _statement("slots.sql").format(
        table=sql.Identifier(Knowledge._meta.db_table), scope=condition, limit=sql.Literal(limit)
    )
    # A slot's head is its first word: "best" of "best friend jo:job".
    first_words = list(dict.fromkeys(head.split()[0] for head in heads))
    return [pk for (pk,) in _fetch(statement, {**scope.params(), "heads": first_words}, Knowledge)]


def excerpts(*, message_ids: Sequence[int], query: str, words: int, fragments: int) -> dict[int, str]:
    """For each of these messages, its ``fragments`` parts of about ``words`` words each that best match
    ``query``'s words (``ts_headline``), joined by " … "; the start of the message when none match."""
    if not message_ids:
        return {}
    options = (
        f'StartSel="", StopSel="", MaxWords={max(words, 6)}, MinWords={max(words // 2, 3)}, '
        f'MaxFragments={fragments}, FragmentDelimiter=" \u2026 "'
    )
    params = {"ids": list(message_ids), "query": query, "options": options, "max_chars": settings.MAX_MESSAGE_CHARS}
    rows = _fetch(_statement("excerpts.sql"), params, Message)
    return dict(rows)


def lexical(*, scope: RowScope, query: str, limit: int) -> list[int]:
    """Ids of the ``limit`` messages in ``scope`` best matching ``query``'s words by BM25 (k1 1.2, b 0).

    The inverse document frequencies are those of the scoped messages, so a word every turn of
    the user holds (a speaker's name) weighs little. ``[]`` when the query has no terms.
    """
    condition = scope.messages()
    if condition is None or not scope.user_pks or not re.search(r"\w", query):
        return []
    statement = _statement("bm25.sql").format(scope=condition, limit=sql.Literal(limit))
    params = {**scope.params(), "query": query, "k1": BM25_K1, "b": BM25_B}
    return [row[0] for row in _fetch(statement, params, Message)]


@dataclass(frozen=True)
class Neighbours:
    """A message's place in its session: its session pk, the turn just before it and the two after it,
    the dialogue acts (``memories.models.DialogueAct``) of itself and of the turn after it, and its role."""

    session: int
    before: int | None
    after: int | None
    after_next: int | None
    act: str
    after_act: str | None
    role: str


def neighbours(*, message_ids: list[int]) -> dict[int, Neighbours]:
    """Each message's ``Neighbours``, by id."""
    if not message_ids:
        return {}
    rows = _fetch(_statement("turns.sql"), {"ids": message_ids}, Message)
    return {row[0]: Neighbours(*row[1:]) for row in rows}


@dataclass(frozen=True)
class Provenance:
    """``sources``: for each fact asked about (and each fact in ``replaced_by``), the messages it was raised
    from. ``replaced``: for each message asked about that a fact was raised from and a later fact replaced,
    when the later was said; ``replaced_by``: the later fact, for those whose later fact is active.
    ``changed``: for each fact of a one-value slot, the user's latest later turn that spoke of that slot
    without raising a fact there, and when it was said."""

    sources: dict[int, list[int]]
    replaced: dict[int, datetime]
    changed: dict[int, tuple[int, datetime]]
    replaced_by: dict[int, int] = field(default_factory=dict)


def provenance(*, knowledge_ids: list[int], message_ids: list[int]) -> Provenance:
    """Where these facts come from, which of these messages said what a later fact replaced, and which later
    turns may have changed these facts."""
    if not knowledge_ids and not message_ids:
        return Provenance(sources={}, replaced={}, changed={})
    rows = _fetch(_statement("provenance.sql"), {"knowledge": knowledge_ids, "messages": message_ids}, Knowledge)
    sources: dict[int, list[int]] = {}
    replaced: dict[int, datetime] = {}
    replaced_by: dict[int, int] = {}
    changed: dict[int, tuple[int, datetime]] = {}
    for relation, knowledge_id, message_id, when in rows:
        if relation == "source":
            sources.setdefault(knowledge_id, []).append(message_id)
        elif relation == "changed":
            changed[knowledge_id] = (message_id, when)
        else:
            replaced[message_id] = max(when, replaced.get(message_id, when))
            if knowledge_id is not None:
                replaced_by[message_id] = knowledge_id
    return Provenance(sources=sources, replaced=replaced, changed=changed, replaced_by=replaced_by)


@cache
def _statement(name: str) -> sql.SQL:
    """The statement in ``sql/name`` without its comment lines: parameters may be bound on the client
    (``DATABASE_PREPARED_STATEMENTS=false``), where a value holding a newline would end a comment
    around a placeholder and run as SQL."""
    text = (Path(__file__).parent / "sql" / name).read_text()
    return sql.SQL("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--")))


def _fetch(statement: sql.Composable, params: dict[str, object], *kinds: type[models.Model]) -> list[tuple]:
    """Run one statement on Django's connection; a pgvector dimension mismatch is ``ReembeddingNeeded``
    for the ``kinds`` it ranks."""
    connection.ensure_connection()
    raw = connection.connection
    if raw.adapters.types.get("vector") is None:
        register_vector(raw)
    text = statement.as_string(raw)
    try:
        # In an outer transaction a failed statement would abort it: keep the error in a savepoint.
        with transaction.atomic() if connection.in_atomic_block else nullcontext(), connection.cursor() as cursor:
            cursor.execute(text, params)
            return cursor.fetchall()
    except DataError as exc:
        if "vector" not in str(exc):
            raise
        raise ReembeddingNeeded.of(*kinds) from exc  # pgvector: "different vector dimensions 384 and 1536"


# The rows of one kind in scope linked to some entities, most recent first.
_LINKED = sql.SQL(
    "SELECT id FROM {table} WHERE {scope} AND id IN (SELECT {column} FROM {links} WHERE entity_id = ANY(%(entities)s)) "
    "ORDER BY {when} DESC, id DESC LIMIT {limit}"
)


def by_entities(*, scope: RowScope, query: str, limit: int) -> list[Candidate]:
    """The active facts, then the turns, in ``scope`` that mention an entity ``query`` names (at most
    ``limit`` of each), most recent first; ``[]`` when it names none."""
    entity_ids = [entity.pk for entity in entities_named_in(user_pks=scope.user_pks, text=query)]
    if not entity_ids:
        return []
    ranking: list[Candidate] = []
    for kind, condition, link, when in (
        (MemoryKind.KNOWLEDGE, scope.knowledge(), Entity.knowledge, "COALESCE(said_at, created_at)"),
        (MemoryKind.MESSAGE, scope.messages(), Entity.messages, "created_at"),
    ):
        if condition is None:
            continue
        statement = _LINKED.format(
            table=sql.Identifier(link.field.related_model._meta.db_table),
            scope=condition,
            column=sql.Identifier(link.field.m2m_reverse_name()),
            links=sql.Identifier(link.through._meta.db_table),
            when=sql.SQL(when),
            limit=sql.Literal(limit),
        )
        rows = _fetch(statement, {**scope.params(), "entities": entity_ids}, link.field.related_model)
        ranking += [Candidate(kind, pk) for (pk,) in rows]
    return ranking
