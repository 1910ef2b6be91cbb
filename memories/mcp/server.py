"""The MCP server: the memory's tools on the official SDK's ``MCPServer``, over stdio or streamable HTTP.

- stdio (``serve_stdio``): a desktop agent starts ``manage.py mcp`` and talks over its stdin and
  stdout; an API key, or the end users the tools may act on, are given at start.
- streamable HTTP (``serve_http``): a process of its own at ``http://HOST:MCP_PORT/mcp``; every
  request carries its API key as ``Authorization: Bearer``, checked by the SDK's bearer-auth
  middleware (HTTP 401 without a valid key). Stateless: each request stands alone, so several
  processes can serve behind a load balancer without sticky sessions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
import uvicorn
from django.conf import settings
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError
from starlette.applications import Starlette

from memories.database import statement_timeout_for_requests
from memories.llm import get_embedder
from memories.llm.local import LocalEmbedder
from memories.mcp.auth import ApiKeyVerifier, request_scope, stdio_caller
from memories.mcp.execution import arguments_refused
from memories.mcp.request_ids import RequestIds
from memories.mcp.tools import MemoryTools

__all__ = ["MCP_PATH", "MemoryMCPServer", "http_app", "serve_http", "serve_stdio", "stdio_server"]

MCP_PATH = "/mcp"
NAME = "memories"
INSTRUCTIONS = (
    "Long-term memory of a chatbot's end users, each named by your user id. For each turn: store the "
    "user's message with add_messages (include_context: true returns the context for your reply; paste its "
    "`prompt` into your system prompt), then store your reply with add_messages. search_memory answers a "
    "question from what the user said, with the turns it rests on; list_facts, add_fact, correct_fact and "
    "forget_fact manage what is known about the user; get_backlog says whether their turns are all processed "
    "yet. Errors name a code: FORBIDDEN (that user is not "
    "yours to reach), VALIDATION and BAD_USER_INPUT (fix the named field), MODEL_BACKEND_* (try again later)."
)


class MemoryMCPServer(MCPServer):
    """The SDK's server, refusing arguments that do not fit a tool's input schema as the tools refuse
    everything else: a tool error with the API's code (``BAD_USER_INPUT``) and the field to fix."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if isinstance(error, UnexpectedToolError) or not isinstance(error.__cause__, ValidationError):
                raise
            return arguments_refused(error.__cause__)


def stdio_server(*, api_key: str | None = None, user_ids: Sequence[str] = ()) -> MCPServer:
    """The server whose tools act as ``api_key``, or else for the end users ``user_ids`` (stdio)."""
    server = MemoryMCPServer(NAME, instructions=INSTRUCTIONS, log_level=settings.LOG_LEVEL)
    MemoryTools(caller=stdio_caller(api_key=api_key, user_ids=user_ids)).register(server)
    return server


def http_app(*, host: str, port: int) -> Starlette:
    """The streamable HTTP app (ASGI), serving at ``MCP_PATH``; every request needs an API key."""
    server = MemoryMCPServer(
        NAME,
        instructions=INSTRUCTIONS,
        log_level=settings.LOG_LEVEL,
        token_verifier=ApiKeyVerifier(),
        # API keys are no OAuth tokens: without a resource_server_url the SDK advertises no
        # authorization server, and the issuer it requires is never published.
        auth=AuthSettings(issuer_url=f"http://{host}:{port}", resource_server_url=None),
    )
    MemoryTools(caller=request_scope).register(server)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        max_request_body_size=settings.MAX_REQUEST_BYTES,
        host=host,  # on a loopback address, the SDK also refuses other Host headers (DNS rebinding)
    )
    sdk_lifespan = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[Any]:
        # Each tool call holds a pooled connection in one of anyio's threads (40 by default): no more
        # calls at once than the pool lends (WEB_THREADS), the rest wait their turn instead of a 503.
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.WEB_THREADS
        async with sdk_lifespan(app) as state:
            yield state

    app.router.lifespan_context = lifespan
    return app


def serve_stdio(*, api_key: str | None = None, user_ids: Sequence[str] = ()) -> None:
    """Serve over stdin/stdout until the client closes them, as ``api_key`` or for ``user_ids``."""
    _warm_up()
    stdio_server(api_key=api_key, user_ids=user_ids).run("stdio")


def serve_http(*, host: str, port: int) -> None:
    """Serve streamable HTTP on ``host:port`` until SIGINT or SIGTERM (uvicorn stops gracefully); a
    message with an invalid JSON-RPC ``id`` is refused (``RequestIds``), and statements give up after
    ``REQUEST_STATEMENT_TIMEOUT_SECONDS``, as in the web process."""
    statement_timeout_for_requests()
    _warm_up()
    app = RequestIds(http_app(host=host, port=port), path=MCP_PATH, max_bytes=settings.MAX_REQUEST_BYTES)
    # Logging stays Django's (LOGGING); no access log, as for the web process.
    uvicorn.run(app, host=host, port=port, log_config=None, access_log=False)


def _warm_up() -> None:
    """Load the local embedding model now, not during the first call (as the web process does)."""
    embedder = get_embedder()
    if isinstance(embedder, LocalEmbedder):
        embedder.embed(["warm up"])
