"""Rules for what the models store, as Django validators and field error messages, and the two
kinds of text field made of them (``id_field``, ``content_field``).

Each message about a field is a predicate ("must not be empty."): a form shows it under the field,
and the API after the field's name ("userId must not be empty.", ``memories.graphql.errors``).
PostgreSQL refuses two kinds of text outright: the NUL character, which no text column holds, and a
lone UTF-16 surrogate (U+D800-U+DFFF), which UTF-8 cannot encode (``jsonb`` refuses both, escaped).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator, ProhibitNullCharactersValidator
from django.db import models
from django.utils import timezone
from django.utils.deconstruct import deconstructible

__all__ = [
    "ID_ERRORS",
    "TEXT_ERRORS",
    "NOT_BLANK",
    "NO_LONE_SURROGATE",
    "NO_NUL",
    "TEXT_VALIDATORS",
    "SettingMaxLengthValidator",
    "content_field",
    "id_field",
    "validate_aware_moment",
    "validate_storable_json",
]

# A lone surrogate: JSON can escape one, UTF-8 cannot encode it.
_SURROGATE = re.compile("[\ud800-\udfff]")
# The same in ``json.dumps`` output (ASCII): any surrogate escape, paired or not, triggers a walk.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")

NO_NUL = ProhibitNullCharactersValidator(message="must not contain the NUL character (U+0000).")


@deconstructible
class ProhibitLoneSurrogatesValidator:
    """Refuse text holding a lone surrogate (code ``lone_surrogate``)."""

    message = "must not contain a lone surrogate (U+D800-U+DFFF)."
    code = "lone_surrogate"

    def __call__(self, value: object) -> None:
        if isinstance(value, str) and not value.isascii() and _SURROGATE.search(value):
            raise ValidationError(self.message, code=self.code)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProhibitLoneSurrogatesValidator)

    def __hash__(self) -> int:
        return hash(self.code)


@deconstructible
class NotBlankValidator:
    """Refuse text that is only whitespace (code ``blank``, as Django's own check of ``""``)."""

    message = "must not be empty."
    code = "blank"

    def __call__(self, value: object) -> None:
        if isinstance(value, str) and not value.strip():
            raise ValidationError(self.message, code=self.code)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NotBlankValidator)

    def __hash__(self) -> int:
        return hash(self.code)


@deconstructible
class SettingMaxLengthValidator(MaxLengthValidator):
    """``MaxLengthValidator`` whose limit is a setting, read when validating (tests change it)."""

    message = "is longer than %(limit_value)d characters (%(setting)s)."

    def __init__(self, setting: str) -> None:
        self.setting = setting
        super().__init__(limit_value=lambda: getattr(settings, setting))

    def __call__(self, value: object) -> None:
        try:
            super().__call__(value)
        except ValidationError as error:
            raise ValidationError(
                error.message, code=error.code, params={**error.params, "setting": self.setting}
            ) from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SettingMaxLengthValidator) and other.setting == self.setting

    def __hash__(self) -> int:
        return hash(self.setting)


NO_LONE_SURROGATE = ProhibitLoneSurrogatesValidator()
NOT_BLANK = NotBlankValidator()
# What every stored text must be; ``NOT_BLANK`` comes first (a blank value is only reported as such).
TEXT_VALIDATORS = [NO_NUL, NO_LONE_SURROGATE]
# Field error messages of texts, and of ids and channels (which have a column length): predicates,
# as the validators' own.
TEXT_ERRORS = {"blank": "must not be empty."}
ID_ERRORS = {**TEXT_ERRORS, "max_length": "must be at most %(limit_value)d characters."}


def validate_aware_moment(value: datetime | None) -> None:
    """Refuse a date-time without its offset (it would silently be read as UTC) or out of range
    (years 1 to 9999) once converted to UTC."""
    if not isinstance(value, datetime):
        return
    if timezone.is_naive(value):
        raise ValidationError("needs a timezone offset, e.g. 2024-05-01T12:00:00Z.", code="naive")
    try:
        value.astimezone(UTC)
    except OverflowError:
        raise ValidationError("is out of range once converted to UTC (year 1 to 9999).", code="out_of_range") from None


def validate_storable_json(value: object) -> None:
    """Refuse a JSON value PostgreSQL's ``jsonb`` cannot store as a metadata object.

    It must be an object nested at most ``MAX_METADATA_DEPTH`` deep (checked first, without
    recursion: a value of any depth is refused, never a ``RecursionError``), of at most
    ``MAX_METADATA_BYTES`` as JSON, hold no number JSON has no notation for (NaN, Infinity, and a
    number past a double's range such as ``1e999``, which Python reads as Infinity), and no NUL
    character or lone surrogate in any key or string.
    """
    if not isinstance(value, dict):
        raise ValidationError("must be a JSON object.", code="not_object")
    if _deeper_than(value, settings.MAX_METADATA_DEPTH):
        raise ValidationError(
            "is nested deeper than %(limit)d levels (MAX_METADATA_DEPTH).",
            code="too_deep",
            params={"limit": settings.MAX_METADATA_DEPTH},
        )
    try:
        as_json = json.dumps(value, allow_nan=False)
    except ValueError:
        raise ValidationError(
            "must not hold NaN or Infinity, nor a number beyond a double's range such as 1e999.", code="nan"
        ) from None
    # Counted as stored (UTF-8), not as escaped ASCII: an emoji is 4 bytes, not 12.
    if len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")) > settings.MAX_METADATA_BYTES:
        raise ValidationError(
            "is larger than %(limit)d bytes as JSON (MAX_METADATA_BYTES).",
            code="too_large",
            params={"limit": settings.MAX_METADATA_BYTES},
        )
    if "\\u0000" not in as_json and not _ESCAPED_SURROGATE.search(as_json):
        return
    if _holds(value, "\x00"):
        raise ValidationError("must not contain the NUL character (U+0000) in any key or string.", code="nul")
    if _holds(value, _SURROGATE):
        raise ValidationError(
            "must not contain a lone surrogate (U+D800-U+DFFF) in any key or string.", code="surrogate"
        )


def _deeper_than(value: object, limit: int) -> bool:
    """Whether objects and lists nest in ``value`` more than ``limit`` levels (``{}`` is one), found
    with a stack of its own rather than recursion."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list | tuple) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _holds(value: object, needle: str | re.Pattern) -> bool:
    if isinstance(value, str):
        return needle.search(value) is not None if isinstance(needle, re.Pattern) else needle in value
    if isinstance(value, dict):
        return any(_holds(key, needle) or _holds(item, needle) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(_holds(item, needle) for item in value)
    return False


def id_field(*, max_length: int, blank: bool = False, unique: bool = False) -> models.CharField:
    """An id or channel a client sends: not blank unless ``blank`` (then ``""`` by default), no NUL, no
    lone surrogate, at most ``max_length`` characters."""
    validators = TEXT_VALIDATORS if blank else [NOT_BLANK, *TEXT_VALIDATORS]
    extra = {"blank": True, "default": ""} if blank else {}
    return models.CharField(
        max_length=max_length, unique=unique, validators=validators, error_messages=ID_ERRORS, **extra
    )


def content_field(setting: str) -> models.TextField:
    """What a person or a model wrote: not blank, no NUL, no lone surrogate, at most the ``setting``'s
    characters."""
    return models.TextField(
        validators=[NOT_BLANK, *TEXT_VALIDATORS, SettingMaxLengthValidator(setting)], error_messages=TEXT_ERRORS
    )
