"""``manage.py create_api_key``: a key scoped to end users or to all users, shown once."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memories.models import ApiKey
from tests.graphql.documents import SCOPED_HISTORY as HISTORY
from tests.graphql.documents import only_forbidden

pytestmark = pytest.mark.django_db


def create_api_key(*args: str) -> str:
    out, err = StringIO(), StringIO()
    call_command("create_api_key", *args, stdout=out, stderr=err)
    assert "shown only now" in err.getvalue()
    return out.getvalue().strip()


def test_create_api_key_prints_a_key_scoped_to_its_users(alice, gql):
    key = create_api_key("slack-bot", "--user", "alice")
    assert key.startswith("mem_")
    assert gql(HISTORY, {"userId": "alice"}, key=key)["data"]["history"]["totalCount"] == 2
    assert only_forbidden(gql(HISTORY, {"userId": "bob"}, key=key), "history") == (
        "This API key may not act on user 'bob'."
    )


def test_create_api_key_for_all_users(alice, gql):
    key = create_api_key("backend", "--all-users")
    for user_id, count in (("alice", 2), ("bob", 1)):
        assert gql(HISTORY, {"userId": user_id}, key=key)["data"]["history"]["totalCount"] == count


def test_create_api_key_needs_users_or_all_users(db):
    with pytest.raises(CommandError, match="Scope the key to at least one end user, or to all users."):
        call_command("create_api_key", "unscoped", stdout=StringIO(), stderr=StringIO())
    assert not ApiKey.objects.exists()
