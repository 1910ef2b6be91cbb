"""``manage.py mcp`` as agents use it, over stdio and over streamable HTTP, driven by the SDK's client."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from memories.mcp import operations
from memories.models import Message
from memories.services.api_keys import api_key_create, api_key_revoke
from tests.mcp.conftest import ROOT, calls, error_codes, session, stdio_client_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TOOLS = {
    "add_messages",
    "get_context",
    "search_memory",
    "list_facts",
    "add_fact",
    "correct_fact",
    "forget_fact",
    "get_backlog",
}


def _key(*user_ids: str) -> str:
    return api_key_create(name="agent", user_external_ids=list(user_ids), all_users=not user_ids)[1]


def test_an_agent_lists_the_tools_stores_a_turn_gets_its_context_and_no_other_users(connect):
    """One session per transport (a stdio server costs a process start): what an agent does first."""
    earlier = [
        {"role": "user", "content": "My favourite food is okonomiyaki.", "created_at": "2024-05-01T09:00:00+09:00"},
        {"role": "assistant", "content": "Noted!", "created_at": "2024-05-01T09:00:05+09:00"},
    ]
    now = [{"role": "user", "content": "What is my favourite food?", "created_at": "2024-05-20T18:30:00+09:00"}]
    tool_calls = [
        ("add_messages", {"user_id": "alice", "session_id": "s1", "messages": earlier}),
        ("add_messages", {"user_id": "alice", "session_id": "s2", "messages": now, "include_context": True}),
        ("get_context", {"user_id": "alice", "session_id": "s2"}),
        ("add_messages", {"user_id": "bob", "session_id": "s1", "messages": now}),
        ("get_context", {"user_id": "bob", "session_id": "s1"}),
        ("add_fact", {"user_id": "bob", "content": "Bob lives in Osaka."}),
    ]

    async def agent(client):
        tools = (await client.list_tools()).tools
        return tools, [await client.call_tool(name, arguments) for name, arguments in tool_calls]

    tools, (stored, turn, context, *for_bob) = session(connect(_key("alice")), agent)

    assert {tool.name for tool in tools} == TOOLS
    for tool in tools:
        assert tool.description, tool.name
        properties = tool.input_schema["properties"]
        assert "user_id" in tool.input_schema["required"], tool.name
        assert all(p.get("description") for p in properties.values()), tool.name

    assert not stored.is_error, stored.content
    assert [m["role"] for m in stored.structured_content["messages"]] == ["user", "assistant"]
    assert not turn.is_error, turn.content
    for result in (turn.structured_content["context"], context.structured_content):
        assert [t["content"] for t in result["window"]] == ["What is my favourite food?"]
        assert any("okonomiyaki" in m["content"] for m in result["memories"]), result["memories"]
        assert "okonomiyaki" in result["prompt"]
    assert json.loads(context.content[0].text) == context.structured_content  # the same, as text
    assert Message.objects.filter(session__user__external_id="alice").count() == 3

    for result in for_bob:  # the key is scoped to alice
        assert error_codes(result) == ["FORBIDDEN"]
        assert result.content[0].text == "FORBIDDEN: This API key may not act on user 'bob'. (field userId)"
    assert not Message.objects.filter(session__user__external_id="bob").exists()


def test_a_context_over_mcp_equals_the_graphql_context(connect, add_messages, gql, hashing_embedder):
    add_messages(
        "alice",
        "s1",
        [
            {"role": "user", "content": "I am allergic to peanuts.", "createdAt": "2024-05-01T09:00:00+09:00"},
            {"role": "assistant", "content": "Good to know.", "createdAt": "2024-05-01T09:00:05+09:00"},
        ],
    )
    add_messages("alice", "s2", [{"role": "user", "content": "Can I eat satay sauce with peanuts?"}])
    context_input = {"userId": "alice", "sessionId": "s2", "windowTurns": 4, "maxTokens": 500}
    over_graphql = gql(operations.CONTEXT, {"input": context_input})["data"]["context"]
    del over_graphql["__typename"]

    (over_mcp,) = calls(
        connect(_key()), ("get_context", {"user_id": "alice", "session_id": "s2", "window_turns": 4, "max_tokens": 500})
    )

    assert any("allergic to peanuts" in m["content"] for m in over_graphql["memories"])  # not a trivial case
    assert over_mcp.structured_content == over_graphql


def test_http_refuses_a_request_without_a_valid_key(http_url):
    revoked, revoked_key = api_key_create(name="old", user_external_ids=["alice"])
    api_key_revoke(key_id=revoked.pk)
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    for headers in ({}, {"Authorization": "Bearer mem_wrong"}, {"Authorization": f"Bearer {revoked_key}"}):
        request = urllib.request.Request(
            http_url,
            data=ping,
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 401
        assert refused.value.headers["WWW-Authenticate"].startswith("Bearer ")


@pytest.mark.parametrize("request_id", [{"a": 1}, [1], True])
def test_http_answers_a_request_whose_id_is_not_a_string_or_a_number_with_an_error(http_url, request_id):
    _, key = api_key_create(name="agent", user_external_ids=["alice"])
    ping = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode()
    request = urllib.request.Request(
        http_url,
        data=ping,
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {key}",
        },
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 400
    assert json.loads(refused.value.read()) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request: id must be a string or a number."},
    }


def test_stdio_refuses_to_start_with_a_wrong_key(server_environment):
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp", "--api-key", "mem_wrong"],
        cwd=ROOT,
        env=server_environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "Invalid or revoked API key" in done.stderr
    assert done.stdout == ""  # stdout carries the protocol only


def test_stdio_for_users_named_at_start_needs_no_key(server_environment, tmp_path):
    message = [{"role": "user", "content": "I live in Kyoto."}]
    with (tmp_path / "stdio.log").open("w") as errlog:
        client = stdio_client_for(server_environment, "--user", "alice", errlog=errlog)
        for_alice, for_bob = calls(
            client,
            ("add_messages", {"user_id": "alice", "session_id": "s1", "messages": message}),
            ("add_messages", {"user_id": "bob", "session_id": "s1", "messages": message}),
        )

    assert not for_alice.is_error, for_alice.content
    assert error_codes(for_bob) == ["FORBIDDEN"]
    assert list(Message.objects.values_list("session__user__external_id", flat=True)) == ["alice"]
