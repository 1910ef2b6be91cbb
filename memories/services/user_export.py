"""Writing one end user's memory as one JSON document (``docs/export.md``), streamed."""

from __future__ import annotations

import io
import json
from array import array
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from django.conf import settings
from django.db import connection, models, transaction
from django.db.models import Sum
from django.db.models.functions import Cast, Length
from django.utils import timezone

from memories.models import Diary, EndUser, Entity, Knowledge, Message, Session, Summary
from memories.services.curation import API_KEY_ACTOR
from memories.services.user_document import FORMAT, VERSION, date_text, time_text
from memories.services.validation import user_id_check

__all__ = ["ANOTHER_API_KEY", "ExportTooLarge", "export_counts", "export_document", "export_size", "export_user"]

Progress = Callable[[str, int], None]

# Rows fetched per round trip (server-side cursors), and per batch of related rows looked up.
CHUNK_SIZE = 2000


def export_counts(*, user_external_id: str) -> dict[str, int]:
    """How many rows of each list an export of this user writes (for a progress bar).

    Raises:
        EndUser.DoesNotExist: no such user.
    """
    user = EndUser.objects.get(external_id=user_external_id)
    return {
        "sessions": Session.objects.filter(user=user).count(),
        "messages": Message.objects.filter(user=user).count(),
        "summaries": Summary.objects.filter(user=user).count(),
        "knowledge": Knowledge.objects.filter(user=user).count(),
        "diaries": Diary.objects.filter(user=user).count(),
        "entities": Entity.objects.filter(user=user).count(),
    }


# What a fact's history shows, to a caller who may see only their own key's name, of a change another key made.
ANOTHER_API_KEY = "another API key"
# The bytes of a document's row around its text (keys, times, ids), by list: for ``export_size``.
_ROW_BYTES = {"messages": 250, "summaries": 250, "knowledge": 400, "diaries": 150, "sessions": 200}


class ExportTooLarge(Exception):
    """An export too large to build in memory for one request (``EXPORT_MAX_BYTES``); code ``EXPORT_TOO_LARGE``."""

    code = "EXPORT_TOO_LARGE"


def export_size(*, user_external_id: str) -> int:
    """About how many bytes ``export_user`` writes for this user (0 for an unknown user): the stored
    text of every row, characters counted as bytes, plus ``_ROW_BYTES`` per row. Five aggregate queries."""
    text = Length(Cast("metadata", models.TextField()))
    mine = {"user__external_id": user_external_id}
    counted = {
        "messages": Message.objects.filter(**mine).aggregate(n=models.Count("pk"), b=Sum(Length("content") + text)),
        "summaries": Summary.objects.filter(**mine).aggregate(n=models.Count("pk"), b=Sum(Length("content"))),
        "knowledge": Knowledge.history.filter(**mine).aggregate(n=models.Count("pk"), b=Sum(Length("content"))),
        "diaries": Diary.objects.filter(**mine).aggregate(n=models.Count("pk"), b=Sum(Length("content") + text)),
        "sessions": Session.objects.filter(**mine).aggregate(n=models.Count("pk"), b=Sum(Length("external_id"))),
    }
    return sum(row["n"] * _ROW_BYTES[name] + (row["b"] or 0) for name, row in counted.items())


