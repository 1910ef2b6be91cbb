from datetime import datetime
from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import HitKind, KnowledgeStatus, OperationMessageKind


class AddMessagesResult(BaseModel):
    skipped: int
    messages: list["AddMessagesResultMessages"]


class AddMessagesResultMessages(BaseModel):
    id: str
    role: str
    content: str
    created_at: datetime = Field(alias="createdAt")
    external_id: Optional[str] = Field(alias="externalId")


class Backlog(BaseModel):
    messages_waiting_for_vector: int = Field(alias="messagesWaitingForVector")
    messages_waiting_for_facts: int = Field(alias="messagesWaitingForFacts")
    all_processed: bool = Field(alias="allProcessed")
    sessions_waiting_for_summary: list["BacklogSessionsWaitingForSummary"] = Field(
        alias="sessionsWaitingForSummary"
    )


class BacklogSessionsWaitingForSummary(BaseModel):
    session_id: str = Field(alias="sessionId")
    due_at: datetime = Field(alias="dueAt")


class Hit(BaseModel):
    kind: HitKind
    id: str
    score: Optional[float]
    relevance: float
    content: str
    user_id: str = Field(alias="userId")
    session_id: Optional[str] = Field(alias="sessionId")
    conversation_time: Optional[datetime] = Field(alias="conversationTime")
    speaker: Optional[str]
    replaced_at: Optional[datetime] = Field(alias="replacedAt")
    reviewed: Optional[bool]
    cited: bool
    text: str


class Prompt(BaseModel):
    query: Optional[str]
    prompt: str
    tokens: "PromptTokens"


class PromptTokens(BaseModel):
    window: int
    memories: int
    prompt: int
    tokenizer: str


class Turn(BaseModel):
    id: str
    role: str
    speaker: str
    content: str
    created_at: datetime = Field(alias="createdAt")


class Context(Prompt):
    window: list["ContextWindow"]
    memories: list["ContextMemories"]


class ContextWindow(Turn):
    pass


class ContextMemories(Hit):
    pass


class Fact(BaseModel):
    id: str
    content: str
    status: KnowledgeStatus
    reviewed: bool
    said_at: Optional[datetime] = Field(alias="saidAt")
    source_session_id: Optional[str] = Field(alias="sourceSessionId")
    user_id: Optional[str] = Field(alias="userId")
    created_at: datetime = Field(alias="createdAt")
    updated_at: datetime = Field(alias="updatedAt")


class ForgetUserResult(BaseModel):
    deleted_messages: int = Field(alias="deletedMessages")
    sessions: int
    summaries: int
    knowledge: int
    diaries: int


class Problems(BaseModel):
    messages: list["ProblemsMessages"]


class ProblemsMessages(BaseModel):
    kind: OperationMessageKind
    field: Optional[str]
    message: str
    code: Optional[str]


class SearchResult(BaseModel):
    answer: Optional[str]
    answer_mode: str = Field(alias="answerMode")
    found: Optional[bool]
    hits: list["SearchResultHits"]


class SearchResultHits(Hit):
    pass


class UserToken(BaseModel):
    token: str
    user_id: str = Field(alias="userId")
    expires_at: datetime = Field(alias="expiresAt")


AddMessagesResult.model_rebuild()
Backlog.model_rebuild()
Hit.model_rebuild()
Prompt.model_rebuild()
Turn.model_rebuild()
Context.model_rebuild()
Fact.model_rebuild()
ForgetUserResult.model_rebuild()
Problems.model_rebuild()
SearchResult.model_rebuild()
UserToken.model_rebuild()
