export class TypedDocumentString extends String {
    __apiType;
    value;
    __meta__;
    constructor(value, __meta__) {
        super(value);
        this.value = value;
        this.__meta__ = __meta__;
    }
    toString() {
        return this.value;
    }
}
export const ProblemsFragmentDoc = new TypedDocumentString(`
    fragment Problems on OperationInfo {
  messages {
    kind
    field
    message
    code
  }
}
    `, { "fragmentName": "Problems" });
export const PromptFragmentDoc = new TypedDocumentString(`
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
    `, { "fragmentName": "Prompt" });
export const TurnFragmentDoc = new TypedDocumentString(`
    fragment Turn on Turn {
  id
  role
  speaker
  content
  createdAt
}
    `, { "fragmentName": "Turn" });
export const HitFragmentDoc = new TypedDocumentString(`
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
    `, { "fragmentName": "Hit" });
export const ContextFragmentDoc = new TypedDocumentString(`
    fragment Context on Context {
  ...Prompt
  window {
    ...Turn
  }
  memories {
    ...Hit
  }
}
    fragment Turn on Turn {
  id
  role
  speaker
  content
  createdAt
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
fragment Prompt on Context {
  query
  prompt
  tokens {
    window
    memories
    prompt
    tokenizer
  }
}`, { "fragmentName": "Context" });
export const SearchResultFragmentDoc = new TypedDocumentString(`
    fragment SearchResult on SearchResult {
  answer
  answerMode
  found
  hits {
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
}`, { "fragmentName": "SearchResult" });
export const FactFragmentDoc = new TypedDocumentString(`
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
    `, { "fragmentName": "Fact" });
export const AddMessagesResultFragmentDoc = new TypedDocumentString(`
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
    `, { "fragmentName": "AddMessagesResult" });
export const ForgetUserResultFragmentDoc = new TypedDocumentString(`
    fragment ForgetUserResult on ForgetUserResult {
  deletedMessages: messages
  sessions
  summaries
  knowledge
  diaries
}
    `, { "fragmentName": "ForgetUserResult" });
export const BacklogFragmentDoc = new TypedDocumentString(`
    fragment Backlog on Backlog {
  messagesWaitingForVector
  messagesWaitingForFacts
  allProcessed
  sessionsWaitingForSummary {
    sessionId
    dueAt
  }
}
    `, { "fragmentName": "Backlog" });
export const UserTokenFragmentDoc = new TypedDocumentString(`
    fragment UserToken on UserToken {
  token
  userId
  expiresAt
}
    `, { "fragmentName": "UserToken" });
export const AddFactDocument = new TypedDocumentString(`
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
    fragment Problems on OperationInfo {
  messages {
    kind
    field
    message
    code
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
}`);
export const AddMessagesDocument = new TypedDocumentString(`
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
    fragment Problems on OperationInfo {
  messages {
    kind
    field
    message
    code
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
}`);
export const AddMessagesWithContextDocument = new TypedDocumentString(`
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
    fragment Problems on OperationInfo {
  messages {
    kind
    field
    message
    code
  }
}
fragment Turn on Turn {
  id
  role
  speaker
  content
  createdAt
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
fragment Context on Context {
  ...Prompt
  window {
    ...Turn
  }
  memories {
    ...Hit
  }
}`);
export const AddMessagesWithPromptDocument = new TypedDocumentString(`
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
}`);
export const ApproveFactDocument = new TypedDocumentString(`
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
    fragment Problems on OperationInfo {
  messages {
    kind
    field
    message
    code
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
}`);
export const CorrectFactDocument = new TypedDocumentString(`
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
    fragment Problems on OperationInfo {
  messages {
    kind
    field
    message
    code
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
}`);
export const CreateSummariesDocument = new TypedDocumentString(`
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
}`);
export const CreateUserTokenDocument = new TypedDocumentString(`
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
}`);
export const ExportUserDocument = new TypedDocumentString(`
    query ExportUser($userId: String!) {
  exportUser(userId: $userId)
}
    `);
export const FactsDocument = new TypedDocumentString(`
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
}`);
export const ForgetFactDocument = new TypedDocumentString(`
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
}`);
export const ForgetUserDocument = new TypedDocumentString(`
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
    fragment Problems on OperationInfo {
  messages {
    kind
    field
    message
    code
  }
}
fragment ForgetUserResult on ForgetUserResult {
  deletedMessages: messages
  sessions
  summaries
  knowledge
  diaries
}`);
export const GetBacklogDocument = new TypedDocumentString(`
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
}`);
export const GetContextDocument = new TypedDocumentString(`
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
    fragment Problems on OperationInfo {
  messages {
    kind
    field
    message
    code
  }
}
fragment Turn on Turn {
  id
  role
  speaker
  content
  createdAt
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
fragment Context on Context {
  ...Prompt
  window {
    ...Turn
  }
  memories {
    ...Hit
  }
}`);
export const RejectFactDocument = new TypedDocumentString(`
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
    fragment Problems on OperationInfo {
  messages {
    kind
    field
    message
    code
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
}`);
export const SearchDocument = new TypedDocumentString(`
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
    fragment Problems on OperationInfo {
  messages {
    kind
    field
    message
    code
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
fragment SearchResult on SearchResult {
  answer
  answerMode
  found
  hits {
    ...Hit
  }
}`);
