"""``MemoryClient`` and ``AsyncMemoryClient``: a chatbot's calls to the memory service, typed.

Each method sends one of the documented operations (``operations/*.graphql``) through the
client generated from them (``generated/``) and returns the part of the answer a bot uses; the
service's errors come back as ``errors.MemoryApiError`` subclasses. The sync and async clients
share everything but the sending: each call is built once, as a ``_Call``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Generic, Literal, TypedDict, TypeVar, Unpack, overload

import httpx

from .errors import MemoryApiError, error_from_graphql, error_from_operation_info
from .generated.add_messages_with_context import (
    AddMessagesWithContextAddMessagesAddMessagesResult as AddMessagesWithContextResult,
)
from .generated.add_messages_with_prompt import (
    AddMessagesWithPromptAddMessagesAddMessagesResult as AddMessagesWithPromptResult,
)
from .generated.async_client import AsyncGeneratedClient
from .generated.client import GeneratedClient
from .generated.create_summaries import CreateSummariesCreateSummariesQueuedSummariesResult as QueuedSummaries
from .generated.enums import HitKind, KnowledgeStatus
from .generated.exceptions import (
    GraphQLClientGraphQLMultiError,
    GraphQLClientHttpError,
    GraphQLClientInvalidResponseError,
)
from .generated.forget_fact import ForgetFactDeleteKnowledgeDeleteKnowledgeResult as ForgetFactResult
from .generated.fragments import (
    AddMessagesResult,
    Backlog,
    Context,
    Fact,
    ForgetUserResult,
    Problems,
    Prompt,
    SearchResult,
    UserToken,
)
from .generated.input_types import ContextInput, MessageInput, OffsetPaginationInput, SearchInput

__all__ = ["AsyncMemoryClient", "ContextOptions", "MemoryClient", "SearchOptions"]

DEFAULT_TIMEOUT = 30.0
# A connection idle for longer is not reused: servers close idle keep-alive connections (gunicorn
# after 2 s), and one closed while a request goes out fails it (httpx does not resend a POST).
KEEPALIVE_EXPIRY = 1.0
T = TypeVar("T")

Message = MessageInput | Mapping[str, Any]


class ContextOptions(TypedDict, total=False):
    """How a context is built (``ContextInput``); unset: the service's defaults."""

    window_turns: int | None
    max_tokens: int | None
    include_other_sessions: bool
    include_shared: bool


class SearchOptions(TypedDict, total=False):
    """What a search covers and returns (``SearchInput``); unset: the service's defaults."""

    top_k: int | None
    sources: Sequence[HitKind | str] | None
    answer: bool
    include_shared: bool
    channel: str | None
    since: date | None
    until: date | None
    utc_offset_hours: float


@dataclass(frozen=True)
class _Call(Generic[T]):
    """One facade call: the generated method, its arguments, and how its answer becomes the result."""

    method: str
    arguments: dict[str, Any]
    result: Callable[[Any], T]


def _accepted(payload: object, kind: type[T]) -> T:
    """A mutation's, ``search``'s or ``context``'s result; raises for an ``OperationInfo`` (input refused)."""
    if isinstance(payload, Problems):
        raise error_from_operation_info(payload.messages)
    if not isinstance(payload, kind):  # the service reports why in `errors`, which raise before this
        raise MemoryApiError(f"The answer has no {kind.__name__}.", code="INVALID_RESPONSE")
    return payload


def _messages(messages: Sequence[Message]) -> list[MessageInput]:
    return [m if isinstance(m, MessageInput) else MessageInput.model_validate(m) for m in messages]


def _add_messages(user_id: str, session_id: str, messages: Sequence[Message], channel: str) -> _Call[AddMessagesResult]:
    arguments = {"user_id": user_id, "session_id": session_id, "messages": _messages(messages), "channel": channel}
    return _Call("add_messages", arguments, lambda answer: _accepted(answer.add_messages, AddMessagesResult))


