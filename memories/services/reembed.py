"""Re-embedding every vector with another model, possibly of another dimension, without downtime.

How it works, per kind (messages, summaries, knowledge, diaries):

1. ``reembed_prepare``: add shadow columns ``embedding_next vector(D)`` (D: the new model's
   dimension), ``embedding_model_next`` and ``embedding_next_at`` (the ``updated_at`` of the
   text that was embedded) to the table.
2. ``reembed_batch``: embed the next rows that have no shadow vector (or whose text changed
   since theirs was made) and write them to the shadow columns, one committed batch at a
   time, so an interrupted run continues where it stopped. Search meanwhile keeps using the
   ``embedding`` column and its model: no ranking ever mixes two models.
3. ``reembed_switch``, once every kind is complete: build the HNSW index on each shadow
   column, then in one transaction (tables locked briefly) embed anything that arrived in the
   meantime, drop the old columns and index, and rename the shadow ones into place.

After the switch, the service must run with the new ``EMBEDDING_MODEL`` /
``EMBEDDING_DIMENSIONS``; until then search says re-embedding is needed instead of mixing.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection, transaction
from django.db.models import Model
from pgvector.django import HnswIndex

from memories.kinds import KINDS
from memories.llm import Embedder
from memories.services.embeddings import embeddings_compute

__all__ = [
    "reembed_batch",
    "reembed_column_dimensions",
    "reembed_pending",
    "reembed_prepare",
    "reembed_status",
    "reembed_switch",
]


def _hnsw_index(kind: str) -> HnswIndex:
    """The model's own HNSW index declaration (name, opclass, m, ef_construction)."""
    return next(i for i in KINDS[kind].model._meta.indexes if isinstance(i, HnswIndex))


# The switch drops these columns (and with them every index that uses them) and renames the shadow ones in their place.
_REPLACED_COLUMNS = ["embedding", "embedding_model"]


def _indexes_on_replaced_columns(cursor, kind: str) -> list[str]:
    """``CREATE INDEX`` statements of the table's indexes that use a replaced column in a key, an
    expression or a predicate, other than the HNSW index (built on the shadow column beforehand).

    Read from PostgreSQL's catalog: the column dependencies (``pg_depend``) by which ``DROP COLUMN``
    drops an index, so declared and hand-made indexes alike are found, and no other.
    """
    cursor.execute(
        "SELECT DISTINCT idx.relname, pg_get_indexdef(idx.oid) FROM pg_depend dep "
        "JOIN pg_class idx ON idx.oid = dep.objid AND idx.relkind = 'i' "
        "JOIN pg_attribute col ON col.attrelid = dep.refobjid AND col.attnum = dep.refobjsubid "
        "WHERE dep.classid = 'pg_class'::regclass AND dep.refclassid = 'pg_class'::regclass "
        "AND dep.refobjid = %s::regclass AND col.attname = ANY(%s) AND idx.relname <> %s ORDER BY idx.relname",
        [_table(kind), _REPLACED_COLUMNS, _hnsw_index(kind).name],
    )
    return [definition for _, definition in cursor.fetchall()]


def _table(kind: str) -> str:
    return KINDS[kind].model._meta.db_table


