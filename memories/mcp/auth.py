"""Who the MCP server's tools act as: over HTTP each request's API key, over stdio what was given at start.

Over HTTP the SDK calls ``ApiKeyVerifier.verify_token`` with the ``Authorization: Bearer`` token of every
HTTP request and answers HTTP 401 itself when it returns ``None``; the tools then read the
caller's scope from ``get_access_token()``. The key is looked up by ``api_key_scope``, as the
GraphQL view does, so a key reaches over MCP exactly the end users it reaches over GraphQL.
Over stdio the caller is an API key (looked up again at each call: a revoked key stops working)
or a list of end users named by whoever started the process, who holds the database's
credentials anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import anyio.to_thread
from django.db import close_old_connections
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken

from memories.graphql.permissions import Scope, api_key_scope

__all__ = ["STDIO_ACTOR", "ApiKeyToken", "ApiKeyVerifier", "Caller", "request_scope", "stdio_caller"]

# Who changed a fact, in its audit history, when the tools act for users named at start.
STDIO_ACTOR = "manage.py mcp --user"

# The caller's scope at each call; ``None``: no valid API key (the tool answers UNAUTHENTICATED).
Caller = Callable[[], Scope | None]


class ApiKeyToken(AccessToken):
    """The SDK's ``AccessToken`` for an API key, with the key's ``Scope``."""

    memory_scope: Scope


class ApiKeyVerifier:
    """The SDK's ``TokenVerifier`` for the service's API keys."""

    async def verify_token(self, token: str) -> AccessToken | None:
        """The key's ``ApiKeyToken``; ``None`` (HTTP 401) for a wrong or revoked key."""
        scope = await anyio.to_thread.run_sync(_scope_of, token.strip())
        if scope is None:
            return None
        return ApiKeyToken(token=token, client_id=scope.actor, scopes=[], memory_scope=scope)


def _scope_of(raw_key: str) -> Scope | None:
    close_old_connections()
    try:
        return api_key_scope(raw_key)
    finally:
        close_old_connections()


def request_scope() -> Scope | None:
    """The scope of the HTTP request being served, as ``ApiKeyVerifier`` found it; ``None`` outside one."""
    token = get_access_token()
    return token.memory_scope if isinstance(token, ApiKeyToken) else None


def stdio_caller(*, api_key: str | None = None, user_ids: Sequence[str] = ()) -> Caller:
    """The caller of a stdio server: ``api_key``'s scope, or else the end users ``user_ids`` (no curation)."""
    if api_key:
        return partial(api_key_scope, api_key)
    scope = Scope(all_users=False, user_external_ids=frozenset(user_ids), actor=STDIO_ACTOR)
    return lambda: scope
