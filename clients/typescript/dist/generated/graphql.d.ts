/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends {
    [key: string]: unknown;
}> = {
    [K in keyof T]: T[K];
};
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | {
    [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never;
};
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
export type HitKind = 'DIARY' | 'KNOWLEDGE' | 'MESSAGE' | 'SUMMARY';
export type KnowledgeStatus = 'ACTIVE' | 'CANDIDATE' | 'REJECTED' | 'SUPERSEDED';
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
export type OperationMessageKind = 'ERROR' | 'INFO' | 'PERMISSION' | 'VALIDATION' | 'WARNING';
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
export type AddFactMutation = {
    addKnowledge: {
        __typename: 'Knowledge';
        id: string;
        content: string;
        status: KnowledgeStatus;
        reviewed: boolean;
        saidAt: string | null;
        sourceSessionId: string | null;
        userId: string | null;
        createdAt: string;
        updatedAt: string;
    } | {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    };
};
export type AddMessagesMutationVariables = Exact<{
    userId: string;
    sessionId: string;
    messages: Array<MessageInput> | MessageInput;
    channel?: string;
}>;
export type AddMessagesMutation = {
    addMessages: {
        __typename: 'AddMessagesResult';
        skipped: number;
        messages: Array<{
            id: string;
            role: string;
            content: string;
            createdAt: string;
            externalId: string | null;
        }>;
    } | {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    };
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
export type AddMessagesWithContextMutation = {
    addMessages: {
        __typename: 'AddMessagesResult';
        context: {
            query: string | null;
            prompt: string;
            window: Array<{
                id: string;
                role: string;
                speaker: string;
                content: string;
                createdAt: string;
            }>;
            memories: Array<{
                kind: HitKind;
                id: string;
                score: number | null;
                relevance: number;
                content: string;
                userId: string;
                sessionId: string | null;
                conversationTime: string | null;
                speaker: string | null;
                replacedAt: string | null;
                reviewed: boolean | null;
                cited: boolean;
                text: string;
            }>;
            tokens: {
                window: number;
                memories: number;
                prompt: number;
                tokenizer: string;
            };
        } | null;
    } | {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    };
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
export type AddMessagesWithPromptMutation = {
    addMessages: {
        __typename: 'AddMessagesResult';
        context: {
            query: string | null;
            prompt: string;
            tokens: {
                window: number;
                memories: number;
                prompt: number;
                tokenizer: string;
            };
        } | null;
    } | {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    };
};
export type ApproveFactMutationVariables = Exact<{
    userId: string;
    id: string | number;
}>;
export type ApproveFactMutation = {
    approveKnowledge: {
        __typename: 'Knowledge';
        id: string;
        content: string;
        status: KnowledgeStatus;
        reviewed: boolean;
        saidAt: string | null;
        sourceSessionId: string | null;
        userId: string | null;
        createdAt: string;
        updatedAt: string;
    } | {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    };
};
export type CorrectFactMutationVariables = Exact<{
    userId: string;
    id: string | number;
    content: string;
}>;
export type CorrectFactMutation = {
    updateKnowledge: {
        __typename: 'Knowledge';
        id: string;
        content: string;
        status: KnowledgeStatus;
        reviewed: boolean;
        saidAt: string | null;
        sourceSessionId: string | null;
        userId: string | null;
        createdAt: string;
        updatedAt: string;
    } | {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    };
};
export type CreateSummariesMutationVariables = Exact<{
    userId: string;
    sessionId?: string | null | undefined;
    overwrite?: boolean;
    maxCount?: number | null | undefined;
}>;
export type CreateSummariesMutation = {
    createSummaries: {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    } | {
        __typename: 'QueuedSummariesResult';
        queuedSessionIds: Array<string>;
    };
};
export type CreateUserTokenMutationVariables = Exact<{
    userId: string;
    ttlSeconds?: number | null | undefined;
}>;
export type CreateUserTokenMutation = {
    createUserToken: {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    } | {
        __typename: 'UserToken';
        token: string;
        userId: string;
        expiresAt: string;
    };
};
export type ExportUserQueryVariables = Exact<{
    userId: string;
}>;
export type ExportUserQuery = {
    exportUser: unknown;
};
export type FactsQueryVariables = Exact<{
    userId: string;
    status?: KnowledgeStatus;
    pagination?: OffsetPaginationInput | null | undefined;
}>;
export type FactsQuery = {
    knowledge: {
        totalCount: number;
        results: Array<{
            id: string;
            content: string;
            status: KnowledgeStatus;
            reviewed: boolean;
            saidAt: string | null;
            sourceSessionId: string | null;
            userId: string | null;
            createdAt: string;
            updatedAt: string;
        }>;
    };
};
export type ForgetFactMutationVariables = Exact<{
    userId: string;
    id: string | number;
}>;
export type ForgetFactMutation = {
    deleteKnowledge: {
        __typename: 'DeleteKnowledgeResult';
        deletedId: string;
    } | {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    };
};
export type ForgetUserMutationVariables = Exact<{
    userId: string;
}>;
export type ForgetUserMutation = {
    forgetUser: {
        __typename: 'ForgetUserResult';
        sessions: number;
        summaries: number;
        knowledge: number;
        diaries: number;
        deletedMessages: number;
    } | {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    };
};
export type ProblemsFragment = {
    messages: Array<{
        kind: OperationMessageKind;
        field: string | null;
        message: string;
        code: string | null;
    }>;
};
export type TurnFragment = {
    id: string;
    role: string;
    speaker: string;
    content: string;
    createdAt: string;
};
export type HitFragment = {
    kind: HitKind;
    id: string;
    score: number | null;
    relevance: number;
    content: string;
    userId: string;
    sessionId: string | null;
    conversationTime: string | null;
    speaker: string | null;
    replacedAt: string | null;
    reviewed: boolean | null;
    cited: boolean;
    text: string;
};
export type PromptFragment = {
    query: string | null;
    prompt: string;
    tokens: {
        window: number;
        memories: number;
        prompt: number;
        tokenizer: string;
    };
};
export type ContextFragment = {
    query: string | null;
    prompt: string;
    window: Array<{
        id: string;
        role: string;
        speaker: string;
        content: string;
        createdAt: string;
    }>;
    memories: Array<{
        kind: HitKind;
        id: string;
        score: number | null;
        relevance: number;
        content: string;
        userId: string;
        sessionId: string | null;
        conversationTime: string | null;
        speaker: string | null;
        replacedAt: string | null;
        reviewed: boolean | null;
        cited: boolean;
        text: string;
    }>;
    tokens: {
        window: number;
        memories: number;
        prompt: number;
        tokenizer: string;
    };
};
export type SearchResultFragment = {
    answer: string | null;
    answerMode: string;
    found: boolean | null;
    hits: Array<{
        kind: HitKind;
        id: string;
        score: number | null;
        relevance: number;
        content: string;
        userId: string;
        sessionId: string | null;
        conversationTime: string | null;
        speaker: string | null;
        replacedAt: string | null;
        reviewed: boolean | null;
        cited: boolean;
        text: string;
    }>;
};
export type FactFragment = {
    id: string;
    content: string;
    status: KnowledgeStatus;
    reviewed: boolean;
    saidAt: string | null;
    sourceSessionId: string | null;
    userId: string | null;
    createdAt: string;
    updatedAt: string;
};
export type AddMessagesResultFragment = {
    skipped: number;
    messages: Array<{
        id: string;
        role: string;
        content: string;
        createdAt: string;
        externalId: string | null;
    }>;
};
export type ForgetUserResultFragment = {
    sessions: number;
    summaries: number;
    knowledge: number;
    diaries: number;
    deletedMessages: number;
};
export type BacklogFragment = {
    messagesWaitingForVector: number;
    messagesWaitingForFacts: number;
    allProcessed: boolean;
    sessionsWaitingForSummary: Array<{
        sessionId: string;
        dueAt: string;
    }>;
};
export type UserTokenFragment = {
    token: string;
    userId: string;
    expiresAt: string;
};
export type GetBacklogQueryVariables = Exact<{
    userId: string;
}>;
export type GetBacklogQuery = {
    backlog: {
        messagesWaitingForVector: number;
        messagesWaitingForFacts: number;
        allProcessed: boolean;
        sessionsWaitingForSummary: Array<{
            sessionId: string;
            dueAt: string;
        }>;
    };
};
export type GetContextQueryVariables = Exact<{
    input: ContextInput;
}>;
export type GetContextQuery = {
    context: {
        __typename: 'Context';
        query: string | null;
        prompt: string;
        window: Array<{
            id: string;
            role: string;
            speaker: string;
            content: string;
            createdAt: string;
        }>;
        memories: Array<{
            kind: HitKind;
            id: string;
            score: number | null;
            relevance: number;
            content: string;
            userId: string;
            sessionId: string | null;
            conversationTime: string | null;
            speaker: string | null;
            replacedAt: string | null;
            reviewed: boolean | null;
            cited: boolean;
            text: string;
        }>;
        tokens: {
            window: number;
            memories: number;
            prompt: number;
            tokenizer: string;
        };
    } | {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    };
};
export type RejectFactMutationVariables = Exact<{
    userId: string;
    id: string | number;
}>;
export type RejectFactMutation = {
    rejectKnowledge: {
        __typename: 'Knowledge';
        id: string;
        content: string;
        status: KnowledgeStatus;
        reviewed: boolean;
        saidAt: string | null;
        sourceSessionId: string | null;
        userId: string | null;
        createdAt: string;
        updatedAt: string;
    } | {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    };
};
export type SearchQueryVariables = Exact<{
    input: SearchInput;
}>;
export type SearchQuery = {
    search: {
        __typename: 'OperationInfo';
        messages: Array<{
            kind: OperationMessageKind;
            field: string | null;
            message: string;
            code: string | null;
        }>;
    } | {
        __typename: 'SearchResult';
        answer: string | null;
        answerMode: string;
        found: boolean | null;
        hits: Array<{
            kind: HitKind;
            id: string;
            score: number | null;
            relevance: number;
            content: string;
            userId: string;
            sessionId: string | null;
            conversationTime: string | null;
            speaker: string | null;
            replacedAt: string | null;
            reviewed: boolean | null;
            cited: boolean;
            text: string;
        }>;
    };
};
export declare class TypedDocumentString<TResult, TVariables> extends String implements DocumentTypeDecoration<TResult, TVariables> {
    __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
    private value;
    __meta__?: Record<string, any> | undefined;
    constructor(value: string, __meta__?: Record<string, any> | undefined);
    toString(): string & DocumentTypeDecoration<TResult, TVariables>;
}
export declare const ProblemsFragmentDoc: TypedDocumentString<ProblemsFragment, unknown>;
export declare const PromptFragmentDoc: TypedDocumentString<PromptFragment, unknown>;
export declare const TurnFragmentDoc: TypedDocumentString<TurnFragment, unknown>;
export declare const HitFragmentDoc: TypedDocumentString<HitFragment, unknown>;
export declare const ContextFragmentDoc: TypedDocumentString<ContextFragment, unknown>;
export declare const SearchResultFragmentDoc: TypedDocumentString<SearchResultFragment, unknown>;
export declare const FactFragmentDoc: TypedDocumentString<FactFragment, unknown>;
export declare const AddMessagesResultFragmentDoc: TypedDocumentString<AddMessagesResultFragment, unknown>;
export declare const ForgetUserResultFragmentDoc: TypedDocumentString<ForgetUserResultFragment, unknown>;
export declare const BacklogFragmentDoc: TypedDocumentString<BacklogFragment, unknown>;
export declare const UserTokenFragmentDoc: TypedDocumentString<UserTokenFragment, unknown>;
export declare const AddFactDocument: TypedDocumentString<AddFactMutation, AddFactMutationVariables>;
export declare const AddMessagesDocument: TypedDocumentString<AddMessagesMutation, AddMessagesMutationVariables>;
export declare const AddMessagesWithContextDocument: TypedDocumentString<AddMessagesWithContextMutation, AddMessagesWithContextMutationVariables>;
export declare const AddMessagesWithPromptDocument: TypedDocumentString<AddMessagesWithPromptMutation, AddMessagesWithPromptMutationVariables>;
export declare const ApproveFactDocument: TypedDocumentString<ApproveFactMutation, ApproveFactMutationVariables>;
export declare const CorrectFactDocument: TypedDocumentString<CorrectFactMutation, CorrectFactMutationVariables>;
export declare const CreateSummariesDocument: TypedDocumentString<CreateSummariesMutation, CreateSummariesMutationVariables>;
export declare const CreateUserTokenDocument: TypedDocumentString<CreateUserTokenMutation, CreateUserTokenMutationVariables>;
export declare const ExportUserDocument: TypedDocumentString<ExportUserQuery, ExportUserQueryVariables>;
export declare const FactsDocument: TypedDocumentString<FactsQuery, FactsQueryVariables>;
export declare const ForgetFactDocument: TypedDocumentString<ForgetFactMutation, ForgetFactMutationVariables>;
export declare const ForgetUserDocument: TypedDocumentString<ForgetUserMutation, ForgetUserMutationVariables>;
export declare const GetBacklogDocument: TypedDocumentString<GetBacklogQuery, GetBacklogQueryVariables>;
export declare const GetContextDocument: TypedDocumentString<GetContextQuery, GetContextQueryVariables>;
export declare const RejectFactDocument: TypedDocumentString<RejectFactMutation, RejectFactMutationVariables>;
export declare const SearchDocument: TypedDocumentString<SearchQuery, SearchQueryVariables>;
export {};
