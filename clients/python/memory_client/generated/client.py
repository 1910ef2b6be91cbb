from typing import Any, Optional, Union

from .add_fact import AddFact
from .add_messages import AddMessages
from .add_messages_with_context import AddMessagesWithContext
from .add_messages_with_prompt import AddMessagesWithPrompt
from .approve_fact import ApproveFact
from .base_client import BaseClient
from .base_model import UNSET, UnsetType
from .correct_fact import CorrectFact
from .create_summaries import CreateSummaries
from .create_user_token import CreateUserToken
from .enums import KnowledgeStatus
from .export_user import ExportUser
from .facts import Facts
from .forget_fact import ForgetFact
from .forget_user import ForgetUser
from .get_backlog import GetBacklog
from .get_context import GetContext
from .input_types import ContextInput, MessageInput, OffsetPaginationInput, SearchInput
from .reject_fact import RejectFact
from .search import Search


def gql(q: str) -> str:
    return q


class GeneratedClient(BaseClient):
    def add_fact(self, user_id: str, content: str, **kwargs: Any) -> AddFact:
        query = gql("""
            mutation AddFact($userId: String!, $content: String!) {
              addKnowledge(userId: $userId, content: $content) {
                __typename
                ... on Knowledge {
                  ...Fact
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment Fact on Knowledge {
              id
              content
              status
              reviewed
              saidAt
              sourceSessionId
              userId
              createdAt
              updatedAt
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }
            """)
        variables: dict[str, object] = {"userId": user_id, "content": content}
        response = self.execute(
            query=query, operation_name="AddFact", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return AddFact.model_validate(data)

    def add_messages(
        self,
        user_id: str,
        session_id: str,
        messages: list[MessageInput],
        channel: str,
        **kwargs: Any,
    ) -> AddMessages:
        query = gql("""
            mutation AddMessages($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $channel: String! = "") {
              addMessages(
                userId: $userId
                sessionId: $sessionId
                messages: $messages
                channel: $channel
              ) {
                __typename
                ... on AddMessagesResult {
                  ...AddMessagesResult
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment AddMessagesResult on AddMessagesResult {
              skipped
              messages {
                id
                role
                content
                createdAt
                externalId
              }
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }
            """)
        variables: dict[str, object] = {
            "userId": user_id,
            "sessionId": session_id,
            "messages": messages,
            "channel": channel,
        }
        response = self.execute(
            query=query, operation_name="AddMessages", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return AddMessages.model_validate(data)

    def add_messages_with_context(
        self,
        user_id: str,
        session_id: str,
        messages: list[MessageInput],
        channel: str,
        include_other_sessions: bool,
        include_shared: bool,
        window_turns: Union[Optional[int], UnsetType] = UNSET,
        max_tokens: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> AddMessagesWithContext:
        query = gql("""
            mutation AddMessagesWithContext($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $channel: String! = "", $windowTurns: Int, $maxTokens: Int, $includeOtherSessions: Boolean! = true, $includeShared: Boolean! = false) {
              addMessages(
                userId: $userId
                sessionId: $sessionId
                messages: $messages
                channel: $channel
              ) {
                __typename
                ... on AddMessagesResult {
                  context(
                    windowTurns: $windowTurns
                    maxTokens: $maxTokens
                    includeOtherSessions: $includeOtherSessions
                    includeShared: $includeShared
                  ) {
                    ...Context
                  }
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment Context on Context {
              ...Prompt
              window {
                ...Turn
              }
              memories {
                ...Hit
              }
            }

            fragment Hit on Hit {
              kind
              id
              score
              relevance
              content
              userId
              sessionId
              conversationTime
              speaker
              replacedAt
              reviewed
              cited
              text
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }

            fragment Prompt on Context {
              query
              prompt
              tokens {
                window
                memories
                prompt
                tokenizer
              }
            }

            fragment Turn on Turn {
              id
              role
              speaker
              content
              createdAt
            }
            """)
        variables: dict[str, object] = {
            "userId": user_id,
            "sessionId": session_id,
            "messages": messages,
            "channel": channel,
            "windowTurns": window_turns,
            "maxTokens": max_tokens,
            "includeOtherSessions": include_other_sessions,
            "includeShared": include_shared,
        }
        response = self.execute(
            query=query,
            operation_name="AddMessagesWithContext",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return AddMessagesWithContext.model_validate(data)

    def add_messages_with_prompt(
        self,
        user_id: str,
        session_id: str,
        messages: list[MessageInput],
        channel: str,
        include_other_sessions: bool,
        include_shared: bool,
        window_turns: Union[Optional[int], UnsetType] = UNSET,
        max_tokens: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> AddMessagesWithPrompt:
        query = gql("""
            mutation AddMessagesWithPrompt($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $channel: String! = "", $windowTurns: Int, $maxTokens: Int, $includeOtherSessions: Boolean! = true, $includeShared: Boolean! = false) {
              addMessages(
                userId: $userId
                sessionId: $sessionId
                messages: $messages
                channel: $channel
              ) {
                __typename
                ... on AddMessagesResult {
                  context(
                    windowTurns: $windowTurns
                    maxTokens: $maxTokens
                    includeOtherSessions: $includeOtherSessions
                    includeShared: $includeShared
                  ) {
                    ...Prompt
                  }
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }

            fragment Prompt on Context {
              query
              prompt
              tokens {
                window
                memories
                prompt
                tokenizer
              }
            }
            """)
        variables: dict[str, object] = {
            "userId": user_id,
            "sessionId": session_id,
            "messages": messages,
            "channel": channel,
            "windowTurns": window_turns,
            "maxTokens": max_tokens,
            "includeOtherSessions": include_other_sessions,
            "includeShared": include_shared,
        }
        response = self.execute(
            query=query,
            operation_name="AddMessagesWithPrompt",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return AddMessagesWithPrompt.model_validate(data)

    def approve_fact(self, user_id: str, id: str, **kwargs: Any) -> ApproveFact:
        query = gql("""
            mutation ApproveFact($userId: String!, $id: ID!) {
              approveKnowledge(userId: $userId, id: $id) {
                __typename
                ... on Knowledge {
                  ...Fact
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment Fact on Knowledge {
              id
              content
              status
              reviewed
              saidAt
              sourceSessionId
              userId
              createdAt
              updatedAt
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }
            """)
        variables: dict[str, object] = {"userId": user_id, "id": id}
        response = self.execute(
            query=query, operation_name="ApproveFact", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return ApproveFact.model_validate(data)

    def correct_fact(
        self, user_id: str, id: str, content: str, **kwargs: Any
    ) -> CorrectFact:
        query = gql("""
            mutation CorrectFact($userId: String!, $id: ID!, $content: String!) {
              updateKnowledge(userId: $userId, id: $id, content: $content) {
                __typename
                ... on Knowledge {
                  ...Fact
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment Fact on Knowledge {
              id
              content
              status
              reviewed
              saidAt
              sourceSessionId
              userId
              createdAt
              updatedAt
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }
            """)
        variables: dict[str, object] = {"userId": user_id, "id": id, "content": content}
        response = self.execute(
            query=query, operation_name="CorrectFact", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return CorrectFact.model_validate(data)

    def create_summaries(
        self,
        user_id: str,
        overwrite: bool,
        session_id: Union[Optional[str], UnsetType] = UNSET,
        max_count: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> CreateSummaries:
        query = gql("""
            mutation CreateSummaries($userId: String!, $sessionId: String, $overwrite: Boolean! = false, $maxCount: Int) {
              createSummaries(
                userId: $userId
                sessionId: $sessionId
                overwrite: $overwrite
                maxCount: $maxCount
              ) {
                __typename
                ... on QueuedSummariesResult {
                  queuedSessionIds
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }
            """)
        variables: dict[str, object] = {
            "userId": user_id,
            "sessionId": session_id,
            "overwrite": overwrite,
            "maxCount": max_count,
        }
        response = self.execute(
            query=query, operation_name="CreateSummaries", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return CreateSummaries.model_validate(data)

    def create_user_token(
        self,
        user_id: str,
        ttl_seconds: Union[Optional[int], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> CreateUserToken:
        query = gql("""
            mutation CreateUserToken($userId: String!, $ttlSeconds: Int) {
              createUserToken(userId: $userId, ttlSeconds: $ttlSeconds) {
                __typename
                ... on UserToken {
                  ...UserToken
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }

            fragment UserToken on UserToken {
              token
              userId
              expiresAt
            }
            """)
        variables: dict[str, object] = {"userId": user_id, "ttlSeconds": ttl_seconds}
        response = self.execute(
            query=query, operation_name="CreateUserToken", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return CreateUserToken.model_validate(data)

    def export_user(self, user_id: str, **kwargs: Any) -> ExportUser:
        query = gql("""
            query ExportUser($userId: String!) {
              exportUser(userId: $userId)
            }
            """)
        variables: dict[str, object] = {"userId": user_id}
        response = self.execute(
            query=query, operation_name="ExportUser", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return ExportUser.model_validate(data)

    def facts(
        self,
        user_id: str,
        status: KnowledgeStatus,
        pagination: Union[Optional[OffsetPaginationInput], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Facts:
        query = gql("""
            query Facts($userId: String!, $status: KnowledgeStatus! = ACTIVE, $pagination: OffsetPaginationInput) {
              knowledge(userId: $userId, status: $status, pagination: $pagination) {
                totalCount
                results {
                  ...Fact
                }
              }
            }

            fragment Fact on Knowledge {
              id
              content
              status
              reviewed
              saidAt
              sourceSessionId
              userId
              createdAt
              updatedAt
            }
            """)
        variables: dict[str, object] = {
            "userId": user_id,
            "status": status,
            "pagination": pagination,
        }
        response = self.execute(
            query=query, operation_name="Facts", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Facts.model_validate(data)

    def forget_fact(self, user_id: str, id: str, **kwargs: Any) -> ForgetFact:
        query = gql("""
            mutation ForgetFact($userId: String!, $id: ID!) {
              deleteKnowledge(userId: $userId, id: $id) {
                __typename
                ... on DeleteKnowledgeResult {
                  deletedId
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }
            """)
        variables: dict[str, object] = {"userId": user_id, "id": id}
        response = self.execute(
            query=query, operation_name="ForgetFact", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return ForgetFact.model_validate(data)

    def forget_user(self, user_id: str, **kwargs: Any) -> ForgetUser:
        query = gql("""
            mutation ForgetUser($userId: String!) {
              forgetUser(userId: $userId) {
                __typename
                ... on ForgetUserResult {
                  ...ForgetUserResult
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment ForgetUserResult on ForgetUserResult {
              deletedMessages: messages
              sessions
              summaries
              knowledge
              diaries
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }
            """)
        variables: dict[str, object] = {"userId": user_id}
        response = self.execute(
            query=query, operation_name="ForgetUser", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return ForgetUser.model_validate(data)

    def get_backlog(self, user_id: str, **kwargs: Any) -> GetBacklog:
        query = gql("""
            query GetBacklog($userId: String!) {
              backlog(userId: $userId) {
                ...Backlog
              }
            }

            fragment Backlog on Backlog {
              messagesWaitingForVector
              messagesWaitingForFacts
              allProcessed
              sessionsWaitingForSummary {
                sessionId
                dueAt
              }
            }
            """)
        variables: dict[str, object] = {"userId": user_id}
        response = self.execute(
            query=query, operation_name="GetBacklog", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return GetBacklog.model_validate(data)

    def get_context(self, input: ContextInput, **kwargs: Any) -> GetContext:
        query = gql("""
            query GetContext($input: ContextInput!) {
              context(input: $input) {
                __typename
                ... on Context {
                  ...Context
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment Context on Context {
              ...Prompt
              window {
                ...Turn
              }
              memories {
                ...Hit
              }
            }

            fragment Hit on Hit {
              kind
              id
              score
              relevance
              content
              userId
              sessionId
              conversationTime
              speaker
              replacedAt
              reviewed
              cited
              text
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }

            fragment Prompt on Context {
              query
              prompt
              tokens {
                window
                memories
                prompt
                tokenizer
              }
            }

            fragment Turn on Turn {
              id
              role
              speaker
              content
              createdAt
            }
            """)
        variables: dict[str, object] = {"input": input}
        response = self.execute(
            query=query, operation_name="GetContext", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return GetContext.model_validate(data)

    def reject_fact(self, user_id: str, id: str, **kwargs: Any) -> RejectFact:
        query = gql("""
            mutation RejectFact($userId: String!, $id: ID!) {
              rejectKnowledge(userId: $userId, id: $id) {
                __typename
                ... on Knowledge {
                  ...Fact
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment Fact on Knowledge {
              id
              content
              status
              reviewed
              saidAt
              sourceSessionId
              userId
              createdAt
              updatedAt
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }
            """)
        variables: dict[str, object] = {"userId": user_id, "id": id}
        response = self.execute(
            query=query, operation_name="RejectFact", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return RejectFact.model_validate(data)

    def search(self, input: SearchInput, **kwargs: Any) -> Search:
        query = gql("""
            query Search($input: SearchInput!) {
              search(input: $input) {
                __typename
                ... on SearchResult {
                  ...SearchResult
                }
                ... on OperationInfo {
                  ...Problems
                }
              }
            }

            fragment Hit on Hit {
              kind
              id
              score
              relevance
              content
              userId
              sessionId
              conversationTime
              speaker
              replacedAt
              reviewed
              cited
              text
            }

            fragment Problems on OperationInfo {
              messages {
                kind
                field
                message
                code
              }
            }

            fragment SearchResult on SearchResult {
              answer
              answerMode
              found
              hits {
                ...Hit
              }
            }
            """)
        variables: dict[str, object] = {"input": input}
        response = self.execute(
            query=query, operation_name="Search", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Search.model_validate(data)
