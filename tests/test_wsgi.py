"""What ``manage.py serve`` serves: ``memoryproject.wsgi.application`` in cheroot (``web_server``), over real HTTP."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memories.models import Message
from tests.test_worker import _database_url

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parent.parent
ADD = """
mutation { addMessages(userId: "alice", sessionId: "s1", messages: [{role: "user", content: "I love ramen"}]) {
  ... on AddMessagesResult { messages { content } }
} }
"""


@pytest.fixture
def port() -> Iterator[int]:
    """The port of a running ``web_server``, stopped after the test."""
    from memoryproject.wsgi import web_server

    server = web_server(host="127.0.0.1", port=0)
    server.prepare()
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        yield server.bind_addr[1]
    finally:
        server.stop()
        thread.join(timeout=10)


def _post(
    port: int, body: bytes, headers: dict[str, str], chunk: int | None = None
) -> tuple[int, bytes, http.client.HTTPResponse]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    if chunk is None:
        connection.request("POST", "/graphql/", body=body, headers=headers)
    else:  # Transfer-Encoding: chunked, no Content-Length
        parts = (body[i : i + chunk] for i in range(0, len(body), chunk))
        connection.request("POST", "/graphql/", body=parts, headers=headers, encode_chunked=True)
    response = connection.getresponse()
    content = response.read()
    connection.close()
    return response.status, content, response


def test_graphql_requests_are_served_with_authentication(port, make_api_key):
    key = make_api_key("alice")
    body = json.dumps({"query": ADD}).encode()

    status, content, _ = _post(port, body, {"Content-Type": "application/json"})
    assert status == 401
    assert json.loads(content)["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert not Message.objects.exists()

    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    status, content, _ = _post(port, body, headers)
    assert status == 200, content
    assert json.loads(content)["data"]["addMessages"]["messages"] == [{"content": "I love ramen"}]
    assert Message.objects.get().content == "I love ramen"


def test_requests_on_one_keep_alive_connection(port, make_api_key):
    key = make_api_key("alice")
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for _ in range(3):
            connection.request("POST", "/graphql/", body=json.dumps({"query": ADD}), headers=headers)
            response = connection.getresponse()
            assert response.status == 200, response.read()
            response.read()
            assert response.getheader("Connection") != "close"
    finally:
        connection.close()
    assert Message.objects.count() == 3


def test_a_chunked_body_arrives_whole(port, make_api_key):
    key = make_api_key("alice")
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    status, content, _ = _post(port, json.dumps({"query": ADD}).encode(), headers, chunk=16)
    assert status == 200, content
    assert Message.objects.get().content == "I love ramen"


@pytest.mark.parametrize("chunk", [None, 1000], ids=["content-length", "chunked"])
def test_a_body_over_max_request_bytes_gets_413_and_nothing_is_stored(port, chunk, make_api_key, settings):
    # As in settings.py, where DATA_UPLOAD_MAX_MEMORY_SIZE is MAX_REQUEST_BYTES.
    settings.MAX_REQUEST_BYTES = settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4000
    key = make_api_key("alice")
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    message = '{role: "user", content: "%s"}' % ("ramen " * 120)
    too_large = json.dumps({"query": ADD.replace('{role: "user", content: "I love ramen"}', message * 6)}).encode()
    assert len(too_large) > 4000

    status, content, response = _post(port, too_large, headers, chunk=chunk)
    assert status == 413
    error = json.loads(content)["errors"][0]
    assert error["extensions"]["code"] == "PAYLOAD_TOO_LARGE"
    assert "MAX_REQUEST_BYTES" in error["message"]
    # The rest of the body is not read: the server closes the connection.
    assert response.getheader("Connection") == "close"
    assert not Message.objects.exists()

    status, _, _ = _post(port, json.dumps({"query": ADD}).encode(), headers, chunk=chunk)
    assert status == 200
    assert Message.objects.count() == 1


def test_graphiql_page_and_static_files_are_served(port):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/graphql/", headers={"Accept": "text/html"})
        response = connection.getresponse()
        assert response.status == 200
        assert b"graphiql" in response.read().lower()
        connection.request("GET", "/static/admin/css/base.css")
        response = connection.getresponse()
        assert response.status == 200
        assert b"body" in response.read()
        connection.request("GET", "/static/admin/css/no-such-file.css")
        response = connection.getresponse()
        assert response.status == 404
        response.read()
    finally:
        connection.close()


def test_serve_answers_then_stops_on_sigterm(make_api_key):
    """``manage.py serve``, as a process manager runs it: it serves, and SIGTERM stops it cleanly."""
    key = make_api_key("alice")
    from bench.speed import _free_port

    free = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "DJANGO_SETTINGS_MODULE": "memoryproject.settings",
        "LOG_LEVEL": "WARNING",
    }
    env.pop("Q_SYNC", None)
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--no-worker", "--port", str(free)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, server.stderr.read().decode()[-2000:]
            try:
                headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
                status, content, _ = _post(free, json.dumps({"query": ADD}).encode(), headers)
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not answer within 90 s"
                time.sleep(0.2)
        assert status == 200, content
        assert Message.objects.get().content == "I love ramen"
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0, server.stderr.read().decode()[-2000:]
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_an_unread_chunked_body_is_not_read_as_the_next_request(port, settings):
    """Without a key the view answers 401 unread; the rest of the body must not become a request."""
    import socket

    settings.MAX_REQUEST_BYTES = settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    smuggled = b"GET /static/admin/css/no-such-file.css HTTP/1.1\r\nHost: x\r\n\r\n"
    chunk = b"x" * 1001
    request = (
        b"POST /graphql/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"%x\r\n" % len(chunk)
        + chunk
        + b"\r\n0\r\n\r\n"
        + smuggled
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        received = b""
        while True:
            data = sock.recv(65536)
            if not data:
                break
            received += data
    assert received.count(b"HTTP/1.1 ") == 1, received[:500]
    assert received.startswith(b"HTTP/1.1 413")


def test_head_responses_have_no_body(port):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for _ in range(2):  # the connection stays usable
            connection.request("HEAD", "/admin/login/")
            response = connection.getresponse()
            assert response.status == 200
            assert response.read() == b""
    finally:
        connection.close()
