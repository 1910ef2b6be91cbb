"""GraphQL ``Mutation``: writes. Resolvers only call services."""

from __future__ import annotations

from datetime import date

import strawberry
from django.core.exceptions import ValidationError
from strawberry.scalars import JSON

from memories.graphql.fields import mutation
from memories.graphql.inputs import MessageInput
from memories.graphql.permissions import scope_of
from memories.graphql.types import (
    AddMessagesResult,
    DeleteAllResult,
    DeleteDiaryResult,
    DeleteHistoryResult,
    DeleteKnowledgeResult,
    DeleteSummariesResult,
    DiaryType,
    ForgetUserResult,
    KnowledgeType,
    QueuedSummariesResult,
    UserTokenType,
)
from memories.services.diaries import diaries_delete_all, diary_delete, diary_upsert
from memories.services.history import history_delete, user_forget
from memories.services.knowledge import (
    knowledge_add,
    knowledge_delete,
    knowledge_delete_all,
    knowledge_review,
    knowledge_update,
)
from memories.services.messages import MessageIn, messages_add
from memories.services.summaries import summaries_delete, summaries_request
from memories.services.user_tokens import user_token_create

__all__ = ["Mutation"]


def _knowledge_id(value: strawberry.ID) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValidationError({"id": [f"{value!r} is not a knowledge id."]}) from None


