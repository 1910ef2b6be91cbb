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
    extensions?: {
        code?: string;
        [key: string]: unknown;
    };
}
/**
 * An error the service answered with: `code` is the API's (`FORBIDDEN`, `VALIDATION`, `UNAUTHENTICATED`...),
 * or `HTTP_<status>` / `INVALID_RESPONSE` when the answer was not GraphQL at all.
 */
export declare class MemoryApiError extends Error {
    readonly code: string;
    readonly status: number;
    readonly fieldErrors: FieldError[];
    readonly errors: GraphQLError[];
    constructor(message: string, options: {
        code: string;
        status?: number;
        fieldErrors?: FieldError[];
        errors?: GraphQLError[];
    });
}
/** `UNAUTHENTICATED` (HTTP 401): no credential, or a wrong, revoked or expired one (a user token: mint a new one). */
export declare class UnauthenticatedError extends MemoryApiError {
}
/** `FORBIDDEN`: the credential does not cover that end user, or may not curate (or mint tokens). */
export declare class ForbiddenError extends MemoryApiError {
}
/** Input to fix (`VALIDATION`, `ERROR` with `fieldErrors`, `BAD_USER_INPUT`, `PAYLOAD_TOO_LARGE`...): nothing stored. */
export declare class InputError extends MemoryApiError {
}
/** `NOT_FOUND`. */
export declare class NotFoundError extends MemoryApiError {
}
/** HTTP 429 (e.g. from a proxy): send again later. */
export declare class RateLimitedError extends MemoryApiError {
}
/** The service cannot answer now (`MODEL_BACKEND_*`, `REEMBEDDING_NEEDED`, `INTERNAL_ERROR`, an HTTP 5xx). */
export declare class BackendError extends MemoryApiError {
}
/** The exception for a GraphQL answer's `errors` (its first one's code), or for an HTTP error without them. */
export declare function errorFromGraphQL(errors: GraphQLError[], status?: number): MemoryApiError;
/** The exception for an `OperationInfo` result (input refused): one `FieldError` per message. */
export declare function errorFromOperationInfo(messages: FieldError[]): MemoryApiError;
