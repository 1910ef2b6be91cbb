"""Fixtures for the MCP server: its processes on the test database, and the SDK's client over each transport.

The processes (``manage.py mcp``) embed with ``tests.fakes.HashingEmbedder`` and run the worker's
tasks in-process (``Q_SYNC``), as the test settings do: what a test stores through them is
embedded at once, and ranks as it does in this process.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

import anyio
import httpx2
import pytest
from django.db import connections
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

ROOT = Path(__file__).resolve().parents[2]

Connect = Callable[[str], AbstractAsyncContextManager]


def database_url() -> str:
    """The test database as a ``DATABASE_URL`` for the server's processes."""
    db = connections["default"].settings_dict
    host = db["HOST"]
    if host.startswith("/"):
        return f"postgresql://{db['USER']}:{quote(db['PASSWORD'] or '')}@/{db['NAME']}?host={host}"
    return f"postgresql://{db['USER']}:{quote(db['PASSWORD'] or '')}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture(scope="module")
def server_environment(django_db_setup, django_db_blocker) -> dict[str, str]:
    """The environment of ``manage.py mcp``: the test database, instant embeddings, tasks run in-process."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryproject.settings", "LOG_LEVEL": "WARNING"}
    for name in ("EMBEDDED_DB_DIR", "MCP_API_KEY"):
        env.pop(name, None)
    with django_db_blocker.unblock():
        env["DATABASE_URL"] = database_url()
    env.update({"EMBEDDING_BACKEND": "tests.fakes.HashingEmbedder", "EMBEDDING_MODEL": "hashing", "Q_SYNC": "true"})
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def http_url(server_environment: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``manage.py mcp --transport http`` on a free port, stopped (SIGTERM) after the module; yields its URL."""
    port = _free_port()
    log = (tmp_path_factory.mktemp("mcp") / "http.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "manage.py", "mcp", "--transport", "http", "--port", str(port)],
        cwd=ROOT,
        env=server_environment,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, Path(log.name).read_text()[-3000:]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the MCP server did not listen within 60 s"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        # uvicorn stops gracefully, then manage.py leaves through atexit with SIGTERM's exit status.
        assert server.wait(timeout=30) == 128 + signal.SIGTERM, Path(log.name).read_text()[-3000:]
        log.close()


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest, server_environment: dict[str, str], tmp_path: Path) -> Iterator[Connect]:
    """``connect(api_key)``: the SDK's ``Client`` to the server over the transport of the test's parameter.

    stdio starts ``manage.py mcp`` with the key in ``MCP_API_KEY``, as a desktop agent does; HTTP
    sends it as ``Authorization: Bearer`` to the module's server.
    """
    if request.param == "http":
        url = request.getfixturevalue("http_url")
        yield lambda api_key: http_client(url, api_key)
        return
    with (tmp_path / "stdio.log").open("w") as errlog:

        def connect_stdio(api_key: str) -> AbstractAsyncContextManager:
            return stdio_client_for({**server_environment, "MCP_API_KEY": api_key}, errlog=errlog)

        yield connect_stdio


def http_client(url: str, api_key: str) -> AbstractAsyncContextManager:
    """The SDK's ``Client`` over streamable HTTP to ``url``, sending ``api_key`` as ``Authorization: Bearer``."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {api_key}"}, timeout=60)
    return Client(streamable_http_client(url, http_client=http))


def stdio_client_for(
    server_environment: dict[str, str], *arguments: str, errlog: TextIO
) -> AbstractAsyncContextManager:
    """The SDK's ``Client`` to ``manage.py mcp *arguments`` over stdio, started in ``server_environment``."""
    parameters = StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp", *arguments], env=server_environment, cwd=ROOT
    )
    return Client(stdio_client(parameters, errlog=errlog))


def session(client: AbstractAsyncContextManager, run: Callable[[Client], Awaitable[Any]]) -> Any:
    """Open ``client``, run ``run(client)`` in one MCP session and return what it returns."""

    async def main() -> Any:
        async with client as connected:
            return await run(connected)

    return anyio.run(main)


def calls(client: AbstractAsyncContextManager, *tool_calls: tuple[str, dict[str, Any]]) -> list[CallToolResult]:
    """Call the tools in order, in one session; their results."""

    async def run(connected: Client) -> list[CallToolResult]:
        return [await connected.call_tool(name, arguments) for name, arguments in tool_calls]

    return session(client, run)


def error_codes(result: CallToolResult) -> list[str]:
    """The codes of a tool error (``[]`` for a result that is no error)."""
    return [e["code"] for e in result.structured_content["errors"]] if result.is_error else []
