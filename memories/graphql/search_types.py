"""GraphQL types of what search and context return: hits with their turns, answers, prompt blocks."""

from __future__ import annotations

from datetime import datetime

import strawberry

from memories import search
from memories.graphql.enums import HitKind
from memories.llm import Usage

__all__ = ["ContextType", "HitType", "SearchResultType", "TokenCountsType", "TurnType", "UsageType"]


@strawberry.type(name="Turn", description="A message shown with a hit or in a context's recent window.")
class TurnType:
    id: strawberry.ID
    role: str
    speaker: str = strawberry.field(description="The speaker's name from the message's metadata, else its role.")
    content: str
    created_at: datetime
    is_hit: bool = strawberry.field(
        description="Whether this turn is the hit itself (not a neighbouring turn); for a fact, a turn it was "
        "raised from."
    )
    excerpt: bool = strawberry.field(
        description="Whether content holds only the parts of the turn that match the query (a long turn in a result "
        "over its token budget); `history` has the whole turn."
    )

    @classmethod
    def of(cls, turn: search.Turn) -> TurnType:
        return cls(
            id=strawberry.ID(str(turn.id)),
            role=turn.role,
            speaker=turn.speaker,
            content=turn.content,
            created_at=turn.created_at,
            is_hit=turn.is_hit,
            excerpt=turn.excerpt,
        )


@strawberry.type(name="Hit")
class HitType:
    """One retrieved row of any kind, best first. ``score`` is cosine similarity to the query (higher is
    closer; null for a message not embedded yet); ``relevance`` is the fused score that orders the hits."""

    kind: HitKind
    id: strawberry.ID
    score: float | None
    relevance: float
    content: str
    user_id: str
    conversation_time: datetime | None
    session_id: str | None
    speaker: str | None = strawberry.field(description="For a message: its speaker.")
    turns: list[TurnType] = strawberry.field(
        description="For a message: the turn just before it, itself and the turns after it, in order "
        "(acknowledgements left out); for a fact: the turns it was raised from."
    )
    replaced_at: datetime | None = strawberry.field(
        description="For a message that said what a later fact replaced: when that was said (it held until then)."
    )
    reviewed: bool | None = strawberry.field(
        description="For a fact: whether a person approved, added or edited it (false: raised from a conversation)."
    )
    text: str = strawberry.field(description="The hit as a labelled, timestamped text block.")
    cited: bool = strawberry.field(description="Whether the answer rests on this hit.")
    found_by: list[str] = strawberry.field(
        description='Why it was chosen: the rankings that found it and its place in each ("vector #2", "words #1", '
        '"entity #1"); its relevance adds shares of its neighbouring turns and its session.'
    )

    @classmethod
    def of(cls, hit: search.Hit, *, multi_user: bool = False, cited: bool = False) -> HitType:
        return cls(
            kind=HitKind(hit.kind),
            id=strawberry.ID(str(hit.id)),
            score=hit.score,
            relevance=hit.relevance,
            content=hit.content,
            user_id=hit.user_external_id,
            conversation_time=hit.conversation_time,
            session_id=hit.session_external_id,
            speaker=hit.speaker,
            turns=[TurnType.of(t) for t in hit.turns],
            text=hit.block(multi_user=multi_user),
            cited=cited,
            found_by=list(hit.found_by),
            replaced_at=hit.replaced_at,
            reviewed=hit.reviewed,
        )


@strawberry.type(name="Usage")
class UsageType:
    """Tokens used, where the backend reports them."""

    prompt_tokens: int | None
    completion_tokens: int | None
    embedding_tokens: int | None

    @classmethod
    def of(cls, usage: Usage) -> UsageType:
        return cls(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            embedding_tokens=usage.embedding_tokens,
        )


@strawberry.type(name="SearchResult")
class SearchResultType:
    """The answer and the hits it was drawn from.

    ``answerMode`` is ``generated`` (an LLM wrote it, citing hits), ``extractive`` (the
    supporting turns quoted with speaker and date; no LLM configured), or ``none`` when the
    search was asked for retrieval only (``answer: false``). ``found`` is false when no hit is
    relevant enough (``SEARCH_MIN_SIMILARITY``), or, offline, when the relevant ones are only
    questions nobody answered: the answer then says so. It is null with ``answer: false``.
    """

    answer: str | None
    answer_mode: str
    found: bool | None
    retrieved_data: str | None
    hits: list[HitType]
    stages: list[str] = strawberry.field(deprecation_reason="All sources are ranked together; see `Hit.kind`.")
    usage: UsageType


@strawberry.type(name="TokenCounts", description="Token counts of a context, by the tokenizer it names.")
class TokenCountsType:
    window: int
    memories: int
    prompt: int
    tokenizer: str


@strawberry.type(name="Context")
class ContextType:
    """What a chatbot needs for its next turn: the recent window, relevant memories and one prompt block.

    ``memories`` never repeat a turn of ``window`` nor the query message; none are returned when
    nothing is relevant (``SEARCH_MIN_SIMILARITY``).
    """

    query: str | None
    window: list[TurnType]
    memories: list[HitType]
    prompt: str = strawberry.field(description="Paste into the system prompt: labelled, dated sections.")
    tokens: TokenCountsType
    usage: UsageType = strawberry.field(description="Tokens the model backends used: the query's embedding.")

    @classmethod
    def of(cls, result: search.Context) -> ContextType:
        return cls(
            query=result.query,
            window=[TurnType.of(t) for t in result.window],
            memories=[HitType.of(h) for h in result.memories],
            prompt=result.prompt,
            tokens=TokenCountsType(tokenizer=result.tokenizer, **result.tokens),
            usage=UsageType.of(result.usage),
        )
