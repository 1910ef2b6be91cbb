// A typed client of the long-term memory service for chatbots, for browsers and Node 20+.
//
// `MemoryClient` is the hand-written facade: each method sends one of the documented operations, as a
// typed document GraphQL Code Generator wrote from the schema snapshot (src/generated/), and returns the
// part of the answer a bot or a page uses; the service's errors are thrown as `MemoryApiError`s.
// In a browser, give it a user token its backend minted (`createUserToken`), never an API key.

import {
  AddFactDocument,
  AddMessagesDocument,
  AddMessagesWithContextDocument,
  AddMessagesWithPromptDocument,
  ApproveFactDocument,
  CorrectFactDocument,
  CreateSummariesDocument,
  CreateUserTokenDocument,
  ExportUserDocument,
  FactsDocument,
  ForgetFactDocument,
  ForgetUserDocument,
  GetBacklogDocument,
  GetContextDocument,
  RejectFactDocument,
  SearchDocument,
} from "./generated/graphql.js";
import type {
  AddMessagesResultFragment,
  BacklogFragment,
  ContextFragment,
  ContextInput,
  FactFragment,
  ForgetUserResultFragment,
  KnowledgeStatus,
  MessageInput,
  ProblemsFragment,
  PromptFragment,
  SearchInput,
  SearchResultFragment,
  TypedDocumentString,
  UserTokenFragment,
} from "./generated/graphql.js";
import { MemoryApiError, errorFromGraphQL, errorFromOperationInfo, type GraphQLError } from "./errors.js";

export * from "./errors.js";
export type {
  AddMessagesResultFragment as AddMessagesResult,
  BacklogFragment as Backlog,
  ContextFragment as Context,
  FactFragment as Fact,
  ForgetUserResultFragment as ForgetUserResult,
  HitFragment as Hit,
  HitKind,
  KnowledgeStatus,
  MessageInput,
  PromptFragment as Prompt,
  SearchResultFragment as SearchResult,
  TurnFragment as Turn,
  UserTokenFragment as UserToken,
} from "./generated/graphql.js";

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

type Refused = { __typename: "OperationInfo" } & ProblemsFragment;

/** The result of a field returning `Result | OperationInfo`: the result, or the refusal thrown. */
function accepted<U extends { __typename: string }, N extends Exclude<U["__typename"], "OperationInfo">>(
  payload: U,
  typename: N,
): Extract<U, { __typename: N }> {
  if (payload.__typename === "OperationInfo") {
    throw errorFromOperationInfo((payload as unknown as Refused).messages);
  }
  if (payload.__typename !== typename) {
    throw new MemoryApiError(`The answer has no ${typename}.`, { code: "INVALID_RESPONSE" });
  }
  return payload as Extract<U, { __typename: N }>;
}

function present<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) {
    throw new MemoryApiError(`The answer has no ${what}.`, { code: "INVALID_RESPONSE" });
  }
  return value;
}