def _turn(
    user_id: str, session_id: str, channel: str, parts: bool, options: ContextOptions, **message: Any
) -> _Call[Prompt]:
    user_message = MessageInput.model_validate({"role": "user", **{k: v for k, v in message.items() if v is not None}})
    arguments = {
        "user_id": user_id,
        "session_id": session_id,
        "messages": [user_message],
        "channel": channel,
        "window_turns": options.get("window_turns"),
        "max_tokens": options.get("max_tokens"),
        "include_other_sessions": options.get("include_other_sessions", True),
        "include_shared": options.get("include_shared", False),
    }
    if parts:
        return _Call(
            "add_messages_with_context",
            arguments,
            lambda answer: _accepted(_accepted(answer.add_messages, AddMessagesWithContextResult).context, Context),
        )
    return _Call(
        "add_messages_with_prompt",
        arguments,
        lambda answer: _accepted(_accepted(answer.add_messages, AddMessagesWithPromptResult).context, Prompt),
    )


def _context(user_id: str, session_id: str, query: str | None, options: ContextOptions) -> _Call[Context]:
    given = ContextInput.model_validate({"user_id": user_id, "session_id": session_id, "query": query, **options})
    return _Call("get_context", {"input": given}, lambda answer: _accepted(answer.context, Context))


def _search(user_id: str | Sequence[str], query: str, options: SearchOptions) -> _Call[SearchResult]:
    users = {"user_id": user_id} if isinstance(user_id, str) else {"user_ids": list(user_id)}
    given = SearchInput.model_validate({"query": query, **users, **options})
    return _Call("search", {"input": given}, lambda answer: _accepted(answer.search, SearchResult))


def _facts(user_id: str, status: KnowledgeStatus | str, limit: int, offset: int) -> _Call[list[Fact]]:
    arguments = {
        "user_id": user_id,
        "status": KnowledgeStatus(status),
        "pagination": OffsetPaginationInput(offset=offset, limit=limit),
    }
    return _Call("facts", arguments, lambda answer: list[Fact](answer.knowledge.results))


def _forget_user(user_id: str) -> _Call[ForgetUserResult]:
    return _Call("forget_user", {"user_id": user_id}, lambda answer: _accepted(answer.forget_user, ForgetUserResult))


def _add_fact(user_id: str, content: str) -> _Call[Fact]:
    return _Call("add_fact", {"user_id": user_id, "content": content}, lambda a: _accepted(a.add_knowledge, Fact))


def _correct_fact(user_id: str, fact_id: str | int, content: str) -> _Call[Fact]:
    arguments = {"user_id": user_id, "id": str(fact_id), "content": content}
    return _Call("correct_fact", arguments, lambda answer: _accepted(answer.update_knowledge, Fact))


def _forget_fact(user_id: str, fact_id: str | int) -> _Call[str]:
    arguments = {"user_id": user_id, "id": str(fact_id)}
    return _Call("forget_fact", arguments, lambda a: _accepted(a.delete_knowledge, ForgetFactResult).deleted_id)


def _review_fact(user_id: str, fact_id: str | int, *, approve: bool) -> _Call[Fact]:
    if approve:
        return _Call(
            "approve_fact", {"user_id": user_id, "id": str(fact_id)}, lambda a: _accepted(a.approve_knowledge, Fact)
        )
    return _Call("reject_fact", {"user_id": user_id, "id": str(fact_id)}, lambda a: _accepted(a.reject_knowledge, Fact))


def _backlog(user_id: str) -> _Call[Backlog]:
    return _Call("get_backlog", {"user_id": user_id}, lambda answer: answer.backlog)


def _create_summaries(user_id: str, session_id: str | None, overwrite: bool, max_count: int | None) -> _Call[list[str]]:
    arguments = {"user_id": user_id, "session_id": session_id, "overwrite": overwrite, "max_count": max_count}
    return _Call(
        "create_summaries",
        arguments,
        lambda answer: _accepted(answer.create_summaries, QueuedSummaries).queued_session_ids,
    )


