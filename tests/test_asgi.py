"""The ASGI application, for an ASGI server (``memoryproject.asgi``): GraphQL POSTs in a thread pool (a2wsgi)."""

from __future__ import annotations

import asyncio
import json
import threading
import warnings

import pytest

from memories.models import Message

pytestmark = pytest.mark.django_db(transaction=True)

ADD = """
mutation { addMessages(userId: "alice", sessionId: "s1", messages: [{role: "user", content: "I love ramen"}]) {
  ... on AddMessagesResult { messages { content } }
} }
"""


def _request(
    body: bytes,
    headers: dict[str, str],
    path: str = "/graphql/",
    method: str = "POST",
    chunk: int | None = None,
) -> tuple[int, bytes]:
    from memoryproject.asgi import application

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in {"host": "localhost", **headers}.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    if chunk is None:
        scope["headers"].append((b"content-length", str(len(body)).encode()))
        incoming = [{"type": "http.request", "body": body, "more_body": False}]
    else:  # Transfer-Encoding: chunked, no Content-Length
        parts = [body[i : i + chunk] for i in range(0, len(body), chunk)]
        incoming = [{"type": "http.request", "body": p, "more_body": i < len(parts) - 1} for i, p in enumerate(parts)]
    sent: list[dict] = []

    async def receive() -> dict:
        if incoming:
            return incoming.pop(0)
        await asyncio.Event().wait()  # the client stays connected
        return {}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(asyncio.wait_for(application(scope, receive, send), timeout=60))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_graphql_requests_run_in_the_thread_pool_with_authentication(make_api_key):
    key = make_api_key("alice")
    body = json.dumps({"query": ADD}).encode()

    status, content = _request(body, {"content-type": "application/json"})
    assert status == 401
    assert json.loads(content)["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert not Message.objects.exists()

    main = threading.get_ident()
    seen: list[int] = []
    from memories.graphql import views

    original = views.api_key_authenticate

    def recording(**kwargs):  # noqa: ANN003, ANN202
        seen.append(threading.get_ident())
        return original(**kwargs)

    views.api_key_authenticate = recording
    try:
        status, content = _request(body, {"content-type": "application/json", "authorization": f"Bearer {key}"})
    finally:
        views.api_key_authenticate = original
    assert status == 200, content
    assert json.loads(content)["data"]["addMessages"]["messages"] == [{"content": "I love ramen"}]
    assert Message.objects.get().content == "I love ramen"
    # The request ran outside the event loop's thread.
    assert len(seen) == 1
    assert seen[0] != main


def test_a_chunked_body_arrives_whole(make_api_key):
    key = make_api_key("alice")
    body = json.dumps({"query": ADD}).encode()
    status, content = _request(body, {"content-type": "application/json", "authorization": f"Bearer {key}"}, chunk=16)
    assert status == 200, content
    assert Message.objects.get().content == "I love ramen"


def test_graphiql_page_and_static_files_are_served():
    status, content = _request(b"", {"accept": "text/html"}, method="GET")
    assert status == 200
    assert b"graphiql" in content.lower()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status, content = _request(b"", {}, path="/static/admin/css/base.css", method="GET")
    assert status == 200
    assert b"body" in content
    # Served by WhiteNoise in the thread pool, not read whole by Django's ASGI handler.
    assert not [w for w in caught if "StreamingHttpResponse" in str(w.message)]
    status, _ = _request(b"", {}, path="/static/admin/css/no-such-file.css", method="GET")
    assert status == 404


@pytest.mark.parametrize("chunk", [None, 1000], ids=["content-length", "chunked"])
def test_a_body_over_max_request_bytes_gets_413_and_nothing_is_stored(chunk, make_api_key, settings):
    settings.MAX_REQUEST_BYTES = 4000
    key = make_api_key("alice")
    headers = {"content-type": "application/json", "authorization": f"Bearer {key}"}
    message = '{role: "user", content: "%s"}' % ("ramen " * 120)
    too_large = json.dumps({"query": ADD.replace('{role: "user", content: "I love ramen"}', message * 6)}).encode()
    assert len(too_large) > 4000

    status, content = _request(too_large, headers, chunk=chunk)
    assert status == 413
    error = json.loads(content)["errors"][0]
    assert error["extensions"]["code"] == "PAYLOAD_TOO_LARGE"
    assert "MAX_REQUEST_BYTES" in error["message"]
    assert not Message.objects.exists()

    status, _ = _request(json.dumps({"query": ADD}).encode(), headers, chunk=chunk)
    assert status == 200
    assert Message.objects.count() == 1
