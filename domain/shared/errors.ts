// The one error type. Every refusal the API gives is an ApiError, rendered in the spec's
// shapes: {error, fields[]} on validation, {error, reason} on 401/403, and
// {error, code, retryable, suggested_action} for coded errors. Every error with a code
// carries all three: the options type will not accept a code without retryable and
// suggestedAction, and the constructor refuses one at run time as well.

/**
 * Every `reason` an error body can carry (401/403 refusals, and the few other refusals that
 * name one), with what it means. The OpenAPI document's error schema lists them as an enum:
 * a new reason is added here, or the code that gives it does not compile.
 */
export const ERROR_REASONS = {
  token_missing: 'no Authorization: Bearer header',
  token_malformed: 'the header or the key is not well formed',
  token_prefix_unknown: 'the key does not start with a known prefix',
  key_not_found: 'no such key',
  key_revoked: 'the key was revoked',
  key_expired: 'the key is past its expiry',
  member_suspended: "the key's account is suspended",
  facility_inactive: "the facility key's facility is inactive",
  token_audience_mismatch: 'an OAuth access token issued for another resource',
  insufficient_scope: 'the agent credential lacks a scope the endpoint needs (details.required_scopes)',
  member_key_required: 'the endpoint needs a member key',
  agent_key_required: 'the endpoint needs an agent-scoped key',
  facility_key_required: 'the endpoint needs a facility key',
  key_kind_not_allowed: 'this kind of key cannot call the endpoint',
  live_key_required: 'test keys cannot use the endpoint',
  test_key_required: 'a sandbox endpoint: only test keys',
  sandbox_not_supported: 'physical inbound custody has no sandbox',
  packages_not_enabled: 'physical inbound custody is not enabled for the account',
  package_belongs_to_another_agent: "the package is another agent's",
  business_required: 'Business mail runs need a Business account (code BUSINESS_REQUIRED)',
  agent_auto_fill_not_authorised: 'the human has not authorised Agent Auto-Fill (code AUTO_FILL_NOT_AUTHORISED)',
  intake_secret_missing: 'inbound email intake: no X-Intake-Secret header',
  intake_secret_invalid: 'inbound email intake: the X-Intake-Secret is not valid',
  sign_in_link_invalid: 'console: the sign-in link was used, expired or mistyped',
  url_invalid: 'a signed URL (a dry run proof_url) that this service did not sign, or that was changed',
  url_expired: "a signed URL (a dry run proof_url) past its hour, or whose proof's document is no longer kept",
} as const;
export type ErrorReason = keyof typeof ERROR_REASONS;

export interface FieldError {
  path: string;
  message: string;
}

interface CommonErrorOptions {
  reason?: ErrorReason;
  fields?: FieldError[];
  details?: Record<string, unknown>;
  /** Extra top-level body fields (for example billing_url on 402). */
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Render as the nested shape {error: {type, message, code}} (retryable and suggested_action beside it). */
  nested?: { type: string };
}

/** An error without a code (validation, 401/403 reasons): retryable and suggestedAction are optional. */
export interface UncodedErrorOptions extends CommonErrorOptions {
  code?: never;
  retryable?: boolean;
  suggestedAction?: string;
}

/** A coded error: the spec's {code, retryable, suggested_action}, all three. */
export interface CodedErrorOptions extends CommonErrorOptions {
  code: string;
  retryable: boolean;
  suggestedAction: string;
}

export type ApiErrorOptions = UncodedErrorOptions | CodedErrorOptions;

export class ApiError extends Error {
  constructor(
    public readonly status: number,
    message: string,
    public readonly options: ApiErrorOptions = {},
  ) {
    super(message);
    this.name = 'ApiError';
    if (options.code !== undefined && (typeof options.retryable !== 'boolean' || !options.suggestedAction)) {
      throw new Error(`ApiError ${options.code} needs retryable and suggestedAction`);
    }
  }

  get code(): string | undefined {
    return this.options.code;
  }

  toBody(): Record<string, unknown> {
    const o = this.options;
    const coded = {
      ...(o.retryable !== undefined ? { retryable: o.retryable } : {}),
      ...(o.suggestedAction ? { suggested_action: o.suggestedAction } : {}),
    };
    if (o.nested) {
      return { error: { type: o.nested.type, message: this.message, code: o.code }, ...coded, ...o.extra };
    }
    const body: Record<string, unknown> = { error: this.message };
    if (o.code) body.code = o.code;
    if (o.reason) body.reason = o.reason;
    if (o.fields) body.fields = o.fields;
    Object.assign(body, coded);
    if (o.details) body.details = o.details;
    return { ...body, ...o.extra };
  }
}

/** What a coded helper needs besides its code: suggestedAction always; retryable where the status does not decide it. */
export type CodedExtras = Omit<CodedErrorOptions, 'code' | 'retryable'> & { retryable?: boolean };

/** The one way to build a coded error: a status, a code, a message and the coded fields. */
export function codedError(status: number, code: string, message: string, opts: CodedExtras): ApiError {
  return new ApiError(status, message, { ...opts, code, retryable: opts.retryable ?? status >= 500 });
}

export const errors = {
  validation(fields: FieldError[], message = 'Validation failed'): ApiError {
    return new ApiError(400, message, {
      fields,
      retryable: false,
      suggestedAction: 'Fix the listed fields and send the request again.',
    });
  },
  badRequest(code: string, message: string, opts: CodedExtras): ApiError {
    return codedError(400, code, message, opts);
  },
  unauthorized(reason: ErrorReason, message = 'Authentication failed'): ApiError {
    return new ApiError(401, message, { reason });
  },
  forbidden(reason: ErrorReason, message = 'Forbidden'): ApiError {
    return new ApiError(403, message, { reason });
  },
  notFound(what: string): ApiError {
    return codedError(404, 'NOT_FOUND', `${what} not found`, {
      suggestedAction:
        'Check the id. Objects of another account, another agent or the other environment (live or sandbox) are not visible to this key.',
    });
  },
  conflict(code: string, message: string, opts: CodedExtras): ApiError {
    return codedError(409, code, message, opts);
  },
  unprocessable(code: string, message: string, opts: CodedExtras): ApiError {
    return codedError(422, code, message, opts);
  },
  unavailable(code: string, message: string, opts: Partial<CodedExtras> = {}): ApiError {
    return codedError(503, code, message, { suggestedAction: 'Retry the same request in a few seconds.', ...opts });
  },
};
