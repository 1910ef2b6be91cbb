"""Per-user vector search: exact for small scopes, HNSW above ``EXACT_SEARCH_MAX_ROWS``, never
short of ``topK`` when the user has that many rows; a constant number of database round-trips."""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.models import EndUser, Message, Session
from memories.search import _nearest

pytestmark = pytest.mark.django_db

USERS = 20
PER_USER = 30


@pytest.fixture
def scattered(settings) -> dict[int, dict[int, np.ndarray]]:
    """20 users x 30 messages with random unit vectors, the users' rows interleaved in the table."""
    rng = np.random.default_rng(7)
    users = [EndUser.objects.create(external_id=f"user-{i}") for i in range(USERS)]
    sessions = {u.pk: Session.objects.create(user=u, external_id="s1") for u in users}
    rows = []
    for n in range(PER_USER):
        for user in users:
            vector = rng.standard_normal(settings.EMBEDDING_DIMENSIONS)
            rows.append(
                Message(
                    user=user,
                    session=sessions[user.pk],
                    role="user",
                    content=f"message {n}",
                    embedding=vector / np.linalg.norm(vector),
                    embedding_model=settings.EMBEDDING_MODEL,
                )
            )
    Message.objects.bulk_create(rows)
    vectors: dict[int, dict[int, np.ndarray]] = {u.pk: {} for u in users}
    for message in Message.objects.all():
        vectors[message.user_id][message.pk] = np.asarray(message.embedding)
    return vectors


def _prefer_the_index() -> None:
    """On 600 rows the planner would rather sort a user's rows than use HNSW: make sorting dear."""
    with connection.cursor() as cursor:
        for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
            cursor.execute(f"SET {setting} = off")


def _statements(queries: CaptureQueriesContext) -> int:
    """Queries other than savepoints: the test's transaction adds those, production runs in autocommit."""
    return sum(not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT")) for q in queries.captured_queries)


def _brute_force(rows: dict[int, np.ndarray], query: np.ndarray, top_k: int) -> list[int]:
    distance = {pk: 1 - float(v @ query) / (np.linalg.norm(v) * np.linalg.norm(query)) for pk, v in rows.items()}
    return sorted(distance, key=distance.get)[:top_k]


def _nearest_ids(user_pk: int, query: np.ndarray) -> list[int]:
    return _nearest(
        model=Message, scope="user_id = %(user)s", params={"user": user_pk}, vector=query.tolist(), top_k=10
    )


def _hnsw_alone(user_pk: int, query: np.ndarray) -> list[int]:
    """What the HNSW index gives for the user's 10 nearest, filtering after the index scan."""
    literal = "[" + ",".join(map(str, query.tolist())) + "]"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM memories_message WHERE user_id = %s ORDER BY embedding <=> %s::vector LIMIT 10",
            [user_pk, literal],
        )
        return [pk for (pk,) in cursor.fetchall()]


def _query(seed: int, dimensions: int) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal(dimensions)
    return vector / np.linalg.norm(vector)


def test_small_scopes_are_ranked_exactly_in_one_statement(scattered, settings):
    for seed, (user_pk, rows) in enumerate(scattered.items()):
        query = _query(seed, settings.EMBEDDING_DIMENSIONS)
        with CaptureQueriesContext(connection) as queries:
            found = _nearest_ids(user_pk, query)
        assert found == _brute_force(rows, query, 10)
        assert _statements(queries) == 1


def test_hnsw_scopes_still_return_top_k_under_a_selective_filter(scattered, settings):
    # Every scope counts as large, so the HNSW branch runs; with ef_search 10 the index hands
    # back about 10 rows of the whole table, nearly none of them this user's (pgvector 0.6
    # filters after the index scan). The short ranking must be completed exactly.
    settings.EXACT_SEARCH_MAX_ROWS = 5
    _prefer_the_index()
    with connection.cursor() as cursor:
        cursor.execute("SET hnsw.ef_search = 10")
    short = 0
    for seed, (user_pk, rows) in enumerate(scattered.items()):
        query = _query(seed, settings.EMBEDDING_DIMENSIONS)
        with CaptureQueriesContext(connection) as queries:
            found = _nearest_ids(user_pk, query)
        assert found == _brute_force(rows, query, 10)
        assert _statements(queries) == 1
        short += len(_hnsw_alone(user_pk, query)) < 10
    assert short > 0  # HNSW alone did come back short, and the ranking was completed


def test_hnsw_branch_serves_large_scopes(scattered, settings):
    settings.EXACT_SEARCH_MAX_ROWS = 5
    _prefer_the_index()
    user_pk = next(iter(scattered))
    query = _query(1, settings.EMBEDDING_DIMENSIONS)
    statements = []

    def record(execute, sql, params, many, context):  # noqa: ANN001, ANN202
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        _nearest_ids(user_pk, query)
    (sql, params), *_ = [(sql, params) for sql, params in statements if sql.lstrip().startswith("WITH")]
    plan = _explain_prepared(sql, params)
    # The HNSW index scan ran; the exact branch was ruled out before it ran.
    assert "Index Scan using message_embedding_hnsw" in plan
    assert "never executed" in plan


