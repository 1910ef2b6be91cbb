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

import psutil
import pytest

from memories.models import Message
from memories.services.api_keys import api_key_create
from tests.ops.live import (
    ROOT,
    Load,
    child,
    database_url,
    environment,
    free_port,
    graphql,
    manage,
    postmaster,
    request,
    start_serve,
    stop,
    wait_for,
    wait_until_served,
)

pytestmark = pytest.mark.slow

ADD = """
mutation { addMessages(userId: "alice", sessionId: "s1", messages: [{role: "user", content: "I love ramen"}]) {
  ... on AddMessagesResult { messages { content } }
} }
"""
MAX_REQUEST_BYTES = 4000


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
def web_port(django_db_setup, django_db_blocker) -> Iterator[int]:
    """The port of ``manage.py serve web`` (gunicorn) on the test database, stopped after the module."""
    port = free_port()
    with django_db_blocker.unblock():
        env = environment(DATABASE_URL=database_url(), MAX_REQUEST_BYTES=str(MAX_REQUEST_BYTES))
    service = start_serve("web", port=port, env=env)
    try:
        wait_until_served(service, port)
        yield port
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(timeout=60)


@pytest.fixture
def headers(transactional_db) -> dict[str, str]:
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


# --- supervision: nothing outlives the service, a process that stops is started again ----------


@pytest.fixture
def service(embedded_dir, tmp_path) -> Iterator[tuple[subprocess.Popen, int, Path]]:
    """``manage.py serve`` (web and worker) on the embedded cluster, its stderr in a file; killed after the test."""
    port, log = free_port(), tmp_path / "serve.log"
    service = start_serve(port=port, env=environment(EMBEDDED_DB_DIR=str(embedded_dir)), log=log)
    try:
        wait_until_served(service, port)
        yield service, port, log
    finally:
        stop(service)


def _processes_of(service: subprocess.Popen, data_dir: Path) -> list[psutil.Process]:
    """The service, every process under it once the worker's cluster is up, and the embedded PostgreSQL."""
    root = psutil.Process(service.pid)
    wait_for(lambda: _cluster_started(service), 30, "the worker's cluster")
    return [root, *root.children(recursive=True), postmaster(data_dir)]


def _cluster_started(service: subprocess.Popen) -> bool:
    """Q_WORKERS=1: the worker's parent has its guard, worker, monitor and pusher."""
    try:
        return len(child(service, "worker").children(recursive=True)) >= 4
    except (ValueError, psutil.Error):
        return False


def _assert_all_gone(processes: list[psutil.Process]) -> None:
    _, alive = psutil.wait_procs(processes, timeout=60)
    assert not alive, [(p.pid, p.cmdline()) for p in alive]


@pytest.mark.parametrize("to_group", [False, True], ids=["sigterm-to-serve", "sigterm-to-its-process-group"])
def test_sigterm_stops_every_process_and_the_embedded_database(service, embedded_dir, to_group):
    service, _, log = service
    processes = _processes_of(service, embedded_dir)
    if to_group:  # what systemd's KillMode=control-group and a terminal's session end do
        os.killpg(service.pid, signal.SIGTERM)
    else:
        service.send_signal(signal.SIGTERM)
    assert service.wait(timeout=60) == 0, log.read_text()[-3000:]
    _assert_all_gone(processes)
    assert not (embedded_dir / "postmaster.pid").exists()  # stopped by its last user


def test_a_killed_web_process_is_started_again_alone(service, embedded_dir):
    service, port, log = service
    _processes_of(service, embedded_dir)
    killed, worker = child(service, "web"), child(service, "worker")
    orphans = killed.children(recursive=True)
    killed.kill()  # SIGKILL: its own children (gunicorn's workers) are orphaned

    wait_for(lambda: _restarted(service, "web", killed), 30, "the web process to be started again")
    assert "The web process exited (code -9); starting it again (restart 1 of 5 in 10 minutes)." in log.read_text()
    assert not [p for p in orphans if _alive(p)]  # stopped before the new one started
    assert worker.is_running()  # left alone
    wait_for(lambda: request(port, "GET", "/healthz").status == 200, 30, "the web process")
    assert service.poll() is None


