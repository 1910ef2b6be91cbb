"""The two rankings a search fuses, seen through ``search``/``retrieve`` and GraphQL.

Lexical: BM25 over the messages' words, weighted by the searched users' own messages. Dense:
pgvector's cosine ranking, exact for one user's rows whether the scope is ranked exactly or
through the HNSW index; only vectors of the configured model and dimensions take part.
"""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pgvector.django import CosineDistance

from memories.models import Diary, EndUser, Knowledge, Message, Session, Summary
from memories.search import ReembeddingNeeded, retrieve, search
from memories.search.scope import RowScope
from memories.services.diaries import diary_upsert
from memories.services.embeddings import embeddings_fill
from memories.services.knowledge import knowledge_add
from memories.services.summaries import summary_create
from tests.conftest import SEARCH
from tests.factories import EndUserFactory, MessageFactory, SessionFactory

pytestmark = pytest.mark.django_db


# --- lexical ---------------------------------------------------------------------------


def add_unembedded(user_id: str, contents: list[str], speaker: str | None = None) -> None:
    """Store each turn in a session of its own, without its vector (the worker has not run yet).

    Not embedded, the turns are found by their words alone; one turn per session keeps
    neighbouring turns from lifting one another, so hits come in BM25 order.
    """
    user = EndUserFactory(external_id=user_id)
    for content in contents:
        MessageFactory(
            session=SessionFactory(user=user), content=content, metadata={"speaker": speaker} if speaker else {}
        )


def ranked(user_ids: list[str], query: str, top_k: int = 10) -> list[str]:
    """The contents of the message hits of a retrieval-only search, best first."""
    result = search(user_external_ids=user_ids, query=query, top_k=top_k, sources=("message",), answer=False)
    return [h.content for h in result.hits]


@pytest.mark.usefixtures("hashing_embedder")
def test_a_rare_word_outweighs_words_every_turn_holds():
    # Every turn is Caroline's and most say "like" twice: only "pottery" tells the turns apart.
    add_unembedded("alice", [f"I like day {i}, I really like it." for i in range(10)], speaker="Caroline")
    add_unembedded("alice", ["Pottery class on Tuesday."], speaker="Caroline")
    assert ranked(["alice"], "What does Caroline like about pottery?")[0] == "Pottery class on Tuesday."


@pytest.mark.usefixtures("hashing_embedder")
def test_repeating_one_word_does_not_beat_holding_two_of_the_query():
    add_unembedded(
        "alice",
        [
            "Pottery, pottery, pottery, pottery and more pottery!",
            "My pottery class starts at nine.",
            *(f"Something else entirely, number {i}." for i in range(8)),
        ],
    )
    assert ranked(["alice"], "When does the pottery class start?") == [
        "My pottery class starts at nine.",
        "Pottery, pottery, pottery, pottery and more pottery!",
    ]


@pytest.mark.usefixtures("hashing_embedder")
def test_word_weights_come_from_the_searched_users_messages_alone():
    # For bob, "guitar" is in every turn and "lesson" in one: the lesson turn leads for him,
    # whatever alice's many "lesson" turns would make of the word.
    add_unembedded("alice", [f"Lesson {i} today." for i in range(20)])
    add_unembedded("bob", ["Guitar guitar guitar all weekend.", "Guitar lesson on Friday.", "Guitar strings are new."])
    bob = ranked(["bob"], "my guitar lesson")
    assert bob[0] == "Guitar lesson on Friday."
    assert set(bob) == {"Guitar guitar guitar all weekend.", "Guitar lesson on Friday.", "Guitar strings are new."}


@pytest.mark.usefixtures("hashing_embedder")
def test_stop_words_alone_and_no_words_find_nothing():
    add_unembedded("alice", ["What was it that I did there?"])
    assert ranked(["alice"], "what was it that I did") == []
    assert ranked(["alice"], "?!") == []


@pytest.mark.usefixtures("hashing_embedder")
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Who is O'Brien?", "O'Brien fixed the boat."),
        ("a well-known bakery", "That well-known bakery closed."),
        ("the page at example.com/menu?x=1&y=2", "The menu is at example.com/menu?x=1&y=2 now."),
        ("back\\slash and 'quotes' & ampersands | pipes", "A back\\slash, 'quotes' & ampersands | pipes."),
        ("(unbalanced ! <-> :* operators", "Unbalanced operators like these confuse parsers."),
    ],
)
def test_words_with_quotes_hyphens_urls_and_operators_find_their_turn(query, expected):
    # Quotes, hyphens, URLs and tsquery's operator characters neither break the statement nor hide the turn.
    add_unembedded(
        "alice",
        [
            "O'Brien fixed the boat.",
            "That well-known bakery closed.",
            "The menu is at example.com/menu?x=1&y=2 now.",
            "A back\\slash, 'quotes' & ampersands | pipes.",
            "Unbalanced operators like these confuse parsers.",
            "Nothing to see here.",
        ],
    )
    assert ranked(["alice"], query)[0] == expected


