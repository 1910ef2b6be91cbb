"""Who the caller is: API keys over ``Authorization: Bearer``, the admin session with its CSRF token,
401 for anyone else, and a body too large for any caller."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from memories.models import ApiKey
from memories.services.api_keys import api_key_hash, api_key_revoke
from tests.graphql.documents import SCOPED_HISTORY as HISTORY
from tests.graphql.documents import alice_state, bearer, post

pytestmark = pytest.mark.django_db

# --- authentication --------------------------------------------------------------------

UNAUTHENTICATED_MESSAGE = (
    "Authentication required: send `Authorization: Bearer <API key>` "
    "(create one with `manage.py create_api_key`), or log into the admin to use GraphiQL."
)


def test_no_credentials_get_401_and_no_data(alice, client):
    response = post(client, HISTORY, {"userId": "alice"})
    assert response.status_code == 401
    assert response.json() == {
        "data": None,
        "errors": [{"message": UNAUTHENTICATED_MESSAGE, "extensions": {"code": "UNAUTHENTICATED"}}],
    }


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer ",
        "Bearer nonsense",
        "Bearer mem_" + "x" * 43,  # well-formed, unknown
        "Basic {key}",  # a valid key, wrong scheme
        "{key}",  # no scheme
        "Bearer {key}x",
    ],
)
def test_bad_keys_get_401(header, alice, client, trusted_key):
    response = post(client, HISTORY, {"userId": "alice"}, HTTP_AUTHORIZATION=header.format(key=trusted_key))
    assert response.status_code == 401
    assert response.json() == {
        "data": None,
        "errors": [{"message": "Invalid or revoked API key.", "extensions": {"code": "UNAUTHENTICATED"}}],
    }


def test_the_bearer_scheme_is_case_insensitive(alice, client, trusted_key):
    response = post(client, HISTORY, {"userId": "alice"}, HTTP_AUTHORIZATION=f"bearer {trusted_key}")
    assert response.status_code == 200
    assert response.json()["data"]["history"]["totalCount"] == 2


def test_a_revoked_key_gets_401(alice, client, make_api_key):
    key = make_api_key("alice")
    assert post(client, HISTORY, {"userId": "alice"}, **bearer(key)).status_code == 200
    api_key_revoke(key_id=ApiKey.objects.get(key_hash=api_key_hash(key)).pk)
    response = post(client, HISTORY, {"userId": "alice"}, **bearer(key))
    assert response.status_code == 401
    assert response.json()["errors"][0]["extensions"] == {"code": "UNAUTHENTICATED"}
    assert response.json()["data"] is None


def test_a_key_records_when_it_was_last_used(client, make_api_key):
    key = make_api_key("alice")
    assert ApiKey.objects.get().last_used_at is None
    assert post(client, HISTORY, {"userId": "alice"}, **bearer(key)).status_code == 200
    assert ApiKey.objects.get().last_used_at is not None


def test_api_responses_set_no_cookie(alice, client, make_api_key):
    response = post(client, HISTORY, {"userId": "alice"}, **bearer(make_api_key("alice")))
    assert response.status_code == 200
    assert not response.cookies
    assert "Set-Cookie" not in response


def test_graphiql_page_is_served_to_everyone(client):
    response = client.get("/graphql/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert "graphiql" in response.content.decode().lower()
    assert "csrftoken" in response.cookies


def test_staff_session_may_query_every_user_with_the_csrf_token(alice, staff_client):
    refused = post(staff_client, HISTORY, {"userId": "alice"})
    assert refused.status_code == 403
    assert refused.json() == {
        "data": None,
        "errors": [{"message": "CSRF check failed: reload GraphiQL.", "extensions": {"code": "FORBIDDEN"}}],
    }
    wrong = post(staff_client, HISTORY, {"userId": "alice"}, HTTP_X_CSRFTOKEN="x" * 32)
    assert wrong.status_code == 403

    staff_client.get("/graphql/", HTTP_ACCEPT="text/html")  # GraphiQL sets the CSRF cookie
    token = staff_client.cookies["csrftoken"].value
    response = post(staff_client, HISTORY, {"userId": "alice"}, HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200
    assert response.json()["data"]["history"]["totalCount"] == 2
    shared = post(staff_client, "query { knowledge { results { content } } }", HTTP_X_CSRFTOKEN=token)
    assert shared.json() == {"data": {"knowledge": {"results": [{"content": "The support desk opens at 9am."}]}}}


def test_staff_session_cannot_run_mutations_over_get(alice, staff_client):
    before = alice_state()
    response = staff_client.get("/graphql/", {"query": 'mutation { forgetUser(userId: "alice") { __typename } }'})
    assert response.status_code in (400, 405)
    assert alice_state() == before


def test_a_logged_in_user_who_is_not_staff_gets_401(alice, django_user_model):
    user = django_user_model.objects.create_user("someone", password="secret")
    client = Client()
    client.force_login(user)
    response = post(client, HISTORY, {"userId": "alice"})
    assert response.status_code == 401
    assert response.json()["errors"][0]["extensions"] == {"code": "UNAUTHENTICATED"}
    assert response.json()["data"] is None


def test_a_body_over_max_request_bytes_gets_413_through_the_wsgi_handler(alice, client, make_api_key, settings):
    settings.MAX_REQUEST_BYTES = settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2000
    key = make_api_key("alice")
    body = {"query": HISTORY, "variables": {"userId": "alice", "padding": "x" * 3000}}
    for _ in range(2):  # the second time the key has authenticated lately: the view reads the body first
        response = client.post("/graphql/", data=json.dumps(body), content_type="application/json", **bearer(key))
        assert response.status_code == 413
        assert response.json()["errors"][0]["extensions"]["code"] == "PAYLOAD_TOO_LARGE"
