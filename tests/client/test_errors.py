"""How the client turns each kind of answer into a result or a typed exception, over a stand-in transport.

The service's own answers (401, FORBIDDEN, VALIDATION...) are in ``test_client.py``, against the
live server; here are those it sends only when something fails (a backend down, an internal
error) and those of a proxy in front of it (429, 502, 503, HTML).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from memory_client import (
    AsyncMemoryClient,
    BackendError,
    Context,
    ForbiddenError,
    InputError,
    MemoryApiError,
    MemoryClient,
    RateLimitedError,
    UnauthenticatedError,
)

URL = "http://memory.test/graphql/"
CONTEXT = {
    "query": "dinner?",
    "prompt": "## Recent conversation\nuser: dinner?",
    "window": [
        {"id": "1", "role": "user", "speaker": "user", "content": "dinner?", "createdAt": "2024-05-20T09:30:00Z"}
    ],
    "memories": [],
    "tokens": {"window": 3, "memories": 0, "prompt": 8, "tokenizer": "local"},
}


def _client(
    respond: Callable[[httpx.Request], httpx.Response], sent: list[httpx.Request] | None = None
) -> MemoryClient:
    def handler(request: httpx.Request) -> httpx.Response:
        if sent is not None:
            sent.append(request)
        return respond(request)

    return MemoryClient(URL, "mem_key", http_client=httpx.Client(transport=httpx.MockTransport(handler)))


def _graphql_error(code: str, message: str = "It failed.", data: Any = None) -> dict[str, Any]:
    return {"data": data, "errors": [{"message": message, "path": ["addMessages"], "extensions": {"code": code}}]}


def test_a_turn_sends_one_request_with_the_key_and_returns_the_prompt():
    sent: list[httpx.Request] = []
    answer = {"data": {"addMessages": {"__typename": "AddMessagesResult", "context": CONTEXT}}}
    with _client(lambda request: httpx.Response(200, json=answer), sent) as memory:
        prompt = memory.turn("user-42", "s", "dinner?", window_turns=4)
        context = memory.turn("user-42", "s", "dinner?", parts=True)

    assert (prompt.prompt, prompt.tokens.prompt) == (CONTEXT["prompt"], 8)
    assert not isinstance(prompt, Context)
    assert context.prompt == CONTEXT["prompt"]
    assert context.window[0].content == "dinner?"
    assert [request.headers["Authorization"] for request in sent] == ["Bearer mem_key"] * 2
    first, second = (json.loads(request.content) for request in sent)
    assert (first["operationName"], second["operationName"]) == ("AddMessagesWithPrompt", "AddMessagesWithContext")
    assert "fragment Hit on Hit" not in first["query"]
    assert "fragment Hit on Hit" in second["query"]
    assert first["variables"]["messages"] == [{"role": "user", "content": "dinner?"}]
    assert first["variables"]["windowTurns"] == 4


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("MODEL_BACKEND_UNAVAILABLE", BackendError),
        ("MODEL_BACKEND_TIMEOUT", BackendError),
        ("REEMBEDDING_NEEDED", BackendError),
        ("INTERNAL_ERROR", BackendError),
        ("NOT_FOUND", MemoryApiError),
        ("FORBIDDEN", ForbiddenError),
        ("GRAPHQL_VALIDATION_FAILED", InputError),
        ("SOMETHING_NEW", MemoryApiError),
    ],
)
def test_graphql_errors_are_raised_with_their_code(code, kind):
    # The turn's message is stored even when its context fails: data holds it, errors say why.
    data = {"addMessages": {"__typename": "AddMessagesResult", "context": None}}
    with _client(lambda request: httpx.Response(200, json=_graphql_error(code, data=data))) as memory:
        with pytest.raises(kind) as raised:
            memory.turn("user-42", "s", "dinner?")
    assert (raised.value.code, raised.value.status, raised.value.message) == (code, 200, "It failed.")
    assert raised.value.errors[0]["path"] == ["addMessages"]


@pytest.mark.parametrize(
    ("status", "body", "kind", "code"),
    [
        (
            401,
            _graphql_error("UNAUTHENTICATED", "Invalid or revoked API key."),
            UnauthenticatedError,
            "UNAUTHENTICATED",
        ),
        (403, _graphql_error("FORBIDDEN", "CSRF check failed: reload GraphiQL."), ForbiddenError, "FORBIDDEN"),
        (413, _graphql_error("PAYLOAD_TOO_LARGE", "The request body is larger..."), InputError, "PAYLOAD_TOO_LARGE"),
        (400, _graphql_error("BAD_REQUEST", "The request body is not UTF-8 text."), InputError, "BAD_REQUEST"),
        (429, {"message": "Too many requests.", "code": "RATE_LIMITED"}, RateLimitedError, "RATE_LIMITED"),
        (429, None, RateLimitedError, "HTTP_429"),
        (503, _graphql_error("MODEL_BACKEND_UNAVAILABLE", "The embedding server is down."), BackendError, None),
        (503, {"detail": "Service unavailable."}, BackendError, "HTTP_503"),
        (502, "<html>Bad gateway</html>", BackendError, "HTTP_502"),
    ],
)
def test_http_errors_are_raised_with_their_code_and_status(status, body, kind, code):
    def respond(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body) if isinstance(body, dict) else httpx.Response(status, text=body or "")

    with _client(respond) as memory, pytest.raises(kind) as raised:
        memory.facts("user-42")
    assert raised.value.status == status
    assert raised.value.code == (code or body["errors"][0]["extensions"]["code"])
    if isinstance(body, dict):
        assert raised.value.message in json.dumps(body)


def test_an_answer_that_is_not_graphql():
    with _client(lambda request: httpx.Response(200, text="<html>a captive portal</html>")) as memory:
        with pytest.raises(MemoryApiError) as raised:
            memory.forget_user("user-42")
    assert (raised.value.code, raised.value.status) == ("INVALID_RESPONSE", 200)


def test_the_async_client_raises_the_same_errors():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, text="slow down")

    async def call() -> None:
        transport = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        async with AsyncMemoryClient(URL, "mem_key", http_client=transport) as memory:
            await memory.search("user-42", "What am I allergic to?")

    with pytest.raises(RateLimitedError) as raised:
        asyncio.run(call())
    assert (raised.value.code, raised.value.status) == ("HTTP_429", 429)
