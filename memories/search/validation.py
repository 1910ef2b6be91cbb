"""Checks of a search's and a context's input, each error naming its GraphQL field."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError

from memories.search.scope import SOURCES
from memories.services.validation import text_errors, user_id_errors

__all__ = ["MAX_QUERY_CHARS", "validate_context", "validate_search"]

# The longest query taken, in characters: a question, not a document (the local model reads
# its first 256 tokens, about 1,000 characters, anyway).
MAX_QUERY_CHARS = 2000


def _query_errors(query: str) -> list[str]:
    if not query.strip():
        return ["query must not be empty."]
    if len(query) > MAX_QUERY_CHARS:
        return [f"query must be at most {MAX_QUERY_CHARS} characters."]
    # A NUL or a lone surrogate: text PostgreSQL cannot take, named here rather than failing later.
    return text_errors(field="query", value=query)


def validate_search(*, user_external_ids: list[str], query: str, top_k: int, sources: tuple[str, ...]) -> None:
    """Check ``search``'s arguments.

    Raises:
        ValidationError: per field (``userIds``, ``query``, ``topK``, ``sources``), every problem found.
    """
    errors: dict[str, list[str]] = {}
    if not [u for u in user_external_ids if u.strip()]:
        errors["userIds"] = ["Give at least one userId."]
    elif problems := [p for u in user_external_ids for p in user_id_errors(user_external_id=u)]:
        errors["userIds"] = problems[:1]
    if problems := _query_errors(query):
        errors["query"] = problems
    if not 1 <= top_k <= settings.SEARCH_MAX_TOP_K:
        errors["topK"] = [f"topK must be between 1 and {settings.SEARCH_MAX_TOP_K}."]
    if not sources or set(sources) - set(SOURCES):
        errors["sources"] = [f"sources must name at least one of {', '.join(SOURCES)}."]
    if errors:
        raise ValidationError(errors)


def validate_context(
    *, user_external_id: str, session_external_id: str, query: str | None, window_turns: int, max_tokens: int
) -> None:
    """Check ``context``'s arguments.

    Raises:
        ValidationError: per field (``userId``, ``sessionId``, ``query``, ``windowTurns``, ``maxTokens``).
    """
    errors: dict[str, list[str]] = {}
    if problems := user_id_errors(user_external_id=user_external_id) or (
        [] if user_external_id.strip() else ["userId must not be empty."]
    ):
        errors["userId"] = problems
    if not session_external_id.strip():
        errors["sessionId"] = ["sessionId must not be empty."]
    elif problems := text_errors(field="sessionId", value=session_external_id):
        errors["sessionId"] = problems
    if query is not None and (problems := _query_errors(query)):
        errors["query"] = problems
    if not 0 <= window_turns <= settings.MAX_PAGE_SIZE:
        errors["windowTurns"] = [f"windowTurns must be between 0 and {settings.MAX_PAGE_SIZE}."]
    if not 0 <= max_tokens <= 100_000:
        errors["maxTokens"] = ["maxTokens must be between 0 and 100000."]
    if errors:
        raise ValidationError(errors)
