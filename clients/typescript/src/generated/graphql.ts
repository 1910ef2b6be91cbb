/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
export type ContextInput = {
  /** Memories from the user's other sessions too (false: this session's turns and summary only; no knowledge or diaries, which come from every session). */
  includeOtherSessions?: boolean;
  /** Also system-wide knowledge. */
  includeShared?: boolean;
  /** Token budget of the memories (default CONTEXT_MAX_TOKENS, 1000). */
  maxTokens?: number | null | undefined;
  /** What to find memories for (default: the session's latest user message). */
  query?: string | null | undefined;
  sessionId: string;
  userId: string;
  /** The session's last turns returned, oldest first (default CONTEXT_WINDOW_TURNS, 10). */
  windowTurns?: number | null | undefined;
};

export type HitKind =
  | 'DIARY'
  | 'KNOWLEDGE'
  | 'MESSAGE'
  | 'SUMMARY';

export type KnowledgeStatus =
  | 'ACTIVE'
  | 'CANDIDATE'
  | 'REJECTED'
  | 'SUPERSEDED';

export type MessageInput = {
  content: string;
  createdAt?: string | null | undefined;
  /** Your id for this message: re-sending it does not store it twice. */
  externalId?: string | null | undefined;
  metadata?: unknown;
  /** user, assistant or system. */
  role: string;
};

export type OffsetPaginationInput = {
  limit?: number | null | undefined;
  offset?: number;
};

export type OperationMessageKind =
  | 'ERROR'
  | 'INFO'
  | 'PERMISSION'
  | 'VALIDATION'
  | 'WARNING';

export type SearchInput = {
  /** false: retrieve only, no answer (answerMode none). */
  answer?: boolean;
  /** Only what was said in this channel. */
  channel?: string | null | undefined;
  /** Return the hits as the labelled text blocks an answer model reads. */
  includeRetrievedData?: boolean;
  /** Also search system-wide knowledge. */
  includeShared?: boolean;
  query: string;
  /** @deprecated Messages are always searched; narrow with `sources`. Ignored; removed in the next release. */
  searchContent?: boolean;
  /** Only what was said from 00:00 local time on this day (conversation time). */
  since?: string | null | undefined;
  /** Kinds searched, ranked together (default: all of MESSAGE, SUMMARY, KNOWLEDGE, DIARY). */
  sources?: Array<HitKind> | null | undefined;
  /** Hits returned (default SEARCH_DEFAULT_TOP_K, 10; at most SEARCH_MAX_TOP_K). */
  topK?: number | null | undefined;
  /** Only what was said before the midnight after this day (local time). */
  until?: string | null | undefined;
  /** One end user (or use userIds). */
  userId?: string | null | undefined;
  /** Several end users. */
  userIds?: Array<string> | null | undefined;
  /** The local time zone of since/until as hours from UTC (e.g. 9, -5, 5.5). */
  utcOffsetHours?: number;
};

export type AddFactMutationVariables = Exact<{
  userId: string;
  content: string;
}>;


export type AddFactMutation = { addKnowledge:
    | { __typename: 'Knowledge', id: string, content: string, status: KnowledgeStatus, reviewed: boolean, saidAt: string | null, sourceSessionId: string | null, userId: string | null, createdAt: string, updatedAt: string }
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
   };

export type AddMessagesMutationVariables = Exact<{
  userId: string;
  sessionId: string;
  messages: Array<MessageInput> | MessageInput;
  channel?: string;
}>;


export type AddMessagesMutation = { addMessages:
    | { __typename: 'AddMessagesResult', skipped: number, messages: Array<{ id: string, role: string, content: string, createdAt: string, externalId: string | null }> }
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
   };

export type AddMessagesWithContextMutationVariables = Exact<{
  userId: string;
  sessionId: string;
  messages: Array<MessageInput> | MessageInput;
  channel?: string;
  windowTurns?: number | null | undefined;
  maxTokens?: number | null | undefined;
  includeOtherSessions?: boolean;
  includeShared?: boolean;
}>;


