"""Checks of a search's and a context's arguments, each error keyed by the argument's name.

Ids and text are checked as the model fields that store them would (``field_errors``).
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError

from memories.models import Session
from memories.search.scope import SOURCES
from memories.services.validation import field_errors, raise_if, user_id_errors
from memories.validators import NO_LONE_SURROGATE, NO_NUL

__all__ = ["MAX_QUERY_CHARS", "validate_context", "validate_search"]

# The longest query taken, in characters: a question, not a document (the local model reads
# its first 256 tokens, about 1,000 characters, anyway).
MAX_QUERY_CHARS = 2000


def _query_errors(query: str) -> list[ValidationError | str]:
    if not query.strip():
        return ["must not be empty."]
    if len(query) > MAX_QUERY_CHARS:
        return [f"must be at most {MAX_QUERY_CHARS} characters."]
    # A NUL or a lone surrogate: text PostgreSQL cannot take, named here rather than failing later.
    errors: list[ValidationError | str] = []
    for validator in (NO_NUL, NO_LONE_SURROGATE):
        try:
            validator(query)
        except ValidationError as error:
            errors.append(error)
    return errors


def validate_search(*, user_external_ids: list[str], query: str, top_k: int, sources: tuple[str, ...]) -> None:
    """Check ``search``'s arguments.

    Raises:
        ValidationError: keyed ``user_external_ids``, ``query``, ``top_k``, ``sources``: every problem found.
    """
    user_errors: list[ValidationError | str] = []
    if not [u for u in user_external_ids if u.strip()]:
        user_errors = [ValidationError("Give at least one userId.", code="min_count")]
    elif problems := [p for u in user_external_ids for p in user_id_errors(u) if p.code != "blank"]:
        user_errors = problems[:1]
    raise_if(
        [
            ("user_external_ids", user_errors),
            ("query", _query_errors(query)),
            (
                "top_k",
                []
                if 1 <= top_k <= settings.SEARCH_MAX_TOP_K
                else [f"must be between 1 and {settings.SEARCH_MAX_TOP_K}."],
            ),
            (
                "sources",
                []
                if sources and not set(sources) - set(SOURCES)
                else [f"must name at least one of {', '.join(SOURCES)}."],
            ),
        ]
    )


def validate_context(
    *, user_external_id: str, session_external_id: str, query: str | None, window_turns: int, max_tokens: int
) -> None:
    """Check ``context``'s arguments.

    Raises:
        ValidationError: keyed ``user_external_id``, ``session_external_id``, ``query``, ``window_turns``,
            ``max_tokens``.
    """
    raise_if(
        [
            ("user_external_id", user_id_errors(user_external_id)),
            (
                "session_external_id",
                [e for e in field_errors(Session, "external_id", session_external_id) if e.code != "max_length"],
            ),
            ("query", _query_errors(query) if query is not None else []),
            (
                "window_turns",
                []
                if 0 <= window_turns <= settings.MAX_PAGE_SIZE
                else [f"must be between 0 and {settings.MAX_PAGE_SIZE}."],
            ),
            ("max_tokens", [] if 0 <= max_tokens <= 100_000 else ["must be between 0 and 100000."]),
        ]
    )
