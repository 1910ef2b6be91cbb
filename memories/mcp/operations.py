"""The GraphQL operations behind the MCP tools, one per tool: each tool's answer is its field's data.

They are documents of the public API (``docs/api.md``), run in-process against the schema, so a
tool answers exactly what a GraphQL client sending the same document and variables gets. Each
mutation-style field selects ``OperationInfo`` too: refused input comes back as its messages.
"""

from __future__ import annotations

__all__ = ["ADD_FACT", "ADD_MESSAGES", "BACKLOG", "CONTEXT", "CORRECT_FACT", "FORGET_FACT", "LIST_FACTS", "SEARCH"]

_REFUSED = "... on OperationInfo { messages { kind field message code } }"

_CONTEXT_FIELDS = """
fragment ContextFields on Context {
  query
  window { id role speaker content createdAt }
  memories { kind id score sessionId conversationTime speaker content replacedAt reviewed }
  prompt
  tokens { window memories prompt tokenizer }
}
"""

_FACT_FIELDS = """
fragment FactFields on Knowledge {
  id userId content status reviewed saidAt sourceSessionId createdAt updatedAt
}
"""

ADD_MESSAGES = f"""
mutation AddMessages(
  $userId: String!, $sessionId: String!, $channel: String!, $messages: [MessageInput!]!,
  $withContext: Boolean!, $windowTurns: Int, $maxTokens: Int
) {{
  addMessages(userId: $userId, sessionId: $sessionId, channel: $channel, messages: $messages) {{
    __typename
    ... on AddMessagesResult {{
      skipped
      session {{ sessionId channel }}
      messages {{ id role createdAt externalId }}
      context(windowTurns: $windowTurns, maxTokens: $maxTokens) @include(if: $withContext) {{ ...ContextFields }}
    }}
    {_REFUSED}
  }}
}}
{_CONTEXT_FIELDS}
"""

CONTEXT = f"""
query Context($input: ContextInput!) {{
  context(input: $input) {{
    __typename
    ...ContextFields
    {_REFUSED}
  }}
}}
{_CONTEXT_FIELDS}
"""

SEARCH = f"""
query Search($input: SearchInput!) {{
  search(input: $input) {{
    __typename
    ... on SearchResult {{
      answer answerMode found
      hits {{ kind id score sessionId conversationTime speaker content cited replacedAt reviewed }}
    }}
    {_REFUSED}
  }}
}}
"""

LIST_FACTS = f"""
query Facts($userId: String!, $shared: Boolean!, $status: KnowledgeStatus!, $limit: Int!, $offset: Int!) {{
  knowledge(userId: $userId, shared: $shared, status: $status, pagination: {{limit: $limit, offset: $offset}}) {{
    totalCount
    results {{ ...FactFields }}
  }}
}}
{_FACT_FIELDS}
"""

ADD_FACT = f"""
mutation AddFact($userId: String!, $content: String!) {{
  addKnowledge(userId: $userId, content: $content) {{ __typename ...FactFields {_REFUSED} }}
}}
{_FACT_FIELDS}
"""

CORRECT_FACT = f"""
mutation CorrectFact($userId: String!, $id: ID!, $content: String!) {{
  updateKnowledge(userId: $userId, id: $id, content: $content) {{ __typename ...FactFields {_REFUSED} }}
}}
{_FACT_FIELDS}
"""

FORGET_FACT = f"""
mutation ForgetFact($userId: String!, $id: ID!) {{
  deleteKnowledge(userId: $userId, id: $id) {{ __typename ... on DeleteKnowledgeResult {{ deletedId }} {_REFUSED} }}
}}
"""

BACKLOG = """
query Backlog($userId: String!) {
  backlog(userId: $userId) {
    allProcessed messagesWaitingForVector messagesWaitingForFacts sessionsWaitingForSummary { sessionId dueAt }
  }
}
"""