export type AddMessagesWithContextMutation = { addMessages:
    | { __typename: 'AddMessagesResult', context: { query: string | null, prompt: string, window: Array<{ id: string, role: string, speaker: string, content: string, createdAt: string }>, memories: Array<{ kind: HitKind, id: string, score: number | null, relevance: number, content: string, userId: string, sessionId: string | null, conversationTime: string | null, speaker: string | null, replacedAt: string | null, reviewed: boolean | null, cited: boolean, text: string }>, tokens: { window: number, memories: number, prompt: number, tokenizer: string } } | null }
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
   };

export type AddMessagesWithPromptMutationVariables = Exact<{
  userId: string;
  sessionId: string;
  messages: Array<MessageInput> | MessageInput;
  channel?: string;
  windowTurns?: number | null | undefined;
  maxTokens?: number | null | undefined;
  includeOtherSessions?: boolean;
  includeShared?: boolean;
}>;


export type AddMessagesWithPromptMutation = { addMessages:
    | { __typename: 'AddMessagesResult', context: { query: string | null, prompt: string, tokens: { window: number, memories: number, prompt: number, tokenizer: string } } | null }
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
   };

export type ApproveFactMutationVariables = Exact<{
  userId: string;
  id: string | number;
}>;


export type ApproveFactMutation = { approveKnowledge:
    | { __typename: 'Knowledge', id: string, content: string, status: KnowledgeStatus, reviewed: boolean, saidAt: string | null, sourceSessionId: string | null, userId: string | null, createdAt: string, updatedAt: string }
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
   };

export type CorrectFactMutationVariables = Exact<{
  userId: string;
  id: string | number;
  content: string;
}>;


export type CorrectFactMutation = { updateKnowledge:
    | { __typename: 'Knowledge', id: string, content: string, status: KnowledgeStatus, reviewed: boolean, saidAt: string | null, sourceSessionId: string | null, userId: string | null, createdAt: string, updatedAt: string }
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
   };

export type CreateSummariesMutationVariables = Exact<{
  userId: string;
  sessionId?: string | null | undefined;
  overwrite?: boolean;
  maxCount?: number | null | undefined;
}>;


export type CreateSummariesMutation = { createSummaries:
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
    | { __typename: 'QueuedSummariesResult', queuedSessionIds: Array<string> }
   };

export type CreateUserTokenMutationVariables = Exact<{
  userId: string;
  ttlSeconds?: number | null | undefined;
}>;


export type CreateUserTokenMutation = { createUserToken:
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
    | { __typename: 'UserToken', token: string, userId: string, expiresAt: string }
   };

export type ExportUserQueryVariables = Exact<{
  userId: string;
}>;


export type ExportUserQuery = { exportUser: unknown };

export type FactsQueryVariables = Exact<{
  userId: string;
  status?: KnowledgeStatus;
  pagination?: OffsetPaginationInput | null | undefined;
}>;


export type FactsQuery = { knowledge: { totalCount: number, results: Array<{ id: string, content: string, status: KnowledgeStatus, reviewed: boolean, saidAt: string | null, sourceSessionId: string | null, userId: string | null, createdAt: string, updatedAt: string }> } };

export type ForgetFactMutationVariables = Exact<{
  userId: string;
  id: string | number;
}>;


export type ForgetFactMutation = { deleteKnowledge:
    | { __typename: 'DeleteKnowledgeResult', deletedId: string }
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
   };

export type ForgetUserMutationVariables = Exact<{
  userId: string;
}>;


export type ForgetUserMutation = { forgetUser:
    | { __typename: 'ForgetUserResult', sessions: number, summaries: number, knowledge: number, diaries: number, deletedMessages: number }
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
   };

export type ProblemsFragment = { messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> };

