// Request and response schemas of Business mail runs.
import { z } from 'zod';
import {
  MAIL_RUN_CANCELLATION_REASONS,
  MAIL_RUN_ID_PATTERN,
  MAIL_RUN_PENDING_REASONS,
  MAIL_RUN_STATUSES,
} from '../../../domain/workflow-safe/mail-runs';
import { MAIL_STATUSES } from '../../../domain/workflow-safe/mail-rules';

const mailRunId = z.string({ error: 'required' }).regex(MAIL_RUN_ID_PATTERN, {
  message: '1-100 characters: letters, digits, and . _ : - (not first); a UUID is a good choice',
});

export const OpenMailRunBody = z.strictObject({
  mail_run_id: mailRunId.describe('chosen by the client; opening the same id again answers the existing run'),
});

export const MailRunParams = z.object({ id: mailRunId });

export const MailRunSchema = z.object({
  id: z.string().describe('the client-chosen mail_run_id'),
  object: z.literal('mail_run'),
  status: z
    .enum(MAIL_RUN_STATUSES)
    .describe(
      'open -> (commit) funding_pending -> funded; or cancelled; closed when the window ended with nothing to fund',
    ),
  agent_id: z.string(),
  opened_at: z.string(),
  closes_at: z.string().describe('opened_at + window_seconds; never moves'),
  window_seconds: z.number().int(),
  committed_at: z.string().nullable(),
  funded_at: z.string().nullable(),
  closed_at: z.string().nullable(),
  cancelled_at: z.string().nullable(),
  cancellation_reason: z.enum(MAIL_RUN_CANCELLATION_REASONS).nullable(),
  pending_reason: z
    .enum(MAIL_RUN_PENDING_REASONS)
    .nullable()
    .describe('what keeps the run from being funded (set by a commit that answered 202)'),
  children: z.array(
    z.object({
      id: z.string().uuid(),
      status: z.enum(MAIL_STATUSES),
      mail_class: z.string(),
      cost_cents: z.number().int(),
      commits_immediately: z
        .boolean()
        .describe('priority, carrierx_overnight and carriery_next_day: debited and submitted at once'),
      created_at: z.string(),
    }),
  ),
  total_cents: z.number().int().describe('cost of every child that is not cancelled'),
  credits_required_cents: z.number().int().describe('what funding debits: the children waiting for funding'),
  funded_cents: z.number().int().describe("what the run's funding debited"),
  next_step: z.string(),
  test_mode: z.boolean(),
});

const Nested = MailRunSchema.omit({ test_mode: true });

export const CommittedMailRunSchema = z.object({
  mail_run: Nested,
  status: z.literal('funded'),
  credits_charged_cents: z.number().int().describe('debited by this call (0 on a repeat)'),
  credit_balance_cents: z.number().int(),
  already_committed: z.boolean(),
  test_mode: z.boolean(),
});

export const FundingPendingSchema = z.object({
  mail_run: Nested,
  status: z.literal('funding_pending'),
  pending_reason: z.enum(MAIL_RUN_PENDING_REASONS),
  credits_required_cents: z.number().int(),
  credit_balance_cents: z.number().int(),
  credit_shortfall_cents: z.number().int(),
  billing_url: z.string(),
  retry: z.object({ method: z.literal('POST'), url: z.string(), before: z.string().describe("the run's closes_at") }),
  suggested_action: z.string(),
  test_mode: z.boolean(),
});

export const CancelledMailRunSchema = z.object({
  mail_run: Nested,
  already_cancelled: z.boolean(),
  test_mode: z.boolean(),
});