export class MemoryClient {
  readonly #url: string;
  readonly #credential: Credential;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  /**
   * @param url the service's GraphQL endpoint (`http://127.0.0.1:8000/graphql/`).
   * @param credential sent as `Authorization: Bearer`: an API key on a backend, a user token in a browser, or a
   *   function returning the current one (called before each request: refresh an expiring token there).
   */
  constructor(url: string, credential: Credential, options: ClientOptions = {}) {
    this.#url = url;
    this.#credential = credential;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** Send one typed document and return its `data`; throws a `MemoryApiError` for any error answered. */
  async execute<R, V>(document: TypedDocumentString<R, V>, variables: V): Promise<R> {
    const credential = typeof this.#credential === "function" ? await this.#credential() : this.#credential;
    const response = await this.#fetch(this.#url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${credential}` },
      body: JSON.stringify({ query: document.toString(), variables }),
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    let body: { data?: R | null; errors?: GraphQLError[]; message?: string; code?: string } | undefined;
    try {
      body = await response.json();
    } catch {
      body = undefined;
    }
    if (body === undefined || body === null || typeof body !== "object") {
      if (!response.ok) throw errorFromGraphQL([], response.status);
      throw new MemoryApiError("The answer is not a GraphQL response.", {
        code: "INVALID_RESPONSE",
        status: response.status,
      });
    }
    if (body.errors?.length) throw errorFromGraphQL(body.errors, response.status);
    if (!response.ok) {
      const error = body.message ? [{ message: body.message, extensions: { code: body.code } }] : [];
      throw errorFromGraphQL(error as GraphQLError[], response.status);
    }
    return present(body.data, "data");
  }

  /** Store messages of a session (`addMessages`), e.g. the bot's reply after a `turn`. */
  async addMessages(
    userId: string,
    sessionId: string,
    messages: MessageInput[],
    options: { channel?: string } = {},
  ): Promise<AddMessagesResultFragment> {
    const data = await this.execute(AddMessagesDocument, { userId, sessionId, messages, channel: options.channel });
    return accepted(data.addMessages, "AddMessagesResult");
  }

  /**
   * A chatbot turn's request: store the user's message and get the prompt of the bot's reply, at once
   * (`addMessages { context }`). Paste `.prompt` into the bot's system prompt; store the reply with `addMessages`.
   * With `parts: true`, the whole context (`window`, `memories`) too.
   */
  turn(userId: string, sessionId: string, content: string, options?: TurnOptions & { parts?: false }): Promise<PromptFragment>;
  turn(userId: string, sessionId: string, content: string, options: TurnOptions & { parts: true }): Promise<ContextFragment>;
  async turn(
    userId: string,
    sessionId: string,
    content: string,
    options: TurnOptions & { parts?: boolean } = {},
  ): Promise<PromptFragment | ContextFragment> {
    const { createdAt, metadata, externalId, channel, parts, ...context } = options;
    const variables = {
      userId,
      sessionId,
      channel,
      messages: [{ role: "user", content, createdAt, metadata, externalId }],
      ...context,
    };
    if (parts) {
      const data = await this.execute(AddMessagesWithContextDocument, variables);
      return present(accepted(data.addMessages, "AddMessagesResult").context, "context");
    }
    const data = await this.execute(AddMessagesWithPromptDocument, variables);
    return present(accepted(data.addMessages, "AddMessagesResult").context, "context");
  }

  /** The context for a session's next turn, storing nothing (`context`). */
  async context(
    userId: string,
    sessionId: string,
    options: ContextOptions & { query?: string } = {},
  ): Promise<ContextFragment> {
    const data = await this.execute(GetContextDocument, { input: { userId, sessionId, ...options } });
    return accepted(data.context, "Context");
  }

  /** Answer a question from one or more end users' memory (`search`). */
  async search(userId: string | string[], query: string, options: SearchOptions = {}): Promise<SearchResultFragment> {
    const users = typeof userId === "string" ? { userId } : { userIds: userId };
    const data = await this.execute(SearchDocument, { input: { query, ...users, ...options } });
    return accepted(data.search, "SearchResult");
  }

  /** A user's facts, the last changed first (`knowledge`): the active ones unless `status` says otherwise. */
  async facts(
    userId: string,
    options: { status?: KnowledgeStatus; limit?: number; offset?: number } = {},
  ): Promise<FactFragment[]> {
    const { status = "ACTIVE", limit = 100, offset = 0 } = options;
    const data = await this.execute(FactsDocument, { userId, status, pagination: { limit, offset } });
    return data.knowledge.results;
  }

  /** Remember a fact about the user (`addKnowledge`). */
  async addFact(userId: string, content: string): Promise<FactFragment> {
    return accepted((await this.execute(AddFactDocument, { userId, content })).addKnowledge, "Knowledge");
  }

  /** Change a fact's text (`updateKnowledge`; its history keeps every version). */
  async correctFact(userId: string, factId: string | number, content: string): Promise<FactFragment> {
    const data = await this.execute(CorrectFactDocument, { userId, id: String(factId), content });
    return accepted(data.updateKnowledge, "Knowledge");
  }

  /** Delete a fact (`deleteKnowledge`); returns its id. */
  async forgetFact(userId: string, factId: string | number): Promise<string> {
    const data = await this.execute(ForgetFactDocument, { userId, id: String(factId) });
    return accepted(data.deleteKnowledge, "DeleteKnowledgeResult").deletedId;
  }

  /** Approve a fact awaiting review (`approveKnowledge`; an API key that may curate). */
  async approveFact(userId: string, factId: string | number): Promise<FactFragment> {
    const data = await this.execute(ApproveFactDocument, { userId, id: String(factId) });
    return accepted(data.approveKnowledge, "Knowledge");
  }

  /** Reject a fact awaiting review (`rejectKnowledge`; an API key that may curate). */
  async rejectFact(userId: string, factId: string | number): Promise<FactFragment> {
    const data = await this.execute(RejectFactDocument, { userId, id: String(factId) });
    return accepted(data.rejectKnowledge, "Knowledge");
  }

  /** What the worker has still to do for the user (`backlog`): `allProcessed` once all is embedded,
   * summarised and read for facts. */
  async backlog(userId: string): Promise<BacklogFragment> {
    return (await this.execute(GetBacklogDocument, { userId })).backlog;
  }

  /** Summarise the user's sessions now, not once idle (`createSummaries`); returns the ids of those queued. */
  async createSummaries(
    userId: string,
    options: { sessionId?: string; overwrite?: boolean; maxCount?: number } = {},
  ): Promise<string[]> {
    const data = await this.execute(CreateSummariesDocument, { userId, ...options });
    return accepted(data.createSummaries, "QueuedSummariesResult").queuedSessionIds;
  }

  /** Everything stored of the user as one JSON document (`exportUser`, docs/export.md). */
  async exportUser(userId: string): Promise<Record<string, unknown>> {
    return (await this.execute(ExportUserDocument, { userId })).exportUser as Record<string, unknown>;
  }

  /** Remove every row of the user (`forgetUser`). */
  async forgetUser(userId: string): Promise<ForgetUserResultFragment> {
    return accepted((await this.execute(ForgetUserDocument, { userId })).forgetUser, "ForgetUserResult");
  }

  /** A backend's call: a short-lived token for one end user to hand to their browser (`createUserToken`). */
  async createUserToken(userId: string, options: { ttlSeconds?: number } = {}): Promise<UserTokenFragment> {
    const data = await this.execute(CreateUserTokenDocument, { userId, ttlSeconds: options.ttlSeconds });
    return accepted(data.createUserToken, "UserToken");
  }
}