@pytest.mark.usefixtures("hashing_embedder")
def test_users_are_named_by_external_id_repeats_and_unknown_ones_add_nothing():
    add_unembedded("alice", [f"Alice's pottery note {i}." for i in range(3)])
    add_unembedded("bob", [f"Bob's pottery note {i}." for i in range(2)])
    alice = ranked(["alice"], "pottery notes")
    assert len(alice) == 3
    assert all(content.startswith("Alice's") for content in alice)
    assert len(ranked(["alice", "bob"], "pottery notes")) == 5
    assert ranked(["alice", "alice"], "pottery notes") == alice
    assert ranked(["nobody", "alice"], "pottery notes") == alice
    assert ranked(["nobody"], "pottery notes") == []


# --- dense -----------------------------------------------------------------------------

USERS = 20
PER_USER = 30


@pytest.fixture
def scattered(settings) -> dict[str, dict[int, np.ndarray]]:
    """20 users x 30 messages with random unit vectors, interleaved in the table, one message per session.

    One message per session, and no words a query shares: the hits come in the vector ranking's order.
    Random vectors are nearly orthogonal to any query, so the relevance gate is opened for them.
    """
    settings.SEARCH_MIN_SIMILARITY = -1.0
    rng = np.random.default_rng(7)
    users = EndUser.objects.bulk_create(EndUserFactory.build_batch(USERS))
    sessions = Session.objects.bulk_create([SessionFactory.build(user=user) for _ in range(PER_USER) for user in users])
    Message.objects.bulk_create(
        [
            MessageFactory.build(
                session=session,
                embedding=unit_vector(rng, settings.EMBEDDING_DIMENSIONS),
                embedding_model=settings.EMBEDDING_MODEL,
            )
            for session in sessions
        ]
    )
    vectors: dict[str, dict[int, np.ndarray]] = {u.external_id: {} for u in users}
    for pk, user_id, embedding in Message.objects.values_list("pk", "user__external_id", "embedding"):
        vectors[user_id][pk] = np.asarray(embedding)
    return vectors


def unit_vector(rng: np.random.Generator, dimensions: int) -> np.ndarray:
    vector = rng.standard_normal(dimensions)
    return vector / np.linalg.norm(vector)


def query_vector(seed: int, dimensions: int) -> np.ndarray:
    return unit_vector(np.random.default_rng(seed), dimensions)


def brute_force(rows: dict[int, np.ndarray], query: np.ndarray, top_k: int) -> list[int]:
    """The ``top_k`` ids nearest to ``query`` by cosine distance, computed in Python."""
    distance = {pk: 1 - float(v @ query) / (np.linalg.norm(v) * np.linalg.norm(query)) for pk, v in rows.items()}
    return sorted(distance, key=distance.get)[:top_k]


def nearest_hits(user_id: str, vector: np.ndarray, top_k: int = 10) -> list[int]:
    scope = RowScope.for_users(user_external_ids=[user_id], sources=("message",))
    return [h.id for h in retrieve(scope=scope, query="?", vector=vector.tolist(), top_k=top_k)]


def test_one_users_nearest_messages_are_exact_below_the_exact_search_limit(scattered, settings):
    assert settings.EXACT_SEARCH_MAX_ROWS >= PER_USER
    for seed, (user_id, rows) in enumerate(scattered.items()):
        vector = query_vector(seed, settings.EMBEDDING_DIMENSIONS)
        assert nearest_hits(user_id, vector) == brute_force(rows, vector, 10)


def test_above_the_exact_search_limit_a_selective_scope_still_gets_its_exact_top_k(scattered, settings):
    # Every scope counts as large, so the HNSW index serves it; with ef_search 10 the index hands
    # back about 10 rows of the whole table, few of them this user's (pgvector filters after the
    # index scan). The search must still return the user's exact 10 nearest.
    settings.EXACT_SEARCH_MAX_ROWS = 5
    with connection.cursor() as cursor:
        # On 600 rows the planner would rather sort a user's rows than use HNSW: make sorting dear.
        for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
            cursor.execute(f"SET LOCAL {setting} = off")
        cursor.execute("SET LOCAL hnsw.ef_search = 10")
    short = 0
    for seed, (user_id, rows) in enumerate(scattered.items()):
        vector = query_vector(seed, settings.EMBEDDING_DIMENSIONS)
        assert nearest_hits(user_id, vector) == brute_force(rows, vector, 10)
        by_index = Message.objects.filter(user__external_id=user_id).order_by(CosineDistance("embedding", vector))
        short += len(by_index[:10]) < 10
    assert short > 0  # the index alone did come back short for some users, and the search made up for it


