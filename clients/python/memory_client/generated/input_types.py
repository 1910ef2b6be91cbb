from datetime import date, datetime
from typing import Any, Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import HitKind


class ContextInput(BaseModel):
    user_id: str = Field(alias="userId")
    session_id: str = Field(alias="sessionId")
    query: Optional[str] = None
    "What to find memories for (default: the session's latest user message)."
    window_turns: Optional[int] = Field(alias="windowTurns", default=None)
    "The session's last turns returned, oldest first (default CONTEXT_WINDOW_TURNS, 10)."
    max_tokens: Optional[int] = Field(alias="maxTokens", default=None)
    "Token budget of the memories (default CONTEXT_MAX_TOKENS, 1000)."
    include_other_sessions: bool = Field(alias="includeOtherSessions", default=True)
    "Memories from the user's other sessions too (false: this session's turns and summary only; no knowledge or diaries, which come from every session)."
    include_shared: bool = Field(alias="includeShared", default=False)
    "Also system-wide knowledge."


class MessageInput(BaseModel):
    role: str
    "user, assistant or system."
    content: str
    created_at: Optional[datetime] = Field(alias="createdAt", default=None)
    metadata: Optional[Any] = None
    external_id: Optional[str] = Field(alias="externalId", default=None)
    "Your id for this message: re-sending it does not store it twice."


class OffsetPaginationInput(BaseModel):
    offset: int = 0
    limit: Optional[int] = None


class SearchInput(BaseModel):
    query: str
    user_id: Optional[str] = Field(alias="userId", default=None)
    "One end user (or use userIds)."
    user_ids: Optional[list[str]] = Field(alias="userIds", default=None)
    "Several end users."
    top_k: Optional[int] = Field(alias="topK", default=None)
    "Hits returned (default SEARCH_DEFAULT_TOP_K, 10; at most SEARCH_MAX_TOP_K)."
    sources: Optional[list[HitKind]] = None
    "Kinds searched, ranked together (default: all of MESSAGE, SUMMARY, KNOWLEDGE, DIARY)."
    search_content: bool = Field(alias="searchContent", default=False)
    include_retrieved_data: bool = Field(alias="includeRetrievedData", default=False)
    "Return the hits as the labelled text blocks an answer model reads."
    answer: bool = True
    "false: retrieve only, no answer (answerMode none)."
    include_shared: bool = Field(alias="includeShared", default=False)
    "Also search system-wide knowledge."
    channel: Optional[str] = None
    "Only what was said in this channel."
    since: Optional[date] = None
    "Only what was said from 00:00 local time on this day (conversation time)."
    until: Optional[date] = None
    "Only what was said before the midnight after this day (local time)."
    utc_offset_hours: float = Field(alias="utcOffsetHours", default=0)
    "The local time zone of since/until as hours from UTC (e.g. 9, -5, 5.5)."
