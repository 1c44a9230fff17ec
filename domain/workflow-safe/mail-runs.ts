// Pure rules of Business mail runs: the run's statuses, which mail classes commit on
// their own, the member settings a run needs, what keeps a run from being funded (and
// what a human does about it), and the shape of a client-chosen run id. The run
// workflow imports this module, so it stays free of I/O and Node built-ins.
import { spendRefusal } from './mail-rules';

export const MAIL_RUN_STATUSES = ['open', 'funding_pending', 'funded', 'closed', 'cancelled'] as const;
export type MailRunStatusName = (typeof MAIL_RUN_STATUSES)[number];

/** Final statuses: the run takes no more children and no more commits. */
export const SETTLED_MAIL_RUN_STATUSES: readonly MailRunStatusName[] = ['funded', 'closed', 'cancelled'];

export function isSettledMailRun(status: string): boolean {
  return (SETTLED_MAIL_RUN_STATUSES as readonly string[]).includes(status);
}

/** The spec's fixed window: a run closes five minutes after it opens. */
export const MAIL_RUN_WINDOW_SECONDS = 300;

/** Children per run; each becomes one workflow signalled when the run settles. */
export const MAIL_RUN_MAX_CHILDREN = 500;

/** Client-chosen run ids travel in URL paths: 1-100 characters, letters, digits and . _ : - */
export const MAIL_RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

/** Classes whose children are debited and submitted at once instead of waiting for the run's funding. */
export const IMMEDIATE_COMMIT_CLASSES = ['priority', 'carrierx_overnight', 'carriery_next_day'] as const;

export function commitsImmediately(mailClass: string): boolean {
  return (IMMEDIATE_COMMIT_CLASSES as readonly string[]).includes(mailClass);
}

export const MAIL_RUN_PENDING_REASONS = [
  'business_required',
  'agent_auto_fill_not_authorised',
  'daily_spend_limit',
  'insufficient_credits',
] as const;
export type MailRunPendingReason = (typeof MAIL_RUN_PENDING_REASONS)[number];

export const MAIL_RUN_CANCELLATION_REASONS = ['cancelled_by_caller', 'unfunded_at_close'] as const;
export type MailRunCancellationReason = (typeof MAIL_RUN_CANCELLATION_REASONS)[number];

export interface MemberRunSettings {
  business: boolean;
  agentAutoFill: boolean;
}

/** The member setting that keeps a run from opening, taking children or being funded; null when both allow it. */
export function settingsBlock(s: MemberRunSettings): 'business_required' | 'agent_auto_fill_not_authorised' | null {
  if (!s.business) return 'business_required';
  if (!s.agentAutoFill) return 'agent_auto_fill_not_authorised';
  return null;
}

export interface FundingCheck {
  settings: MemberRunSettings;
  /** What funding debits: the children still waiting for funding. */
  requiredCents: number;
  balanceCents: number;
  dailySpendLimitCents: number | null;
  /** Net live spend of the member over the last 24 hours. */
  spentLast24hCents: number;
}

/**
 * Why the run cannot be funded now, or null when it can. Settings come first (a human
 * must change them), then the daily spend cap over the run's total, then credits.
 */
export function fundingBlock(c: FundingCheck): MailRunPendingReason | null {
  const settings = settingsBlock(c.settings);
  if (settings) return settings;
  const spend = spendRefusal({
    costCents: c.requiredCents,
    maxCostCents: null,
    perTransactionLimitCents: null,
    dailySpendLimitCents: c.dailySpendLimitCents,
    spentLast24hCents: c.spentLast24hCents,
    live: true,
  });
  if (spend) return 'daily_spend_limit';
  if (c.balanceCents < c.requiredCents) return 'insufficient_credits';
  return null;
}

/** What the human has to do before the same commit is retried. */
export function pendingReasonAction(reason: MailRunPendingReason): string {
  switch (reason) {
    case 'insufficient_credits':
      return 'Ask your human to add credits at billing_url, then retry the same commit (POST /v1/mail-runs/{id}/commit) before closes_at.';
    case 'business_required':
      return 'The account is no longer a Business account; ask your human to restore Business status, then retry the same commit before closes_at.';
    case 'agent_auto_fill_not_authorised':
      return 'Ask your human to authorise Agent Auto-Fill for the account, then retry the same commit before closes_at.';
    case 'daily_spend_limit':
      return "Funding the run would pass the account's daily spend cap; ask your human to raise it, then retry the same commit before closes_at.";
  }
}