def test_the_api_answers_while_a_killed_worker_is_started_again_up_to_the_limit(embedded_dir, tmp_path):
    """The worker killed under load: every request answered, the worker back within 30 s, nothing
    lost; killed once more than SERVE_MAX_RESTARTS allows, the whole service stops."""
    env = environment(EMBEDDED_DB_DIR=str(embedded_dir), SERVE_MAX_RESTARTS="1")
    key = manage("create_api_key", "load", "--all-users", env=env).strip()
    port, log = free_port(), tmp_path / "serve.log"
    service = start_serve(port=port, env=env, log=log)
    try:
        wait_until_served(service, port)
        _processes_of(service, embedded_dir)
        with Load(port, key) as load:
            wait_for(lambda: _worker_ready(load, after=0), 30, "the worker to be connected")
            killed = child(service, "worker")
            killed.kill()
            killed_at = time.monotonic()
            wait_for(lambda: _worker_ready(load, after=killed_at, degraded=True), 30, "/readyz to report the worker")
            wait_for(lambda: _worker_ready(load, after=killed_at), 30, "the worker to be back")
            back_in = time.monotonic() - killed_at

        assert back_in < 30
        assert "The worker process exited (code -9); starting it again (restart 1 of 1" in log.read_text()
        for kind, _, answer in load.answers:  # every request served, the worker or not
            assert answer.status == 200, (kind, answer.status, answer.body[:300])
            assert "errors" not in answer.json(), (kind, answer.body[:300])
        assert load.acknowledged
        assert load.acknowledged <= load.stored()
        waiting = lambda: graphql(port, key, "{ backlog { messagesWaitingForVector } }").json()["data"]  # noqa: E731
        wait_for(lambda: waiting()["backlog"]["messagesWaitingForVector"] == 0, 120, "the new worker to embed them")

        processes = _processes_of(service, embedded_dir)
        child(service, "worker").kill()
        assert service.wait(timeout=90) == 1
        assert "The worker process exited (code -9); everything was stopped." in log.read_text()
        _assert_all_gone(processes)
        assert not (embedded_dir / "postmaster.pid").exists()
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=2)
    finally:
        stop(service)


def _worker_ready(load: Load, *, after: float, degraded: bool = False) -> bool:
    """Whether /readyz said the worker was degraded (or, by default, not) after the monotonic time ``after``."""
    probes = [a.json() for k, t, a in list(load.answers) if k == "readyz" and t > after]
    return any(("worker" in p["degraded"]) == degraded for p in probes)


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _restarted(service: subprocess.Popen, name: str, killed: psutil.Process) -> bool:
    try:
        return child(service, name).pid != killed.pid and (name == "web" or _cluster_started(service))
    except ValueError:  # not started yet
        return False


_JOIN = """
import django, time
django.setup()
from memoryproject.embedded_db import ensure_embedded_database
ensure_embedded_database()
print("joined", flush=True)
time.sleep(60)
"""


def test_a_killed_process_does_not_keep_the_database_up(embedded_dir):
    env = environment(EMBEDDED_DB_DIR=str(embedded_dir))
    crashed = subprocess.Popen([sys.executable, "-c", _JOIN], cwd=ROOT, env=env, stdout=subprocess.PIPE)
    assert crashed.stdout.readline() == b"joined\n"
    crashed.kill()  # no chance to leave, nor to stop the server
    crashed.wait()
    server = postmaster(embedded_dir)
    assert server.is_running()

    manage("showmigrations", "memories", env=env, timeout=60)  # the next user is the last: it stops it
    _assert_all_gone([server])
    assert not (embedded_dir / "postmaster.pid").exists()
