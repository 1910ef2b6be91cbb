"""``manage.py serve`` for real: gunicorn serving GraphQL, and the supervision of the whole service.

Each test runs the service as separate processes, as ``make run`` does. The web tests use the
test database (``DATABASE_URL``); the supervision tests use an embedded PostgreSQL of their
own, in a temporary folder, so they can check that it stops with the service.
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
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psutil
import pytest
from django.db import connections

from memories.models import Message
from memories.services.api_keys import api_key_create

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ADD = """
mutation { addMessages(userId: "alice", sessionId: "s1", messages: [{role: "user", content: "I love ramen"}]) {
  ... on AddMessagesResult { messages { content } }
} }
"""
MAX_REQUEST_BYTES = 4000
FAKE_EMBEDDER = "tests.llm.test_registry.ConstantEmbedder"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _test_database_url() -> str:
    db = connections["default"].settings_dict
    host = db["HOST"]
    if host.startswith("/"):
        return f"postgresql://{db['USER']}:{quote(db['PASSWORD'] or '')}@/{db['NAME']}?host={host}"
    return f"postgresql://{db['USER']}:{quote(db['PASSWORD'] or '')}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


def _environment(**extra: str) -> dict[str, str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryproject.settings", "LOG_LEVEL": "WARNING"}
    for name in ("DATABASE_URL", "Q_SYNC", "EMBEDDED_DB_DIR"):
        env.pop(name, None)
    # No model to load at start: these tests are about processes, not vectors.
    env.update({"Q_WORKERS": "1", "WEB_THREADS": "4", "EMBEDDING_BACKEND": FAKE_EMBEDDER, **extra})
    return env


def _start(*args: str, port: int, env: dict[str, str]) -> subprocess.Popen:
    """``manage.py serve`` in a process group of its own, as a shell runs ``make run``."""
    return subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _wait_until_served(service: subprocess.Popen, port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert service.poll() is None, service.stderr.read().decode()[-3000:]
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/graphql/", headers={"Accept": "text/html"})
            connection.getresponse().read()
            return
        except OSError:
            time.sleep(0.2)
        finally:
            connection.close()
    raise AssertionError("the service did not answer within 60 s")


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


# --- gunicorn serving the API -------------------------------------------------------------


@pytest.fixture(scope="module")
def web_port(django_db_setup, django_db_blocker) -> Iterator[int]:  # noqa: ANN001
    """The port of ``manage.py serve web`` (gunicorn) on the test database, stopped after the module."""
    port = _free_port()
    with django_db_blocker.unblock():
        env = _environment(DATABASE_URL=_test_database_url(), MAX_REQUEST_BYTES=str(MAX_REQUEST_BYTES))
    service = _start("web", port=port, env=env)
    try:
        _wait_until_served(service, port)
        yield port
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(timeout=60)


@pytest.fixture
def headers(transactional_db) -> dict[str, str]:  # noqa: ANN001
    _, key = api_key_create(name="test", user_external_ids=["alice"])
    return {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}


def test_gunicorn_serves_graphql_requests_with_authentication(web_port, headers):
    body = json.dumps({"query": ADD}).encode()

    status, content, _ = _post(web_port, body, {"Content-Type": "application/json"})
    assert status == 401
    assert json.loads(content)["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert not Message.objects.exists()

    status, content, _ = _post(web_port, body, headers)
    assert status == 200, content
    assert json.loads(content)["data"]["addMessages"]["messages"] == [{"content": "I love ramen"}]
    assert Message.objects.get().content == "I love ramen"


def test_requests_on_one_keep_alive_connection(web_port, headers):
    connection = http.client.HTTPConnection("127.0.0.1", web_port, timeout=30)
    try:
        for _ in range(3):
            connection.request("POST", "/graphql/", body=json.dumps({"query": ADD}), headers=headers)
            response = connection.getresponse()
            assert response.status == 200, response.read()
            response.read()
    finally:
        connection.close()
    assert Message.objects.count() == 3


def test_a_chunked_body_arrives_whole(web_port, headers):
    status, content, _ = _post(web_port, json.dumps({"query": ADD}).encode(), headers, chunk=16)
    assert status == 200, content
    assert Message.objects.get().content == "I love ramen"


@pytest.mark.parametrize("chunk", [None, 1024], ids=["content-length", "chunked"])
def test_a_body_over_max_request_bytes_gets_the_json_413_and_nothing_is_stored(web_port, headers, chunk):
    message = '{role: "user", content: "%s"}' % ("ramen " * 120)
    too_large = json.dumps({"query": ADD.replace('{role: "user", content: "I love ramen"}', message * 6)}).encode()
    assert len(too_large) > MAX_REQUEST_BYTES

    status, content, _ = _post(web_port, too_large, headers, chunk=chunk)
    assert status == 413, content
    error = json.loads(content)["errors"][0]
    assert error["extensions"]["code"] == "PAYLOAD_TOO_LARGE"
    assert not Message.objects.exists()

    status, _, _ = _post(web_port, json.dumps({"query": ADD}).encode(), headers, chunk=chunk)
    assert status == 200
    assert Message.objects.count() == 1


def test_graphiql_page_and_static_files_are_served(web_port):
    connection = http.client.HTTPConnection("127.0.0.1", web_port, timeout=30)
    try:
        connection.request("GET", "/graphql/", headers={"Accept": "text/html"})
        response = connection.getresponse()
        assert response.status == 200
        assert b"graphiql" in response.read().lower()
        connection.request("GET", "/static/admin/css/base.css")
        response = connection.getresponse()
        assert response.status == 200
        assert b"body" in response.read()
    finally:
        connection.close()


# --- supervision: nothing outlives the service -------------------------------------------


@pytest.fixture(scope="module")
def embedded_dir(tmp_path_factory) -> Path:  # noqa: ANN001
    """A migrated embedded PostgreSQL cluster of this module's own (stopped between tests)."""
    data_dir = tmp_path_factory.mktemp("embedded") / "pg"
    env = _environment(EMBEDDED_DB_DIR=str(data_dir))
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert not (data_dir / "postmaster.pid").exists()  # the last process using it left: it stopped
    return data_dir


