// Business mail runs: open (POST /v1/mail-runs), read, commit and cancel, shared by REST
// and MCP, plus the checks outbound mail runs for a run's children and the operator's
// member settings. A run is opened by a live agent key without force_approval, for a
// Business member whose human authorised Agent Auto-Fill. Its window is fixed when it
// opens (closes_at = opened_at + 300 s); the `mail-run-<uuid>` workflow owns that timer
// and the funding, so this module only reads runs, inserts new ones and sends the
// workflow its updates (record.ts: the row and how it shows; workflow.ts: the workflow).
import { randomUUID } from 'node:crypto';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import type { MemberRow } from '../accounts/rows';
import { canSee } from '../shared/scoping';
import { assertLinkedObjects } from '../shared/linked-objects';
import { balanceCents, billingUrl } from '../billing/credits';
import { ApiError, codedError, errors } from '../../domain/shared/errors';
import {
  MAIL_RUN_ID_PATTERN,
  MAIL_RUN_MAX_CHILDREN,
  MailRunPendingReason,
  pendingReasonAction,
  settingsBlock,
} from '../../domain/workflow-safe/mail-runs';
import { cancelMailRunUpdate, commitMailRunUpdate } from '../../workflows/mail-runs/contracts';
import {
  creditsRequired,
  loadMailRun,
  loadMailRunById,
  loadMailRunChildren,
  MailRun,
  MailRunRow,
  presentMailRun,
  toMailRun,
} from './record';
import { insertOpenRun } from './rows';
import { updateMemberRunSettings } from '../accounts/member-rows';
import { ensureRunWorkflow, notCancellable, notCommittable, runMailRunUpdate } from './workflow';
import { sqlRows, type Queryable } from '../shared/sql';

function runPath(deps: Deps, run: Pick<MailRunRow, 'mail_run_id'>, suffix = ''): string {
  return `${deps.config.baseUrl}/v1/mail-runs/${encodeURIComponent(run.mail_run_id)}${suffix}`;
}

// ---------------------------------------------------------------------------------------
// The rules every run call and every child checks

/** Runs are for live agent keys that do not force per-piece approval. */
function assertRunKey(auth: AuthContext, what: string): void {
  if (!isAgentKey(auth))
    throw errors.forbidden(
      'agent_key_required',
      `${what} needs an agent key (sk_agent_); member keys cannot act in a Business mail run.`,
    );
  if (auth.testMode)
    throw errors.forbidden(
      'live_key_required',
      `${what} needs a live agent key; Business mail runs are not available to test keys.`,
    );
  if (auth.forceApproval) {
    throw errors.conflict(
      'MAIL_RUN_FORCE_APPROVAL',
      `${what} is not possible with a force_approval key: a Business mail run is not combinable with per-piece approval.`,
      {
        suggestedAction:
          'Use an agent credential created with force_approval false, or send the pieces on their own for approval.',
      },
    );
  }
}

function settingsRefusal(block: 'business_required' | 'agent_auto_fill_not_authorised'): ApiError {
  return block === 'business_required'
    ? codedError(403, 'BUSINESS_REQUIRED', 'Business mail runs need a Business account.', {
        reason: 'business_required',
        suggestedAction: 'Ask your human to upgrade the account to Business, then open the run again.',
      })
    : codedError(
        403,
        'AUTO_FILL_NOT_AUTHORISED',
        "The account's human has not authorised Agent Auto-Fill, which Business mail runs need.",
        {
          reason: 'agent_auto_fill_not_authorised',
          suggestedAction: 'Ask your human to authorise Agent Auto-Fill for the account, then open the run again.',
        },
      );
}

async function assertMemberSettings(db: Queryable, memberId: string): Promise<void> {
  const [m] = await sqlRows<Pick<MemberRow, 'business' | 'agent_auto_fill'>>(
    db,
    `SELECT business, agent_auto_fill FROM members WHERE id = $1`,
    [memberId],
  );
  const block = settingsBlock({ business: m.business, agentAutoFill: m.agent_auto_fill });
  if (block) throw settingsRefusal(block);
}

/** The caller's run; another member's or agent's run is 404, as is an id that cannot name a run. */
async function visibleRun(deps: Deps, auth: AuthContext, mailRunId: string): Promise<MailRunRow> {
  const run = MAIL_RUN_ID_PATTERN.test(mailRunId) ? await loadMailRun(deps.db, auth.memberId!, mailRunId) : null;
  // Business mail runs exist in the live environment only.
  if (!run || !canSee(auth, { memberId: run.member_id, agentId: run.agent_id, testMode: false })) {
    throw codedError(404, 'MAIL_RUN_NOT_FOUND', 'Mail run not found', {
      suggestedAction: 'Open it first with POST /v1/mail-runs {mail_run_id}.',
    });
  }
  return run;
}

