"""Fixtures of the GraphQL operation tests: ``gql_ok`` and ``summarize``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.graphql.documents import CREATE_SUMMARIES, ok


@pytest.fixture
def gql_ok(gql):
    """``gql`` that asserts there are no errors and returns ``data``."""

    def run(query: str, variables: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
        return ok(gql(query, variables, **kwargs))

    return run


@pytest.fixture
def summarize(gql_ok):
    """Summarise every session of a user (``createSummaries``; the worker runs in the request)."""

    def run(user_id: str) -> list[str]:
        return gql_ok(CREATE_SUMMARIES, {"userId": user_id})["createSummaries"]["queuedSessionIds"]

    return run
