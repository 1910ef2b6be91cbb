"""Synthetic memory at scale, for the speed benchmark: ``N`` messages over 1,000 end users.

Run from the repository root::

    .venv/bin/python -m bench.synthetic --messages 1000000            # database bench_scale_1m
    .venv/bin/python -m bench.synthetic --messages 10000 --fresh      # drop and build again

A database of its own (``bench_scale_<size>``, on the embedded server or the server of
``DATABASE_URL``) is created, migrated and filled; an existing complete one is reused, so the
speed benchmark can run again without the build. What is stored, per end user
(``m = N / users`` messages each):

- sessions of 20 messages (fewer when ``m < 20``), alternating ``user``/``assistant`` turns
  an hour apart in conversation time; the texts (with their speakers) are turns of the
  LoCoMo file given (real conversational English, so full-text search sees real word
  frequencies), drawn at random;
- one summary per session (three of its turns), one active knowledge entry per 20 messages,
  one diary entry per 100 messages (at least one of each per user);
- every vector a random unit vector (numpy, seeded) made as if by the configured embedding
  model, so search treats them as current.

Sessions of all users are written in random order, so a user's rows are scattered over the
table as they are in production. Rows go in by binary ``COPY``; the vector (HNSW) and
full-text (GIN) indexes are dropped before and built again after, as a bulk load should.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from bench import locomo
from bench.databases import connect, fresh_database, setup_django, use_database
from bench.locomo import DEFAULT_PATH

__all__ = ["DEFAULT_USERS", "database_name", "ensure_dataset", "main", "size_label"]

DEFAULT_USERS = 1000
SESSION_LENGTH = 20
MESSAGES_PER_KNOWLEDGE = 20
MESSAGES_PER_DIARY = 100
_START = datetime(2023, 1, 1, tzinfo=UTC)
# The table that marks a complete dataset: written last.
_MARKER_TABLE = "bench_dataset"


def size_label(messages: int) -> str:
    """``10000`` -> ``"10k"``, ``1000000`` -> ``"1m"``; other sizes as digits."""
    for unit, suffix in ((1_000_000, "m"), (1_000, "k")):
        if messages % unit == 0:
            return f"{messages // unit}{suffix}"
    return str(messages)


def database_name(messages: int, users: int = DEFAULT_USERS) -> str:
    """The dataset's database name, e.g. ``bench_scale_1m`` (``_u<users>`` when not 1,000 users)."""
    return f"bench_scale_{size_label(messages)}" + ("" if users == DEFAULT_USERS else f"_u{users}")


