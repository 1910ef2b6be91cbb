"""The example chat page's backend: serves the page and mints user tokens with its API key.

    MEMORY_API_KEY=mem_... .venv/bin/python examples/web-chat/server.py     # http://127.0.0.1:8080/

The page (``index.html``, ``app.js``) is static and imports the TypeScript client's compiled module
(``clients/typescript/dist``, served at ``/client/``). It never sees the API key: it asks ``POST /token``
for a short-lived user token, which this backend mints with the Python client (``createUserToken``).
A real backend mints a token for the user its own login says is signed in; this demo trusts the name
the page sends.

Environment: ``MEMORY_URL`` (the service's GraphQL endpoint, default ``http://127.0.0.1:8000/graphql/``),
``MEMORY_API_KEY`` (a key covering the users, e.g. ``create_api_key chat-page --all-users``),
``HOST`` and ``PAGE_PORT`` (where this serves, ``127.0.0.1:8080``). Start the service with
``CORS_ALLOWED_ORIGINS=http://127.0.0.1:8080`` so that the page may call it.
"""

from __future__ import annotations

import json
import os
import sys
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from memory_client import MemoryApiError, MemoryClient

__all__ = ["PageHandler", "main"]

HERE = Path(__file__).resolve().parent
CLIENT = HERE.parents[1] / "clients" / "typescript" / "dist"
TOKEN_SECONDS = 900


class PageHandler(SimpleHTTPRequestHandler):
    """The page's files, the client's module under ``/client/``, ``GET /config.json`` and ``POST /token``."""

    memory: MemoryClient
    memory_url: str

    def translate_path(self, path: str) -> str:
        if path.startswith("/client/"):
            return str(CLIENT / path.removeprefix("/client/").split("?", 1)[0])
        return super().translate_path(path)

    def do_GET(self) -> None:
        if self.path == "/config.json":
            return self._json(HTTPStatus.OK, {"memoryUrl": self.memory_url})
        return super().do_GET()

    def do_POST(self) -> None:
        if self.path != "/token":
            return self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
        try:
            asked = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            user_id = str(asked["userId"])
        except (ValueError, KeyError, TypeError):
            return self._json(HTTPStatus.BAD_REQUEST, {"error": 'send {"userId": "..."}'})
        try:
            minted = self.memory.create_user_token(user_id, ttl_seconds=TOKEN_SECONDS)
        except MemoryApiError as error:
            return self._json(HTTPStatus.BAD_GATEWAY, {"error": str(error)})
        self._json(HTTPStatus.OK, {"token": minted.token, "expiresAt": minted.expires_at.isoformat()})

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        if os.environ.get("PAGE_LOG"):
            super().log_message(format, *args)

    def _json(self, status: HTTPStatus, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main() -> int:
    """Serve until Ctrl-C (or SIGTERM)."""
    key = os.environ.get("MEMORY_API_KEY", "")
    if not key:
        print("Set MEMORY_API_KEY to an API key (manage.py create_api_key chat-page --all-users).", file=sys.stderr)
        return 1
    url = os.environ.get("MEMORY_URL", "http://127.0.0.1:8000/graphql/")
    host, port = os.environ.get("HOST", "127.0.0.1"), int(os.environ.get("PAGE_PORT", "8080"))
    PageHandler.memory, PageHandler.memory_url = MemoryClient(url, key), url
    server = ThreadingHTTPServer((host, port), partial(PageHandler, directory=str(HERE)))
    print(f"The chat page: http://{host}:{port}/ (memory service: {url})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
