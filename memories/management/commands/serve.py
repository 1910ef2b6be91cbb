"""``manage.py serve``: the whole service in one command (what ``make run`` calls)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Apply migrations, start the django-q2 worker and serve the app until Ctrl-C (or SIGTERM)."

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("--host", default=settings.HOST)
        parser.add_argument("--port", type=int, default=settings.PORT)
        parser.add_argument("--no-worker", action="store_true", help="Do not start the background worker.")

    def handle(self, *args: object, host: str, port: int, no_worker: bool, **options: object) -> None:
        from memoryproject.wsgi import web_server

        call_command("migrate", interactive=False, verbosity=0)
        server = web_server(host=host, port=port)
        server.prepare()  # binds the port now: a port in use fails before anything starts
        worker = None
        try:
            # SIGTERM (what process managers send) stops the server as Ctrl-C does: the worker
            # is stopped first, then cheroot waits for the requests under way to end. Set
            # before the worker starts, so that a SIGTERM right after cannot leave it orphaned.
            signal.signal(signal.SIGTERM, _exit)
            if not no_worker:
                worker = subprocess.Popen([sys.executable, "manage.py", "qcluster"])
            # Load the embedding model now rather than on the first search.
            threading.Thread(target=_warm_up, daemon=True).start()
            base = f"http://{host}:{port}"
            self.stdout.write(
                self.style.SUCCESS(
                    f"GraphiQL: {base}/graphql/\nAdmin:    {base}/admin/\n"
                    "Staff login: `.venv/bin/python manage.py createsuperuser`; API key: "
                    "`.venv/bin/python manage.py create_api_key NAME --all-users`.\nCtrl-C stops everything."
                )
            )
            server.serve()
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut this short
            try:
                if worker is not None:
                    worker.terminate()
                    try:
                        worker.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        worker.kill()
            finally:
                server.stop()


def _exit(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _warm_up() -> None:
    from memories.llm import get_embedder

    get_embedder().embed(["warm up"])
