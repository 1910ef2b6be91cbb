"""Stage 1 beside stage 2: a retrieval-only search with searchContent runs them on two connections at once."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from memories import search as search_module
from memories.llm.base import ProcessThreads
from tests.conftest import SEARCH

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def pooled_connections():
    """The production connection pool (test settings turn it off), on the test database.

    The test's own connection stays as it was; stage threads take theirs from the pool.
    Yields the pool.
    """
    connection.ensure_connection()
    options = connection.settings_dict["OPTIONS"]
    options["pool"] = {"min_size": 1, "max_size": 3, "timeout": 5}
    try:
        yield connection.pool
    finally:
        connection.close_pool()
        options.pop("pool")


@pytest.fixture
def stage_one_threads(monkeypatch) -> list[str]:
    """Names of the threads stage 1 ran in, one per search."""
    names: list[str] = []
    retrieve_memory = search_module.retrieve_memory

    def recording(**kwargs):  # noqa: ANN003, ANN202
        names.append(threading.current_thread().name)
        return retrieve_memory(**kwargs)

    monkeypatch.setattr(search_module, "retrieve_memory", recording)
    return names


@pytest.fixture
def alice(add_messages):
    add_messages(
        "alice",
        "s1",
        [
            {"role": "user", "content": "My favourite food is sushi.", "createdAt": "2024-05-01T10:00:00Z"},
            {"role": "assistant", "content": "Sushi is a fine choice.", "createdAt": "2024-05-01T10:01:00Z"},
        ],
    )
    add_messages(
        "alice",
        "s2",
        [{"role": "user", "content": "I am learning the cello.", "createdAt": "2024-06-01T10:00:00Z"}],
    )


def _retrieve(search) -> list[tuple[str, str]]:  # noqa: ANN001
    result = search(userId="alice", query="What food do I like?", searchContent=True, answer=False, topK=3)
    assert result["stages"] == ["memory", "messages"]
    return [(hit["kind"], hit["id"]) for hit in result["hits"]]


def test_stage_one_runs_in_a_stage_thread_and_finds_what_it_finds_in_the_callers(
    alice, search, pooled_connections, stage_one_threads, settings
):
    settings.SEARCH_STAGE_THREADS = 2
    beside = _retrieve(search)
    settings.SEARCH_STAGE_THREADS = 0
    alone = _retrieve(search)

    assert stage_one_threads[0].startswith("search-stage")
    assert stage_one_threads[1] == threading.current_thread().name
    assert beside == alone
    assert {kind for kind, _ in beside} == {"MESSAGE", "SUMMARY"}


def test_stage_threads_give_their_connections_back(alice, search, pooled_connections, settings):
    settings.SEARCH_STAGE_THREADS = 2
    for _ in range(5):  # more searches than the pool has connections
        _retrieve(search)
    stats = pooled_connections.get_stats()
    assert stats["pool_available"] == stats["pool_size"]


def test_a_stage_one_failure_in_its_thread_reaches_the_caller(alice, gql, pooled_connections, monkeypatch, settings):
    settings.SEARCH_STAGE_THREADS = 2

    def stale(**kwargs):  # noqa: ANN003, ANN202
        assert threading.current_thread().name.startswith("search-stage")
        raise search_module.ReembeddingNeeded("Stored summary vectors were made by another embedding model.")

    monkeypatch.setattr(search_module, "retrieve_memory", stale)
    body = gql(SEARCH, {"input": {"userId": "alice", "query": "food?", "searchContent": True, "answer": False}})
    assert body["errors"][0]["extensions"]["code"] == "REEMBEDDING_NEEDED"


def test_in_a_transaction_stage_one_runs_in_the_callers_thread_and_sees_its_writes(
    alice, pooled_connections, stage_one_threads, settings
):
    from memories.models import Summary

    settings.SEARCH_STAGE_THREADS = 2

    with transaction.atomic():
        Summary.objects.filter(user__external_id="alice").delete()  # not committed: no other connection sees it
        result = search_module.search_memories(
            user_external_ids=["alice"], query="What food do I like?", search_content=True, answer=False
        )
    assert stage_one_threads == [threading.current_thread().name]
    assert all(hit.kind == "message" for hit in result.hits)


def test_a_busy_thread_pool_takes_nothing_more():
    threads = ProcessThreads(max_workers=1, name="test-busy")
    release = threading.Event()
    first = threads.submit_if_free(release.wait)
    assert first is not None
    assert threads.submit_if_free(lambda: "second") is None
    release.set()
    first.result(timeout=5)
    # The thread is free again by the time its future is done.
    second = threads.submit_if_free(lambda: "again")
    assert second is not None
    assert second.result(timeout=5) == "again"


def test_a_pool_smaller_than_the_threads_that_use_it_is_reported(settings, monkeypatch):
    from django.conf import settings as django_settings

    from memories.checks import check_pool_size

    settings.WEB_THREADS, settings.SEARCH_STAGE_THREADS = 10, 2
    options = django_settings.DATABASES["default"]["OPTIONS"]
    monkeypatch.setitem(options, "pool", {"min_size": 1, "max_size": 11})
    assert [w.id for w in check_pool_size()] == ["memories.W003"]
    monkeypatch.setitem(options, "pool", {"min_size": 1, "max_size": 12})
    assert check_pool_size() == []


def test_run_in_the_callers_thread_a_stage_one_failure_stops_the_search_before_stage_two(alice, monkeypatch, settings):
    settings.SEARCH_STAGE_THREADS = 0
    stage_two_runs: list[dict] = []

    def stale(**kwargs):  # noqa: ANN003, ANN202
        raise search_module.ReembeddingNeeded("Stored summary vectors were made by another embedding model.")

    monkeypatch.setattr(search_module, "retrieve_memory", stale)
    monkeypatch.setattr(search_module, "retrieve_messages", lambda **kwargs: stage_two_runs.append(kwargs) or [])
    with pytest.raises(search_module.ReembeddingNeeded):
        search_module.search_memories(user_external_ids=["alice"], query="food?", search_content=True, answer=False)
    assert stage_two_runs == []