function runClosed(run: Pick<MailRunRow, 'mail_run_id' | 'status' | 'closes_at'>, status: string): ApiError {
  return errors.conflict(
    'MAIL_RUN_CLOSED',
    `The mail run ${run.mail_run_id} no longer takes pieces (it is ${status}; its window closes at ${run.closes_at.toISOString()}).`,
    {
      details: { mail_run_id: run.mail_run_id, status, closes_at: run.closes_at.toISOString() },
      suggestedAction: 'Open a new run (POST /v1/mail-runs) for further pieces, or send them without mail_run_id.',
    },
  );
}

// ---------------------------------------------------------------------------------------
// Endpoints

/** An open call's answer: the run, and whether this call created it. */
export interface OpenedMailRun {
  created: boolean;
  run: MailRun;
}

/**
 * POST /v1/mail-runs: opens the run. Opening the same mail_run_id again answers the
 * existing run unchanged (created false): its close time never moves.
 */
export async function openMailRun(
  deps: Deps,
  auth: AuthContext,
  input: { mail_run_id: string },
): Promise<OpenedMailRun> {
  assertRunKey(auth, 'Opening a Business mail run');
  const existing = async (run: MailRunRow) => {
    if (run.agent_id !== auth.agentId) {
      throw errors.conflict('MAIL_RUN_ID_TAKEN', 'Another agent of this account already uses this mail_run_id.', {
        suggestedAction: 'Choose a new mail_run_id (a UUID is a good choice).',
      });
    }
    await ensureRunWorkflow(deps, run);
    return { created: false, run: await presentMailRun(deps, run) };
  };
  const before = await loadMailRun(deps.db, auth.memberId!, input.mail_run_id);
  if (before) return existing(before);
  await assertMemberSettings(deps.db, auth.memberId!);
  const inserted = await insertOpenRun(
    deps.db,
    {
      id: randomUUID(),
      mailRunId: input.mail_run_id,
      memberId: auth.memberId!,
      agentId: auth.agentId,
      ownerKey: auth.ownerKey,
    },
    deps.config.mailRunWindowSeconds,
  );
  // A concurrent open of the same id committed first: answer with its run.
  if (!inserted) return existing((await loadMailRun(deps.db, auth.memberId!, input.mail_run_id))!);
  await ensureRunWorkflow(deps, inserted);
  return { created: true, run: await presentMailRun(deps, inserted) };
}

/** GET /v1/mail-runs/{id}: the run with its children. */
export async function getMailRun(deps: Deps, auth: AuthContext, mailRunId: string): Promise<MailRun> {
  const run = await visibleRun(deps, auth, mailRunId);
  // A run whose workflow start was lost gets it now, so its window still closes.
  if (!run.workflow_started_at) await ensureRunWorkflow(deps, run).catch(() => undefined);
  return presentMailRun(deps, run);
}

/** A commit that funded the run (now or earlier: a repeat debits nothing). */
export interface FundedMailRun {
  mail_run: MailRun;
  status: 'funded';
  credits_charged_cents: number;
  credit_balance_cents: number;
  already_committed: boolean;
}

/** A commit whose funding waits for a human: what is missing, and the same call to retry before closes_at. */
export interface FundingPendingMailRun {
  mail_run: MailRun;
  status: 'funding_pending';
  pending_reason: MailRunPendingReason;
  credits_required_cents: number;
  credit_balance_cents: number;
  credit_shortfall_cents: number;
  billing_url: string;
  retry: { method: 'POST'; url: string; before: string };
  suggested_action: string;
}

/**
 * POST /v1/mail-runs/{id}/commit: funded once credits and settings allow (a repeat
 * answers the same, debiting nothing); funding_pending while funding waits for a human
 * (credits, Business status, Auto-Fill or the daily spend cap), and the same call is
 * retried. A run that can no longer be funded is refused.
 */
export async function commitMailRun(
  deps: Deps,
  auth: AuthContext,
  mailRunId: string,
): Promise<FundedMailRun | FundingPendingMailRun> {
  assertRunKey(auth, 'Committing a Business mail run');
  const run = await visibleRun(deps, auth, mailRunId);
  let alreadyCommitted = run.status === 'funded';
  let chargedCents = 0;
  let now = run;
  if (run.status === 'open' || run.status === 'funding_pending') {
    // No Update id from a key: a commit answered "funding pending" must run again when retried.
    const result = await runMailRunUpdate(deps, run, commitMailRunUpdate);
    // No answer means the workflow had already finished: another call settled the run.
    alreadyCommitted = result ? result.alreadyFunded : true;
    chargedCents = result ? result.chargedCents : 0;
    now = (await loadMailRunById(deps.db, run.id))!;
  }
  const children = await loadMailRunChildren(deps.db, now);
  const balance = await balanceCents(deps.db, now.member_id);
  const mailRun = toMailRun(now, children);
  if (now.status === 'funded') {
    return {
      mail_run: mailRun,
      status: now.status,
      credits_charged_cents: chargedCents,
      credit_balance_cents: balance,
      already_committed: alreadyCommitted,
    };
  }
  if (now.status === 'funding_pending') {
    const required = creditsRequired(children);
    return {
      mail_run: mailRun,
      status: now.status,
      pending_reason: now.pending_reason!,
      credits_required_cents: required,
      credit_balance_cents: balance,
      credit_shortfall_cents: Math.max(0, required - balance),
      billing_url: billingUrl(deps),
      retry: { method: 'POST', url: runPath(deps, now, '/commit'), before: now.closes_at.toISOString() },
      suggested_action: pendingReasonAction(now.pending_reason!),
    };
  }
  throw notCommittable(now);
}

