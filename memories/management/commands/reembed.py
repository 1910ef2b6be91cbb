"""``manage.py reembed``: re-embed stored vectors with the configured (or named) model.

Resumable: vectors are written to shadow columns batch by batch; run it again after Ctrl-C
or a crash and it continues where it stopped. The new vectors replace the old ones only
when every kind is complete (see ``memories.services.reembed``).
"""

from __future__ import annotations

import time

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memories.kinds import KINDS, MemoryKind
from memories.llm import ModelBackendError, get_embedder, make_embedder
from memories.services.reembed import (
    reembed_batch,
    reembed_column_dimensions,
    reembed_pending,
    reembed_prepare,
    reembed_status,
    reembed_switch,
)

# --kind names -> kinds
_KINDS = {spec.plural: kind for kind, spec in KINDS.items()}


class Command(BaseCommand):
    help = (
        "Re-embed messages, summaries, knowledge and diaries with the configured embedding model "
        "(EMBEDDING_BACKEND / EMBEDDING_MODEL; --model to name another). Resumable; search keeps "
        "the old vectors until every kind is done, then they are switched at once."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--kind", choices=list(_KINDS), help="Only this kind (default: all).")
        parser.add_argument("--batch-size", type=int, default=settings.EMBEDDING_BATCH_SIZE)
        parser.add_argument("--model", help="Embedding model name (default: EMBEDDING_MODEL).")
        parser.add_argument("--no-switch", action="store_true", help="Fill the new vectors but do not switch yet.")

    def handle(
        self, *args: object, kind: str | None, batch_size: int, model: str | None, no_switch: bool, **options: object
    ) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        try:
            embedder = make_embedder(model=model) if model else get_embedder()
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from exc
        try:
            dimensions = len(embedder.embed(["dimension probe"]).vectors[0])
        except ModelBackendError as exc:
            raise CommandError(f"The embedding backend failed: {exc}") from exc
        self._run(embedder, dimensions, [_KINDS[kind]] if kind else list(KINDS), batch_size, no_switch)

    def _run(self, embedder, dimensions: int, kinds: list[str], batch_size: int, no_switch: bool) -> None:
        started = time.monotonic()
        done: dict[str, int] = {}
        self.stdout.write(f"Re-embedding with {embedder.model_name} ({dimensions} dimensions).")
        for kind in kinds:
            reembed_prepare(kind=kind, dimensions=dimensions)
            pending = reembed_pending(kind=kind, model_name=embedder.model_name)
            done[kind] = 0
            with tqdm(total=pending, desc=kind, unit="row", disable=not pending) as bar:
                while count := reembed_batch(kind=kind, embedder=embedder, batch_size=batch_size):
                    done[kind] += count
                    bar.update(count)
        status = reembed_status(model_name=embedder.model_name)
        waiting = sorted(k for k, pending in status.items() if pending is None or pending > 0)
        summary = ", ".join(f"{k}: {n}" for k, n in done.items())
        if waiting:
            self.stdout.write(
                f"Embedded {summary} in {time.monotonic() - started:.0f}s. "
                f"Not switched yet: still to do: {', '.join(waiting)}."
            )
            return
        if no_switch:
            self.stdout.write(f"Embedded {summary}. All kinds ready; run again without --no-switch to switch.")
            return
        reembed_switch(embedder=embedder, batch_size=batch_size, progress=lambda step: self.stdout.write(step))
        self.stdout.write(
            self.style.SUCCESS(
                f"Embedded {summary} in {time.monotonic() - started:.0f}s; the service's vectors are now "
                f"{embedder.model_name} ({reembed_column_dimensions(kind=MemoryKind.MESSAGE)} dimensions). "
                "Restart the service "
                f"(web and worker) now with EMBEDDING_MODEL={embedder.model_name} EMBEDDING_DIMENSIONS={dimensions}."
            )
        )
