"""Checks of free text a caller sends, for what PostgreSQL would refuse: a clear error naming the
field instead of a database error."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import timezone

from memories.models import EndUser

__all__ = ["json_nul_errors", "metadata_errors", "moment_errors", "text_errors", "user_id_check", "user_id_errors"]

# The longest end user id the column holds.
_USER_ID_MAX = EndUser._meta.get_field("external_id").max_length


# A lone UTF-16 surrogate (U+D800-U+DFFF): JSON can escape one, UTF-8 cannot encode it.
_SURROGATE = re.compile("[\ud800-\udfff]")
# The same in ``json.dumps`` output (ASCII): any surrogate escape, paired or not, triggers a walk.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def text_errors(*, field: str, value: str, max_length: int | None = None) -> list[str]:
    """Why PostgreSQL would refuse ``value`` (the GraphQL field ``field``): a NUL character, which
    no text column holds, a lone surrogate, which UTF-8 cannot encode, or more than
    ``max_length`` characters. ``[]`` when it is fine."""
    errors = []
    if "\x00" in value:
        errors.append(f"{field} must not contain the NUL character (U+0000).")
    if not value.isascii() and _SURROGATE.search(value):
        errors.append(f"{field} must not contain a lone surrogate (U+D800-U+DFFF).")
    if max_length is not None and len(value) > max_length:
        errors.append(f"{field} must be at most {max_length} characters.")
    return errors


def json_nul_errors(*, field: str, value: object, as_json: str | None = None) -> list[str]:
    """``[message]`` when a key or string anywhere in the JSON value ``value`` holds text
    PostgreSQL's ``jsonb`` refuses: a NUL character (``\\u0000``) or a lone surrogate; else ``[]``.

    ``as_json`` is ``json.dumps(value)`` when the caller has it: a value whose JSON has no
    ``\\u0000`` and no surrogate escape is not walked.
    """
    if as_json is not None and "\\u0000" not in as_json and not _ESCAPED_SURROGATE.search(as_json):
        return []
    if _holds(value, "\x00"):
        return [f"{field} must not contain the NUL character (U+0000) in any key or string."]
    if _holds(value, _SURROGATE):
        return [f"{field} must not contain a lone surrogate (U+D800-U+DFFF) in any key or string."]
    return []


def metadata_errors(*, value: object) -> list[str]:
    """Why ``metadata`` (a GraphQL ``JSON`` argument) cannot be stored; ``[]`` when it can.

    It must be a JSON object of at most ``MAX_METADATA_BYTES`` as JSON, hold no number JSON has no
    notation for (NaN, Infinity, and a number past a double's range such as ``1e999``, which Python
    reads as Infinity: PostgreSQL's ``jsonb`` refuses them), and no text ``jsonb`` refuses
    (``json_nul_errors``).
    """
    if not isinstance(value, dict):
        return ["metadata must be a JSON object."]
    try:
        as_json = json.dumps(value, allow_nan=False)
    except ValueError:
        return ["metadata must not hold NaN or Infinity, nor a number beyond a double's range such as 1e999."]
    if len(as_json) > settings.MAX_METADATA_BYTES:
        return [f"metadata is larger than {settings.MAX_METADATA_BYTES} bytes as JSON (MAX_METADATA_BYTES)."]
    return json_nul_errors(field="metadata", value=value, as_json=as_json)


def moment_errors(*, field: str, value: datetime | None) -> list[str]:
    """Why a date-time a caller sent (the GraphQL field ``field``) cannot be used; ``[]`` when it can.

    It must carry its offset (a naive one would silently be read as UTC) and stay within years 1 to
    9999 once converted to UTC.
    """
    if value is None:
        return []
    if timezone.is_naive(value):
        return [f"{field} needs a timezone offset, e.g. 2024-05-01T12:00:00Z."]
    try:
        value.astimezone(UTC)
    except OverflowError:
        return [f"{field} is out of range once converted to UTC (year 1 to 9999)."]
    return []


def _holds(value: object, needle: str | re.Pattern) -> bool:
    if isinstance(value, str):
        return needle.search(value) is not None if isinstance(needle, re.Pattern) else needle in value
    if isinstance(value, dict):
        return any(_holds(key, needle) or _holds(item, needle) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(_holds(item, needle) for item in value)
    return False


def user_id_errors(*, user_external_id: str) -> list[str]:
    """``text_errors`` of an end user id (the GraphQL field ``userId``): a NUL character, or
    longer than the column."""
    return text_errors(field="userId", value=user_external_id, max_length=_USER_ID_MAX)


def user_id_check(*, user_external_id: str) -> None:
    """Refuse an end user id no row could have: a NUL character, or longer than the column.

    Raises:
        ValidationError: naming ``userId``.
    """
    if problems := user_id_errors(user_external_id=user_external_id):
        raise ValidationError({"userId": problems})