/** DELETE /v1/mail-runs/{id}: before funding only; the waiting children are cancelled, nothing is charged for them. */
export async function cancelMailRun(
  deps: Deps,
  auth: AuthContext,
  mailRunId: string,
): Promise<{ mail_run: MailRun; already_cancelled: boolean }> {
  const run = await visibleRun(deps, auth, mailRunId);
  let alreadyCancelled = run.status === 'cancelled';
  let now = run;
  if (!alreadyCancelled) {
    if (run.status === 'funded' || run.status === 'closed') throw notCancellable(run);
    const result = await runMailRunUpdate(deps, run, cancelMailRunUpdate);
    alreadyCancelled = result ? result.alreadyCancelled : true;
    now = (await loadMailRunById(deps.db, run.id))!;
  }
  if (now.status !== 'cancelled') throw notCancellable(now);
  return { mail_run: await presentMailRun(deps, now), already_cancelled: alreadyCancelled };
}

// ---------------------------------------------------------------------------------------
// Children (POST /v1/mail with mail_run_id)

/**
 * The open run a new piece joins, checked before anything is stored: a live agent key
 * without force_approval, the run's own agent, the member's current settings, and a
 * window that is still open.
 */
export async function mailRunForChild(deps: Deps, auth: AuthContext, mailRunId: string): Promise<MailRunRow> {
  assertRunKey(auth, 'Sending a piece in a Business mail run');
  await assertLinkedObjects(deps.db, auth, { mail_run_id: ['mail_run', mailRunId] });
  const run = await visibleRun(deps, auth, mailRunId);
  await assertMemberSettings(deps.db, run.member_id);
  if (run.status !== 'open' || run.closes_at.getTime() <= Date.now())
    throw runClosed(run, run.status === 'open' ? 'past its window' : run.status);
  await ensureRunWorkflow(deps, run);
  return run;
}

/**
 * Inside the submission's transaction, after the member row is locked: the run still
 * takes pieces. A commit or the window's close locks the run row to change its status,
 * so no piece can join a run after it stopped taking them.
 */
export async function lockMailRunForChild(tx: Queryable, run: MailRunRow): Promise<void> {
  const [now] = await sqlRows<Pick<MailRunRow, 'status' | 'closes_at'> & { accepting: boolean }>(
    tx,
    `SELECT status, closes_at, closes_at > now() AS accepting FROM mail_runs WHERE id = $1 FOR SHARE`,
    [run.id],
  );
  if (now.status !== 'open' || !now.accepting)
    throw runClosed({ ...run, closes_at: now.closes_at }, now.status === 'open' ? 'past its window' : now.status);
  const [{ n }] = await sqlRows<{ n: number }>(
    tx,
    `SELECT count(*)::int AS n FROM outbound_mail WHERE member_id = $1 AND mail_run_id = $2`,
    [run.member_id, run.mail_run_id],
  );
  if (n >= MAIL_RUN_MAX_CHILDREN) {
    throw errors.unprocessable(
      'MAIL_RUN_CHILD_LIMIT',
      `A mail run takes at most ${MAIL_RUN_MAX_CHILDREN} pieces; nothing was charged.`,
      {
        details: { max_children: MAIL_RUN_MAX_CHILDREN },
        suggestedAction: 'Commit this run and open another one for the remaining pieces.',
      },
    );
  }
}

// ---------------------------------------------------------------------------------------
// Operator: the human's Business status and Agent Auto-Fill authorisation

export async function setMemberRunSettings(
  deps: Deps,
  memberId: string,
  change: { business?: boolean; agentAutoFill?: boolean },
) {
  const row = await updateMemberRunSettings(deps.db, memberId, change.business ?? null, change.agentAutoFill ?? null);
  if (!row) throw new Error(`member ${memberId} not found`);
  return { member_id: row.id, business: row.business, agent_auto_fill: row.agent_auto_fill };
}
