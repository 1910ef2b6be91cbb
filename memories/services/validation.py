"""Checking a service's arguments against the model fields that will store them.

A row is checked with ``full_clean()``; an argument that is not (yet) a row, such as the end user id
a service creates a user from, a filter or a search query, is checked here with the validators and
error messages of the model field it stands for (``memories.validators``), so a rule lives once, on
its field. Errors are keyed by the service's argument names (``user_external_id``); the GraphQL
layer alone turns them into the API's names (``memories.graphql.errors``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from memories.models import EndUser

__all__ = ["described", "field_errors", "raise_if", "user_id_check", "user_id_errors"]


def field_errors(model: type[models.Model], field_name: str, value: Any) -> list[ValidationError]:
    """Why ``model.field_name`` would refuse ``value`` (its ``clean``: choices, blank, validators);
    ``[]`` when it takes it. A blank value is reported as blank only."""
    try:
        model._meta.get_field(field_name).clean(value, None)
    except ValidationError as error:
        errors = error.error_list
        return [e for e in errors if e.code == "blank"] or errors
    return []


def raise_if(errors: Iterable[tuple[str, list[ValidationError] | list[str]]]) -> None:
    """Raise one ``ValidationError`` of the ``(name, errors)`` pairs that hold any; a message about
    its field is a predicate (``"must be at least 1."``), as the validators' (``memories.validators``).

    Raises:
        ValidationError: keyed by name, with every error found.
    """
    found = {name: problems for name, problems in errors if problems}
    if found:
        raise ValidationError(found)


def user_id_errors(value: str) -> list[ValidationError]:
    """``field_errors`` of an end user id (``EndUser.external_id``): empty, too long, NUL, lone surrogate."""
    return field_errors(EndUser, "external_id", value)


def user_id_check(*, user_external_id: str) -> None:
    """Refuse an end user id no row could have (a service that only reads or deletes by it): too
    long, a NUL character or a lone surrogate; an empty one matches no row, and is not refused.

    Raises:
        ValidationError: naming ``user_external_id``.
    """
    raise_if([("user_external_id", [e for e in user_id_errors(user_external_id) if e.code != "blank"])])


def described(error: ValidationError) -> list[str]:
    """``error``'s messages for an operator (a management command), each predicate after the name
    it is about (``"external_id must be at most 255 characters."``); the API names fields its own way
    (``memories.graphql.errors``)."""
    if not hasattr(error, "error_dict"):
        return error.messages
    return [
        f"{key.rsplit('.', 1)[-1]} {message}" if message[:1].islower() else message
        for key, errors in error.error_dict.items()
        for message in ValidationError(errors).messages
    ]