def reembed_column_dimensions(*, kind: str, column: str = "embedding") -> int | None:
    """The dimension of a vector column as declared in PostgreSQL, or ``None`` if it does not exist."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s AND NOT attisdropped",
            [_table(kind), column],
        )
        row = cursor.fetchone()
    return None if row is None else row[0]


# A row must fit in an 8 kB page (migrations/0003_embedding_storage_plain.py).
_PLAIN_MAX_DIMENSIONS = 1536


def reembed_prepare(*, kind: str, dimensions: int) -> None:
    """Add the shadow columns for ``dimensions``-long vectors (replacing shadow columns of another size)."""
    table = connection.ops.quote_name(_table(kind))
    with transaction.atomic(), connection.cursor() as cursor:
        _check_deferred_constraints(cursor)
        existing = reembed_column_dimensions(kind=kind, column="embedding_next")
        if existing is not None and existing != dimensions:
            cursor.execute(
                f"ALTER TABLE {table} DROP COLUMN embedding_next, DROP COLUMN embedding_model_next, "
                "DROP COLUMN embedding_next_at"
            )
        cursor.execute(
            f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS embedding_next vector({int(dimensions)}), "
            "ADD COLUMN IF NOT EXISTS embedding_model_next varchar(200) NOT NULL DEFAULT '', "
            "ADD COLUMN IF NOT EXISTS embedding_next_at timestamptz"
        )
        # As the live column (migration 0003): vectors that fit stay in the row, out of TOAST.
        if dimensions <= _PLAIN_MAX_DIMENSIONS:
            cursor.execute(f"ALTER TABLE {table} ALTER COLUMN embedding_next SET STORAGE PLAIN")


def _pending_condition(kind: str, model_name: str) -> tuple[str, list[object]]:
    condition = "(embedding_next IS NULL OR embedding_model_next <> %s"
    if KINDS[kind].editable:  # the text changed since its shadow vector was made
        condition += " OR embedding_next_at IS DISTINCT FROM updated_at"
    return condition + ")", [model_name]


def reembed_pending(*, kind: str, model_name: str) -> int:
    """Rows of ``kind`` still lacking a current shadow vector from ``model_name`` (after ``reembed_prepare``)."""
    condition, params = _pending_condition(kind, model_name)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(_table(kind))} WHERE {condition}", params)
        return cursor.fetchone()[0]


def reembed_batch(*, kind: str, embedder: Embedder, batch_size: int) -> int:
    """Embed the next ``batch_size`` pending rows into the shadow columns, in one transaction.

    Returns:
        How many rows were embedded (0 when none is pending).

    Raises:
        ModelBackendError: the embedding backend failed; the batch is not written.
    """
    model: type[Model] = KINDS[kind].model
    table = connection.ops.quote_name(_table(kind))
    condition, params = _pending_condition(kind, embedder.model_name)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {table} WHERE {condition} ORDER BY id LIMIT %s", [*params, batch_size])
        ids = [row[0] for row in cursor.fetchall()]
    if not ids:
        return 0
    rows = list(model.objects.filter(pk__in=ids).order_by("pk"))
    vectors = embeddings_compute(embedder=embedder, rows=rows)
    with transaction.atomic(), connection.cursor() as cursor:
        # embedding_next_at records the row's own updated_at (not a clock reading), so a later
        # edit makes it pending again whatever the clocks of app and database say.
        cursor.executemany(
            f"UPDATE {table} SET embedding_next = %s::vector, embedding_model_next = %s, embedding_next_at = %s "
            "WHERE id = %s",
            [
                (_literal(v), embedder.model_name, getattr(row, "updated_at", None), row.pk)
                for row, v in zip(rows, vectors, strict=True)
            ],
        )
    return len(rows)


def _check_deferred_constraints(cursor) -> None:
    # ALTER TABLE refuses to run while deferred foreign-key checks of the same transaction are
    # pending (Django's FKs are DEFERRABLE INITIALLY DEFERRED): run them now.
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def _literal(vector: list[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def reembed_status(*, model_name: str) -> dict[str, int | None]:
    """Per kind: rows still pending for ``model_name`` (``None`` where not prepared)."""
    return {
        kind: reembed_pending(kind=kind, model_name=model_name)
        if reembed_column_dimensions(kind=kind, column="embedding_next") is not None
        else None
        for kind in KINDS
    }


def reembed_switch(*, embedder: Embedder, batch_size: int, progress: Callable[[str], None] = lambda _: None) -> None:
    """Put the shadow vectors in place of the old ones, for every kind at once.

    Raises:
        RuntimeError: a kind is not prepared for this model.
    """
    status = reembed_status(model_name=embedder.model_name)
    if any(pending is None for pending in status.values()):
        raise RuntimeError(f"Not every kind is prepared: {status}")
    concurrently = "" if connection.in_atomic_block else "CONCURRENTLY "
    for kind in KINDS:
        progress(f"building the HNSW index of {kind}")
        index = _hnsw_index(kind)
        with connection.cursor() as cursor:
            cursor.execute(f"DROP INDEX {concurrently}IF EXISTS {index.name}_next")
            cursor.execute(
                f"CREATE INDEX {concurrently}{index.name}_next ON {connection.ops.quote_name(_table(kind))} "
                f"USING hnsw (embedding_next {index.opclasses[0]}) "
                f"WITH (m = {int(index.m)}, ef_construction = {int(index.ef_construction)})"
            )
    progress("switching columns")
    with transaction.atomic(), connection.cursor() as cursor:
        tables = ", ".join(connection.ops.quote_name(_table(kind)) for kind in KINDS)
        cursor.execute(f"LOCK TABLE {tables} IN SHARE ROW EXCLUSIVE MODE")
        _check_deferred_constraints(cursor)
        for kind in KINDS:  # rows that arrived or changed since the last batch
            while reembed_batch(kind=kind, embedder=embedder, batch_size=batch_size):
                pass
        for kind in KINDS:
            table = connection.ops.quote_name(_table(kind))
            index = _hnsw_index(kind).name
            # Dropping the old columns drops the other indexes using them: made again on the renamed ones.
            others = _indexes_on_replaced_columns(cursor, kind)
            cursor.execute(f"DROP INDEX IF EXISTS {index}")
            cursor.execute(
                f"ALTER TABLE {table} DROP COLUMN embedding, DROP COLUMN embedding_model, DROP COLUMN embedding_next_at"
            )
            cursor.execute(f"ALTER TABLE {table} RENAME COLUMN embedding_next TO embedding")
            cursor.execute(f"ALTER TABLE {table} RENAME COLUMN embedding_model_next TO embedding_model")
            cursor.execute(f"ALTER INDEX {index}_next RENAME TO {index}")
            for definition in others:
                cursor.execute(definition)