export type TurnFragment = { id: string, role: string, speaker: string, content: string, createdAt: string };

export type HitFragment = { kind: HitKind, id: string, score: number | null, relevance: number, content: string, userId: string, sessionId: string | null, conversationTime: string | null, speaker: string | null, replacedAt: string | null, reviewed: boolean | null, cited: boolean, text: string };

export type PromptFragment = { query: string | null, prompt: string, tokens: { window: number, memories: number, prompt: number, tokenizer: string } };

export type ContextFragment = { query: string | null, prompt: string, window: Array<{ id: string, role: string, speaker: string, content: string, createdAt: string }>, memories: Array<{ kind: HitKind, id: string, score: number | null, relevance: number, content: string, userId: string, sessionId: string | null, conversationTime: string | null, speaker: string | null, replacedAt: string | null, reviewed: boolean | null, cited: boolean, text: string }>, tokens: { window: number, memories: number, prompt: number, tokenizer: string } };

export type SearchResultFragment = { answer: string | null, answerMode: string, found: boolean | null, hits: Array<{ kind: HitKind, id: string, score: number | null, relevance: number, content: string, userId: string, sessionId: string | null, conversationTime: string | null, speaker: string | null, replacedAt: string | null, reviewed: boolean | null, cited: boolean, text: string }> };

export type FactFragment = { id: string, content: string, status: KnowledgeStatus, reviewed: boolean, saidAt: string | null, sourceSessionId: string | null, userId: string | null, createdAt: string, updatedAt: string };

export type AddMessagesResultFragment = { skipped: number, messages: Array<{ id: string, role: string, content: string, createdAt: string, externalId: string | null }> };

export type ForgetUserResultFragment = { sessions: number, summaries: number, knowledge: number, diaries: number, deletedMessages: number };

export type BacklogFragment = { messagesWaitingForVector: number, messagesWaitingForFacts: number, allProcessed: boolean, sessionsWaitingForSummary: Array<{ sessionId: string, dueAt: string }> };

export type UserTokenFragment = { token: string, userId: string, expiresAt: string };

export type GetBacklogQueryVariables = Exact<{
  userId: string;
}>;


export type GetBacklogQuery = { backlog: { messagesWaitingForVector: number, messagesWaitingForFacts: number, allProcessed: boolean, sessionsWaitingForSummary: Array<{ sessionId: string, dueAt: string }> } };

export type GetContextQueryVariables = Exact<{
  input: ContextInput;
}>;


export type GetContextQuery = { context:
    | { __typename: 'Context', query: string | null, prompt: string, window: Array<{ id: string, role: string, speaker: string, content: string, createdAt: string }>, memories: Array<{ kind: HitKind, id: string, score: number | null, relevance: number, content: string, userId: string, sessionId: string | null, conversationTime: string | null, speaker: string | null, replacedAt: string | null, reviewed: boolean | null, cited: boolean, text: string }>, tokens: { window: number, memories: number, prompt: number, tokenizer: string } }
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
   };

export type RejectFactMutationVariables = Exact<{
  userId: string;
  id: string | number;
}>;


export type RejectFactMutation = { rejectKnowledge:
    | { __typename: 'Knowledge', id: string, content: string, status: KnowledgeStatus, reviewed: boolean, saidAt: string | null, sourceSessionId: string | null, userId: string | null, createdAt: string, updatedAt: string }
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
   };

export type SearchQueryVariables = Exact<{
  input: SearchInput;
}>;


export type SearchQuery = { search:
    | { __typename: 'OperationInfo', messages: Array<{ kind: OperationMessageKind, field: string | null, message: string, code: string | null }> }
    | { __typename: 'SearchResult', answer: string | null, answerMode: string, found: boolean | null, hits: Array<{ kind: HitKind, id: string, score: number | null, relevance: number, content: string, userId: string, sessionId: string | null, conversationTime: string | null, speaker: string | null, replacedAt: string | null, reviewed: boolean | null, cited: boolean, text: string }> }
   };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
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
    `, {"fragmentName":"Problems"}) as unknown as TypedDocumentString<ProblemsFragment, unknown>;
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
    `, {"fragmentName":"Prompt"}) as unknown as TypedDocumentString<PromptFragment, unknown>;
