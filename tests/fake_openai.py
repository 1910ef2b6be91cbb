"""A fake OpenAI-compatible server for tests: ``POST /v1/embeddings`` and ``POST /v1/chat/completions``.

It runs on 127.0.0.1 (a free port) in a daemon thread and speaks enough of the OpenAI wire
protocol for the real ``openai`` client. Use the ``fake_openai`` fixture (and
``unreachable_openai_url``), registered for every test by ``tests/conftest.py`` (the
``openai_settings`` fixture there points both backends at it)::

    def test_x(fake_openai):
        fake_openai.chat_reply = "Sushi."
        ...  # point OPENAI_BASE_URL at fake_openai.base_url

Embeddings are deterministic: a hashed bag of words (lower-cased ``\\w+`` tokens), of the
request's ``dimensions`` (384 when not sent), L2-normalised, so texts sharing words are closer
than unrelated ones. The ``data`` items come back in reversed ``index`` order on purpose, so a
client that does not sort by ``index`` gets its vectors in the wrong order.

Token counts are words: embeddings report ``prompt_tokens`` = words of all inputs (at least 1 per
input); chat reports ``prompt_tokens`` = words of all messages, ``completion_tokens`` = words of
the reply.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = [
    "DEFAULT_DIMENSIONS",
    "FakeOpenAI",
    "closed_port_url",
    "count_tokens",
    "fake_embedding",
    "fake_openai",
    "unreachable_openai_url",
]

DEFAULT_DIMENSIONS = 384
EMBEDDINGS = "/v1/embeddings"
CHAT = "/v1/chat/completions"
_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def count_tokens(text: str) -> int:
    """The fake's token count of ``text``: its number of words."""
    return len(_words(text))


def fake_embedding(text: str, dimensions: int = DEFAULT_DIMENSIONS) -> list[float]:
    """The vector the fake returns for ``text``: hashed bag of words, unit length."""
    vector = [0.0] * dimensions
    for word in _words(text):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest, "big") % dimensions] += 1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0:  # no words: any fixed unit vector
        vector[0] = 1.0
        return vector
    return [v / norm for v in vector]


def closed_port_url() -> str:
    """A ``/v1`` base URL on 127.0.0.1 where nothing listens (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class FakeOpenAI:
    """The server's state and knobs. All knobs may be changed while the server runs.

    Attributes:
        base_url: ``http://127.0.0.1:PORT/v1``, for ``OPENAI_BASE_URL`` / ``base_url=``.
        requests: ``(path, parsed JSON body)`` of every request received, in order.
        responses: ``(path, JSON body)`` of every successful response sent, in order.
        chat_reply: the assistant's reply; a string, a callable ``(request body) -> str``, or
            ``None`` (default) for ``"fake reply to: <last line of the last message>"``.
        status: ``{"embeddings" | "chat": HTTP status}``; a status other than 200 makes that
            endpoint answer with an OpenAI-style error body. See ``fail``.
        hang: endpoints (``"embeddings"`` / ``"chat"``) that never answer (until teardown).
        embedding(text, dimensions=384): the vector the server returns for ``text``.
        embedding_size: when set, vectors have this length whatever was asked for.
        drop_embeddings: leave out this many ``data`` items from each embeddings response.
    """

    embedding = staticmethod(fake_embedding)
    count_tokens = staticmethod(count_tokens)

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.request_headers: list[tuple[str, dict[str, str]]] = []
        self.responses: list[tuple[str, dict[str, Any]]] = []
        self.chat_reply: str | Callable[[dict[str, Any]], str] | None = None
        self.status: dict[str, int] = {}
        self.hang: set[str] = set()
        self.embedding_size: int | None = None
        self.drop_embeddings = 0
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        # A short poll interval keeps ``shutdown()`` (teardown) fast.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )

    # --- knobs ----------------------------------------------------------------------

    def fail(self, endpoint: str, status: int = 500) -> None:
        """Make ``endpoint`` (``"embeddings"`` or ``"chat"``) answer with HTTP ``status``."""
        self.status[endpoint] = status

    def requests_to(self, endpoint: str) -> list[dict[str, Any]]:
        """Bodies of the requests received by ``endpoint`` (``"embeddings"`` or ``"chat"``)."""
        path = _PATHS[endpoint]
        return [body for p, body in self.requests if p == path]

    def headers_of(self, endpoint: str) -> list[dict[str, str]]:
        """Headers (names lower-cased) of the requests received by ``endpoint``."""
        path = _PATHS[endpoint]
        return [headers for p, headers in self.request_headers if p == path]

    def responses_from(self, endpoint: str) -> list[dict[str, Any]]:
        """Bodies of the successful responses sent by ``endpoint``."""
        path = _PATHS[endpoint]
        return [body for p, body in self.responses if p == path]

    # --- lifecycle ------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._release.set()  # let hanging handlers return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # --- responses ------------------------------------------------------------------

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = body.get("input", [])
        if isinstance(texts, str):
            texts = [texts]
        dimensions = self.embedding_size or body.get("dimensions") or DEFAULT_DIMENSIONS
        items = [
            {"object": "embedding", "index": i, "embedding": fake_embedding(str(text), dimensions)}
            for i, text in enumerate(texts)
        ]
        items = items[: len(items) - self.drop_embeddings] if self.drop_embeddings else items
        tokens = sum(max(1, count_tokens(str(text))) for text in texts)
        return {
            "object": "list",
            "data": list(reversed(items)),
            "model": body.get("model", ""),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages", [])
        if callable(self.chat_reply):
            reply = self.chat_reply(body)
        elif self.chat_reply is not None:
            reply = self.chat_reply
        else:
            last = str(messages[-1].get("content", "")) if messages else ""
            reply = f"fake reply to: {last.strip().splitlines()[-1] if last.strip() else ''}"
        prompt = sum(count_tokens(str(m.get("content", ""))) for m in messages)
        completion = count_tokens(reply)
        with self._lock:
            number = len(self.responses) + 1
        return {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }


_PATHS = {"embeddings": EMBEDDINGS, "chat": CHAT}
_ENDPOINTS = {path: name for name, path in _PATHS.items()}


class _Handler(BaseHTTPRequestHandler):
    server_version = "FakeOpenAI/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # stdlib signature
        pass  # keep test output quiet

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str) -> None:
        self._send(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})

    def do_POST(self) -> None:  # stdlib name
        fake: FakeOpenAI = self.server.fake  # type: ignore[attr-defined]
        path = self.path.split("?", 1)[0]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._error(400, "Body is not JSON.", "invalid_request_error")
            return
        with fake._lock:
            fake.requests.append((path, body))
            fake.request_headers.append((path, {k.lower(): v for k, v in self.headers.items()}))
        endpoint = _ENDPOINTS.get(path)
        if endpoint is None:
            self._error(404, f"No route {path}.", "invalid_request_error")
            return
        if endpoint in fake.hang:
            fake._release.wait()
            return
        status = fake.status.get(endpoint, 200)
        if status != 200:
            self._error(status, f"Fake failure ({status}).", "server_error")
            return
        payload = fake._embeddings(body) if endpoint == "embeddings" else fake._chat(body)
        with fake._lock:
            fake.responses.append((path, payload))
        self._send(200, payload)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running fake OpenAI server, stopped after the test."""
    fake = FakeOpenAI().start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def unreachable_openai_url() -> str:
    """A ``/v1`` base URL on 127.0.0.1 where nothing listens."""
    return closed_port_url()
