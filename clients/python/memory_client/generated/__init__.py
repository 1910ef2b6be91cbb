from .add_fact import (
    AddFact,
    AddFactAddKnowledgeKnowledge,
    AddFactAddKnowledgeOperationInfo,
)
from .add_messages import (
    AddMessages,
    AddMessagesAddMessagesAddMessagesResult,
    AddMessagesAddMessagesOperationInfo,
)
from .add_messages_with_context import (
    AddMessagesWithContext,
    AddMessagesWithContextAddMessagesAddMessagesResult,
    AddMessagesWithContextAddMessagesAddMessagesResultContext,
    AddMessagesWithContextAddMessagesOperationInfo,
)
from .add_messages_with_prompt import (
    AddMessagesWithPrompt,
    AddMessagesWithPromptAddMessagesAddMessagesResult,
    AddMessagesWithPromptAddMessagesAddMessagesResultContext,
    AddMessagesWithPromptAddMessagesOperationInfo,
)
from .approve_fact import (
    ApproveFact,
    ApproveFactApproveKnowledgeKnowledge,
    ApproveFactApproveKnowledgeOperationInfo,
)
from .base_client import BaseClient
from .base_model import BaseModel
from .client import GeneratedClient
from .correct_fact import (
    CorrectFact,
    CorrectFactUpdateKnowledgeKnowledge,
    CorrectFactUpdateKnowledgeOperationInfo,
)
from .create_summaries import (
    CreateSummaries,
    CreateSummariesCreateSummariesOperationInfo,
    CreateSummariesCreateSummariesQueuedSummariesResult,
)
from .create_user_token import (
    CreateUserToken,
    CreateUserTokenCreateUserTokenOperationInfo,
    CreateUserTokenCreateUserTokenUserToken,
)
from .enums import HitKind, KnowledgeStatus, OperationMessageKind
from .exceptions import (
    GraphQLClientError,
    GraphQLClientGraphQLError,
    GraphQLClientGraphQLMultiError,
    GraphQLClientHttpError,
    GraphQLClientInvalidResponseError,
)
from .export_user import ExportUser
from .facts import Facts, FactsKnowledge, FactsKnowledgeResults
from .forget_fact import (
    ForgetFact,
    ForgetFactDeleteKnowledgeDeleteKnowledgeResult,
    ForgetFactDeleteKnowledgeOperationInfo,
)
from .forget_user import (
    ForgetUser,
    ForgetUserForgetUserForgetUserResult,
    ForgetUserForgetUserOperationInfo,
)
from .fragments import (
    AddMessagesResult,
    AddMessagesResultMessages,
    Backlog,
    BacklogSessionsWaitingForSummary,
    Context,
    ContextMemories,
    ContextWindow,
    Fact,
    ForgetUserResult,
    Hit,
    Problems,
    ProblemsMessages,
    Prompt,
    PromptTokens,
    SearchResult,
    SearchResultHits,
    Turn,
    UserToken,
)
from .get_backlog import GetBacklog, GetBacklogBacklog
from .get_context import (
    GetContext,
    GetContextContextContext,
    GetContextContextOperationInfo,
)
from .input_types import ContextInput, MessageInput, OffsetPaginationInput, SearchInput
from .reject_fact import (
    RejectFact,
    RejectFactRejectKnowledgeKnowledge,
    RejectFactRejectKnowledgeOperationInfo,
)
from .search import Search, SearchSearchOperationInfo, SearchSearchSearchResult

__all__ = [
    "AddFact",
    "AddFactAddKnowledgeKnowledge",
    "AddFactAddKnowledgeOperationInfo",
    "AddMessages",
    "AddMessagesAddMessagesAddMessagesResult",
    "AddMessagesAddMessagesOperationInfo",
    "AddMessagesResult",
    "AddMessagesResultMessages",
    "AddMessagesWithContext",
    "AddMessagesWithContextAddMessagesAddMessagesResult",
    "AddMessagesWithContextAddMessagesAddMessagesResultContext",
    "AddMessagesWithContextAddMessagesOperationInfo",
    "AddMessagesWithPrompt",
    "AddMessagesWithPromptAddMessagesAddMessagesResult",
    "AddMessagesWithPromptAddMessagesAddMessagesResultContext",
    "AddMessagesWithPromptAddMessagesOperationInfo",
    "ApproveFact",
    "ApproveFactApproveKnowledgeKnowledge",
    "ApproveFactApproveKnowledgeOperationInfo",
    "Backlog",
    "BacklogSessionsWaitingForSummary",
    "BaseClient",
    "BaseModel",
    "Context",
    "ContextInput",
    "ContextMemories",
    "ContextWindow",
    "CorrectFact",
    "CorrectFactUpdateKnowledgeKnowledge",
    "CorrectFactUpdateKnowledgeOperationInfo",
    "CreateSummaries",
    "CreateSummariesCreateSummariesOperationInfo",
    "CreateSummariesCreateSummariesQueuedSummariesResult",
    "CreateUserToken",
    "CreateUserTokenCreateUserTokenOperationInfo",
    "CreateUserTokenCreateUserTokenUserToken",
    "ExportUser",
    "Fact",
    "Facts",
    "FactsKnowledge",
    "FactsKnowledgeResults",
    "ForgetFact",
    "ForgetFactDeleteKnowledgeDeleteKnowledgeResult",
    "ForgetFactDeleteKnowledgeOperationInfo",
    "ForgetUser",
    "ForgetUserForgetUserForgetUserResult",
    "ForgetUserForgetUserOperationInfo",
    "ForgetUserResult",
    "GeneratedClient",
    "GetBacklog",
    "GetBacklogBacklog",
    "GetContext",
    "GetContextContextContext",
    "GetContextContextOperationInfo",
    "GraphQLClientError",
    "GraphQLClientGraphQLError",
    "GraphQLClientGraphQLMultiError",
    "GraphQLClientHttpError",
    "GraphQLClientInvalidResponseError",
    "Hit",
    "HitKind",
    "KnowledgeStatus",
    "MessageInput",
    "OffsetPaginationInput",
    "OperationMessageKind",
    "Problems",
    "ProblemsMessages",
    "Prompt",
    "PromptTokens",
    "RejectFact",
    "RejectFactRejectKnowledgeKnowledge",
    "RejectFactRejectKnowledgeOperationInfo",
    "Search",
    "SearchInput",
    "SearchResult",
    "SearchResultHits",
    "SearchSearchOperationInfo",
    "SearchSearchSearchResult",
    "Turn",
    "UserToken",
]
