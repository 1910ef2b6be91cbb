/* eslint-disable */
import * as types from './graphql.js';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "mutation AddFact($userId: String!, $content: String!) {\n  addKnowledge(userId: $userId, content: $content) {\n    __typename\n    ... on Knowledge {\n      ...Fact\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.AddFactDocument,
    "mutation AddMessages($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $channel: String! = \"\") {\n  addMessages(\n    userId: $userId\n    sessionId: $sessionId\n    messages: $messages\n    channel: $channel\n  ) {\n    __typename\n    ... on AddMessagesResult {\n      ...AddMessagesResult\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.AddMessagesDocument,
    "mutation AddMessagesWithContext($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $channel: String! = \"\", $windowTurns: Int, $maxTokens: Int, $includeOtherSessions: Boolean! = true, $includeShared: Boolean! = false) {\n  addMessages(\n    userId: $userId\n    sessionId: $sessionId\n    messages: $messages\n    channel: $channel\n  ) {\n    __typename\n    ... on AddMessagesResult {\n      context(\n        windowTurns: $windowTurns\n        maxTokens: $maxTokens\n        includeOtherSessions: $includeOtherSessions\n        includeShared: $includeShared\n      ) {\n        ...Context\n      }\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.AddMessagesWithContextDocument,
    "mutation AddMessagesWithPrompt($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $channel: String! = \"\", $windowTurns: Int, $maxTokens: Int, $includeOtherSessions: Boolean! = true, $includeShared: Boolean! = false) {\n  addMessages(\n    userId: $userId\n    sessionId: $sessionId\n    messages: $messages\n    channel: $channel\n  ) {\n    __typename\n    ... on AddMessagesResult {\n      context(\n        windowTurns: $windowTurns\n        maxTokens: $maxTokens\n        includeOtherSessions: $includeOtherSessions\n        includeShared: $includeShared\n      ) {\n        ...Prompt\n      }\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.AddMessagesWithPromptDocument,
    "mutation ApproveFact($userId: String!, $id: ID!) {\n  approveKnowledge(userId: $userId, id: $id) {\n    __typename\n    ... on Knowledge {\n      ...Fact\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.ApproveFactDocument,
    "mutation CorrectFact($userId: String!, $id: ID!, $content: String!) {\n  updateKnowledge(userId: $userId, id: $id, content: $content) {\n    __typename\n    ... on Knowledge {\n      ...Fact\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.CorrectFactDocument,
    "mutation CreateSummaries($userId: String!, $sessionId: String, $overwrite: Boolean! = false, $maxCount: Int) {\n  createSummaries(\n    userId: $userId\n    sessionId: $sessionId\n    overwrite: $overwrite\n    maxCount: $maxCount\n  ) {\n    __typename\n    ... on QueuedSummariesResult {\n      queuedSessionIds\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.CreateSummariesDocument,
    "mutation CreateUserToken($userId: String!, $ttlSeconds: Int) {\n  createUserToken(userId: $userId, ttlSeconds: $ttlSeconds) {\n    __typename\n    ... on UserToken {\n      ...UserToken\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.CreateUserTokenDocument,
    "query ExportUser($userId: String!) {\n  exportUser(userId: $userId)\n}": typeof types.ExportUserDocument,
    "query Facts($userId: String!, $status: KnowledgeStatus! = ACTIVE, $pagination: OffsetPaginationInput) {\n  knowledge(userId: $userId, status: $status, pagination: $pagination) {\n    totalCount\n    results {\n      ...Fact\n    }\n  }\n}": typeof types.FactsDocument,
    "mutation ForgetFact($userId: String!, $id: ID!) {\n  deleteKnowledge(userId: $userId, id: $id) {\n    __typename\n    ... on DeleteKnowledgeResult {\n      deletedId\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.ForgetFactDocument,
    "mutation ForgetUser($userId: String!) {\n  forgetUser(userId: $userId) {\n    __typename\n    ... on ForgetUserResult {\n      ...ForgetUserResult\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.ForgetUserDocument,
    "fragment Problems on OperationInfo {\n  messages {\n    kind\n    field\n    message\n    code\n  }\n}\n\nfragment Turn on Turn {\n  id\n  role\n  speaker\n  content\n  createdAt\n}\n\nfragment Hit on Hit {\n  kind\n  id\n  score\n  relevance\n  content\n  userId\n  sessionId\n  conversationTime\n  speaker\n  replacedAt\n  reviewed\n  cited\n  text\n}\n\nfragment Prompt on Context {\n  query\n  prompt\n  tokens {\n    window\n    memories\n    prompt\n    tokenizer\n  }\n}\n\nfragment Context on Context {\n  ...Prompt\n  window {\n    ...Turn\n  }\n  memories {\n    ...Hit\n  }\n}\n\nfragment SearchResult on SearchResult {\n  answer\n  answerMode\n  found\n  hits {\n    ...Hit\n  }\n}\n\nfragment Fact on Knowledge {\n  id\n  content\n  status\n  reviewed\n  saidAt\n  sourceSessionId\n  userId\n  createdAt\n  updatedAt\n}\n\nfragment AddMessagesResult on AddMessagesResult {\n  skipped\n  messages {\n    id\n    role\n    content\n    createdAt\n    externalId\n  }\n}\n\nfragment ForgetUserResult on ForgetUserResult {\n  deletedMessages: messages\n  sessions\n  summaries\n  knowledge\n  diaries\n}\n\nfragment Backlog on Backlog {\n  messagesWaitingForVector\n  messagesWaitingForFacts\n  allProcessed\n  sessionsWaitingForSummary {\n    sessionId\n    dueAt\n  }\n}\n\nfragment UserToken on UserToken {\n  token\n  userId\n  expiresAt\n}": typeof types.ProblemsFragmentDoc,
    "query GetBacklog($userId: String!) {\n  backlog(userId: $userId) {\n    ...Backlog\n  }\n}": typeof types.GetBacklogDocument,
    "query GetContext($input: ContextInput!) {\n  context(input: $input) {\n    __typename\n    ... on Context {\n      ...Context\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.GetContextDocument,
    "mutation RejectFact($userId: String!, $id: ID!) {\n  rejectKnowledge(userId: $userId, id: $id) {\n    __typename\n    ... on Knowledge {\n      ...Fact\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.RejectFactDocument,
    "query Search($input: SearchInput!) {\n  search(input: $input) {\n    __typename\n    ... on SearchResult {\n      ...SearchResult\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": typeof types.SearchDocument,
};
const documents: Documents = {
    "mutation AddFact($userId: String!, $content: String!) {\n  addKnowledge(userId: $userId, content: $content) {\n    __typename\n    ... on Knowledge {\n      ...Fact\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.AddFactDocument,
    "mutation AddMessages($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $channel: String! = \"\") {\n  addMessages(\n    userId: $userId\n    sessionId: $sessionId\n    messages: $messages\n    channel: $channel\n  ) {\n    __typename\n    ... on AddMessagesResult {\n      ...AddMessagesResult\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.AddMessagesDocument,
    "mutation AddMessagesWithContext($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $channel: String! = \"\", $windowTurns: Int, $maxTokens: Int, $includeOtherSessions: Boolean! = true, $includeShared: Boolean! = false) {\n  addMessages(\n    userId: $userId\n    sessionId: $sessionId\n    messages: $messages\n    channel: $channel\n  ) {\n    __typename\n    ... on AddMessagesResult {\n      context(\n        windowTurns: $windowTurns\n        maxTokens: $maxTokens\n        includeOtherSessions: $includeOtherSessions\n        includeShared: $includeShared\n      ) {\n        ...Context\n      }\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.AddMessagesWithContextDocument,
    "mutation AddMessagesWithPrompt($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $channel: String! = \"\", $windowTurns: Int, $maxTokens: Int, $includeOtherSessions: Boolean! = true, $includeShared: Boolean! = false) {\n  addMessages(\n    userId: $userId\n    sessionId: $sessionId\n    messages: $messages\n    channel: $channel\n  ) {\n    __typename\n    ... on AddMessagesResult {\n      context(\n        windowTurns: $windowTurns\n        maxTokens: $maxTokens\n        includeOtherSessions: $includeOtherSessions\n        includeShared: $includeShared\n      ) {\n        ...Prompt\n      }\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.AddMessagesWithPromptDocument,
    "mutation ApproveFact($userId: String!, $id: ID!) {\n  approveKnowledge(userId: $userId, id: $id) {\n    __typename\n    ... on Knowledge {\n      ...Fact\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.ApproveFactDocument,
    "mutation CorrectFact($userId: String!, $id: ID!, $content: String!) {\n  updateKnowledge(userId: $userId, id: $id, content: $content) {\n    __typename\n    ... on Knowledge {\n      ...Fact\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.CorrectFactDocument,
    "mutation CreateSummaries($userId: String!, $sessionId: String, $overwrite: Boolean! = false, $maxCount: Int) {\n  createSummaries(\n    userId: $userId\n    sessionId: $sessionId\n    overwrite: $overwrite\n    maxCount: $maxCount\n  ) {\n    __typename\n    ... on QueuedSummariesResult {\n      queuedSessionIds\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.CreateSummariesDocument,
    "mutation CreateUserToken($userId: String!, $ttlSeconds: Int) {\n  createUserToken(userId: $userId, ttlSeconds: $ttlSeconds) {\n    __typename\n    ... on UserToken {\n      ...UserToken\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.CreateUserTokenDocument,
    "query ExportUser($userId: String!) {\n  exportUser(userId: $userId)\n}": types.ExportUserDocument,
    "query Facts($userId: String!, $status: KnowledgeStatus! = ACTIVE, $pagination: OffsetPaginationInput) {\n  knowledge(userId: $userId, status: $status, pagination: $pagination) {\n    totalCount\n    results {\n      ...Fact\n    }\n  }\n}": types.FactsDocument,
    "mutation ForgetFact($userId: String!, $id: ID!) {\n  deleteKnowledge(userId: $userId, id: $id) {\n    __typename\n    ... on DeleteKnowledgeResult {\n      deletedId\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.ForgetFactDocument,
    "mutation ForgetUser($userId: String!) {\n  forgetUser(userId: $userId) {\n    __typename\n    ... on ForgetUserResult {\n      ...ForgetUserResult\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.ForgetUserDocument,
    "fragment Problems on OperationInfo {\n  messages {\n    kind\n    field\n    message\n    code\n  }\n}\n\nfragment Turn on Turn {\n  id\n  role\n  speaker\n  content\n  createdAt\n}\n\nfragment Hit on Hit {\n  kind\n  id\n  score\n  relevance\n  content\n  userId\n  sessionId\n  conversationTime\n  speaker\n  replacedAt\n  reviewed\n  cited\n  text\n}\n\nfragment Prompt on Context {\n  query\n  prompt\n  tokens {\n    window\n    memories\n    prompt\n    tokenizer\n  }\n}\n\nfragment Context on Context {\n  ...Prompt\n  window {\n    ...Turn\n  }\n  memories {\n    ...Hit\n  }\n}\n\nfragment SearchResult on SearchResult {\n  answer\n  answerMode\n  found\n  hits {\n    ...Hit\n  }\n}\n\nfragment Fact on Knowledge {\n  id\n  content\n  status\n  reviewed\n  saidAt\n  sourceSessionId\n  userId\n  createdAt\n  updatedAt\n}\n\nfragment AddMessagesResult on AddMessagesResult {\n  skipped\n  messages {\n    id\n    role\n    content\n    createdAt\n    externalId\n  }\n}\n\nfragment ForgetUserResult on ForgetUserResult {\n  deletedMessages: messages\n  sessions\n  summaries\n  knowledge\n  diaries\n}\n\nfragment Backlog on Backlog {\n  messagesWaitingForVector\n  messagesWaitingForFacts\n  allProcessed\n  sessionsWaitingForSummary {\n    sessionId\n    dueAt\n  }\n}\n\nfragment UserToken on UserToken {\n  token\n  userId\n  expiresAt\n}": types.ProblemsFragmentDoc,
    "query GetBacklog($userId: String!) {\n  backlog(userId: $userId) {\n    ...Backlog\n  }\n}": types.GetBacklogDocument,
    "query GetContext($input: ContextInput!) {\n  context(input: $input) {\n    __typename\n    ... on Context {\n      ...Context\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.GetContextDocument,
    "mutation RejectFact($userId: String!, $id: ID!) {\n  rejectKnowledge(userId: $userId, id: $id) {\n    __typename\n    ... on Knowledge {\n      ...Fact\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.RejectFactDocument,
    "query Search($input: SearchInput!) {\n  search(input: $input) {\n    __typename\n    ... on SearchResult {\n      ...SearchResult\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}": types.SearchDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation AddFact($userId: String!, $content: String!) {\n  addKnowledge(userId: $userId, content: $content) {\n    __typename\n    ... on Knowledge {\n      ...Fact\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').AddFactDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation AddMessages($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $channel: String! = \"\") {\n  addMessages(\n    userId: $userId\n    sessionId: $sessionId\n    messages: $messages\n    channel: $channel\n  ) {\n    __typename\n    ... on AddMessagesResult {\n      ...AddMessagesResult\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').AddMessagesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation AddMessagesWithContext($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $channel: String! = \"\", $windowTurns: Int, $maxTokens: Int, $includeOtherSessions: Boolean! = true, $includeShared: Boolean! = false) {\n  addMessages(\n    userId: $userId\n    sessionId: $sessionId\n    messages: $messages\n    channel: $channel\n  ) {\n    __typename\n    ... on AddMessagesResult {\n      context(\n        windowTurns: $windowTurns\n        maxTokens: $maxTokens\n        includeOtherSessions: $includeOtherSessions\n        includeShared: $includeShared\n      ) {\n        ...Context\n      }\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').AddMessagesWithContextDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation AddMessagesWithPrompt($userId: String!, $sessionId: String!, $messages: [MessageInput!]!, $channel: String! = \"\", $windowTurns: Int, $maxTokens: Int, $includeOtherSessions: Boolean! = true, $includeShared: Boolean! = false) {\n  addMessages(\n    userId: $userId\n    sessionId: $sessionId\n    messages: $messages\n    channel: $channel\n  ) {\n    __typename\n    ... on AddMessagesResult {\n      context(\n        windowTurns: $windowTurns\n        maxTokens: $maxTokens\n        includeOtherSessions: $includeOtherSessions\n        includeShared: $includeShared\n      ) {\n        ...Prompt\n      }\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').AddMessagesWithPromptDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation ApproveFact($userId: String!, $id: ID!) {\n  approveKnowledge(userId: $userId, id: $id) {\n    __typename\n    ... on Knowledge {\n      ...Fact\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').ApproveFactDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation CorrectFact($userId: String!, $id: ID!, $content: String!) {\n  updateKnowledge(userId: $userId, id: $id, content: $content) {\n    __typename\n    ... on Knowledge {\n      ...Fact\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').CorrectFactDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation CreateSummaries($userId: String!, $sessionId: String, $overwrite: Boolean! = false, $maxCount: Int) {\n  createSummaries(\n    userId: $userId\n    sessionId: $sessionId\n    overwrite: $overwrite\n    maxCount: $maxCount\n  ) {\n    __typename\n    ... on QueuedSummariesResult {\n      queuedSessionIds\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').CreateSummariesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation CreateUserToken($userId: String!, $ttlSeconds: Int) {\n  createUserToken(userId: $userId, ttlSeconds: $ttlSeconds) {\n    __typename\n    ... on UserToken {\n      ...UserToken\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').CreateUserTokenDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query ExportUser($userId: String!) {\n  exportUser(userId: $userId)\n}"): typeof import('./graphql.js').ExportUserDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Facts($userId: String!, $status: KnowledgeStatus! = ACTIVE, $pagination: OffsetPaginationInput) {\n  knowledge(userId: $userId, status: $status, pagination: $pagination) {\n    totalCount\n    results {\n      ...Fact\n    }\n  }\n}"): typeof import('./graphql.js').FactsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation ForgetFact($userId: String!, $id: ID!) {\n  deleteKnowledge(userId: $userId, id: $id) {\n    __typename\n    ... on DeleteKnowledgeResult {\n      deletedId\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').ForgetFactDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation ForgetUser($userId: String!) {\n  forgetUser(userId: $userId) {\n    __typename\n    ... on ForgetUserResult {\n      ...ForgetUserResult\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').ForgetUserDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "fragment Problems on OperationInfo {\n  messages {\n    kind\n    field\n    message\n    code\n  }\n}\n\nfragment Turn on Turn {\n  id\n  role\n  speaker\n  content\n  createdAt\n}\n\nfragment Hit on Hit {\n  kind\n  id\n  score\n  relevance\n  content\n  userId\n  sessionId\n  conversationTime\n  speaker\n  replacedAt\n  reviewed\n  cited\n  text\n}\n\nfragment Prompt on Context {\n  query\n  prompt\n  tokens {\n    window\n    memories\n    prompt\n    tokenizer\n  }\n}\n\nfragment Context on Context {\n  ...Prompt\n  window {\n    ...Turn\n  }\n  memories {\n    ...Hit\n  }\n}\n\nfragment SearchResult on SearchResult {\n  answer\n  answerMode\n  found\n  hits {\n    ...Hit\n  }\n}\n\nfragment Fact on Knowledge {\n  id\n  content\n  status\n  reviewed\n  saidAt\n  sourceSessionId\n  userId\n  createdAt\n  updatedAt\n}\n\nfragment AddMessagesResult on AddMessagesResult {\n  skipped\n  messages {\n    id\n    role\n    content\n    createdAt\n    externalId\n  }\n}\n\nfragment ForgetUserResult on ForgetUserResult {\n  deletedMessages: messages\n  sessions\n  summaries\n  knowledge\n  diaries\n}\n\nfragment Backlog on Backlog {\n  messagesWaitingForVector\n  messagesWaitingForFacts\n  allProcessed\n  sessionsWaitingForSummary {\n    sessionId\n    dueAt\n  }\n}\n\nfragment UserToken on UserToken {\n  token\n  userId\n  expiresAt\n}"): typeof import('./graphql.js').ProblemsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query GetBacklog($userId: String!) {\n  backlog(userId: $userId) {\n    ...Backlog\n  }\n}"): typeof import('./graphql.js').GetBacklogDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query GetContext($input: ContextInput!) {\n  context(input: $input) {\n    __typename\n    ... on Context {\n      ...Context\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').GetContextDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation RejectFact($userId: String!, $id: ID!) {\n  rejectKnowledge(userId: $userId, id: $id) {\n    __typename\n    ... on Knowledge {\n      ...Fact\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').RejectFactDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Search($input: SearchInput!) {\n  search(input: $input) {\n    __typename\n    ... on SearchResult {\n      ...SearchResult\n    }\n    ... on OperationInfo {\n      ...Problems\n    }\n  }\n}"): typeof import('./graphql.js').SearchDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