def test_above_the_exact_search_limit_the_hnsw_index_is_scanned(scattered, settings):
    settings.EXACT_SEARCH_MAX_ROWS = 5
    with connection.cursor() as cursor:
        for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
            cursor.execute(f"SET LOCAL {setting} = off")
    statements = []

    def record(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    user_id = next(iter(scattered))
    with connection.execute_wrapper(record):
        nearest_hits(user_id, query_vector(1, settings.EMBEDDING_DIMENSIONS))
    # The first statement that ranks by distance is the vector ranking (hits are loaded after it).
    sql, params = next((sql, params) for sql, params in statements if "<=>" in sql)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + sql, params)
        plan = "\n".join(line for (line,) in cursor.fetchall())
    [index_scan] = [line for line in plan.splitlines() if "Index Scan using message_embedding_hnsw" in line]
    assert "never executed" not in index_scan, plan


def test_a_user_with_fewer_rows_than_top_k_gets_them_all(scattered, settings):
    settings.EXACT_SEARCH_MAX_ROWS = 5
    user_id, rows = next(iter(scattered.items()))
    vector = query_vector(1, settings.EMBEDDING_DIMENSIONS)
    assert nearest_hits(user_id, vector, top_k=50) == brute_force(rows, vector, PER_USER)


# --- vectors of another model ----------------------------------------------------------


@pytest.fixture
def alice_everything(add_messages):
    """alice: a message, its session's summary, a fact and a diary entry, every one embedded."""
    add_messages("alice", "s1", [{"role": "user", "content": "I adopted a cat named Miso."}])
    summary_create(session_id=Session.objects.get(user__external_id="alice").pk, force=True)
    knowledge_add(user_external_id="alice", content="Alice has a cat named Miso.")
    diary_upsert(user_external_id="alice", diary_date=date(2024, 5, 1), content="Adopted Miso today.")
    for kind in ("summary", "knowledge", "diary"):
        embeddings_fill(kind=kind)
    assert not any(m.objects.filter(embedding=None).exists() for m in (Message, Summary, Knowledge, Diary))


@pytest.mark.parametrize("model", [Message, Summary, Knowledge, Diary])
def test_vectors_of_another_model_are_refused_whatever_their_kind(alice_everything, model):
    model.objects.update(embedding_model="some-older-model")
    with pytest.raises(ReembeddingNeeded, match="manage.py reembed") as refused:
        search(user_external_ids=["alice"], query="Which pet did I adopt?")
    assert f"Stored {model._meta.verbose_name} vectors" in str(refused.value)


class EightDimensionEmbedder:
    """The configured model's name on vectors of another size: a dimension change without re-embedding."""

    def embed(self, texts):
        from memories.llm import EmbeddingBatch

        return EmbeddingBatch(vectors=[[0.5] * 8 for _ in texts])


@pytest.mark.parametrize(("sources", "named"), [(None, "message"), (["KNOWLEDGE"], "knowledge")])
def test_a_query_vector_of_another_dimension_asks_for_reembedding(alice_everything, gql, settings, sources, named):
    settings.EMBEDDING_BACKEND = "tests.search.test_retrievers.EightDimensionEmbedder"
    query = {"userId": "alice", "query": "Which pet did I adopt?"} | ({"sources": sources} if sources else {})
    body = gql(SEARCH, {"input": query})
    assert body["data"] is None
    assert body["errors"][0]["extensions"]["code"] == "REEMBEDDING_NEEDED"
    assert "manage.py reembed" in body["errors"][0]["message"]
    assert named in body["errors"][0]["message"]


# --- round trips -----------------------------------------------------------------------


def test_statements_per_search_do_not_grow_with_top_k(add_messages, gql, settings):
    settings.SEARCH_MAX_TOKENS = 100_000  # every hit, however many: the statements are what is counted
    settings.KNOWLEDGE_CANDIDATES_NEED_APPROVAL = True  # turns and summaries only, whatever the reader raises
    for session in range(3):
        add_messages(
            "alice",
            f"s{session}",
            [{"role": "user", "content": f"In session {session} I talked about hobby number {n}."} for n in range(20)],
        )
    query = "query($i: SearchInput!) { search(input: $i) { ... on SearchResult { answer hits { id turns { id } } } } }"
    counts = {}
    for top_k in (1, 5, 20, 50):
        variables = {"i": {"userId": "alice", "query": "Which hobby did I talk about?", "topK": top_k}}
        gql(query, variables)  # warm: the API key's last-used time is written at most once a minute
        with CaptureQueriesContext(connection) as queries:
            body = gql(query, variables)
        assert len(body["data"]["search"]["hits"]) == top_k
        counts[top_k] = sum(not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT")) for q in queries)
    assert len(set(counts.values())) == 1, counts
