"""Services run as child processes for the benchmarks, and the one HTTP client that talks to them.

``served`` starts the web server as ``make run`` does (``manage.py serve --no-worker``: gunicorn, or with the worker)
on a database of its own; ``running`` any other command (the worker, chatmemory). ``JsonClient``
is a keep-alive JSON-over-HTTP connection (``http.client``), with GraphQL on top (``graphql``);
``graphql_in_process`` sends GraphQL through Django's test client instead, in this process.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.databases import database_url
from bench.report import REPO_ROOT

if TYPE_CHECKING:
    from django.test import Client

__all__ = [
    "JsonClient",
    "Server",
    "bench_api_key",
    "child_env",
    "free_port",
    "graphql_in_process",
    "in_process_client",
    "peak_rss_mb",
    "running",
    "served",
    "wait_for_http",
]

# A keep-alive connection the server closed while idle raises one of these on its next request.
_CLOSED_WHILE_IDLE = (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected)


@dataclass
class JsonClient:
    """A keep-alive JSON-over-HTTP connection to 127.0.0.1:``port``; ``headers`` go with every request."""

    port: int
    headers: dict[str, str] = field(default_factory=dict)
    connection: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """Send one request; returns the decoded JSON body.

        A keep-alive connection the server closed while idle is opened again and the request
        sent once more (the benchmarks send searches, or messages to new sessions).

        Raises:
            RuntimeError: an HTTP status other than 200.
        """
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json", **self.headers}
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            try:
                self.connection.request(method, path, body=data, headers=headers)
                response = self.connection.getresponse()
                payload = response.read()
                break
            except _CLOSED_WHILE_IDLE:
                self.close()
                if attempt:
                    raise
        if response.status != 200:
            raise RuntimeError(f"{method} {path} failed ({response.status}): {payload[:500]!r}")
        return json.loads(payload)

    def graphql(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """POST one GraphQL request to ``/graphql/``; returns its ``data``.

        Raises:
            RuntimeError: an HTTP status other than 200, or GraphQL errors.
        """
        body = self.request("POST", "/graphql/", {"query": query, "variables": variables})
        if body.get("errors"):
            raise RuntimeError(f"GraphQL request failed: {body}")
        return body["data"]

    def close(self) -> None:
        """Close the connection (the next request opens another)."""
        if self.connection is not None:
            self.connection.close()
            self.connection = None


@dataclass
class Server:
    """A running service (``manage.py serve``) and a keep-alive connection to its GraphQL endpoint."""

    process: subprocess.Popen
    port: int
    api_key: str
    client: JsonClient = field(init=False)

    def __post_init__(self) -> None:
        self.client = self.new_client()

    def new_client(self) -> JsonClient:
        """A connection of its own (one per thread), with the API key."""
        return JsonClient(self.port, {"Authorization": f"Bearer {self.api_key}"})

    def post(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """One GraphQL request over the server's own connection (``JsonClient.graphql``)."""
        return self.client.graphql(query, variables)

    def cpu_seconds(self) -> float:
        """CPU seconds (user and system) used so far by the service's processes and PostgreSQL's: the embedded
        server's processes (those of another server on the machine: every ``postgres`` process)."""
        import psutil
        from django.conf import settings

        web = psutil.Process(self.process.pid).children(recursive=True)
        postmaster = Path(settings.EMBEDDED_DB_DIR) / "postmaster.pid"
        if settings.EMBEDDED_DB and postmaster.exists():
            main = psutil.Process(int(postmaster.read_text().split()[0]))
            postgres = [main, *main.children(recursive=True)]
        else:
            postgres = [p for p in psutil.process_iter(["name"]) if p.info["name"] in {"postgres", "postgres.real"}]
        total = 0.0
        for process in [psutil.Process(self.process.pid), *web, *postgres]:
            try:
                times = process.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
        return total

    def peak_rss_mb(self) -> float:
        """Peak RSS (``VmHWM``) of the largest process the service runs (gunicorn's worker), MiB."""
        import psutil

        processes = psutil.Process(self.process.pid).children(recursive=True)
        return max((peak_rss_mb([p.pid]) for p in processes), default=0.0)