def export_user(
    *, user_external_id: str, out: IO[str], progress: Progress | None = None, own_key: str | None = None
) -> dict[str, int]:
    """Write the user's sessions, messages, summaries, knowledge (with its audit history), diaries
    and entities to ``out`` as one JSON document, one list item per line.

    Rows are read in chunks (``CHUNK_SIZE``) and written as they come; what is held meanwhile is
    the id of each message (8 bytes each, to write references to them as positions) and of each
    session and fact. Vectors are not written: an import embeds the text again. Reads one
    snapshot of the database when called outside a transaction.

    Args:
        user_external_id: the chatbot's user id.
        out: a text stream (a file, ``sys.stdout``, a ``StringIO``).
        progress: called with a list's name and how many of its rows were just written.
        own_key: for a caller who may see only its own API key's name (a key scoped to end users: its
            ``Scope.actor``): a fact's history then names no other key (``ANOTHER_API_KEY``) and no staff
            member; ``None`` shows them all.

    Returns:
        How many rows of each list were written.

    Raises:
        EndUser.DoesNotExist: no such user.
        ValidationError: a user id no row could have (a NUL character, longer than the column).
    """
    user_id_check(user_external_id=user_external_id)
    with _snapshot():
        user = EndUser.objects.get(external_id=user_external_id)
        writer = _Writer(out=out, progress=progress)
        writer.head(
            {
                "format": FORMAT,
                "version": VERSION,
                "exported_at": time_text(timezone.now()),
                "user": {"id": user.external_id, "created_at": time_text(user.created_at)},
            }
        )
        sessions = dict(Session.objects.filter(user=user).values_list("pk", "external_id"))
        writer.section("sessions", _sessions(user))
        message_pks = array("q")
        writer.section("messages", _messages(user, message_pks))
        positions = _Positions(message_pks)
        writer.section("summaries", _summaries(user, positions))
        writer.section("knowledge", _knowledge(user, sessions, positions, own_key=own_key))
        writer.section("diaries", _diaries(user))
        writer.section("entities", _entities(user, positions))
        writer.end()
        return writer.counts


def export_document(*, user_external_id: str, own_key: str | None = None) -> dict[str, Any]:
    """The export of ``export_user`` as one dict, in memory (for the GraphQL ``exportUser``), for a user
    whose export is at most ``EXPORT_MAX_BYTES`` (``export_size``): the request holds it whole a few
    times over (the document, its objects, the response), so a larger one is refused.

    Raises:
        EndUser.DoesNotExist: no such user.
        ValidationError: a user id no row could have.
        ExportTooLarge: the export is over ``EXPORT_MAX_BYTES``; the message names the command that
            writes it to a file.
    """
    user_id_check(user_external_id=user_external_id)
    size = export_size(user_external_id=user_external_id)
    if size > settings.EXPORT_MAX_BYTES:
        limit = settings.EXPORT_MAX_BYTES // 1024
        raise ExportTooLarge(
            f"This user's export is about {size // 1024} KiB, over EXPORT_MAX_BYTES ({limit} KiB): write it to a "
            f"file with `manage.py export_user {user_external_id!r} --out FILE` (streamed, any size)."
        )
    buffer = io.StringIO()
    export_user(user_external_id=user_external_id, out=buffer, own_key=own_key)
    return json.loads(buffer.getvalue())


def _snapshot() -> transaction.Atomic:
    """A transaction whose reads all see one snapshot (REPEATABLE READ), so references between lists
    hold while messages keep arriving; inside a caller's transaction, that transaction."""
    atomic = transaction.atomic()
    if not connection.in_atomic_block:
        return _RepeatableRead(atomic)
    return atomic


class _RepeatableRead:
    def __init__(self, atomic: transaction.Atomic) -> None:
        self.atomic = atomic

    def __enter__(self) -> None:
        self.atomic.__enter__()
        with connection.cursor() as cursor:
            # Must be the transaction's first statement (PostgreSQL).
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def __exit__(self, *exc: object) -> None:
        self.atomic.__exit__(*exc)


class _Writer:
    """Writes the document's JSON text piece by piece, counting the items of each list."""

    def __init__(self, *, out: IO[str], progress: Progress | None) -> None:
        self.out, self.progress = out, progress
        self.counts: dict[str, int] = {}

    def head(self, fields: dict[str, Any]) -> None:
        self.out.write(json.dumps(fields, ensure_ascii=False, indent=1)[:-2])

    def section(self, name: str, items: Iterable[dict[str, Any]]) -> None:
        self.out.write(f',\n "{name}": [')
        count = pending = 0
        for item in items:
            self.out.write(("\n  " if count == 0 else ",\n  ") + json.dumps(item, ensure_ascii=False))
            count += 1
            pending += 1
            if pending == CHUNK_SIZE:
                self._report(name, pending)
                pending = 0
        self.out.write("\n ]" if count else "]")
        self._report(name, pending)
        self.counts[name] = count

    def end(self) -> None:
        self.out.write("\n}\n")

    def _report(self, name: str, count: int) -> None:
        if self.progress is not None and count:
            self.progress(name, count)