def _explain_prepared(sql: str, params: dict) -> str:
    """``EXPLAIN ANALYZE`` of the statement as searches run it: through psycopg's prepared
    statement (``SEARCH_PREPARED_STATEMENTS``), else as it is, with ``params``."""
    # psycopg numbers named placeholders in order of first appearance.
    names = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", sql)))
    numbered = re.sub(r"%\((\w+)\)s", lambda m: f"${names.index(m.group(1)) + 1}", sql)
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements WHERE statement = %s", [numbered])
        if prepared := cursor.fetchone():
            cursor.execute(
                f"EXPLAIN ANALYZE EXECUTE {prepared[0]}({', '.join(['%s'] * len(names))})", [params[n] for n in names]
            )
        else:
            cursor.execute("EXPLAIN ANALYZE " + sql, params)
        return "\n".join(line for (line,) in cursor.fetchall())


@pytest.mark.skipif(not django_settings.SEARCH_PREPARED_STATEMENTS, reason="SEARCH_PREPARED_STATEMENTS is off")
def test_search_statements_are_prepared_once_and_planned_once(add_messages, gql):
    add_messages("alice", "s1", [{"role": "user", "content": f"I talked about hobby number {n}."} for n in range(5)])
    query = "query($i: SearchInput!) { search(input: $i) { ... on SearchResult { stages } } }"
    variables = {"i": {"userId": "alice", "query": "Which hobby?", "searchContent": True, "answer": False}}
    runs = 8
    for _ in range(runs):
        assert gql(query, variables)["data"]["search"]["stages"] == ["memory", "messages"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT generic_plans, custom_plans FROM pg_prepared_statements")
        plans = cursor.fetchall()
    # Stage 2's full-text ranking, stage 1, the rest of stage 2: each prepared once and run
    # every time. PostgreSQL plans the first five runs for their values, then, as a generic
    # plan costs no more, keeps one (plan_cache_mode = auto).
    assert len(plans) == 3, plans
    assert all(generic + custom == runs and generic > 0 for generic, custom in plans), plans


def test_round_trips_per_search_do_not_grow_with_top_k(add_messages, gql, settings):
    for session in range(3):
        add_messages(
            "alice",
            f"s{session}",
            [{"role": "user", "content": f"In session {session} I talked about hobby number {n}."} for n in range(20)],
        )
    settings.CHAT_BACKEND = "bench.zero_latency.ZeroLatencyChatModel"
    query = "query($i: SearchInput!) { search(input: $i) { ... on SearchResult { stages hits { id } } } }"
    counts = {}
    for answer in (False, True):
        for top_k in (1, 5, 20, 50):
            variables = {"i": {"userId": "alice", "query": "Which hobby?", "topK": top_k, "searchContent": True}}
            variables["i"]["answer"] = answer
            gql(query, variables)  # warm: the API key's last-used time is written at most once a minute
            with CaptureQueriesContext(connection) as queries:
                body = gql(query, variables)
            assert body["data"]["search"]["stages"] == ["memory", "messages"]
            assert len(body["data"]["search"]["hits"]) >= min(top_k, 20)
            counts[(answer, top_k)] = _statements(queries)
    assert len(set(counts.values())) == 1, counts
    # API key, stage 2's full-text ranking (while the query is embedded), stage 1 (summaries,
    # knowledge and diaries), the rest of stage 2 (messages); each looks up the end users itself.
    assert set(counts.values()) == {4}, counts


def test_the_query_vector_reaches_postgresql_as_pgvector_would_store_it():
    """The query vector's short text form (single precision, 9 digits) gives PostgreSQL the very
    vector that the full-precision values give it, so no ranking moves."""
    from memories.search import _vector_literal

    rng = np.random.default_rng(3)
    vectors = [rng.standard_normal(384).tolist() for _ in range(50)]
    vectors.append([1e-40, -0.0, 3.4e38, -1e-7, 123456.789, 2.0**-149] + [0.1] * 378)
    with connection.cursor() as cursor:
        for i, vector in enumerate(vectors):
            full = "[" + ",".join(map(repr, vector)) + "]"
            short = _vector_literal(vector)
            if i < 50:  # a model's values, not ones with a short decimal form like 0.1
                assert len(short) < 0.7 * len(full)
            cursor.execute("SELECT %s::vector = %s::vector, %s::vector::text", [short, full, short])
            same, text = cursor.fetchone()
            assert same, (short[:80], text[:80])
