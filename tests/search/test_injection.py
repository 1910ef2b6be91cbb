"""Text a client sends (a query, a channel, a stored message) is only ever data to the search statements."""

from __future__ import annotations

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)

PAYLOAD = "dog\n; CREATE TABLE injected_probe (id int); --"


def injected() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('injected_probe') IS NOT NULL")
        return cursor.fetchone()[0]


@pytest.mark.parametrize("field", ["query", "channel"])
def test_a_newline_in_search_input_runs_no_sql(add_messages, search, field):
    add_messages("alice", "s1", [{"role": "user", "content": "My dog is called Biscuit."}])
    arguments = {"userId": "alice", "query": "What is my dog called?", field: PAYLOAD}
    result = search(**arguments)
    assert result["__typename"] == "SearchResult"
    assert not injected()


def test_a_newline_in_a_stored_message_runs_no_sql_when_it_becomes_the_context_query(add_messages, gql):
    add_messages("alice", "s1", [{"role": "user", "content": "My dog is called Biscuit."}])
    add_messages("alice", "s2", [{"role": "user", "content": PAYLOAD}])
    body = gql(
        'query { context(input: {userId: "alice", sessionId: "s2"}) { ... on Context { query memories { id } } } }'
    )
    assert body["data"]["context"]["query"] == PAYLOAD
    assert not injected()
