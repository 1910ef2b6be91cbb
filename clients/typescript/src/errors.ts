// The service's errors as exceptions carrying the API's codes (docs/api.md, "Errors"), one class per kind
// of fix, as in the Python client (clients/python/memory_client/errors.py).

/** One message of a refused input: the `field` to fix (`messages.0.role`; null: the whole input). */
export interface FieldError {
  field: string | null;
  message: string;
  kind: string;
  code: string | null;
}

/** A GraphQL error as the service sends it. */
export interface GraphQLError {
  message: string;
  path?: ReadonlyArray<string | number>;
  extensions?: { code?: string; [key: string]: unknown };
}

/**
 * An error the service answered with: `code` is the API's (`FORBIDDEN`, `VALIDATION`, `UNAUTHENTICATED`...),
 * or `HTTP_<status>` / `INVALID_RESPONSE` when the answer was not GraphQL at all.
 */
export class MemoryApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly fieldErrors: FieldError[];
  readonly errors: GraphQLError[];

  constructor(
    message: string,
    options: { code: string; status?: number; fieldErrors?: FieldError[]; errors?: GraphQLError[] },
  ) {
    const fields = (options.fieldErrors ?? []).map((e) => `${e.field ?? "input"}: ${e.message}`).join("; ");
    super(`${options.code}: ${fields || message}`);
    this.name = new.target.name;
    this.code = options.code;
    this.status = options.status ?? 200;
    this.fieldErrors = options.fieldErrors ?? [];
    this.errors = options.errors ?? [];
  }
}

/** `UNAUTHENTICATED` (HTTP 401): no credential, or a wrong, revoked or expired one (a user token: mint a new one). */
export class UnauthenticatedError extends MemoryApiError {}
/** `FORBIDDEN`: the credential does not cover that end user, or may not curate (or mint tokens). */
export class ForbiddenError extends MemoryApiError {}
/** Input to fix (`VALIDATION`, `ERROR` with `fieldErrors`, `BAD_USER_INPUT`, `PAYLOAD_TOO_LARGE`...): nothing stored. */
export class InputError extends MemoryApiError {}
/** `NOT_FOUND`. */
export class NotFoundError extends MemoryApiError {}
/** HTTP 429 (e.g. from a proxy): send again later. */
export class RateLimitedError extends MemoryApiError {}
/** The service cannot answer now (`MODEL_BACKEND_*`, `REEMBEDDING_NEEDED`, `INTERNAL_ERROR`, an HTTP 5xx). */
export class BackendError extends MemoryApiError {}

const CLASSES: Record<string, typeof MemoryApiError> = {
  UNAUTHENTICATED: UnauthenticatedError,
  FORBIDDEN: ForbiddenError,
  PERMISSION: ForbiddenError,
  BAD_USER_INPUT: InputError,
  BAD_REQUEST: InputError,
  GRAPHQL_PARSE_FAILED: InputError,
  GRAPHQL_VALIDATION_FAILED: InputError,
  PAYLOAD_TOO_LARGE: InputError,
  VALIDATION: InputError,
  ERROR: InputError,
  NOT_FOUND: NotFoundError,
  MODEL_BACKEND_UNAVAILABLE: BackendError,
  MODEL_BACKEND_TIMEOUT: BackendError,
  MODEL_BACKEND_ERROR: BackendError,
  REEMBEDDING_NEEDED: BackendError,
  INTERNAL_ERROR: BackendError,
};
const STATUS_CLASSES: Record<number, typeof MemoryApiError> = {
  400: InputError,
  401: UnauthenticatedError,
  403: ForbiddenError,
  404: NotFoundError,
  413: InputError,
  429: RateLimitedError,
};

function errorOf(
  message: string,
  code: string,
  details: { status?: number; fieldErrors?: FieldError[]; errors?: GraphQLError[] },
): MemoryApiError {
  const status = details.status ?? 200;
  const Class = CLASSES[code] ?? STATUS_CLASSES[status] ?? (status >= 500 ? BackendError : MemoryApiError);
  return new Class(message, { code, ...details });
}

/** The exception for a GraphQL answer's `errors` (its first one's code), or for an HTTP error without them. */
export function errorFromGraphQL(errors: GraphQLError[], status = 200): MemoryApiError {
  const first = errors[0];
  const code = first?.extensions?.code ?? `HTTP_${status}`;
  return errorOf(first?.message ?? `HTTP ${status}`, code, { status, errors });
}

/** The exception for an `OperationInfo` result (input refused): one `FieldError` per message. */
export function errorFromOperationInfo(messages: FieldError[]): MemoryApiError {
  const first = messages[0];
  const code = first ? (first.code ?? first.kind) : "VALIDATION";
  return errorOf(first?.message ?? "Input refused.", code, { fieldErrors: messages });
}
