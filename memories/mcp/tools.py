"""The MCP tools: each names its GraphQL operation's variables and runs it as the caller.

A tool is as thin as a resolver: it maps its arguments to the variables of its operation
(``memories.mcp.operations``) and hands them to ``run_operation``, which runs the operation
in-process as the caller and answers with its data or a tool error carrying the API's codes.
Nothing is checked here that the API checks: an argument the API refuses comes back as the API
refuses it (``VALIDATION``, ``BAD_USER_INPUT``, ``FORBIDDEN``...); an argument of the wrong type
for the tool's input schema is refused with ``BAD_USER_INPUT`` (``memories.mcp.server``), and an
id given as a number is taken as its text. A tool's docstring is its description, which the
agent's model reads.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, BeforeValidator, Field

from memories.graphql.enums import HitKind
from memories.graphql.types import KnowledgeStatusEnum
from memories.mcp import operations
from memories.mcp.auth import Caller
from memories.mcp.execution import run_operation

__all__ = ["MemoryTools", "MessageIn"]


def _id_text(value: object) -> object:
    """An id given as a number (agents often send one) as the string the API takes."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


UserId = Annotated[
    str, BeforeValidator(_id_text), Field(description="Your id of the end user (any string up to 255 characters).")
]
SessionId = Annotated[
    str,
    BeforeValidator(_id_text),
    Field(description="Your id of the conversation (a session is created by its first message)."),
]
FactId = Annotated[
    str, BeforeValidator(_id_text), Field(description="The fact's id, as list_facts or add_fact give it.")
]
# The API's own enums: a value the schema lists is one the API takes.
KnowledgeStatus = Literal[tuple(status.name for status in KnowledgeStatusEnum)]  # type: ignore[valid-type]
Source = Literal[tuple(kind.name for kind in HitKind)]  # type: ignore[valid-type]


class MessageIn(BaseModel):
    """A message to store."""

    role: str = Field(description="user, assistant or system.")
    content: str = Field(description="What was said.")
    created_at: str | None = Field(
        default=None,
        description="When it was said: ISO 8601 with a UTC offset (2024-05-20T18:30:00+09:00); now if omitted.",
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description='A JSON object kept with the message; "speaker" names who spoke.'
    )
    external_id: str | None = Field(
        default=None, description="Your id of the message: sent again with it, the message is not stored twice."
    )

    def variables(self) -> dict[str, Any]:
        """The message as the API's ``MessageInput`` (fields left out take the API's defaults)."""
        fields = {
            "role": self.role,
            "content": self.content,
            "createdAt": self.created_at,
            "metadata": self.metadata,
            "externalId": self.external_id,
        }
        return _given(**fields)


