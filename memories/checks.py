"""System checks (``manage.py check``): a connection pool too small for the threads that use it,
and, under ``check --database default`` and ``migrate`` only, stored vectors that do not match the
configured model."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Tags, Warning, register
from django.db import DEFAULT_DB_ALIAS, DatabaseError

from memories.kinds import KINDS
from memories.services.reembed import reembed_column_dimensions

__all__ = ["check_embeddings", "check_pool_size"]

_FIX = (
    "Run `manage.py reembed` to re-embed everything with the configured model, or configure the "
    "model that made the stored vectors (EMBEDDING_BACKEND, EMBEDDING_MODEL, EMBEDDING_DIMENSIONS)."
)


def _end_models(model) -> list[str]:
    embedded = model.objects.filter(embedding__isnull=False).values_list("embedding_model", flat=True)
    return [m for m in (embedded.order_by("pk").first(), embedded.order_by("-pk").first()) if m is not None]


@register(Tags.database)
def check_embeddings(app_configs: object = None, databases: list[str] | None = None, **kwargs: object) -> list[Warning]:
    """Warn when a vector column's size or the stored vectors' model differ from the configuration.

    A database check: Django passes ``databases`` only to ``check --database default`` and
    ``migrate``, so other commands query nothing. It stays cheap: the column size comes from the
    catalog, and the model from the oldest and newest embedded rows of each table (two index
    scans; a model change shows at both ends). Skipped silently when the database is not
    reachable or not migrated yet.
    """
    if DEFAULT_DB_ALIAS not in (databases or ()):
        return []
    warnings: list[Warning] = []
    try:
        for kind, spec in KINDS.items():
            model = spec.model
            dimensions = reembed_column_dimensions(kind=kind)
            if dimensions is not None and dimensions != settings.EMBEDDING_DIMENSIONS:
                warnings.append(
                    Warning(
                        f"{model._meta.verbose_name} vectors have {dimensions} dimensions; "
                        f"EMBEDDING_DIMENSIONS is {settings.EMBEDDING_DIMENSIONS}.",
                        hint=_FIX,
                        id="memories.W001",
                    )
                )
            other = next((m for m in _end_models(model) if m != settings.EMBEDDING_MODEL), None)
            if other is not None:
                warnings.append(
                    Warning(
                        f"Some {model._meta.verbose_name} vectors were made by {other!r}, not the configured "
                        f"{settings.EMBEDDING_MODEL!r}; search leaves them out.",
                        hint=_FIX,
                        id="memories.W002",
                    )
                )
    except DatabaseError:
        return []
    return warnings


@register("memories")
def check_pool_size(app_configs: object = None, **kwargs: object) -> list[Warning]:
    """Warn when a web process's connection pool has fewer connections than request threads.

    Each request thread (``WEB_THREADS``) holds one connection at a time: with fewer, a request
    can wait for the pool's timeout (30 s) and fail.
    """
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    needed = settings.WEB_THREADS
    if not isinstance(pool, dict) or pool.get("max_size", needed) >= needed:
        return []
    return [
        Warning(
            f"DATABASE_POOL_MAX_SIZE is {pool['max_size']}, fewer than WEB_THREADS ({needed}).",
            hint="Leave DATABASE_POOL_MAX_SIZE empty (it is then WEB_THREADS + 1), or lower WEB_THREADS.",
            id="memories.W003",
        )
    ]
