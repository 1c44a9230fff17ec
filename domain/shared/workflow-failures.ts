// The one table from a workflow's refusal (an ApplicationFailure `type`, its message and
// its details) to the API's coded error, for every workflow the API sends Updates to.
// Details use one vocabulary: money is `credits_required_cents` / `credit_balance_cents`
// (the spec's 402 fields), states are `status`. Pure, so it is unit-tested without Temporal.
import { ApiError, codedError, errors } from './errors';
import { formatCents } from './money';

/** What the API needs of a workflow's ApplicationFailure. */
export interface WorkflowRefusal {
  type: string | null | undefined;
  message: string;
  details: Record<string, unknown>;
}

/** The money a refused debit needed and had: the detail names every area uses. */
export interface InsufficientCreditsDetails {
  credits_required_cents: number;
  credit_balance_cents: number;
}

/** The details a workflow's INSUFFICIENT_CREDITS failure carries, read from the debit's 402. */
export function insufficientCreditsDetails(err: ApiError): InsufficientCreditsDetails {
  const extra = (err.options.extra ?? {}) as Partial<InsufficientCreditsDetails>;
  return {
    credits_required_cents: Number(extra.credits_required_cents),
    credit_balance_cents: Number(extra.credit_balance_cents),
  };
}

/** 402 INSUFFICIENT_CREDITS with the spec's fields and where a human adds credits. */
export function insufficientCreditsError(billingUrl: string, required: number, balance: number): ApiError {
  return codedError(
    402,
    'INSUFFICIENT_CREDITS',
    `Insufficient credits: ${formatCents(required)} required, ${formatCents(balance)} available.`,
    {
      suggestedAction: 'Ask your human to add credits at billing_url, then retry.',
      extra: {
        billing_url: billingUrl,
        credits_required_cents: required,
        credit_balance_cents: balance,
        credit_shortfall_cents: required - balance,
      },
    },
  );
}

/** MAIL_STATE_CONFLICT: the piece's status does not allow the step. */
export function mailStateConflict(message: string, details: Record<string, unknown>): ApiError {
  return errors.conflict('MAIL_STATE_CONFLICT', message, {
    details,
    suggestedAction: "GET /v1/mail/{id} for the piece's current status; this step does not apply to it now.",
  });
}

/** MAIL_NOT_CANCELLABLE: printing has started, or the piece is final. */
export function mailNotCancellable(message: string, details: Record<string, unknown>): ApiError {
  return errors.conflict('MAIL_NOT_CANCELLABLE', message, {
    details,
    suggestedAction: 'Only pieces that are submitted and not yet printing (or awaiting approval) can be cancelled.',
  });
}

/** BATCH_STATE_CONFLICT: the step does not apply to the batch in its current status. */
export function batchStateConflict(message: string, details: Record<string, unknown>): ApiError {
  return errors.conflict('BATCH_STATE_CONFLICT', message, {
    details,
    suggestedAction: 'Read the batch again for its current status; this step does not apply to it now.',
  });
}

export function mailRunNotCommittable(message: string, details: Record<string, unknown>): ApiError {
  return errors.conflict('MAIL_RUN_NOT_COMMITTABLE', message, {
    details,
    suggestedAction: 'Open a new run (POST /v1/mail-runs) and send the pieces again.',
  });
}

export function mailRunNotCancellable(message: string, details: Record<string, unknown>): ApiError {
  return errors.conflict('MAIL_RUN_NOT_CANCELLABLE', message, {
    details,
    suggestedAction: 'Cancel single pieces with DELETE /v1/mail/{id} while they are submitted and not printing.',
  });
}

/** HANDLING_STATE_INVALID: the operation's status does not allow the step. */
export function handlingStateInvalid(message: string, details?: Record<string, unknown>): ApiError {
  return errors.conflict('HANDLING_STATE_INVALID', message, {
    details,
    suggestedAction: 'Read the operation again for its current status; this step does not apply to it now.',
  });
}

const SPEND_LIMIT_HINT = "Ask your human to raise the limit, or approve again when the last 24 hours' spend allows it.";

type Mapping = (r: WorkflowRefusal, billingUrl: string) => ApiError;

