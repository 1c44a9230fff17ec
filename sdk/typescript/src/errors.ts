// Typed errors: every refusal of the API has the ApiErrorBody shape (error, code, retryable,
// suggested_action, fields, reason, request_id, details; 402 and 409 add fields). ApiError
// carries them; a subclass per status family and `code` to tell refusals apart.

export interface ErrorField {
  path: string;
  message: string;
}

/** The body of a refusal as the API sends it (unknown fields are kept in `body`). */
export interface ApiErrorBody {
  error?: string | { type?: string; message?: string; code?: string };
  code?: string;
  retryable?: boolean;
  suggested_action?: string;
  fields?: ErrorField[];
  reason?: string;
  request_id?: string;
  test_mode?: boolean;
  details?: Record<string, unknown>;
  [extra: string]: unknown;
}

export class ApiError extends Error {
  readonly status: number;
  /** The machine-readable code (RATE_LIMITED, INSUFFICIENT_CREDITS, ...); from the nested shape's code where that is used. */
  readonly code: string | undefined;
  readonly retryable: boolean;
  readonly suggestedAction: string | undefined;
  /** 400 validation: one entry per refused field, `path` a dot-path. */
  readonly fields: ErrorField[];
  /** 401/403: why the credential was refused (token_missing, insufficient_scope, ...). */
  readonly reason: string | undefined;
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  /** The whole body as received. */
  readonly body: ApiErrorBody | string | undefined;
  readonly headers: Headers | undefined;

  constructor(status: number, body: ApiErrorBody | string | undefined, headers?: Headers) {
    const b: ApiErrorBody = typeof body === 'object' && body !== null ? body : {};
    const nested = typeof b.error === 'object' && b.error !== null ? b.error : undefined;
    const message = (nested ? nested.message : b.error) ?? (typeof body === 'string' && body ? body : `HTTP ${status}`);
    super(`${status}${(b.code ?? nested?.code) ? ` ${b.code ?? nested?.code}` : ''}: ${message}`);
    this.name = new.target.name;
    this.status = status;
    this.code = b.code ?? nested?.code;
    this.retryable = b.retryable ?? (status === 429 || status >= 500);
    this.suggestedAction = b.suggested_action;
    this.fields = Array.isArray(b.fields) ? b.fields : [];
    this.reason = b.reason;
    this.requestId = b.request_id ?? headers?.get('x-request-id') ?? undefined;
    this.details = b.details;
    this.body = body;
    this.headers = headers;
  }
}

/** 400: the request was refused as it is; `fields` names what to fix. */
export class ValidationError extends ApiError {}
/** 401: no usable credential (`reason`). */
export class AuthenticationError extends ApiError {}
/** 402 INSUFFICIENT_CREDITS: buy credits at `billingUrl`; nothing was charged. */
export class InsufficientCreditsError extends ApiError {
  get billingUrl(): string | undefined {
    return typeof this.body === 'object' ? (this.body?.billing_url as string | undefined) : undefined;
  }
  get creditsRequiredCents(): number | undefined {
    return typeof this.body === 'object' ? (this.body?.credits_required_cents as number | undefined) : undefined;
  }
  get creditShortfallCents(): number | undefined {
    return typeof this.body === 'object' ? (this.body?.credit_shortfall_cents as number | undefined) : undefined;
  }
}
/** 403: the credential may not do this (`reason`). */
export class PermissionError extends ApiError {}
/** 404: no such object for this credential. */
export class NotFoundError extends ApiError {}
/** 409: conflicts with the object's state (a duplicate letter, a stale instructions version, ...). */
export class ConflictError extends ApiError {}
/** 422: a limit refused it (cost cap, spend cap, idempotency key reused with another body). */
export class UnprocessableError extends ApiError {}
/** 429 RATE_LIMITED, after the client's retries were spent. */
export class RateLimitError extends ApiError {}
/** 5xx. */
export class ServerError extends ApiError {}

/** The ApiError subclass for a status. */
export function apiError(status: number, body: ApiErrorBody | string | undefined, headers?: Headers): ApiError {
  const Class =
    status === 400
      ? ValidationError
      : status === 401
        ? AuthenticationError
        : status === 402
          ? InsufficientCreditsError
          : status === 403
            ? PermissionError
            : status === 404
              ? NotFoundError
              : status === 409
                ? ConflictError
                : status === 422
                  ? UnprocessableError
                  : status === 429
                    ? RateLimitError
                    : status >= 500
                      ? ServerError
                      : ApiError;
  return new Class(status, body, headers);
}

/** Whether `err` is an ApiError (with this `code`, when given): `if (isApiError(err, 'INSUFFICIENT_CREDITS')) ...`. */
export function isApiError(err: unknown, code?: string): err is ApiError {
  return err instanceof ApiError && (code === undefined || err.code === code);
}
