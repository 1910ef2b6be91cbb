"""One item of an export's list being imported, read field by field with errors that name it."""

from __future__ import annotations

from array import array
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from memories.services.user_document import parsed_time
from memories.services.validation import field_errors
from memories.validators import TEXT_VALIDATORS

__all__ = ["ImportItem", "StoredIn"]

# A model and the name of its field that stores a value: the API's rules for that value.
StoredIn = tuple[type[models.Model], str]


class ImportItem:
    """One list item being read, for checks whose errors name it (``messages.17.role``)."""

    def __init__(self, path: str, data: Any) -> None:
        if not isinstance(data, dict):
            raise ValidationError({path: [f"{path} must be an object."]})
        self.path, self.data = path, data

    def fail(self, key: str, message: str) -> ValidationError:
        return ValidationError({f"{self.path}.{key}": [f"{self.path}.{key}: {message}"]})

    def text(
        self,
        key: str,
        *,
        max_length: int | None = None,
        null: bool = False,
        blank: bool = True,
        field: StoredIn | None = None,
    ) -> str | None:
        """The text at ``key``; with ``field``, checked as that model field checks what the API sends
        (its length limit, ``MAX_MESSAGE_CHARS`` say, and the rest of its validators)."""
        value = self.data.get(key)
        if value is None and null:
            return None
        if not isinstance(value, str):
            raise self.fail(key, "must be text.")
        if not blank and not value.strip():
            raise self.fail(key, "must not be empty.")
        if problems := _text_problems(value, max_length=max_length):
            raise self.fail(key, " ".join(problems))
        return self._stored(key, value, field)

    def choice(self, key: str, choices: tuple[str, ...]) -> str:
        value = self.data.get(key)
        if not isinstance(value, str) or value not in choices:
            raise self.fail(key, f"must be one of {', '.join(choices)}, not {value!r}.")
        return value

    def time(self, key: str, *, null: bool = False) -> datetime | None:
        return parsed_time(self.data.get(key), path=f"{self.path}.{key}", null=null)

    def json(self, key: str, kind: type, *, field: StoredIn | None = None) -> Any:
        """The object or list at ``key``; with ``field``, checked as that model field checks what the
        API sends (metadata: ``MAX_METADATA_BYTES``, ``MAX_METADATA_DEPTH``, ...)."""
        value = self.data.get(key)
        if not isinstance(value, kind):
            raise self.fail(key, f"must be a JSON {'object' if kind is dict else 'list'}.")
        return self._stored(key, value, field)

    def _stored(self, key: str, value: Any, field: StoredIn | None) -> Any:
        if field is not None and (problems := field_errors(*field, value)):
            raise self.fail(key, " ".join(ValidationError(problems).messages))
        return value

    def number(self, key: str, kind: type | tuple[type, ...], *, null: bool = False) -> Any:
        value = self.data.get(key)
        if value is None and null:
            return None
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise self.fail(key, "has the wrong type.")
        return value

    def position(self, key: str, of: array, *, null: bool = False) -> int | None:
        """The id of the row at the position ``key`` names in an earlier list (``of``: ids by position)."""
        value = self.data.get(key)
        if value is None and null:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < len(of):
            raise self.fail(key, f"must be the position of a row earlier in the document, not {value!r}.")
        return of[value]

    def positions(self, key: str, of: array) -> list[int]:
        """The ids of the rows at the positions the list ``key`` names (``of``: ids by position)."""
        values = self.json(key, list)
        for value in values:
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < len(of):
                raise self.fail(key, f"must list positions of rows earlier in the document, not {value!r}.")
        return [of[value] for value in values]

    def texts(self, key: str) -> list[str]:
        values = self.json(key, list)
        if not all(isinstance(value, str) and not _text_problems(value) for value in values):
            raise self.fail(key, "must be a list of texts.")
        return values


def _text_problems(value: str, *, max_length: int | None = None) -> list[str]:
    """Why a text column would refuse ``value`` (``memories.validators``): predicates, ``[]`` when none."""
    problems = []
    for validator in TEXT_VALIDATORS:
        try:
            validator(value)
        except ValidationError as error:
            problems.extend(error.messages)
    if max_length is not None and len(value) > max_length:
        problems.append(f"must be at most {max_length} characters.")
    return problems