class _Positions:
    """A message's position in the document (its index by id) from its database id."""

    def __init__(self, pks: array) -> None:
        self.pks = pks

    def of(self, pk: int | None) -> int | None:
        if pk is None:
            return None
        index = bisect_left(self.pks, pk)
        return index if index < len(self.pks) and self.pks[index] == pk else None

    def many(self, pks: Iterable[int]) -> list[int]:
        return sorted(p for p in map(self.of, pks) if p is not None)


def _chunks(rows: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == CHUNK_SIZE:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _grouped(pairs: Iterable[tuple[int, Any]]) -> dict[int, list[Any]]:
    groups: dict[int, list[Any]] = defaultdict(list)
    for key, value in pairs:
        groups[key].append(value)
    return groups


def _sessions(user: EndUser) -> Iterator[dict[str, Any]]:
    rows = (
        Session.objects.filter(user=user)
        .order_by("pk")
        .values("external_id", "channel", "first_message_at", "last_message_at", "created_at", "updated_at")
    )
    for row in rows.iterator(chunk_size=CHUNK_SIZE):
        yield {
            "id": row["external_id"],
            "channel": row["channel"],
            "first_message_at": time_text(row["first_message_at"]),
            "last_message_at": time_text(row["last_message_at"]),
            "created_at": time_text(row["created_at"]),
            "updated_at": time_text(row["updated_at"]),
        }


def _messages(user: EndUser, pks: array) -> Iterator[dict[str, Any]]:
    """Messages in arrival order (by id, as a summary's watermark counts them); appends each id to ``pks``."""
    rows = (
        Message.objects.filter(user=user)
        .order_by("pk")
        .values_list(
            "pk",
            "session__external_id",
            "external_id",
            "role",
            "content",
            "channel",
            "metadata",
            "created_at",
            "received_at",
            "dialogue_act",
        )
    )
    for pk, session, external_id, role, content, channel, metadata, created_at, received_at, act in rows.iterator(
        chunk_size=CHUNK_SIZE
    ):
        pks.append(pk)
        yield {
            "session": session,
            "external_id": external_id or None,
            "role": role,
            "content": content,
            "channel": channel,
            "metadata": metadata,
            "created_at": time_text(created_at),
            "received_at": time_text(received_at),
            "dialogue_act": act,
        }


def _summaries(user: EndUser, positions: _Positions) -> Iterator[dict[str, Any]]:
    rows = (
        Summary.objects.filter(user=user)
        .order_by("pk")
        .values(
            "session__external_id",
            "content",
            "mode",
            "covers_from",
            "covers_until",
            "last_message_id",
            "message_count",
            "created_at",
            "updated_at",
        )
    )
    for row in rows.iterator(chunk_size=CHUNK_SIZE):
        yield {
            "session": row["session__external_id"],
            "content": row["content"],
            "mode": row["mode"],
            "covers_from": time_text(row["covers_from"]),
            "covers_until": time_text(row["covers_until"]),
            "last_message": positions.of(row["last_message_id"]),
            "message_count": row["message_count"],
            "created_at": time_text(row["created_at"]),
            "updated_at": time_text(row["updated_at"]),
        }


_KNOWLEDGE_FIELDS = (
    "content",
    "status",
    "slot",
    "confidence",
    "said_at",
    "needs_review",
    "reviewed",
    "ends",
    "corrected",
    "replaces_id",
    "superseded_by_id",
    "source_session_id",
    "created_at",
    "updated_at",
)


def _knowledge(
    user: EndUser, sessions: dict[int, str], messages: _Positions, *, own_key: str | None
) -> Iterator[dict[str, Any]]:
    """Facts by id, each with its source turns and its audit history, oldest change first (who made
    each change as ``export_user``'s ``own_key`` allows)."""
    mine = Knowledge.objects.filter(user=user).order_by("pk")
    # Facts refer to each other (replaces, superseded_by) forwards too: every position first.
    position = {pk: i for i, pk in enumerate(mine.values_list("pk", flat=True).iterator(chunk_size=CHUNK_SIZE))}
    rows = mine.values("pk", *_KNOWLEDGE_FIELDS).iterator(chunk_size=CHUNK_SIZE)
    through = Knowledge.source_messages.through
    for chunk in _chunks(rows):
        pks = [row["pk"] for row in chunk]
        sources = _grouped(
            through.objects.filter(knowledge_id__in=pks).values_list("knowledge_id", "message_id").iterator()
        )
        # A history record holds the fact's fields as they were; its ``id`` is the fact's.
        history = _grouped(
            (row.pop("id"), row)
            for row in Knowledge.history.filter(id__in=pks)
            .order_by("history_date", "history_id")
            .values(
                "id",
                "history_date",
                "history_type",
                "history_change_reason",
                "history_user__username",
                *_KNOWLEDGE_FIELDS,
            )
            .iterator()
        )
        for row in chunk:
            item = _fact(row, sessions, position)
            item["source_messages"] = messages.many(sources.get(row["pk"], ()))
            item["history"] = [
                {
                    "at": time_text(change["history_date"]),
                    "type": change["history_type"],
                    "reason": _reason(change["history_change_reason"], own_key),
                    "by": change["history_user__username"] if own_key is None else None,
                    **_fact(change, sessions, position),
                }
                for change in history.get(row["pk"], ())
            ]
            yield item


def _reason(reason: str | None, own_key: str | None) -> str | None:
    """A change's reason as a caller limited to ``own_key`` sees it: another API key's name is not shown."""
    if own_key is None or reason is None or reason == own_key or not reason.startswith(API_KEY_ACTOR):
        return reason
    return ANOTHER_API_KEY


def _fact(row: dict[str, Any], sessions: dict[int, str], position: dict[int, int]) -> dict[str, Any]:
    """A fact's own fields (or those of one of its history records), references as keys."""
    return {
        "content": row["content"],
        "status": row["status"],
        "slot": row["slot"],
        "confidence": row["confidence"],
        "said_at": time_text(row["said_at"]),
        "needs_review": row["needs_review"],
        "reviewed": row["reviewed"],
        "ends": row["ends"],
        "corrected": row["corrected"],
        # A fact of another owner (shared, or gone) is not part of the export: no reference.
        "replaces": position.get(row["replaces_id"]),
        "superseded_by": position.get(row["superseded_by_id"]),
        "source_session": sessions.get(row["source_session_id"]),
        "created_at": time_text(row["created_at"]),
        "updated_at": time_text(row["updated_at"]),
    }


def _diaries(user: EndUser) -> Iterator[dict[str, Any]]:
    rows = (
        Diary.objects.filter(user=user)
        .order_by("diary_date")
        .values("diary_date", "content", "metadata", "created_at", "updated_at")
    )
    for row in rows.iterator(chunk_size=CHUNK_SIZE):
        yield {
            "date": date_text(row["diary_date"]),
            "content": row["content"],
            "metadata": row["metadata"],
            "created_at": time_text(row["created_at"]),
            "updated_at": time_text(row["updated_at"]),
        }


def _entities(user: EndUser, messages: _Positions) -> Iterator[dict[str, Any]]:
    facts = {
        pk: i for i, pk in enumerate(Knowledge.objects.filter(user=user).order_by("pk").values_list("pk", flat=True))
    }
    rows = (
        Entity.objects.filter(user=user)
        .order_by("pk")
        .values("pk", "name", "kind", "aliases", "first_mentioned_at", "last_mentioned_at", "created_at", "updated_at")
    )
    for chunk in _chunks(rows.iterator(chunk_size=CHUNK_SIZE)):
        pks = [row["pk"] for row in chunk]
        knowledge = _grouped(
            Entity.knowledge.through.objects.filter(entity_id__in=pks).values_list("entity_id", "knowledge_id")
        )
        turns = _grouped(
            Entity.messages.through.objects.filter(entity_id__in=pks)
            .values_list("entity_id", "message_id")
            .iterator(chunk_size=CHUNK_SIZE)
        )
        for row in chunk:
            yield {
                "name": row["name"],
                "kind": row["kind"],
                "aliases": row["aliases"],
                "first_mentioned_at": time_text(row["first_mentioned_at"]),
                "last_mentioned_at": time_text(row["last_mentioned_at"]),
                "knowledge": sorted(facts[k] for k in knowledge.get(row["pk"], ()) if k in facts),
                "messages": messages.many(turns.get(row["pk"], ())),
                "created_at": time_text(row["created_at"]),
                "updated_at": time_text(row["updated_at"]),
            }
