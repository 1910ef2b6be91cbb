"""Property-based fuzzing of the GraphQL API with schemathesis (its GraphQL support, hypothesis-graphql).

Every query and mutation of the schema gets generated documents (valid by the schema, with
arbitrary argument values, and dates and JSON that are often malformed) sent over HTTP through
the WSGI handler with an all-users key. Asserted for each: no 5xx, a JSON answer, and never
``INTERNAL_ERROR``. ``FUZZ_EXAMPLES`` sets the cases per operation: a seeded few hundred in
all in the normal test run, thousands with ``make fuzz``.
"""

from __future__ import annotations

import json
import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from graphql import NameNode, ObjectFieldNode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.graphql import nodes

from memories.graphql.schema import schema as graphql_schema

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))

_names = st.from_regex(r"\A[_A-Za-z][_0-9A-Za-z]{0,8}\Z")
_text = st.text(max_size=40)
# Dates: valid ones, and what clients get wrong (impossible days, bad offsets, years 0 and 10000).
_days = st.dates().map(str)
_junk_days = st.sampled_from(["2024-02-30", "0000-01-01", "10000-01-01", "not a date", "", "2024-13-01"])
_offsets = st.sampled_from(["Z", "+00:00", "-05:00", "+25:00", "+14:00", ""])
_times = st.times().map(lambda t: t.isoformat())
schemathesis.graphql.scalar("Date", st.one_of(_days, _junk_days, _text).map(nodes.String))
schemathesis.graphql.scalar(
    "DateTime",
    st.one_of(
        st.builds(lambda d, t, o: f"{d}T{t}{o}", st.one_of(_days, _junk_days), _times, _offsets),
        st.just("9999-12-31T23:00:00-05:00"),
        _text,
    ).map(nodes.String),
)
# JSON (metadata): nested values with odd keys and strings, sometimes deep.
_json_leaves = st.one_of(
    _text.map(nodes.String),
    st.integers().map(nodes.Int),
    st.floats(allow_nan=False, allow_infinity=False).map(nodes.Float),
    st.booleans().map(nodes.Boolean),
    st.just(nodes.Null),
)
schemathesis.graphql.scalar(
    "JSON",
    st.recursive(
        _json_leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=4).map(nodes.List),
            st.dictionaries(_names, children, max_size=4).map(
                lambda d: nodes.Object([ObjectFieldNode(name=NameNode(value=k), value=v) for k, v in d.items()])
            ),
        ),
        max_leaves=20,
    ),
)

schema = schemathesis.graphql.from_file(graphql_schema.as_str())
schema.app = get_wsgi_application()
schema.location = "/graphql/"


@pytest.fixture
def test_transaction_kept():
    """The WSGI handler closes the connection after each request; the test's transaction lives on it."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_no_generated_request_is_a_server_error(case, trusted_key, test_transaction_kept):
    # A savepoint per request, as each runs on its own in production: a statement PostgreSQL
    # refused (and the service answered) must not break the test's transaction for the next ones.
    with transaction.atomic():
        response = case.call(headers={"Authorization": f"Bearer {trusted_key}"})
    assert response.status_code < 500, response.text
    body = json.loads(response.text)
    assert "INTERNAL_ERROR" not in _codes(body), (case.body, body)


def _codes(body: dict) -> list[str]:
    """The errors' codes: a generated value may itself read "INTERNAL_ERROR" and be quoted in a message."""
    return [(error.get("extensions") or {}).get("code") for error in body.get("errors") or []]


# Generated documents carry their values inline; clients send most values as variables, which
# are coerced by another path. These documents take every argument as a variable, sent as raw
# JSON that is often wrong: junk dates, NaN and infinities, integers over 4,300 digits, lone
# surrogates, deep nesting, values of the wrong type.
VARIABLE_DOCUMENTS = {
    "addMessages": """
        mutation($userId: String!, $sessionId: String!, $channel: String!, $messages: [MessageInput!]!) {
          addMessages(userId: $userId, sessionId: $sessionId, channel: $channel, messages: $messages) { __typename }
        }""",
    "upsertDiary": """
        mutation($userId: String!, $diaryDate: Date!, $content: String!, $metadata: JSON) {
          upsertDiary(userId: $userId, diaryDate: $diaryDate, content: $content, metadata: $metadata) { __typename }
        }""",
    "history": """
        query($userId: String!, $since: DateTime, $until: DateTime, $limit: Int, $offset: Int) {
          history(userId: $userId, since: $since, until: $until, pagination: {limit: $limit, offset: $offset}) {
            totalCount
          }
        }""",
    "knowledge": """
        mutation($userId: String, $content: String!, $id: ID!) {
          addKnowledge(userId: $userId, content: $content) { __typename }
          deleteKnowledge(id: $id, userId: $userId) { __typename }
        }""",
}
_BIG_INT = "__big_int__"
_hostile_text = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["\ud800", "a\udfffb", "\x00", "", " ", "2024-02-30", "0000-01-01T00:00:00Z", _BIG_INT]),
)
_dates_or_junk = st.one_of(
    st.builds(lambda d, t, o: f"{d}T{t}{o}", st.one_of(_days, _junk_days), _times, _offsets),
    st.just("9999-12-31T23:00:00-05:00"),
    _days,
    _junk_days,
)
_scalars = st.one_of(
    _hostile_text,
    _dates_or_junk,
    st.integers(),
    st.floats(),  # NaN and infinities included: sent as JSON's non-standard NaN / Infinity
    st.booleans(),
    st.none(),
)
_json_values = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(_hostile_text.filter(lambda k: k != _BIG_INT), children, max_size=4),
    ),
    max_leaves=20,
)
_messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "bot"]), "content": _hostile_text},
        optional={"createdAt": _json_values, "metadata": _json_values, "externalId": _json_values},
    ),
    max_size=3,
)
_variables = st.fixed_dictionaries(
    {},
    optional={
        "userId": st.one_of(st.just("u"), _json_values),
        "sessionId": _json_values,
        "channel": _json_values,
        "messages": st.one_of(_messages, _json_values),
        "diaryDate": _dates_or_junk,
        "content": _json_values,
        "metadata": st.one_of(_json_values, st.just("__deep__")),
        "since": _dates_or_junk,
        "until": _dates_or_junk,
        "limit": _json_values,
        "offset": _json_values,
        "id": _json_values,
    },
)


def _body(document: str, variables: dict) -> str:
    text = json.dumps({"query": document, "variables": variables})
    deep = '{"a":' * 500 + "1" + "}" * 500
    return text.replace(f'"{_BIG_INT}"', "1" * 5000).replace('"__deep__"', deep)


@pytest.mark.parametrize("operation", sorted(VARIABLE_DOCUMENTS))
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(variables=_variables)
def test_no_variables_sent_are_a_server_error(client, trusted_key, operation, variables):
    with transaction.atomic():  # a savepoint per request (above)
        response = client.post(
            "/graphql/",
            data=_body(VARIABLE_DOCUMENTS[operation], variables),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {trusted_key}",
        )
    assert response.status_code < 500, response.content
    assert response["Content-Type"] == "application/json"
    assert "INTERNAL_ERROR" not in _codes(response.json()), (variables, response.content)
