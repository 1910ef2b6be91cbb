"""The service run for real in tests: ``manage.py serve`` (or one of its processes) as processes of
their own, on the test database or on an embedded PostgreSQL of the test's own, and HTTP to it."""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psutil
from django.db import connections

ROOT = Path(__file__).resolve().parents[2]
# No model to load at start: these tests are about processes, not vectors.
FAKE_EMBEDDER = "tests.llm.test_registry.ConstantEmbedder"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def postgres_folder() -> Iterator[Path]:
    """A new folder for a PostgreSQL cluster of a test's own, removed afterwards.

    Not under pytest's temporary folders: as root, pgserver runs PostgreSQL as the user ``pgserver``
    and opens the path to it once, at the first start; every pytest that starts on this machine sets
    ``/tmp/pytest-of-root`` back to 0700, so a cluster there could not be started again.
    """
    folder = Path(tempfile.mkdtemp(prefix="memories-pg-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def database_url(alias: str = "default") -> str:
    """The ``DATABASE_URL`` of the test database (through its Unix socket for the embedded server)."""
    db = connections[alias].settings_dict
    host = db["HOST"] or db["OPTIONS"].get("host", "")
    credentials = f"{db['USER']}:{quote(db['PASSWORD'] or '')}"
    if host.startswith("/"):
        return f"postgresql://{credentials}@/{db['NAME']}?host={host}"
    return f"postgresql://{credentials}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


def environment(**extra: str) -> dict[str, str]:
    """The service's environment: production settings, one worker process, the instant fake embedder
    (unless ``extra`` names another ``EMBEDDING_BACKEND``), and ``extra``."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryproject.settings", "LOG_LEVEL": "WARNING"}
    for name in ("DATABASE_URL", "Q_SYNC", "EMBEDDED_DB_DIR"):
        env.pop(name, None)
    env.update(
        {"Q_WORKERS": "1", "WEB_THREADS": "4", "EMBEDDING_BACKEND": FAKE_EMBEDDER, "EMBEDDING_MODEL": "constant"}
    )
    if "EMBEDDING_BACKEND" in extra:
        env.pop("EMBEDDING_MODEL")  # that backend's own model
    env.update(extra)
    return env


def manage(*args: str, env: dict[str, str], timeout: float = 120) -> str:
    """Run ``manage.py`` with ``args`` and return its output; fail the test if it fails."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def start_serve(*args: str, port: int, env: dict[str, str], log: Path | None = None) -> subprocess.Popen:
    """``manage.py serve`` in a process group of its own, as a shell runs ``make run``; its stderr in ``log``
    (a file: a pipe nobody reads would fill up and stop it), or a pipe for short runs."""
    stderr = log.open("w") if log is not None else subprocess.PIPE
    return subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        start_new_session=True,
    )


def stop(service: subprocess.Popen) -> None:
    """Stop a service started by ``start_serve`` if it still runs: SIGTERM (it stops its processes and
    the embedded PostgreSQL), or SIGKILL to it and every process under it after a minute."""
    if service.poll() is not None:
        return
    service.send_signal(signal.SIGTERM)
    try:
        service.wait(timeout=60)
    except subprocess.TimeoutExpired:
        for process in [*psutil.Process(service.pid).children(recursive=True), psutil.Process(service.pid)]:
            process.kill()
        service.wait()


@dataclass(frozen=True)
class Response:
    status: int | None  # None: no answer (refused, reset, timed out)
    content_type: str
    body: bytes
    seconds: float

    def json(self) -> dict:
        return json.loads(self.body)


def request(
    port: int, method: str, path: str, body: bytes | str | None = None, headers: dict | None = None, timeout=30.0
) -> Response:
    """One HTTP request on a connection of its own; never raises."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        content = response.read()
        return Response(response.status, response.getheader("Content-Type", ""), content, time.monotonic() - started)
    except OSError as exc:
        return Response(None, "", str(exc).encode(), time.monotonic() - started)
    finally:
        connection.close()


def graphql(port: int, key: str, query: str, variables: dict | None = None, timeout: float = 30.0) -> Response:
    """POST a GraphQL document with ``Authorization: Bearer <key>``."""
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    return request(
        port, "POST", "/graphql/", json.dumps({"query": query, "variables": variables or {}}), headers, timeout
    )


def wait_for(check: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def wait_until_served(service: subprocess.Popen, port: int, timeout: float = 60) -> None:
    """Wait until ``service`` answers HTTP on ``port``; fail if it exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert service.poll() is None, (service.stderr.read().decode() if service.stderr else "")[-3000:]
        if request(port, "GET", "/healthz", timeout=5).status == 200:
            return
        time.sleep(0.2)
    raise AssertionError(f"the service did not answer within {timeout} s")


def child(service: subprocess.Popen, name: str) -> psutil.Process:
    """The service's child running the Procfile's ``name`` process (gunicorn's master, or the worker's parent)."""
    word = {"web": "gunicorn", "worker": "qcluster"}[name]
    (found,) = [p for p in psutil.Process(service.pid).children() if word in _command_line(p)]
    return found


def _command_line(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:  # gone, or a zombie its parent has not reaped yet
        return ""


def postmaster(data_dir: Path) -> psutil.Process:
    """The embedded PostgreSQL's main process, as its ``postmaster.pid`` names it."""
    return psutil.Process(int((data_dir / "postmaster.pid").read_text().split()[0]))


ADD = """
mutation Add($user: String!, $text: String!, $id: String!) {
  addMessages(userId: $user, sessionId: "s1", messages: [{role: "user", content: $text, externalId: $id}]) {
    __typename
  }
}
"""
SEARCH = 'query Search($user: String!) { search(input: {userId: $user, query: "ramen"}) { __typename } }'
HISTORY = (
    "query History($user: String!) { history(userId: $user, pagination: {limit: 1000}) { results { externalId } } }"
)


class Load:
    """Clients calling ``addMessages`` and ``search`` back to back, and a load balancer probing
    ``/readyz`` every 0.3 s, each in a thread, until ``stop()``; every answer is kept, with when it came.

    Args:
        port, key: the service and an all-users API key.
        user: the end user whose messages the writers add (each with an ``externalId`` of its own).
    """

    def __init__(self, port: int, key: str, *, user: str = "load", writers: int = 2) -> None:
        self.port, self.key, self.user = port, key, user
        self.answers: list[tuple[str, float, Response]] = []  # (kind, monotonic time it came, answer)
        self.acknowledged: set[str] = set()  # externalIds of the messages addMessages stored
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._sent = itertools.count()
        self._threads = [threading.Thread(target=self._write) for _ in range(writers)]
        self._threads += [threading.Thread(target=self._search), threading.Thread(target=self._probe)]

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        for thread in self._threads:
            thread.join()

    def _keep(self, kind: str, answer: Response) -> Response:
        with self._lock:
            self.answers.append((kind, time.monotonic(), answer))
        return answer

    def _write(self) -> None:
        while not self._stopping.is_set():
            external_id = f"m{next(self._sent)}"
            variables = {"user": self.user, "text": f"I ate ramen, note {external_id}.", "id": external_id}
            answer = self._keep("addMessages", graphql(self.port, self.key, ADD, variables))
            if answer.status == 200 and "errors" not in answer.json():
                with self._lock:
                    self.acknowledged.add(external_id)

    def _search(self) -> None:
        while not self._stopping.is_set():
            self._keep("search", graphql(self.port, self.key, SEARCH, {"user": self.user}))

    def _probe(self) -> None:
        while not self._stopping.wait(0.3):
            self._keep("readyz", request(self.port, "GET", "/readyz"))

    def succeeded(self, kind: str, after: float) -> bool:
        """Whether a ``kind`` request answered without error after the monotonic time ``after``."""
        with self._lock:
            answers = [a for k, t, a in self.answers if k == kind and t > after]
        return any(a.status == 200 and "errors" not in a.json() for a in answers)

    def stored(self) -> set[str]:
        """The externalIds of the user's messages the service has now (``history``)."""
        answer = graphql(self.port, self.key, HISTORY, {"user": self.user})
        assert answer.status == 200, answer.body
        return {m["externalId"] for m in answer.json()["data"]["history"]["results"]}

    def assert_every_answer_is_json_with_a_code(self) -> None:
        """No HTML, no connection refused: every answer is JSON, and every failure says its code."""
        for kind, _, answer in self.answers:
            assert answer.status is not None, f"{kind}: no answer: {answer.body!r}"
            assert answer.content_type.startswith("application/json"), (kind, answer.status, answer.body[:300])
            if kind == "readyz":
                assert answer.seconds < 2, f"/readyz took {answer.seconds:.1f} s"
                continue
            body = answer.json()
            assert answer.status == 200 or body.get("errors"), (kind, answer.status, body)
            assert all(error["extensions"]["code"] for error in body.get("errors") or []), body
