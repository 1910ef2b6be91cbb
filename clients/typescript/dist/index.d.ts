import type { AddMessagesResultFragment, BacklogFragment, ContextFragment, ContextInput, FactFragment, ForgetUserResultFragment, KnowledgeStatus, MessageInput, PromptFragment, SearchInput, SearchResultFragment, TypedDocumentString, UserTokenFragment } from "./generated/graphql.js";
export * from "./errors.js";
export type { AddMessagesResultFragment as AddMessagesResult, BacklogFragment as Backlog, ContextFragment as Context, FactFragment as Fact, ForgetUserResultFragment as ForgetUserResult, HitFragment as Hit, HitKind, KnowledgeStatus, MessageInput, PromptFragment as Prompt, SearchResultFragment as SearchResult, TurnFragment as Turn, UserTokenFragment as UserToken, } from "./generated/graphql.js";
/** An API key (a backend's), a user token (a browser's), or a function giving the current one. */
export type Credential = string | (() => string | Promise<string>);
export interface ClientOptions {
    /** `fetch` of your own (a test double, a proxy's); default: the global one. */
    fetch?: typeof fetch;
    /** Milliseconds to wait for an answer (default 30,000). */
    timeoutMs?: number;
}
/** How a context is built; unset: the service's defaults. */
export type ContextOptions = Omit<ContextInput, "userId" | "sessionId" | "query">;
/** What a search covers and returns; unset: the service's defaults. */
export type SearchOptions = Omit<SearchInput, "userId" | "userIds" | "query">;
/** The user's message of a turn: when (default now), its metadata (`speaker`), your id of it. */
export interface TurnOptions extends ContextOptions {
    createdAt?: string;
    metadata?: Record<string, unknown>;
    externalId?: string;
    channel?: string;
}
export declare class MemoryClient {
    #private;
    /**
     * @param url the service's GraphQL endpoint (`http://127.0.0.1:8000/graphql/`).
     * @param credential sent as `Authorization: Bearer`: an API key on a backend, a user token in a browser, or a
     *   function returning the current one (called before each request: refresh an expiring token there).
     */
    constructor(url: string, credential: Credential, options?: ClientOptions);
    /** Send one typed document and return its `data`; throws a `MemoryApiError` for any error answered. */
    execute<R, V>(document: TypedDocumentString<R, V>, variables: V): Promise<R>;
    /** Store messages of a session (`addMessages`), e.g. the bot's reply after a `turn`. */
    addMessages(userId: string, sessionId: string, messages: MessageInput[], options?: {
        channel?: string;
    }): Promise<AddMessagesResultFragment>;
    /**
     * A chatbot turn's request: store the user's message and get the prompt of the bot's reply, at once
     * (`addMessages { context }`). Paste `.prompt` into the bot's system prompt; store the reply with `addMessages`.
     * With `parts: true`, the whole context (`window`, `memories`) too.
     */
    turn(userId: string, sessionId: string, content: string, options?: TurnOptions & {
        parts?: false;
    }): Promise<PromptFragment>;
    turn(userId: string, sessionId: string, content: string, options: TurnOptions & {
        parts: true;
    }): Promise<ContextFragment>;
    /** The context for a session's next turn, storing nothing (`context`). */
    context(userId: string, sessionId: string, options?: ContextOptions & {
        query?: string;
    }): Promise<ContextFragment>;
    /** Answer a question from one or more end users' memory (`search`). */
    search(userId: string | string[], query: string, options?: SearchOptions): Promise<SearchResultFragment>;
    /** A user's facts, the last changed first (`knowledge`): the active ones unless `status` says otherwise. */
    facts(userId: string, options?: {
        status?: KnowledgeStatus;
        limit?: number;
        offset?: number;
    }): Promise<FactFragment[]>;
    /** Remember a fact about the user (`addKnowledge`). */
    addFact(userId: string, content: string): Promise<FactFragment>;
    /** Change a fact's text (`updateKnowledge`; its history keeps every version). */
    correctFact(userId: string, factId: string | number, content: string): Promise<FactFragment>;
    /** Delete a fact (`deleteKnowledge`); returns its id. */
    forgetFact(userId: string, factId: string | number): Promise<string>;
    /** Approve a fact awaiting review (`approveKnowledge`; an API key that may curate). */
    approveFact(userId: string, factId: string | number): Promise<FactFragment>;
    /** Reject a fact awaiting review (`rejectKnowledge`; an API key that may curate). */
    rejectFact(userId: string, factId: string | number): Promise<FactFragment>;
    /** What the worker has still to do for the user (`backlog`): `allProcessed` once all is embedded,
     * summarised and read for facts. */
    backlog(userId: string): Promise<BacklogFragment>;
    /** Summarise the user's sessions now, not once idle (`createSummaries`); returns the ids of those queued. */
    createSummaries(userId: string, options?: {
        sessionId?: string;
        overwrite?: boolean;
        maxCount?: number;
    }): Promise<string[]>;
    /** Everything stored of the user as one JSON document (`exportUser`, docs/export.md). */
    exportUser(userId: string): Promise<Record<string, unknown>>;
    /** Remove every row of the user (`forgetUser`). */
    forgetUser(userId: string): Promise<ForgetUserResultFragment>;
    /** A backend's call: a short-lived token for one end user to hand to their browser (`createUserToken`). */
    createUserToken(userId: string, options?: {
        ttlSeconds?: number;
    }): Promise<UserTokenFragment>;
}
