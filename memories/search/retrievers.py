"""Rankings: dense (pgvector, exact or HNSW) and lexical (BM25 over PostgreSQL full text), and by entity.

``rankings`` runs the dense and lexical rankings as one statement composed from ``sql/``
(``rankings.sql`` around ``nearest.sql`` per kind and ``bm25.sql``); ``by_entities`` finds the
rows that mention an entity the query names. The query vector is sent through pgvector's psycopg
adapter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import DataError, connection, models, transaction
from pgvector.psycopg import register_vector
from psycopg import sql

from memories.models import Diary, Entity, Knowledge, Message, Summary
from memories.search.fusion import Candidate
from memories.search.scope import Scope
from memories.services.entities import entities_named_in

__all__ = ["ReembeddingNeeded", "Rankings", "by_entities", "rankings"]

# BM25's k1 (Robertson & Zaragoza 2009, their usual value).
BM25_K1 = 1.2

MODELS: dict[str, type[models.Model]] = {
    "message": Message,
    "summary": Summary,
    "knowledge": Knowledge,
    "diary": Diary,
}
# The scope's condition for each kind, and the kinds' order among rows at the same distance.
_CONDITIONS = {"message": "messages", "summary": "summaries", "knowledge": "knowledge", "diary": "diaries"}
_KIND_ORDER = {kind: order for order, kind in enumerate(MODELS)}
# The rankings with no rows, for a scope or query that has none.
_NO_VECTOR_ROWS = sql.SQL(
    "SELECT NULL::text AS kind, NULL::bigint AS id, NULL::text AS embedding_model, NULL::float8 AS distance LIMIT 0"
)
_NO_WORD_ROWS = sql.SQL("SELECT NULL::text AS kind, NULL::bigint AS id, NULL::bigint AS place LIMIT 0")


class ReembeddingNeeded(Exception):
    """Stored vectors were made by another embedding model than the configured one.

    Raised rather than ranking vectors of two models together; ``manage.py reembed`` fixes it.
    ``code`` is ``REEMBEDDING_NEEDED``.
    """

    code = "REEMBEDDING_NEEDED"

    @classmethod
    def of(cls, model: type[models.Model]) -> ReembeddingNeeded:
        return cls(
            f"Stored {model._meta.verbose_name} vectors were made by another embedding model than the configured "
            f"{settings.EMBEDDING_MODEL!r}: run `manage.py reembed`, or configure the model that made them."
        )


@dataclass(frozen=True)
class Rankings:
    """What one statement found for a query: each ranking best first, and what fusion needs of each candidate.

    ``by_vector``: every kind's nearest rows, by cosine distance (nearest first, then kind, then id);
    ``by_words``: message ids by BM25, best first; ``distances``: cosine distance of each candidate
    that has a vector; ``sessions``: the session pk of each message and summary; ``neighbours``: for
    each message id, the ids of the turns just before and after it in its session.
    """

    by_vector: list[Candidate] = field(default_factory=list)
    by_words: list[int] = field(default_factory=list)
    distances: dict[Candidate, float] = field(default_factory=dict)
    sessions: dict[Candidate, int] = field(default_factory=dict)
    neighbours: dict[int, tuple[int | None, int | None]] = field(default_factory=dict)


def rankings(
    *, scope: Scope, query: str, vector: list[float], limits: dict[str, int], entity_messages: Sequence[int] = ()
) -> Rankings:
    """Rank ``scope`` for ``query`` by vector (every kind in ``limits``) and by BM25 (messages), in one statement.

    Args:
        vector: the query embedding (``EMBEDDING_DIMENSIONS`` floats).
        limits: rows each vector ranking returns, by kind (``message``, ``summary``, ``knowledge``,
            ``diary``); BM25 returns ``limits["message"]`` messages.
        entity_messages: more message ids (found by entity) to learn the session and neighbours of.

    BM25 is Okapi BM25 with k1 1.2 and b 0 (no length normalisation); its inverse document
    frequencies are those of the scoped messages, so a word every turn of the user holds (a
    speaker's name) weighs little. A query without word characters has no BM25 ranking.

    Raises:
        ReembeddingNeeded: a ranked vector was made by another embedding model.
    """
    nearest = []
    for kind, limit in limits.items():
        condition = getattr(scope, _CONDITIONS[kind])()
        if condition is None or not scope.user_pks and kind != "knowledge":
            continue
        nearest.append(
            _statement("nearest.sql").format(
                table=sql.Identifier(MODELS[kind]._meta.db_table),
                kind=sql.Literal(kind),
                scope=condition,
                limit=sql.Literal(limit),
            )
        )
    words = scope.messages()
    if words is not None and scope.user_pks and "message" in limits and re.search(r"\w", query):
        by_words = _statement("bm25.sql").format(scope=words, limit=sql.Literal(limits["message"]))
    else:
        by_words = _NO_WORD_ROWS
    if nearest:
        by_vector = sql.SQL(" UNION ALL ").join(sql.SQL("({})").format(part) for part in nearest)
    else:
        by_vector = _NO_VECTOR_ROWS
    statement = _statement("rankings.sql").format(by_vector=by_vector, by_words=by_words)
    params = {
        **scope.params(),
        "vector": np.asarray(vector, dtype=np.float32),
        "exact_max_rows": settings.EXACT_SEARCH_MAX_ROWS,
        "query": query,
        "k1": BM25_K1,
        "entity_messages": list(entity_messages),
    }
    found = Rankings()
    vector_rows, word_rows = [], []
    rows = _fetch(statement, params, Message)
    for kind, pk, vector_found, words_place, distance, embedding_model, session, before, after in rows:
        candidate = (kind, pk)
        if distance is not None:
            if embedding_model != settings.EMBEDDING_MODEL:
                raise ReembeddingNeeded.of(MODELS[kind])
            found.distances[candidate] = distance
        if vector_found:
            vector_rows.append((distance, _KIND_ORDER[kind], pk, candidate))
        if words_place is not None:
            word_rows.append((words_place, pk))
        if session is not None:
            found.sessions[candidate] = session
        if kind == "message":
            found.neighbours[pk] = (before, after)
    found.by_vector.extend(candidate for *_, candidate in sorted(vector_rows))
    found.by_words.extend(pk for _, pk in sorted(word_rows))
    return found


@cache
def _statement(name: str) -> sql.SQL:
    """The statement in ``sql/name`` without its comment lines: parameters are bound on the client,
    where a value holding a newline would end a comment around a placeholder and run as SQL."""
    text = (Path(__file__).parent / "sql" / name).read_text()
    return sql.SQL("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--")))


def _fetch(statement: sql.Composable, params: dict[str, object], model: type[models.Model]) -> list[tuple]:
    """Run one statement on Django's connection; a pgvector dimension mismatch is ``ReembeddingNeeded``."""
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
        raise ReembeddingNeeded.of(model) from exc  # pgvector: "different vector dimensions 384 and 1536"


# The rows of one kind in scope linked to some entities, most recent first.
_LINKED = sql.SQL(
    "SELECT id FROM {table} WHERE {scope} AND id IN (SELECT {column} FROM {links} WHERE entity_id = ANY(%(entities)s)) "
    "ORDER BY {when} DESC, id DESC LIMIT {limit}"
)


def by_entities(*, scope: Scope, query: str, limit: int) -> list[tuple[str, int]]:
    """The active facts, then the turns, in ``scope`` that mention an entity ``query`` names (at most
    ``limit`` of each), most recent first; ``[]`` when it names none."""
    entity_ids = list(entities_named_in(user_pks=scope.user_pks, text=query).values_list("pk", flat=True))
    if not entity_ids:
        return []
    ranking: list[tuple[str, int]] = []
    for kind, condition, link, when in (
        ("knowledge", scope.knowledge(), Entity.knowledge, "COALESCE(said_at, created_at)"),
        ("message", scope.messages(), Entity.messages, "created_at"),
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
        ranking += [(kind, pk) for (pk,) in rows]
    return ranking
