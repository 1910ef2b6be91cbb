"""A typed Python client of the long-term memory service for chatbots.

``MemoryClient(url, api_key)`` (and ``AsyncMemoryClient``): ``turn`` (a ``Prompt``), ``add_messages``,
``context``, ``search``; facts (``facts``, ``add_fact``, ``correct_fact``, ``forget_fact``, ``approve_fact``,
``reject_fact``); ``backlog``, ``create_summaries``, ``export_user``, ``forget_user``; ``create_user_token``
for a browser. Errors are ``MemoryApiError``s with the API's codes. The models come from the
service's schema (``generated/``, by ariadne-codegen).
"""

from .client import AsyncMemoryClient, ContextOptions, MemoryClient, SearchOptions
from .errors import (
    BackendError,
    FieldError,
    ForbiddenError,
    InputError,
    MemoryApiError,
    NotFoundError,
    RateLimitedError,
    UnauthenticatedError,
)
from .generated.enums import HitKind, KnowledgeStatus
from .generated.fragments import (
    AddMessagesResult,
    Backlog,
    Context,
    Fact,
    ForgetUserResult,
    Hit,
    Prompt,
    SearchResult,
    Turn,
    UserToken,
)
from .generated.input_types import MessageInput

__all__ = [
    "AddMessagesResult",
    "AsyncMemoryClient",
    "BackendError",
    "Backlog",
    "Context",
    "ContextOptions",
    "Fact",
    "FieldError",
    "ForbiddenError",
    "ForgetUserResult",
    "Hit",
    "HitKind",
    "InputError",
    "KnowledgeStatus",
    "MemoryApiError",
    "MemoryClient",
    "MessageInput",
    "NotFoundError",
    "Prompt",
    "RateLimitedError",
    "SearchOptions",
    "SearchResult",
    "Turn",
    "UnauthenticatedError",
    "UserToken",
]