@pytest.fixture
def service(embedded_dir) -> Iterator[tuple[subprocess.Popen, int]]:  # noqa: ANN001
    """``manage.py serve`` (web and worker) on the embedded cluster; killed after the test if still up."""
    port = _free_port()
    service = _start(port=port, env=_environment(EMBEDDED_DB_DIR=str(embedded_dir)))
    try:
        _wait_until_served(service, port)
        yield service, port
    finally:
        if service.poll() is None:
            os.killpg(service.pid, signal.SIGKILL)
            service.wait()


def _processes_of(service: subprocess.Popen, data_dir: Path) -> list[psutil.Process]:
    """The service, every process under it once the worker's cluster is up, and the embedded PostgreSQL."""
    root = psutil.Process(service.pid)
    deadline = time.monotonic() + 30
    while len(_child(service, "worker").children(recursive=True)) < 4:  # Q_WORKERS=1: guard, worker, monitor, pusher
        assert time.monotonic() < deadline, "the worker's cluster did not start"
        time.sleep(0.2)
    postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])
    return [root, *root.children(recursive=True), psutil.Process(postmaster)]


def _child(service: subprocess.Popen, name: str) -> psutil.Process:
    """The service's child running the Procfile's ``name`` process (gunicorn's master, or the worker's parent)."""
    word = {"web": "gunicorn", "worker": "qcluster"}[name]
    (child,) = [p for p in psutil.Process(service.pid).children() if word in " ".join(p.cmdline())]
    return child


def _assert_all_gone(processes: list[psutil.Process]) -> None:
    _, alive = psutil.wait_procs(processes, timeout=60)
    assert not alive, [(p.pid, p.cmdline()) for p in alive]


@pytest.mark.parametrize("to_group", [False, True], ids=["sigterm-to-serve", "sigterm-to-its-process-group"])
def test_sigterm_stops_every_process_and_the_embedded_database(service, embedded_dir, to_group):
    service, _ = service
    processes = _processes_of(service, embedded_dir)
    if to_group:  # what systemd's KillMode=control-group and a terminal's session end do
        os.killpg(service.pid, signal.SIGTERM)
    else:
        service.send_signal(signal.SIGTERM)
    assert service.wait(timeout=60) == 0, service.stderr.read().decode()[-3000:]
    _assert_all_gone(processes)
    assert json.loads((embedded_dir / ".handle_pids.json").read_text()) == []


@pytest.mark.parametrize("name", ["worker", "web"])
def test_a_process_killed_outright_stops_the_whole_service(service, embedded_dir, name):
    service, port = service
    processes = _processes_of(service, embedded_dir)
    _child(service, name).kill()  # SIGKILL: its own children are orphaned

    assert service.wait(timeout=60) != 0
    assert f"The {name} process exited" in service.stderr.read().decode()
    _assert_all_gone(processes)
    assert json.loads((embedded_dir / ".handle_pids.json").read_text()) == []
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)


_JOIN = """
import django, time
django.setup()
from memoryproject.embedded_db import ensure_embedded_database
ensure_embedded_database()
print("joined", flush=True)
time.sleep(60)
"""


def test_a_handle_left_by_a_killed_process_does_not_keep_the_database_up(embedded_dir):
    env = _environment(EMBEDDED_DB_DIR=str(embedded_dir))
    crashed = subprocess.Popen([sys.executable, "-c", _JOIN], cwd=ROOT, env=env, stdout=subprocess.PIPE)
    assert crashed.stdout.readline() == b"joined\n"
    crashed.kill()  # no chance to leave: its pid stays listed as a user of the server
    crashed.wait()
    assert crashed.pid in json.loads((embedded_dir / ".handle_pids.json").read_text())
    postmaster = psutil.Process(int((embedded_dir / "postmaster.pid").read_text().split()[0]))

    done = subprocess.run(
        [sys.executable, "manage.py", "showmigrations", "memories"], cwd=ROOT, env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    _assert_all_gone([postmaster])
    assert json.loads((embedded_dir / ".handle_pids.json").read_text()) == []
