"""HTTP for the abuse benchmark (``bench.abuse``): timed requests that never raise, bodies that stall,
and the web process's memory.

Every request opens a connection of its own on 127.0.0.1 and gives up after its ``timeout``; a
request that got no answer counts as taking its whole timeout (``Answer.seconds``).
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psutil

__all__ = ["Answer", "Background", "RssSampler", "graphql", "request", "stalled_bodies", "web_workers_rss_mb"]


@dataclass(frozen=True)
class Answer:
    """One request's outcome: HTTP status (``None``: no answer in time), error codes, and seconds taken."""

    status: int | None
    codes: tuple[str, ...]
    seconds: float
    body: Any = None

    @property
    def code(self) -> str:
        """The first error code, ``"timeout"`` for no answer, ``"ok"`` for none."""
        if self.status is None:
            return "timeout"
        return self.codes[0] if self.codes else ("ok" if self.status == 200 else f"HTTP {self.status}")


def _codes(body: Any) -> tuple[str, ...]:
    """Every ``extensions.code`` of a GraphQL body, and every ``OperationInfo`` message's ``code``."""
    if not isinstance(body, dict):
        return ()
    codes = [(e.get("extensions") or {}).get("code") or "?" for e in body.get("errors") or []]
    for value in (body.get("data") or {}).values():
        if isinstance(value, dict) and value.get("__typename") == "OperationInfo":
            codes += [m.get("code") or m.get("kind") or "?" for m in value.get("messages") or []]
    return tuple(codes)


def request(
    port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None, timeout: float = 30
) -> Answer:
    """Send one request on a new connection; never raises."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        payload = response.read()
    except (OSError, http.client.HTTPException):
        return Answer(None, (), timeout)
    finally:
        connection.close()
    try:
        decoded = json.loads(payload)
    except ValueError:
        decoded = None
    return Answer(response.status, _codes(decoded), time.monotonic() - started, decoded)


def graphql(port: int, key: str, query: str, variables: dict | None = None, timeout: float = 30) -> Answer:
    """POST a GraphQL document with ``Authorization: Bearer <key>``; never raises."""
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    return request(port, "POST", "/graphql/", body, headers, timeout)


@contextmanager
def stalled_bodies(port: int, count: int, *, key: str | None) -> Iterator[list[socket.socket]]:
    """``count`` connections that send a POST's headers (with ``key``, when given) and part of its body,
    then nothing more until the block ends (a slow or hostile client)."""
    sockets = []
    head = (
        "POST /graphql/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n"
        + (f"Authorization: Bearer {key}\r\n" if key else "")
        + "\r\n"
        + '{"query": "{ __typename'
    )
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(head.encode())
            sockets.append(sock)
        yield sockets
    finally:
        for sock in sockets:
            sock.close()


def web_workers_rss_mb(serve_pid: int) -> float:
    """Resident memory of the web server's worker processes (gunicorn's workers under ``manage.py serve``), MiB."""
    total = 0
    for process in psutil.Process(serve_pid).children(recursive=True):
        try:
            parent = process.parent()
            if parent is not None and "gunicorn" in " ".join(parent.cmdline()):
                total += process.memory_info().rss
        except psutil.Error:
            continue
    return round(total / 2**20, 1)


class Background:
    """Calls ``step()`` in a thread, every ``every`` seconds (0: back to back), while the block runs."""

    every = 0.0

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Background:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.step()

    def step(self) -> None:
        raise NotImplementedError


class RssSampler(Background):
    """Samples ``web_workers_rss_mb`` every 0.1 s while the block runs; ``peak`` is the largest, ``after`` the last."""

    every = 0.1

    def __init__(self, serve_pid: int) -> None:
        super().__init__()
        self.serve_pid = serve_pid
        self.before = web_workers_rss_mb(serve_pid)
        self.peak = self.before

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self.after = web_workers_rss_mb(self.serve_pid)

    def step(self) -> None:
        self.peak = max(self.peak, web_workers_rss_mb(self.serve_pid))
