// The error bodies of the OpenAPI document: one schema for every refusal the API gives
// (domain/shared/errors.ts ApiError rendered by api/middleware/errors.ts, with `test_mode`
// added by api/middleware/request-context.ts), and its extensions by status: 402 adds the
// billing fields, 409 names the details of a conflict, and the nested shape of the spec's
// agent_name_taken example. Routes never give an error status a schema of their own: the
// document picks one of these by status (api/discovery/openapi.ts).
import { z } from 'zod';
import { ERROR_REASONS, ErrorReason } from '../../domain/shared/errors';

const REASONS = Object.keys(ERROR_REASONS) as [ErrorReason, ...ErrorReason[]];

export const FieldErrorBody = z.object({
  path: z.string().describe('dot-path of the refused field: `body` for the whole body, `query.limit`, `params.id`'),
  message: z.string(),
});

const errorFields = {
  error: z.string().describe('what went wrong, in words'),
  code: z
    .string()
    .optional()
    .describe('a stable machine-readable code (NOT_FOUND, DUPLICATE_OUTBOUND_MAIL, RATE_LIMITED, ...)'),
  reason: z
    .enum(REASONS)
    .optional()
    .describe(
      `why a key was refused (401/403) or a refusal's cause: ${REASONS.map((r) => `${r}: ${ERROR_REASONS[r]}`).join('; ')}`,
    ),
  fields: z.array(FieldErrorBody).optional().describe('400 validation: one entry per refused field'),
  retryable: z.boolean().optional().describe('whether the same request may succeed later (true on 429 and most 5xx)'),
  suggested_action: z.string().optional().describe('what to do next, in words'),
  details: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('facts about the refusal (for example required_scopes, current_version, status)'),
  request_id: z.string().describe('the X-Request-Id of the request: quote it when asking for help'),
  test_mode: z.boolean().describe('true when a test key made the request'),
};

/** Every refusal: {error, code?, reason?, fields?, retryable?, suggested_action?, details?, request_id, test_mode}. */
export const ErrorBody = z.object(errorFields).describe('An error');

/** 402 INSUFFICIENT_CREDITS: the error fields and what the piece needs. */
export const InsufficientCreditsErrorBody = z
  .object({
    ...errorFields,
    code: z.literal('INSUFFICIENT_CREDITS'),
    billing_url: z.string().describe('where a human adds credits (ends in #credits)'),
    credits_required_cents: z.number().int(),
    credit_balance_cents: z.number().int(),
    credit_shortfall_cents: z.number().int(),
  })
  .describe('402 INSUFFICIENT_CREDITS: nothing was spent');

/** 409: the error fields, and the id of the object a duplicate refusal points to. */
export const ConflictErrorBody = z
  .object({
    ...errorFields,
    details: z
      .object({
        existing_outbound_mail_id: z
          .uuid()
          .optional()
          .describe('DUPLICATE_OUTBOUND_MAIL: the piece already sent to this recipient'),
        existing_expected_shipment_id: z
          .uuid()
          .optional()
          .describe('EXPECTED_SHIPMENT_DUPLICATE: the expected shipment already recorded'),
        current_version: z.number().int().optional().describe('a version conflict: the current version'),
      })
      .catchall(z.unknown())
      .optional(),
  })
  .describe('409: the object is not in a state for the request, or the request repeats one already made');

/** The spec's nested example: {error: {type, message, code}} (409 agent_name_taken). */
export const NestedErrorBody = z
  .object({
    error: z.object({
      type: z.literal('invalid_request'),
      message: z.string(),
      code: z.string().describe('agent_name_taken'),
    }),
    retryable: z.boolean(),
    suggested_action: z.string(),
    request_id: z.string(),
    test_mode: z.boolean(),
  })
  .describe('The nested error shape of the spec (409 agent_name_taken on POST /v1/agents)');