class MemoryTools:
    """The tools of one MCP server, answering as the caller's API key allows.

    Args:
        caller: the caller's scope at each call (``memories.mcp.auth``: each HTTP request's key, or
            what a stdio server was started with).
    """

    def __init__(self, *, caller: Caller) -> None:
        self._caller = caller

    def register(self, server: MCPServer) -> None:
        """Add every tool to ``server``, marked read-only or destructive for the agent."""
        reads = ToolAnnotations(read_only_hint=True)
        adds = ToolAnnotations(read_only_hint=False, destructive_hint=False)
        changes = ToolAnnotations(read_only_hint=False, destructive_hint=True)
        for tool, hints in (
            (self.add_messages, adds),
            (self.get_context, reads),
            (self.search_memory, reads),
            (self.list_facts, reads),
            (self.add_fact, adds),
            (self.correct_fact, changes),
            (self.forget_fact, changes),
            (self.get_backlog, reads),
        ):
            server.add_tool(tool, description=inspect.cleandoc(tool.__doc__ or ""), annotations=hints)

    def add_messages(
        self,
        user_id: UserId,
        session_id: SessionId,
        messages: Annotated[list[MessageIn], Field(description="The messages, in the order they were said.")],
        channel: Annotated[str, Field(description="Where they were said (slack, web, ...).")] = "",
        include_context: Annotated[
            bool,
            Field(
                description="Also return the context for the reply to the newest user message stored: "
                "a chatbot turn in one call."
            ),
        ] = False,
        window_turns: Annotated[
            int | None, Field(description="With include_context: the session's last turns returned (default 10).")
        ] = None,
        max_tokens: Annotated[
            int | None, Field(description="With include_context: token budget of the memories (default 1000).")
        ] = None,
    ) -> CallToolResult:
        """Store messages of a conversation (a turn: the user's message, or the bot's reply) in the user's memory.

        Returns the stored messages and, with include_context, the context (recent window, relevant
        memories and a prompt block) for replying to the newest user message. Facts and summaries
        are derived from stored messages in the background.
        """
        variables = {
            "userId": user_id,
            "sessionId": session_id,
            "channel": channel,
            "messages": [m.variables() for m in messages],
            "withContext": include_context,
            "windowTurns": window_turns,
            "maxTokens": max_tokens,
        }
        return self._run(operations.ADD_MESSAGES, variables, "addMessages")

    def get_context(
        self,
        user_id: UserId,
        session_id: SessionId,
        query: Annotated[
            str | None,
            Field(description="What to find memories for (default: the session's latest user message)."),
        ] = None,
        window_turns: Annotated[
            int | None, Field(description="The session's last turns returned, oldest first (default 10).")
        ] = None,
        max_tokens: Annotated[int | None, Field(description="Token budget of the memories (default 1000).")] = None,
        include_other_sessions: Annotated[
            bool, Field(description="Memories from the user's other sessions too (false: this session only).")
        ] = True,
        include_shared: Annotated[bool, Field(description="Also system-wide knowledge.")] = False,
    ) -> CallToolResult:
        """The context for the next reply in a conversation, without storing anything.

        Returns the session's recent window, the memories relevant to the query (facts about the
        user and earlier turns, none of them in the window) and `prompt`: one block to paste into
        the system prompt.
        """
        context_input = _given(
            userId=user_id,
            sessionId=session_id,
            query=query,
            windowTurns=window_turns,
            maxTokens=max_tokens,
            includeOtherSessions=include_other_sessions,
            includeShared=include_shared,
        )
        return self._run(operations.CONTEXT, {"input": context_input}, "context")

    def search_memory(
        self,
        user_id: UserId,
        query: Annotated[str, Field(description="The question, in the user's words.")],
        top_k: Annotated[int | None, Field(description="Hits returned (default 10).")] = None,
        sources: Annotated[
            list[Source] | None, Field(description="Kinds searched (default: all, ranked together).")
        ] = None,
        channel: Annotated[str | None, Field(description="Only what was said in this channel.")] = None,
        since: Annotated[str | None, Field(description="Only what was said from this day (YYYY-MM-DD).")] = None,
        until: Annotated[str | None, Field(description="Only what was said up to this day (YYYY-MM-DD).")] = None,
        utc_offset_hours: Annotated[
            float, Field(description="The time zone of since/until, as hours from UTC (e.g. 9, -5, 5.5).")
        ] = 0,
        include_shared: Annotated[bool, Field(description="Also search system-wide knowledge.")] = False,
        answer: Annotated[bool, Field(description="false: the hits only, no answer.")] = True,
    ) -> CallToolResult:
        """Answer a question about the user from their memory (messages, summaries, facts, diaries).

        Returns `answer` (with the dates of what it rests on), `found` (false when nothing relevant
        is remembered: the answer then says so) and the hits, best first, each marked `cited` when
        the answer rests on it.
        """
        search_input = _given(
            userId=user_id,
            query=query,
            topK=top_k,
            sources=sources,
            channel=channel,
            since=since,
            until=until,
            utcOffsetHours=utc_offset_hours,
            includeShared=include_shared,
            answer=answer,
        )
        return self._run(operations.SEARCH, {"input": search_input}, "search")

    def list_facts(
        self,
        user_id: UserId,
        status: Annotated[
            KnowledgeStatus,
            Field(description="ACTIVE (used in answers), CANDIDATE (awaiting review), REJECTED or SUPERSEDED."),
        ] = "ACTIVE",
        include_shared: Annotated[bool, Field(description="Also system-wide knowledge.")] = False,
        limit: Annotated[int, Field(description="Facts returned (at most 1000).")] = 100,
        offset: Annotated[int, Field(description="Facts skipped, for the next page.")] = 0,
    ) -> CallToolResult:
        """List what is known about the user: their facts, with status, whether a person reviewed
        each, and when it was said. Returns `totalCount` and the page of `results`."""
        variables = {"userId": user_id, "shared": include_shared, "status": status, "limit": limit, "offset": offset}
        return self._run(operations.LIST_FACTS, variables, "knowledge")

    def add_fact(
        self,
        user_id: UserId,
        content: Annotated[str, Field(description='The fact, in the third person ("The user is vegetarian.").')],
    ) -> CallToolResult:
        """Remember a fact about the user; it is used in contexts and answers once embedded. Returns the fact."""
        return self._run(operations.ADD_FACT, {"userId": user_id, "content": content}, "addKnowledge")

    def correct_fact(
        self,
        user_id: UserId,
        fact_id: FactId,
        content: Annotated[str, Field(description="The corrected text of the fact.")],
    ) -> CallToolResult:
        """Correct the text of one of the user's facts (its history keeps every version). Returns the fact."""
        variables = {"userId": user_id, "id": fact_id, "content": content}
        return self._run(operations.CORRECT_FACT, variables, "updateKnowledge")

    def forget_fact(self, user_id: UserId, fact_id: FactId) -> CallToolResult:
        """Delete one of the user's facts. Returns `deletedId`."""
        return self._run(operations.FORGET_FACT, {"userId": user_id, "id": fact_id}, "deleteKnowledge")

    def get_backlog(self, user_id: UserId) -> CallToolResult:
        """What the memory has still to do with the user's turns. `allProcessed` is true once every turn is
        embedded (searchable by meaning), summarised and read for facts; otherwise the counts say what waits."""
        return self._run(operations.BACKLOG, {"userId": user_id}, "backlog")

    def _run(self, document: str, variables: dict[str, Any], field: str) -> CallToolResult:
        return run_operation(document, variables, field, caller=self._caller)


def _given(**fields: Any) -> dict[str, Any]:
    """The fields that have a value: the others take the API's defaults, as if a client left them out."""
    return {name: value for name, value in fields.items() if value is not None}