/** ApplicationFailure type -> the API's error. The types are the ones in workflows/<area>/contracts.ts. */
const TABLE: Record<string, Mapping> = {
  INSUFFICIENT_CREDITS: (r, billingUrl) =>
    insufficientCreditsError(
      billingUrl,
      Number(r.details.credits_required_cents),
      Number(r.details.credit_balance_cents),
    ),

  MAIL_STATE_CONFLICT: (r) => mailStateConflict(r.message, r.details),
  MAIL_NOT_CANCELLABLE: (r) => mailNotCancellable(r.message, r.details),
  MAIL_SPEND_LIMIT: (r) => {
    // The detail is the domain's Refusal: {code, message, details}.
    const refusal = r.details as { code?: string; message?: string; details?: Record<string, unknown> };
    return errors.unprocessable(refusal.code ?? 'SPEND_LIMIT_EXCEEDED', refusal.message ?? r.message, {
      details: refusal.details,
      suggestedAction: SPEND_LIMIT_HINT,
    });
  },
  MAIL_NOT_FOUND: () => errors.notFound('Outbound mail'),

  BATCH_MAIL_NOT_CANCELLABLE: (r) =>
    errors.conflict('BATCH_MAIL_NOT_CANCELLABLE', r.message, {
      suggestedAction: 'The facility has started or the batch is finished; it can no longer be cancelled.',
      details: r.details,
    }),
  BATCH_MAIL_NOT_CONFIRMABLE: (r) =>
    errors.conflict('BATCH_MAIL_NOT_CONFIRMABLE', r.message, {
      suggestedAction: 'Create a new batch.',
      details: r.details,
    }),
  BATCH_ADVANCE_INVALID: (r) =>
    errors.conflict('BATCH_ADVANCE_INVALID', r.message, {
      suggestedAction:
        'Poll GET /v1/batch-mail/{id} until status is submitted, then advance; completed batches cannot move further.',
      details: r.details,
    }),
  BATCH_STATE_CONFLICT: (r) => batchStateConflict(r.message, r.details),

  MAIL_RUN_NOT_COMMITTABLE: (r) => mailRunNotCommittable(r.message, r.details),
  MAIL_RUN_NOT_CANCELLABLE: (r) => mailRunNotCancellable(r.message, r.details),
  MAIL_RUN_NOT_FOUND: () => errors.notFound('Mail run'),

  HANDLING_VERSION_STALE: (r) =>
    errors.conflict('HANDLING_VERSION_STALE', r.message, {
      details: r.details,
      suggestedAction: 'Re-read the operation and retry with its current version.',
    }),
  HANDLING_STATE_INVALID: (r) => handlingStateInvalid(r.message, r.details),
  HANDLING_INVALID: (r) =>
    errors.validation(
      (r.details.fields as Array<{ path: string; message: string }> | undefined) ?? [
        { path: 'body', message: r.message },
      ],
    ),
};

/** The failure types the table knows; anything else is a 500 WORKFLOW_ERROR. */
export const MAPPED_FAILURE_TYPES: readonly string[] = Object.keys(TABLE);

export function workflowRefusalToApiError(refusal: WorkflowRefusal, billingUrl: string): ApiError {
  const mapping = refusal.type ? TABLE[refusal.type] : undefined;
  if (mapping) return mapping(refusal, billingUrl);
  return codedError(500, 'WORKFLOW_ERROR', refusal.message, {
    suggestedAction: 'Retry the same request; quote the request_id if it persists.',
  });
}

/**
 * 503 WORKFLOW_UNAVAILABLE: no worker took the call within the deadline (or Temporal did
 * not answer). The step may still be applied once a worker runs; a retry with the same
 * Idempotency-Key is the same Update, so it answers that outcome and never applies twice.
 */
export function workflowUnavailable(deadlineMs: number): ApiError {
  return errors.unavailable(
    'WORKFLOW_UNAVAILABLE',
    `The object's workflow did not answer within ${Math.round(deadlineMs / 100) / 10} s; the step is not confirmed.`,
    {
      retryable: true,
      details: { deadline_ms: deadlineMs },
      suggestedAction:
        'Retry the same request with the same Idempotency-Key in a few seconds: the step is applied at most once, ' +
        'and a retry answers with its outcome once the workflow runs again.',
    },
  );
}
