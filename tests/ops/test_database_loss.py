"""The database lost under a running service and under load: every answer is JSON with a code (503
``DATABASE_UNAVAILABLE`` within seconds, never Django's HTML page), ``/readyz`` answers within 2 s, and
the service is back by itself within 30 s: ``make run`` starts its embedded PostgreSQL again (up to
``SERVE_MAX_RESTARTS`` times), and with an external database (``DATABASE_URL``) the web process and the
worker reconnect once it is back. No message whose ``addMessages`` was answered is lost."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pgserver
import psutil
import pytest
from pgserver.postgres_server import PostgresServer

from tests.ops.live import (
    Load,
    child,
    environment,
    free_port,
    graphql,
    manage,
    postgres_folder,
    postmaster,
    request,
    start_serve,
    stop,
    wait_for,
    wait_until_served,
)

pytestmark = pytest.mark.slow

BACKLOG = "{ backlog { messagesWaitingForVector } }"


def _serve(env: dict[str, str], log: Path) -> tuple[subprocess.Popen, int, str]:
    """``manage.py serve`` (web and worker) with a new all-users API key, once it answers."""
    key = manage("create_api_key", "load", "--all-users", env=env).strip()
    port = free_port()
    service = start_serve(port=port, env=env, log=log)
    wait_until_served(service, port)
    return service, port, key


def test_the_embedded_database_killed_under_load_is_started_again_up_to_the_limit(embedded_dir, tmp_path):
    log = tmp_path / "serve.log"
    service, port, key = _serve(environment(EMBEDDED_DB_DIR=str(embedded_dir), SERVE_MAX_RESTARTS="1"), log)
    try:
        with Load(port, key) as load:
            wait_for(lambda: load.succeeded("addMessages", after=0), 30, "a first message")
            killed_at = time.monotonic()
            postmaster(embedded_dir).kill()
            wait_for(lambda: load.succeeded("addMessages", after=killed_at + 0.5), 30, "the service to be back")
            back_at = time.monotonic()
            wait_for(lambda: load.succeeded("search", after=back_at), 10, "a search")

        load.assert_every_answer_is_json_with_a_code()
        assert "The embedded PostgreSQL stopped; starting it again (restart 1 of 1" in log.read_text()
        assert load.acknowledged <= load.stored()

        processes = [psutil.Process(service.pid), *psutil.Process(service.pid).children(recursive=True)]
        postmaster(embedded_dir).kill()  # once more than SERVE_MAX_RESTARTS in 10 minutes
        assert service.wait(timeout=90) == 1
        assert "The embedded PostgreSQL stopped; everything was stopped." in log.read_text()
        _, alive = psutil.wait_procs(processes, timeout=60)
        assert not alive, [p.cmdline() for p in alive]
    finally:
        stop(service)


@pytest.fixture
def external_database() -> Iterator[PostgresServer]:
    """A PostgreSQL server of the test's own, which the service reaches through ``DATABASE_URL``."""
    with postgres_folder() as folder:
        server = pgserver.get_server(folder / "pg", cleanup_mode="delete")
        try:
            yield server
        finally:
            server.cleanup()


def _started(server: PostgresServer) -> bool:
    """Start a killed server again; ``False`` while its killed processes still hold its memory."""
    try:
        server.ensure_postgres_running()  # this test alone starts it: no lock needed
    except subprocess.CalledProcessError:
        return False
    return True


def test_with_an_external_database_the_service_reconnects_once_it_is_back(external_database, tmp_path):
    env = environment(DATABASE_URL=external_database.get_uri())
    manage("migrate", "-v0", env=env)
    service, port, key = _serve(env, tmp_path / "serve.log")
    try:
        web = child(service, "web")
        with Load(port, key) as load:
            wait_for(lambda: load.succeeded("addMessages", after=0), 30, "a first message")
            os.kill(external_database.get_pid(), signal.SIGKILL)
            time.sleep(4)  # down for longer than a request waits for a connection
            down = graphql(port, key, BACKLOG)
            readiness = request(port, "GET", "/readyz")
            back_at = time.monotonic()
            wait_for(lambda: _started(external_database), 30, "the database to start again")
            wait_for(lambda: load.succeeded("addMessages", after=back_at), 30, "the service to reconnect")

        assert (down.status, down.json()["errors"][0]["extensions"]["code"]) == (503, "DATABASE_UNAVAILABLE")
        assert down.seconds < 5
        assert (readiness.status, readiness.json()["failed"]) == (503, ["database"])
        assert readiness.seconds < 2
        load.assert_every_answer_is_json_with_a_code()
        assert load.acknowledged <= load.stored()
        assert child(service, "web").pid == web.pid  # reconnected, not restarted
        # The worker reconnected too: it embeds what was added meanwhile.
        waiting = lambda: graphql(port, key, BACKLOG).json()["data"]["backlog"]["messagesWaitingForVector"]  # noqa: E731
        wait_for(lambda: waiting() == 0, 60, "the worker to embed the messages")
    finally:
        stop(service)