@strawberry.type
class Mutation:
    @mutation(
        description="Store messages of a session in one transaction; embedding and summaries follow in the worker.",
    )
    def add_messages(
        self, user_id: str, session_id: str, messages: list[MessageInput], channel: str = ""
    ) -> AddMessagesResult:
        added = messages_add(
            user_external_id=user_id,
            session_external_id=session_id,
            channel=channel,
            messages=[
                MessageIn(
                    role=m.role,
                    content=m.content,
                    created_at=m.created_at,
                    metadata=m.metadata if m.metadata is not None else {},
                    external_id=m.external_id or "",
                )
                for m in messages
            ],
        )
        return AddMessagesResult(session=added.session, messages=added.messages, skipped=added.skipped)  # type: ignore[arg-type]

    @mutation(
        description="Delete a user's messages (all, one session's or one channel's) and the summaries built on them.",
    )
    def delete_history(
        self, user_id: str, session_id: str | None = None, channel: str | None = None
    ) -> DeleteHistoryResult:
        deleted = history_delete(user_external_id=user_id, session_external_id=session_id, channel=channel)
        return DeleteHistoryResult(
            deleted_messages=deleted.messages,
            deleted_sessions=deleted.sessions,
            deleted_summaries=deleted.summaries,
            resummarized_session_ids=deleted.resummarized_session_ids,
        )

    @mutation(
        description="Summarise now (not when idle) a user's sessions lacking a current summary (all of them with "
        "`overwrite`; at most `maxCount`, the most recently active first).",
    )
    def create_summaries(
        self, user_id: str, session_id: str | None = None, overwrite: bool = False, max_count: int | None = None
    ) -> QueuedSummariesResult:
        queued = summaries_request(
            user_external_id=user_id, session_external_id=session_id, overwrite=overwrite, max_count=max_count
        )
        return QueuedSummariesResult(queued_session_ids=queued)

    @mutation(
        description=(
            "Delete a user's summaries (all or one session's). Summaries are derived from messages: the "
            "sweep writes a deleted one again once its session is idle; deleteHistory removes the words for good."
        ),
    )
    def delete_summaries(self, user_id: str, session_id: str | None = None) -> DeleteSummariesResult:
        return DeleteSummariesResult(
            deleted_summaries=summaries_delete(user_external_id=user_id, session_external_id=session_id)
        )

    @mutation(
        description="Add a fact for a user, or shared (system-wide) knowledge when userId is omitted.",
    )
    def add_knowledge(self, content: str, user_id: str | None = None) -> KnowledgeType:
        return knowledge_add(user_external_id=user_id, content=content)  # type: ignore[return-value]

    @mutation(
        description="Change a fact's text (it is embedded again). Omit userId for shared. "
        "A candidate's text needs an API key that may curate."
    )
    def update_knowledge(
        self,
        info: strawberry.Info,
        id: strawberry.ID,
        content: str,
        user_id: str | None = None,
    ) -> KnowledgeType:
        return knowledge_update(  # type: ignore[return-value]
            knowledge_id=_knowledge_id(id),
            user_external_id=user_id,
            content=content,
            candidates=scope_of(info).may_curate,
        )

    @mutation(
        description="Approve a user's fact awaiting review (raised from a conversation, not reviewed yet): it is "
        "marked reviewed, and a candidate becomes active (or superseded, when its slot holds a fact said later). "
        "Needs an API key that may curate."
    )
    def approve_knowledge(self, id: strawberry.ID, user_id: str) -> KnowledgeType:
        return knowledge_review(knowledge_id=_knowledge_id(id), user_external_id=user_id, approve=True)  # type: ignore[return-value]

    @mutation(
        description="Reject a user's fact awaiting review: kept for the record, never searched, never raised "
        "again; the fact it had replaced in its slot is current again. Needs an API key that may curate."
    )
    def reject_knowledge(self, id: strawberry.ID, user_id: str) -> KnowledgeType:
        return knowledge_review(knowledge_id=_knowledge_id(id), user_external_id=user_id, approve=False)  # type: ignore[return-value]

    @mutation(description="Delete a fact. Omit userId for shared.")
    def delete_knowledge(self, id: strawberry.ID, user_id: str | None = None) -> DeleteKnowledgeResult:
        deleted = knowledge_delete(knowledge_id=_knowledge_id(id), user_external_id=user_id)
        return DeleteKnowledgeResult(deleted_id=strawberry.ID(str(deleted)))

    @mutation(description="Delete every fact of a user.")
    def delete_all_knowledge(self, user_id: str) -> DeleteAllResult:
        return DeleteAllResult(deleted=knowledge_delete_all(user_external_id=user_id))

    @mutation(description="Delete every diary entry of a user.")
    def delete_all_diaries(self, user_id: str) -> DeleteAllResult:
        return DeleteAllResult(deleted=diaries_delete_all(user_external_id=user_id))

    @mutation(description="Create or replace a user's diary entry for a date.")
    def upsert_diary(self, user_id: str, diary_date: date, content: str, metadata: JSON | None = None) -> DiaryType:
        return diary_upsert(  # type: ignore[return-value]
            user_external_id=user_id, diary_date=diary_date, content=content, metadata=metadata
        )

    @mutation(description="Delete a user's diary entry for a date.")
    def delete_diary(self, user_id: str, diary_date: date) -> DeleteDiaryResult:
        return DeleteDiaryResult(deleted=diary_delete(user_external_id=user_id, diary_date=diary_date))

    @mutation(
        description="Remove every row of a user (messages, sessions, summaries, knowledge, diaries) at once.",
    )
    def forget_user(self, user_id: str) -> ForgetUserResult:
        forgotten = user_forget(user_external_id=user_id)
        return ForgetUserResult(
            messages=forgotten.messages,
            sessions=forgotten.sessions,
            summaries=forgotten.summaries,
            knowledge=forgotten.knowledge,
            diaries=forgotten.diaries,
        )

    @mutation(
        description="A backend holding an API key mints a short-lived token for one end user, to hand to that "
        "user's browser: it acts on userId only, with the same rules as a key scoped to that user, never curates, "
        "and expires after ttlSeconds (default USER_TOKEN_SECONDS). Needs an API key (a token cannot mint one)."
    )
    def create_user_token(self, info: strawberry.Info, user_id: str, ttl_seconds: int | None = None) -> UserTokenType:
        minted = user_token_create(
            api_key_id=scope_of(info).api_key_id, user_external_id=user_id, ttl_seconds=ttl_seconds
        )
        return UserTokenType(token=minted.token, user_id=minted.user_external_id, expires_at=minted.expires_at)
