"""Lists are offset-paginated pages: `pagination: {limit, offset}` in, `results`, `pageInfo` and
`totalCount` out; an out-of-range page is refused naming the argument."""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import EndUserFactory, MessageFactory, SessionFactory
from tests.graphql.documents import (
    HISTORY,
    LIST_FIELDS,
    MIA_MESSAGES,
    list_query,
    msg,
    ok,
    only_error,
)

pytestmark = pytest.mark.django_db


def test_history_pages(add_messages, gql_ok):
    add_messages("alice", "s1", [msg(f"message {i}", f"2024-05-01T10:0{i}:00Z") for i in range(5)])

    def page(**variables: Any) -> dict[str, Any]:
        return gql_ok(HISTORY, {"userId": "alice", **variables})["history"]

    def items(*numbers: int) -> list[dict[str, str]]:
        return [{"content": f"message {i}"} for i in numbers]

    assert page(limit=2) == {"results": items(0, 1), "totalCount": 5, "pageInfo": {"limit": 2, "offset": 0}}
    assert page(limit=2, offset=2) == {"results": items(2, 3), "totalCount": 5, "pageInfo": {"limit": 2, "offset": 2}}
    assert page(limit=2, offset=4) == {"results": items(4), "totalCount": 5, "pageInfo": {"limit": 2, "offset": 4}}
    assert page(limit=3, offset=2) == {
        "results": items(2, 3, 4),
        "totalCount": 5,
        "pageInfo": {"limit": 3, "offset": 2},
    }
    assert page() == {"results": items(0, 1, 2, 3, 4), "totalCount": 5, "pageInfo": {"limit": 100, "offset": 0}}
    for offset in (5, 50):
        assert page(offset=offset) == {"results": [], "totalCount": 5, "pageInfo": {"limit": 100, "offset": offset}}


@pytest.mark.parametrize("field", list(LIST_FIELDS))
def test_every_list_accepts_a_page_of_max_page_size(field, gql_ok, settings):
    page = gql_ok(list_query(field), {"limit": settings.MAX_PAGE_SIZE, "offset": 0})[field]
    assert page == {"totalCount": 0, "pageInfo": {"limit": settings.MAX_PAGE_SIZE, "offset": 0}}


@pytest.mark.parametrize("field", list(LIST_FIELDS))
@pytest.mark.parametrize(
    ("limit", "offset", "message"),
    [
        (0, 0, "pagination: limit must be between 1 and 1000 (MAX_PAGE_SIZE)."),
        (1001, 0, "pagination: limit must be between 1 and 1000 (MAX_PAGE_SIZE)."),
        (-1, 0, "pagination: limit must be between 1 and 1000 (MAX_PAGE_SIZE)."),
        (10, -1, "pagination: offset must not be negative."),
    ],
)
def test_every_list_refuses_a_bad_page_naming_the_limit(field, limit, offset, message, gql, settings):
    assert settings.MAX_PAGE_SIZE == 1000
    body = gql(list_query(field), {"limit": limit, "offset": offset})
    assert only_error(body) == {"message": message, "path": [field], "extensions": {"code": "BAD_USER_INPUT"}}


def test_a_list_without_limit_works_when_max_page_size_is_below_the_default(add_messages, gql, settings):
    add_messages("alice", "s1", [msg("hello there", "2024-05-01T10:00:00Z")])
    settings.MAX_PAGE_SIZE = 50
    page = ok(gql('{ history(userId: "alice") { results { content } pageInfo { limit } } }'))["history"]
    assert page == {"results": [{"content": "hello there"}], "pageInfo": {"limit": 50}}


def test_a_page_may_hold_more_rows_than_the_default_up_to_max_page_size(gql_ok):
    session = SessionFactory(user=EndUserFactory(external_id="alice"))
    contents = [m.content for m in MessageFactory.create_batch(150, session=session)]
    page = gql_ok(HISTORY, {"userId": "alice", "limit": 120, "offset": 30})["history"]
    assert [m["content"] for m in page["results"]] == contents[30:]
    assert (page["totalCount"], page["pageInfo"]) == (150, {"limit": 120, "offset": 30})


def test_a_null_limit_gives_the_default_page(add_messages, gql_ok):
    add_messages("alice", "s1", [msg("hello there", "2024-05-01T10:00:00Z")])
    page = gql_ok('{ history(userId: "alice", pagination: {limit: null}) { results { content } pageInfo { limit } } }')
    assert page["history"] == {"results": [{"content": "hello there"}], "pageInfo": {"limit": 100}}


def test_pagination_past_the_end_is_empty_with_the_total(add_messages, gql):
    add_messages("mia", "s1", MIA_MESSAGES)
    body = gql('{ history(userId: "mia", pagination: {limit: 2, offset: 3}) { results { content } totalCount } }')
    assert body["data"]["history"] == {"results": [], "totalCount": 3}