def graphql_in_process(
    client: Client, query: str, variables: dict[str, Any], field: str, typename: str
) -> dict[str, Any]:
    """``field``'s result of one GraphQL request sent through Django's test ``client``, in this process.

    Raises:
        RuntimeError: an HTTP status other than 200, or a result that is not a ``typename``.
    """
    response = client.post("/graphql/", {"query": query, "variables": variables}, content_type="application/json")
    body = response.json()
    result = (body.get("data") or {}).get(field)
    if response.status_code != 200 or not result or result["__typename"] != typename:
        raise RuntimeError(f"{field} failed: HTTP {response.status_code} {body}")
    return result


def bench_api_key() -> str:
    """A new API key for every end user, in the database Django is connected to; returns the raw key."""
    from memories.services.api_keys import api_key_create

    _, raw_key = api_key_create(name=f"bench-{os.getpid()}", all_users=True)
    return raw_key


def in_process_client(api_key: str | None = None) -> Client:
    """Django's test client carrying ``api_key`` (default: a new ``bench_api_key``), for ``graphql_in_process``."""
    from django.test import Client

    return Client(HTTP_HOST="localhost", HTTP_AUTHORIZATION=f"Bearer {api_key or bench_api_key()}")


def child_env(database: str, **extra: str) -> dict[str, str]:
    """This process's environment for a ``manage.py`` child on ``database``, tasks queued (not run in-process)."""
    env = {**os.environ, "DATABASE_URL": database_url(database), "HF_HUB_OFFLINE": "1", **extra}
    env.pop("Q_SYNC", None)
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peak_rss_mb(pids: Sequence[int]) -> float:
    """Sum of ``VmHWM`` (peak resident set) of these processes, in MiB (Linux ``/proc``)."""
    total_kb = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total_kb += int(line.split()[1])
        except FileNotFoundError:
            continue
    return round(total_kb / 1024, 1)


@contextmanager
def running(command: Sequence[str], log: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    """``command`` running in the repository, its output to ``log``; on exit SIGTERM, then SIGKILL after 60 s."""
    with log.open("w") as out:
        process = subprocess.Popen(list(command), cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_for_http(process: subprocess.Popen, port: int, path: str, log: Path, *, seconds: float = 120) -> None:
    """Wait until ``GET path`` on 127.0.0.1:``port`` gets a response (any status).

    Raises:
        RuntimeError: the process exited, or no response came within ``seconds``.
    """
    deadline = time.monotonic() + seconds
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"The server exited ({process.returncode}); see {log}.")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", path)
            connection.getresponse().read()
            connection.close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"The server did not start in {seconds:g} s; see {log}.") from None
            time.sleep(0.2)


@contextmanager
def served(database: str, api_key: str, log: Path, *, worker: bool = False, **env: str) -> Iterator[Server]:
    """The web server as ``make run`` starts it (without the worker unless ``worker``), on ``database``;
    ready for requests.

    Args:
        database: database name on the server Django is connected to.
        api_key: the raw API key requests carry.
        log: where the server's output goes.
        worker: start the background worker too, as ``make run`` does.
        env: more environment variables for the service (settings).

    Raises:
        RuntimeError: the server exited or did not answer within 120 s.
    """
    port = free_port()
    command = [sys.executable, "manage.py", "serve", *([] if worker else ["--no-worker"]), "--port", str(port)]
    with running(command, log, child_env(database, LOG_LEVEL="WARNING", **env)) as process:
        wait_for_http(process, port, "/graphql/", log)
        server = Server(process=process, port=port, api_key=api_key)
        try:
            yield server
        finally:
            server.client.close()
