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
from .base_client import BaseClient
from .base_model import BaseModel
from .client import GeneratedClient
from .enums import HitKind, KnowledgeStatus, OperationMessageKind
from .exceptions import (
    GraphQLClientError,
    GraphQLClientGraphQLError,
    GraphQLClientGraphQLMultiError,
    GraphQLClientHttpError,
    GraphQLClientInvalidResponseError,
)
from .facts import Facts, FactsKnowledge, FactsKnowledgeResults
from .forget_user import (
    ForgetUser,
    ForgetUserForgetUserForgetUserResult,
    ForgetUserForgetUserOperationInfo,
)
from .fragments import (
    AddMessagesResult,
    AddMessagesResultMessages,
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
)
from .get_context import (
    GetContext,
    GetContextContextContext,
    GetContextContextOperationInfo,
)
from .input_types import ContextInput, MessageInput, OffsetPaginationInput, SearchInput
from .search import Search, SearchSearchOperationInfo, SearchSearchSearchResult

__all__ = [
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
    "BaseClient",
    "BaseModel",
    "Context",
    "ContextInput",
    "ContextMemories",
    "ContextWindow",
    "Fact",
    "Facts",
    "FactsKnowledge",
    "FactsKnowledgeResults",
    "ForgetUser",
    "ForgetUserForgetUserForgetUserResult",
    "ForgetUserForgetUserOperationInfo",
    "ForgetUserResult",
    "GeneratedClient",
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
    "Search",
    "SearchInput",
    "SearchResult",
    "SearchResultHits",
    "SearchSearchOperationInfo",
    "SearchSearchSearchResult",
    "Turn",
]