def _export_user(user_id: str) -> _Call[dict[str, Any]]:
    return _Call("export_user", {"user_id": user_id}, lambda answer: answer.export_user)


def _create_user_token(user_id: str, ttl_seconds: int | None) -> _Call[UserToken]:
    arguments = {"user_id": user_id, "ttl_seconds": ttl_seconds}
    return _Call("create_user_token", arguments, lambda answer: _accepted(answer.create_user_token, UserToken))


@contextmanager
def _api_errors() -> Iterator[None]:
    """The generated client's exceptions as ``MemoryApiError``s carrying the API's codes."""
    try:
        yield
    except GraphQLClientGraphQLMultiError as error:
        raise error_from_graphql([e.original or {"message": e.message} for e in error.errors]) from error
    except GraphQLClientHttpError as error:
        # 401, 403 and 413 carry GraphQL errors with their codes; a proxy's 429 or 503 may carry anything.
        raise error_from_graphql(_http_errors(error.response), status=error.status_code) from error
    except GraphQLClientInvalidResponseError as error:
        status = error.response.status_code
        raise MemoryApiError("The answer is not a GraphQL response.", code="INVALID_RESPONSE", status=status) from error


def _http_errors(response: Any) -> list[Mapping[str, Any]]:
    """The GraphQL ``errors`` of an HTTP error's JSON body, or one made of its ``message`` / ``detail``."""
    try:
        body = response.json()
    except ValueError:
        return []
    if not isinstance(body, dict):
        return []
    errors = body.get("errors")
    if isinstance(errors, list) and errors and all(isinstance(e, dict) for e in errors):
        return errors
    message = body.get("message") or body.get("detail") or body.get("error")
    code = body.get("code")
    if not isinstance(message, str):
        return []
    return [{"message": message, **({"extensions": {"code": code}} if isinstance(code, str) else {})}]


def _limits() -> httpx.Limits:
    return httpx.Limits(keepalive_expiry=KEEPALIVE_EXPIRY)


def _headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"}