def _unit_vectors(rng: np.random.Generator, count: int, dimensions: int) -> np.ndarray:
    vectors = rng.standard_normal((count, dimensions), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _database_state(name: str) -> str:
    """``"missing"``, ``"incomplete"`` or ``"complete"``."""
    with connect() as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return "missing"
    with connect(name) as conn:
        found = conn.execute("SELECT to_regclass(%s)", [_MARKER_TABLE]).fetchone()[0]
        return "complete" if found else "incomplete"


def ensure_dataset(
    *, messages: int, users: int = DEFAULT_USERS, fresh: bool = False, source: Path = DEFAULT_PATH, seed: int = 0
) -> dict[str, Any]:
    """Make sure ``database_name(messages, users)`` holds the complete dataset; build it if not.

    Leaves Django's default connection pointed at the dataset's database.

    Returns:
        ``{"database", "messages", "users", "sessions", "summaries", "knowledge", "diaries",
        "built": bool, "load_seconds", "index_seconds"}`` (the seconds only when built).

    Raises:
        ValueError: fewer messages than users, or a source file with no turns.
    """
    setup_django()
    if messages < users:
        raise ValueError("Give at least one message per user.")
    name = database_name(messages, users)
    if not fresh and _database_state(name) == "complete":
        from django.core.management import call_command

        use_database(name)
        call_command("migrate", verbosity=0)  # a dataset built by older code gets this code's schema
        return {**_counts(), "database": name, "built": False}

    fresh_database(name)
    figures = _fill(messages=messages, users=users, source=source, seed=seed)
    return {**_counts(), **figures, "database": name, "built": True}


def _counts() -> dict[str, int]:
    from memories.models import Diary, EndUser, Knowledge, Message, Session, Summary

    with_total = {
        "messages": Message,
        "users": EndUser,
        "sessions": Session,
        "summaries": Summary,
        "knowledge": Knowledge,
        "diaries": Diary,
    }
    return {key: model.objects.count() for key, model in with_total.items()}


def _fill(*, messages: int, users: int, source: Path, seed: int) -> dict[str, float]:
    from django.conf import settings
    from django.db import connection
    from pgvector.psycopg import register_vector

    from memories.models import Diary, EndUser, Knowledge, Message, Session, Summary

    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    turns = locomo.turns(source)
    dimensions = settings.EMBEDDING_DIMENSIONS
    model_name = settings.EMBEDDING_MODEL
    now = datetime.now(UTC)
    tables = [m._meta.db_table for m in (Message, Summary, Knowledge, Diary)]

    started = time.perf_counter()
    connection.ensure_connection()
    conn = connection.connection
    register_vector(conn)
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s) "
            "AND (indexdef LIKE '%%USING hnsw%%' OR indexdef LIKE '%%USING gin%%')",
            [tables],
        )
        indexes = cursor.fetchall()
        for index_name, _ in indexes:
            cursor.execute(f'DROP INDEX "{index_name}"')

        per_user = [messages // users + (1 if i < messages % users else 0) for i in range(users)]
        # (user id, session number, first message index, length) for every session.
        sessions = []
        for user_index, count in enumerate(per_user):
            length = min(SESSION_LENGTH, count)
            starts = list(range(0, count, length))
            sessions += [(user_index + 1, n, s, min(length, count - s)) for n, s in enumerate(starts)]
        pick.shuffle(sessions)

        _copy(cursor, EndUser, ({"id": i + 1, "external_id": f"user-{i:04d}", "created_at": now} for i in range(users)))
        session_rows = []
        for session_id, (user_id, number, _, length) in enumerate(sessions, start=1):
            began = _START + timedelta(days=7 * number, minutes=user_id)
            session_rows.append(
                {
                    "id": session_id,
                    "user_id": user_id,
                    "external_id": f"s{number}",
                    "first_message_at": began,
                    "last_message_at": began + timedelta(hours=length - 1),
                    "created_at": now,
                    "updated_at": now,
                }
            )
        _copy(cursor, Session, session_rows)

        def message_rows() -> Iterator[dict[str, Any]]:
            message_id = 0
            for session_id, (user_id, _, _, length) in enumerate(tqdm(sessions, desc="messages", unit="session"), 1):
                began = session_rows[session_id - 1]["first_message_at"]
                vectors = _unit_vectors(rng, length, dimensions)
                for turn in range(length):
                    message_id += 1
                    speaker, text = pick.choice(turns)
                    yield {
                        "id": message_id,
                        "user_id": user_id,
                        "session_id": session_id,
                        "role": "user" if turn % 2 == 0 else "assistant",
                        "content": text,
                        "metadata": {"speaker": speaker},
                        "created_at": began + timedelta(hours=turn),
                        "received_at": now,
                        "embedding": vectors[turn],
                        "embedding_model": model_name,
                    }

        _copy(cursor, Message, message_rows())

        summary_vectors = _unit_vectors(rng, len(sessions), dimensions)
        _copy(
            cursor,
            Summary,
            (
                {
                    "id": session_id,
                    "user_id": user_id,
                    "session_id": session_id,
                    "content": " ".join(f"{s} said: {t}" for s, t in pick.sample(turns, 3)),
                    "mode": "extractive",
                    "covers_from": session_rows[session_id - 1]["first_message_at"],
                    "covers_until": session_rows[session_id - 1]["last_message_at"],
                    "message_count": length,
                    "created_at": now,
                    "updated_at": now,
                    "embedding": summary_vectors[session_id - 1],
                    "embedding_model": model_name,
                }
                for session_id, (user_id, _, _, length) in enumerate(sessions, start=1)
            ),
        )

        def owned(per_messages: int) -> list[int]:
            return [u + 1 for u, count in enumerate(per_user) for _ in range(max(1, count // per_messages))]

        knowledge_owners = owned(MESSAGES_PER_KNOWLEDGE)
        knowledge_vectors = _unit_vectors(rng, len(knowledge_owners), dimensions)
        _copy(
            cursor,
            Knowledge,
            (
                {
                    "id": i + 1,
                    "user_id": user_id,
                    "content": "{}: {}".format(*pick.choice(turns)),
                    "status": "active",
                    "created_at": now,
                    "updated_at": now,
                    "embedding": knowledge_vectors[i],
                    "embedding_model": model_name,
                }
                for i, user_id in enumerate(knowledge_owners)
            ),
        )
        diary_owners = owned(MESSAGES_PER_DIARY)
        diary_vectors = _unit_vectors(rng, len(diary_owners), dimensions)
        day_of: dict[int, int] = {}
        diary_rows = []
        for i, user_id in enumerate(diary_owners):
            day_of[user_id] = day_of.get(user_id, -1) + 1
            diary_rows.append(
                {
                    "id": i + 1,
                    "user_id": user_id,
                    "diary_date": date(2023, 1, 1) + timedelta(days=day_of[user_id]),
                    "content": " ".join(t for _, t in pick.sample(turns, 2)),
                    "created_at": now,
                    "updated_at": now,
                    "embedding": diary_vectors[i],
                    "embedding_model": model_name,
                }
            )
        _copy(cursor, Diary, diary_rows)
        for model in (EndUser, Session, Message, Summary, Knowledge, Diary):
            table = model._meta.db_table
            cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
    conn.commit() if not conn.autocommit else None
    loaded = time.perf_counter()

    with conn.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '4GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        for _, definition in tqdm(indexes, desc="indexes", unit="index"):
            cursor.execute(definition)
        for table in tables:
            cursor.execute(f"VACUUM ANALYZE {table}")
        cursor.execute(f"CREATE TABLE {_MARKER_TABLE} (built_at timestamptz)")
        cursor.execute(f"INSERT INTO {_MARKER_TABLE} VALUES (now())")
    return {"load_seconds": round(loaded - started, 1), "index_seconds": round(time.perf_counter() - loaded, 1)}


# Django's column type (before any "(size)") -> the type binary COPY is told.
_COPY_TYPES = {
    "bigint": "int8",
    "integer": "int4",
    "smallint": "int2",
    "double precision": "float8",
    "date": "date",
    "boolean": "bool",
    "jsonb": "jsonb",
    "text": "text",
    "varchar": "varchar",
    "vector": "vector",
    "timestamp with time zone": "timestamptz",
}


def _copy(cursor, model, rows) -> None:
    """Binary ``COPY`` of dicts keyed by attname; columns not given take the field's default."""
    from django.db import connection
    from django.db.models import GeneratedField
    from psycopg.types.json import Jsonb

    fields = [f for f in model._meta.concrete_fields if not isinstance(f, GeneratedField)]
    types = [_COPY_TYPES[f.db_type(connection).split("(")[0]] for f in fields]
    columns = ", ".join(f'"{f.column}"' for f in fields)
    with cursor.copy(f"COPY {model._meta.db_table} ({columns}) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(types)
        for row in rows:
            values = []
            for f in fields:
                value = row[f.attname] if f.attname in row else f.get_default()
                values.append(Jsonb(value) if f.get_internal_type() == "JSONField" else value)
            copy.write_row(values)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, action="append", help="messages to store (repeatable)")
    parser.add_argument("--users", type=int, default=DEFAULT_USERS)
    parser.add_argument("--fresh", action="store_true", help="drop the dataset and build it again")
    parser.add_argument("--source", type=Path, default=DEFAULT_PATH, help="LoCoMo file the texts come from")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    for messages in args.messages or [10_000]:
        figures = ensure_dataset(messages=messages, users=args.users, fresh=args.fresh, source=args.source)
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
