"""The one-file export of an end user (``docs/export.md``): its name and version, how times are
written, and reading a document top-level key by top-level key without holding it whole.

A document is one JSON object::

    {"format": "memory-export", "version": 1, "exported_at": "...", "user": {...},
     "sessions": [...], "messages": [...], "summaries": [...], "knowledge": [...],
     "diaries": [...], "entities": [...]}

Written by ``memories.services.user_export``, read by ``memories.services.user_import``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import IO, Any

import ijson
from django.conf import settings
from django.core.exceptions import ValidationError

__all__ = [
    "FORMAT",
    "LIST_SECTIONS",
    "VERSION",
    "date_text",
    "document_read",
    "parsed_date",
    "parsed_time",
    "time_text",
]

FORMAT = "memory-export"
VERSION = 1
# The lists, in the order they are written and must be read (each refers only to those before it).
LIST_SECTIONS = ("sessions", "messages", "summaries", "knowledge", "diaries", "entities")
# The levels around the deepest value an item holds (an item, its metadata object).
_ITEM_LEVELS = 2


def time_text(moment: datetime | None) -> str | None:
    """A time as written in a document: ISO 8601 in UTC (``2024-05-01T09:00:00+00:00``)."""
    return moment.astimezone(UTC).isoformat() if moment is not None else None


def date_text(day: date) -> str:
    """A date as written in a document: ``2024-05-01``."""
    return day.isoformat()


def parsed_time(value: Any, *, path: str, null: bool = False) -> datetime | None:
    """A document's time back as an aware ``datetime``.

    Raises:
        ValidationError: naming ``path``: not ISO 8601, no UTC offset, out of range once in UTC, or
            missing when not ``null``.
    """
    if value is None and null:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValidationError({path: [f"{path} must be an ISO 8601 time with an offset, not {value!r}."]}) from None
    if moment.tzinfo is None:
        raise ValidationError({path: [f"{path} needs a UTC offset, e.g. 2024-05-01T09:00:00+00:00."]})
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValidationError({path: [f"{path} is out of range once in UTC (year 1 to 9999)."]}) from None


def parsed_date(value: Any, *, path: str) -> date:
    """A document's date back as a ``date``.

    Raises:
        ValidationError: naming ``path``, when it is not ``YYYY-MM-DD``.
    """
    try:
        return date.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValidationError({path: [f"{path} must be a date (YYYY-MM-DD), not {value!r}."]}) from None


def document_read(stream: IO[bytes]) -> Iterator[tuple[str, str, Any]]:
    """The top-level entries of a document as they come: ``(key, "value", value)`` for a value that
    is not a list; for a list, ``(key, "list", None)`` and then ``(key, "item", item)`` per item.

    Only one list item is held at a time (ijson parses the stream incrementally), so reading a
    document takes memory bounded by its largest item, not by its length; and a value nested past
    what an export holds (``max_depth``: ``MAX_METADATA_DEPTH`` inside an item) is refused as soon
    as it is, without recursion, whatever its depth.

    Args:
        stream: the document, opened in binary mode.

    Raises:
        ValidationError: the stream is not JSON, its top level is not an object, or a value in it is
            nested too deeply (naming its list or key).
    """
    max_depth = settings.MAX_METADATA_DEPTH + _ITEM_LEVELS
    # basic_parse: events without their path, whose text would grow with the depth of every value.
    events = ijson.basic_parse(stream, use_float=True)
    try:
        first = next(events, None)
        if first is None or first[0] != "start_map":
            raise ValidationError("An export is one JSON object; this file is not.")
        key = None
        for event, value in events:
            if event == "map_key":
                key = value
            elif event == "end_map":
                return
            elif event == "start_array":
                yield key, "list", None
                for item in _items(events, key, max_depth):
                    yield key, "item", item
            else:
                yield key, "value", _value(events, event, value, where=key, max_depth=max_depth)
    except ijson.JSONError as exc:
        raise ValidationError(f"The file is not valid JSON: {exc}") from None


def _items(events: Iterator[tuple[str, Any]], key: str, max_depth: int) -> Iterator[Any]:
    """The items of the top-level list ``key``, each built whole, until the list closes."""
    for position, (event, value) in enumerate(events):
        if event == "end_array":
            return
        yield _value(events, event, value, where=f"{key}.{position}", max_depth=max_depth)


def _value(events: Iterator[tuple[str, Any]], event: str, value: Any, *, where: str, max_depth: int) -> Any:
    """The value that starts with ``event``: a scalar, or an object or list built from the events up to its end.

    Raises:
        ValidationError: it nests objects and lists more than ``max_depth`` levels.
    """
    if event not in ("start_map", "start_array"):
        return value
    builder = ijson.ObjectBuilder()
    builder.event(event, value)
    depth = 1
    for inner, inner_value in events:
        builder.event(inner, inner_value)
        depth += inner in ("start_map", "start_array")
        depth -= inner in ("end_map", "end_array")
        if depth > max_depth:
            raise ValidationError(
                {where: [f"{where} is nested deeper than the export format allows (MAX_METADATA_DEPTH, in metadata)."]}
            )
        if depth == 0:
            return builder.value
    raise ValidationError("The file ends inside a value.")