class MemoryClient:
    """The memory service's chatbot calls, over a keep-alive HTTP connection (reused within a second).

    ``MemoryClient("http://127.0.0.1:8000/graphql/", api_key="mem_...")``; use it as a context
    manager, or ``close()`` it. Every method raises ``MemoryApiError`` (a subclass by kind:
    ``UnauthenticatedError``, ``ForbiddenError``, ``InputError`` with ``field_errors``,
    ``NotFoundError``, ``BackendError``) for an error the service answers with, and
    ``httpx.HTTPError`` when it cannot be reached.

    Args:
        url: the service's GraphQL endpoint.
        api_key: an API key (``manage.py create_api_key``), sent as ``Authorization: Bearer``.
        timeout: seconds to wait for an answer.
        http_client: an ``httpx.Client`` of your own (proxies, retries, a test transport); the API key
            is added to its headers and ``timeout`` is not used. ``close()`` closes it.
    """

    def __init__(
        self, url: str, api_key: str, *, timeout: float = DEFAULT_TIMEOUT, http_client: httpx.Client | None = None
    ) -> None:
        if http_client is None:
            http_client = httpx.Client(timeout=timeout, limits=_limits())
        http_client.headers.update(_headers(api_key))
        # httpx.Client is what the generated HttpClient protocol describes (mypy reads its keyword-only
        # arguments as a mismatch).
        self._client = GeneratedClient(url=url, http_client=http_client)  # type: ignore[arg-type]

    def _send(self, call: _Call[T]) -> T:
        with _api_errors():
            answer = getattr(self._client, call.method)(**call.arguments)
        return call.result(answer)

    def add_messages(
        self, user_id: str, session_id: str, messages: Sequence[Message], *, channel: str = ""
    ) -> AddMessagesResult:
        """Store messages of a session (``addMessages``), e.g. the bot's reply after a ``turn``.

        Args:
            user_id: the end user.
            session_id: your id of the conversation.
            messages: ``MessageInput``s or mappings such as ``{"role": "assistant", "content": "..."}``
                (also ``createdAt`` or ``created_at``, ``metadata``, ``externalId``).
            channel: where they were said (``slack``, ``web``...).

        Returns:
            The stored messages, in order, and how many were ``skipped`` (already stored under their externalId).
        """
        return self._send(_add_messages(user_id, session_id, messages, channel))

    @overload
    def turn(
        self,
        user_id: str,
        session_id: str,
        content: str,
        *,
        created_at: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        external_id: str | None = None,
        channel: str = "",
        parts: Literal[False] = False,
        **options: Unpack[ContextOptions],
    ) -> Prompt: ...

    @overload
    def turn(
        self,
        user_id: str,
        session_id: str,
        content: str,
        *,
        created_at: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        external_id: str | None = None,
        channel: str = "",
        parts: Literal[True],
        **options: Unpack[ContextOptions],
    ) -> Context: ...

    def turn(
        self,
        user_id: str,
        session_id: str,
        content: str,
        *,
        created_at: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        external_id: str | None = None,
        channel: str = "",
        parts: bool = False,
        **options: Unpack[ContextOptions],
    ) -> Prompt:
        """A chatbot turn's request: store the user's message and get the prompt of the bot's reply, at once.

        Paste ``.prompt`` into the bot's system prompt; store the reply with ``add_messages``. If the
        context fails (e.g. ``BackendError``), the message is stored all the same.

        Args:
            user_id: the end user.
            session_id: your id of the conversation.
            content: what the user said.
            created_at: when (default: now).
            metadata: the message's metadata (``speaker`` names who spoke).
            external_id: your id of the message (sent again, it is not stored twice).
            channel: where it was said.
            parts: also return the context's parts, ``window`` and ``memories`` (a larger answer).
            **options: ``ContextOptions`` (``window_turns``, ``max_tokens``, ...).

        Returns:
            A ``Prompt``: ``prompt``, ``tokens`` (its size) and ``query``; with ``parts=True`` the whole
            ``Context`` (a ``Prompt`` with ``window``, the session's recent turns, and ``memories``).
        """
        message = {"content": content, "created_at": created_at, "metadata": metadata, "external_id": external_id}
        return self._send(_turn(user_id, session_id, channel, parts, options, **message))

    def context(
        self, user_id: str, session_id: str, *, query: str | None = None, **options: Unpack[ContextOptions]
    ) -> Context:
        """The context for a session's next turn, storing nothing (``context``).

        Args:
            user_id: the end user.
            session_id: the session.
            query: what to find memories for (default: the session's latest user message).
            **options: ``ContextOptions``.
        """
        return self._send(_context(user_id, session_id, query, options))

    def search(self, user_id: str | Sequence[str], query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """Answer a question from one or more end users' memory (``search``).

        Args:
            user_id: the end user, or a list of them.
            query: the question.
            **options: ``SearchOptions`` (``top_k``, ``sources``, ``answer``, a date window...).

        Returns:
            ``answer`` (None with ``answer=False``), ``found``, ``hits`` (best first, ``cited`` where the
            answer rests on one).
        """
        return self._send(_search(user_id, query, options))

    def facts(
        self, user_id: str, *, status: KnowledgeStatus | str = KnowledgeStatus.ACTIVE, limit: int = 100, offset: int = 0
    ) -> list[Fact]:
        """A user's facts (``knowledge``), the last changed first: the active ones unless ``status`` says otherwise.

        Args:
            user_id: the end user.
            status: ``ACTIVE``, ``CANDIDATE`` (awaiting review), ``REJECTED`` or ``SUPERSEDED``.
            limit: at most this many (up to the service's ``MAX_PAGE_SIZE``).
            offset: skip this many.
        """
        return self._send(_facts(user_id, status, limit, offset))

    def forget_user(self, user_id: str) -> ForgetUserResult:
        """Remove every row of a user (``forgetUser``); returns how many of each kind were deleted."""
        return self._send(_forget_user(user_id))

    def add_fact(self, user_id: str, content: str) -> Fact:
        """Remember a fact about the user (``addKnowledge``), e.g. ``"The user is vegetarian."``; returns it."""
        return self._send(_add_fact(user_id, content))

    def correct_fact(self, user_id: str, fact_id: str | int, content: str) -> Fact:
        """Change a fact's text (``updateKnowledge``; its history keeps every version); returns it.

        Raises:
            InputError: no fact of that user with that id (code ``ERROR``); a candidate's text needs a key
                that may curate.
        """
        return self._send(_correct_fact(user_id, fact_id, content))

    def forget_fact(self, user_id: str, fact_id: str | int) -> str:
        """Delete a fact (``deleteKnowledge``); returns its id. A fact it had replaced in its slot is current again."""
        return self._send(_forget_fact(user_id, fact_id))

    def approve_fact(self, user_id: str, fact_id: str | int) -> Fact:
        """Approve a fact awaiting review (``approveKnowledge``): it is marked reviewed, a candidate becomes
        active. Needs an API key that may curate (else ``ForbiddenError``)."""
        return self._send(_review_fact(user_id, fact_id, approve=True))

    def reject_fact(self, user_id: str, fact_id: str | int) -> Fact:
        """Reject a fact awaiting review (``rejectKnowledge``): never searched, never raised again. Needs an
        API key that may curate (else ``ForbiddenError``)."""
        return self._send(_review_fact(user_id, fact_id, approve=False))

    def backlog(self, user_id: str) -> Backlog:
        """What the worker has still to do for the user (``backlog``): ``all_processed`` once every turn is
        embedded, summarised and read for facts."""
        return self._send(_backlog(user_id))

    def create_summaries(
        self, user_id: str, *, session_id: str | None = None, overwrite: bool = False, max_count: int | None = None
    ) -> list[str]:
        """Summarise the user's sessions now rather than once idle (``createSummaries``); their facts follow.

        Args:
            session_id: only this session.
            overwrite: summarise again sessions whose summary is current.
            max_count: at most this many sessions, the most recently active first.

        Returns:
            The ids of the sessions queued.
        """
        return self._send(_create_summaries(user_id, session_id, overwrite, max_count))

    def export_user(self, user_id: str) -> dict[str, Any]:
        """Everything stored of the user as one JSON document (``exportUser``, docs/export.md)."""
        return self._send(_export_user(user_id))

    def create_user_token(self, user_id: str, *, ttl_seconds: int | None = None) -> UserToken:
        """A short-lived token for one end user to hand to their browser (``createUserToken``): ``token``,
        ``expires_at``. Your backend calls this with its API key; the page uses the token instead of the key."""
        return self._send(_create_user_token(user_id, ttl_seconds))

    def close(self) -> None:
        """Close the HTTP connection."""
        self._client.http_client.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncMemoryClient:
    """``MemoryClient`` for asyncio: the same methods and errors, each a coroutine.

    ``async with AsyncMemoryClient(url, api_key) as memory: context = await memory.turn(...)``;
    ``http_client`` is an ``httpx.AsyncClient`` of your own.
    """

    def __init__(
        self, url: str, api_key: str, *, timeout: float = DEFAULT_TIMEOUT, http_client: httpx.AsyncClient | None = None
    ) -> None:
        if http_client is None:
            http_client = httpx.AsyncClient(timeout=timeout, limits=_limits())
        http_client.headers.update(_headers(api_key))
        self._client = AsyncGeneratedClient(url=url, http_client=http_client)  # type: ignore[arg-type]

    async def _send(self, call: _Call[T]) -> T:
        with _api_errors():
            answer = await getattr(self._client, call.method)(**call.arguments)
        return call.result(answer)

    async def add_messages(
        self, user_id: str, session_id: str, messages: Sequence[Message], *, channel: str = ""
    ) -> AddMessagesResult:
        """``MemoryClient.add_messages``."""
        return await self._send(_add_messages(user_id, session_id, messages, channel))

    @overload
    async def turn(
        self,
        user_id: str,
        session_id: str,
        content: str,
        *,
        created_at: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        external_id: str | None = None,
        channel: str = "",
        parts: Literal[False] = False,
        **options: Unpack[ContextOptions],
    ) -> Prompt: ...

    @overload
    async def turn(
        self,
        user_id: str,
        session_id: str,
        content: str,
        *,
        created_at: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        external_id: str | None = None,
        channel: str = "",
        parts: Literal[True],
        **options: Unpack[ContextOptions],
    ) -> Context: ...

    async def turn(
        self,
        user_id: str,
        session_id: str,
        content: str,
        *,
        created_at: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        external_id: str | None = None,
        channel: str = "",
        parts: bool = False,
        **options: Unpack[ContextOptions],
    ) -> Prompt:
        """``MemoryClient.turn``."""
        message = {"content": content, "created_at": created_at, "metadata": metadata, "external_id": external_id}
        return await self._send(_turn(user_id, session_id, channel, parts, options, **message))

    async def context(
        self, user_id: str, session_id: str, *, query: str | None = None, **options: Unpack[ContextOptions]
    ) -> Context:
        """``MemoryClient.context``."""
        return await self._send(_context(user_id, session_id, query, options))

    async def search(self, user_id: str | Sequence[str], query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """``MemoryClient.search``."""
        return await self._send(_search(user_id, query, options))

    async def facts(
        self, user_id: str, *, status: KnowledgeStatus | str = KnowledgeStatus.ACTIVE, limit: int = 100, offset: int = 0
    ) -> list[Fact]:
        """``MemoryClient.facts``."""
        return await self._send(_facts(user_id, status, limit, offset))

    async def forget_user(self, user_id: str) -> ForgetUserResult:
        """``MemoryClient.forget_user``."""
        return await self._send(_forget_user(user_id))

    async def add_fact(self, user_id: str, content: str) -> Fact:
        """``MemoryClient.add_fact``."""
        return await self._send(_add_fact(user_id, content))

    async def correct_fact(self, user_id: str, fact_id: str | int, content: str) -> Fact:
        """``MemoryClient.correct_fact``."""
        return await self._send(_correct_fact(user_id, fact_id, content))

    async def forget_fact(self, user_id: str, fact_id: str | int) -> str:
        """``MemoryClient.forget_fact``."""
        return await self._send(_forget_fact(user_id, fact_id))

    async def approve_fact(self, user_id: str, fact_id: str | int) -> Fact:
        """``MemoryClient.approve_fact``."""
        return await self._send(_review_fact(user_id, fact_id, approve=True))

    async def reject_fact(self, user_id: str, fact_id: str | int) -> Fact:
        """``MemoryClient.reject_fact``."""
        return await self._send(_review_fact(user_id, fact_id, approve=False))

    async def backlog(self, user_id: str) -> Backlog:
        """``MemoryClient.backlog``."""
        return await self._send(_backlog(user_id))

    async def create_summaries(
        self, user_id: str, *, session_id: str | None = None, overwrite: bool = False, max_count: int | None = None
    ) -> list[str]:
        """``MemoryClient.create_summaries``."""
        return await self._send(_create_summaries(user_id, session_id, overwrite, max_count))

    async def export_user(self, user_id: str) -> dict[str, Any]:
        """``MemoryClient.export_user``."""
        return await self._send(_export_user(user_id))

    async def create_user_token(self, user_id: str, *, ttl_seconds: int | None = None) -> UserToken:
        """``MemoryClient.create_user_token``."""
        return await self._send(_create_user_token(user_id, ttl_seconds))

    async def aclose(self) -> None:
        """Close the HTTP connection."""
        await self._client.http_client.aclose()

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
