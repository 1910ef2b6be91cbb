"""``manage.py mcp``: the MCP server, over stdio (a desktop agent starts it) or streamable HTTP.

``manage.py mcp --api-key KEY`` (or ``MCP_API_KEY``) serves stdio as that key;
``manage.py mcp --user ID [--user ID ...]`` serves stdio for those end users, without a key.
stdout carries the protocol only, everything else goes to stderr.
``manage.py mcp --transport http [--host H] [--port P]`` serves ``http://H:P/mcp`` (the
Procfile's ``mcp`` process), where every request brings its key as ``Authorization: Bearer``.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from memories.graphql.permissions import api_key_scope
from memories.mcp.server import MCP_PATH, serve_http, serve_stdio

__all__ = ["Command"]


class Command(BaseCommand):
    help = (
        "Serve the memory as MCP tools: over stdio (default) as the API key of --api-key or MCP_API_KEY, or for "
        "the end users of --user; or over streamable HTTP (--transport http), where each request sends its key "
        "as Authorization: Bearer."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
        parser.add_argument(
            "--api-key",
            default=None,
            help="stdio: the API key every call acts as (default: MCP_API_KEY; the environment keeps it out of ps).",
        )
        parser.add_argument(
            "--user",
            action="append",
            default=[],
            dest="user_ids",
            metavar="USER_ID",
            help="stdio: an end user the tools may act on, instead of an API key (repeat for several).",
        )
        parser.add_argument("--host", default=settings.HOST, help="http: the address to listen on (default: HOST).")
        parser.add_argument("--port", type=int, default=settings.MCP_PORT, help="http: the port (default: MCP_PORT).")

    def handle(
        self,
        *args: object,
        transport: str,
        api_key: str | None,
        user_ids: list[str],
        host: str,
        port: int,
        **options: object,
    ) -> None:
        if transport == "http":
            if api_key is not None or user_ids:
                raise CommandError("Over HTTP each request sends its own API key: --api-key and --user are for stdio.")
            self.stderr.write(f"MCP server (streamable HTTP): http://{host}:{port}{MCP_PATH}")
            serve_http(host=host, port=port)
            return
        if user_ids:
            if api_key is not None:
                raise CommandError("Give either --api-key or --user, not both.")
            if not all(user_id.strip() for user_id in user_ids):
                raise CommandError("--user needs an end user's id.")
            connections.close_all()  # the tools run in worker threads, each with its own connection
            serve_stdio(user_ids=user_ids)
            return
        api_key = (api_key if api_key is not None else settings.MCP_API_KEY).strip()
        if not api_key:
            raise CommandError(
                "Give the API key the tools act as (--api-key KEY, or MCP_API_KEY in the environment), "
                "or the end users they act for (--user ID)."
            )
        if api_key_scope(api_key) is None:
            raise CommandError("Invalid or revoked API key (create one with `manage.py create_api_key`).")
        connections.close_all()  # the tools run in worker threads, each with its own connection
        serve_stdio(api_key=api_key)
