// The one error type. Every refusal the API gives is an ApiError, rendered in the spec's
// shapes: {error, fields[]} on validation, {error, reason} on 401/403, and
// {error, code, retryable, suggested_action} for coded mail/batch errors.

export interface FieldError {
  path: string;
  message: string;
}

export interface ApiErrorOptions {
  code?: string;
  reason?: string;
  fields?: FieldError[];
  retryable?: boolean;
  suggestedAction?: string;
  details?: Record<string, unknown>;
  /** Extra top-level body fields (for example billing_url on 402). */
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Render as the nested shape {error: {type, message, code}}. */
  nested?: { type: string };
}

export class ApiError extends Error {
  constructor(public readonly status: number, message: string, public readonly options: ApiErrorOptions = {}) {
    super(message);
    this.name = 'ApiError';
  }

  get code(): string | undefined {
    return this.options.code;
  }

  toBody(): Record<string, unknown> {
    const o = this.options;
    if (o.nested) {
      return { error: { type: o.nested.type, message: this.message, code: o.code }, ...o.extra };
    }
    const body: Record<string, unknown> = { error: this.message };
    if (o.code) body.code = o.code;
    if (o.reason) body.reason = o.reason;
    if (o.fields) body.fields = o.fields;
    const retryable = o.retryable ?? (o.code ? this.status >= 500 : undefined);
    if (retryable !== undefined) body.retryable = retryable;
    if (o.suggestedAction) body.suggested_action = o.suggestedAction;
    if (o.details) body.details = o.details;
    return { ...body, ...o.extra };
  }
}

export const errors = {
  validation(fields: FieldError[], message = 'Validation failed'): ApiError {
    return new ApiError(400, message, {
      fields,
      retryable: false,
      suggestedAction: 'Fix the listed fields and send the request again.',
    });
  },
  badRequest(code: string, message: string, opts: Omit<ApiErrorOptions, 'code'> = {}): ApiError {
    return new ApiError(400, message, { code, retryable: false, ...opts });
  },
  unauthorized(reason: string, message = 'Authentication failed'): ApiError {
    return new ApiError(401, message, { reason });
  },
  forbidden(reason: string, message = 'Forbidden'): ApiError {
    return new ApiError(403, message, { reason });
  },
  notFound(what: string): ApiError {
    return new ApiError(404, `${what} not found`, { code: 'NOT_FOUND' });
  },
  conflict(code: string, message: string, opts: Omit<ApiErrorOptions, 'code'> = {}): ApiError {
    return new ApiError(409, message, { code, retryable: false, ...opts });
  },
  unprocessable(code: string, message: string, opts: Omit<ApiErrorOptions, 'code'> = {}): ApiError {
    return new ApiError(422, message, { code, retryable: false, ...opts });
  },
  unavailable(code: string, message: string, opts: Omit<ApiErrorOptions, 'code'> = {}): ApiError {
    return new ApiError(503, message, { code, retryable: true, suggestedAction: 'Retry the same request in a few seconds.', ...opts });
  },
};