export const TurnFragmentDoc = new TypedDocumentString(`
    fragment Turn on Turn {
  id
  role
  speaker
  content
  createdAt
}
    `, {"fragmentName":"Turn"}) as unknown as TypedDocumentString<TurnFragment, unknown>;
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
    `, {"fragmentName":"Hit"}) as unknown as TypedDocumentString<HitFragment, unknown>;
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
}`, {"fragmentName":"Context"}) as unknown as TypedDocumentString<ContextFragment, unknown>;
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
}`, {"fragmentName":"SearchResult"}) as unknown as TypedDocumentString<SearchResultFragment, unknown>;
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
    `, {"fragmentName":"Fact"}) as unknown as TypedDocumentString<FactFragment, unknown>;
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
    `, {"fragmentName":"AddMessagesResult"}) as unknown as TypedDocumentString<AddMessagesResultFragment, unknown>;
export const ForgetUserResultFragmentDoc = new TypedDocumentString(`
    fragment ForgetUserResult on ForgetUserResult {
  deletedMessages: messages
  sessions
  summaries
  knowledge
  diaries
}
    `, {"fragmentName":"ForgetUserResult"}) as unknown as TypedDocumentString<ForgetUserResultFragment, unknown>;
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
    `, {"fragmentName":"Backlog"}) as unknown as TypedDocumentString<BacklogFragment, unknown>;
export const UserTokenFragmentDoc = new TypedDocumentString(`
    fragment UserToken on UserToken {
  token
  userId
  expiresAt
}
    `, {"fragmentName":"UserToken"}) as unknown as TypedDocumentString<UserTokenFragment, unknown>;
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
}`) as unknown as TypedDocumentString<AddFactMutation, AddFactMutationVariables>;
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
}`) as unknown as TypedDocumentString<AddMessagesMutation, AddMessagesMutationVariables>;
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
}`) as unknown as TypedDocumentString<AddMessagesWithContextMutation, AddMessagesWithContextMutationVariables>;
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
}`) as unknown as TypedDocumentString<AddMessagesWithPromptMutation, AddMessagesWithPromptMutationVariables>;
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
}`) as unknown as TypedDocumentString<ApproveFactMutation, ApproveFactMutationVariables>;
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
}`) as unknown as TypedDocumentString<CorrectFactMutation, CorrectFactMutationVariables>;
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
}`) as unknown as TypedDocumentString<CreateSummariesMutation, CreateSummariesMutationVariables>;
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
}`) as unknown as TypedDocumentString<CreateUserTokenMutation, CreateUserTokenMutationVariables>;
export const ExportUserDocument = new TypedDocumentString(`
    query ExportUser($userId: String!) {
  exportUser(userId: $userId)
}
    `) as unknown as TypedDocumentString<ExportUserQuery, ExportUserQueryVariables>;
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
}`) as unknown as TypedDocumentString<FactsQuery, FactsQueryVariables>;
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
}`) as unknown as TypedDocumentString<ForgetFactMutation, ForgetFactMutationVariables>;
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
}`) as unknown as TypedDocumentString<ForgetUserMutation, ForgetUserMutationVariables>;
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
}`) as unknown as TypedDocumentString<GetBacklogQuery, GetBacklogQueryVariables>;
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
}`) as unknown as TypedDocumentString<GetContextQuery, GetContextQueryVariables>;
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
}`) as unknown as TypedDocumentString<RejectFactMutation, RejectFactMutationVariables>;
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
}`) as unknown as TypedDocumentString<SearchQuery, SearchQueryVariables>;