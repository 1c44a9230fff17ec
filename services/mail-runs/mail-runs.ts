// Business mail runs: open (POST /v1/mail-runs), read, commit and cancel, shared by REST
// and MCP, plus the checks outbound mail runs for a run's children and the operator's
// member settings. A run is opened by a live agent key without force_approval, for a
// Business member whose human authorised Agent Auto-Fill. Its window is fixed when it
// opens (closes_at = opened_at + 300 s); the `mail-run-<uuid>` workflow owns that timer
// and the funding, so this module only reads runs, inserts new ones and sends the
// workflow its updates.
import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/client';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import { canSee } from '../shared/scoping';
import { assertLinkedObjects } from '../shared/linked-objects';
import { balanceCents, billingUrl } from '../billing/credits';
import { ApiError, codedError, errors } from '../../domain/shared/errors';
import { mailRunNotCancellable, mailRunNotCommittable } from '../../domain/shared/workflow-failures';
import { updateWorkflow } from '../shared/workflow-gateway';
import {
  commitsImmediately, MAIL_RUN_ID_PATTERN, MAIL_RUN_MAX_CHILDREN, MailRunCancellationReason, MailRunPendingReason,
  MailRunStatusName, pendingReasonAction, settingsBlock,
} from '../../domain/workflow-safe/mail-runs';
import type { MailStatusName } from '../../domain/workflow-safe/mail-rules';
import {
  cancelMailRunUpdate, commitMailRunUpdate, MAIL_RUN_WORKFLOW, MailRunWorkflowInput, mailRunWorkflowId,
} from '../../workflows/mail-runs/contracts';
import { AgentId, MemberId, ObjectId, ObjectStatus, TestMode } from '../../workflows/shared/search-attributes';

type Queryable = Pick<EntityManager, 'query'>;

/** One row of `mail_runs`. */
export interface MailRunRow {
  id: string;
  mail_run_id: string;
  member_id: string;
  agent_id: string;
  opened_by_key: string;
  status: MailRunStatusName;
  window_seconds: number;
  opened_at: Date;
  closes_at: Date;
  committed_at: Date | null;
  funded_at: Date | null;
  funded_cents: number;
  pending_reason: MailRunPendingReason | null;
  cancellation_reason: MailRunCancellationReason | null;
  cancelled_at: Date | null;
  closed_at: Date | null;
  workflow_started_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface MailRunChildRow {
  id: string;
  status: MailStatusName;
  mail_class: string;
  cost_cents: number;
  run_funded_at: Date | null;
  created_at: Date;
}

export async function loadMailRunById(db: Queryable, id: string, opts: { forUpdate?: boolean } = {}): Promise<MailRunRow | null> {
  const [row] = await db.query(`SELECT * FROM mail_runs WHERE id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  return row ?? null;
}

async function loadMailRun(db: Queryable, memberId: string, mailRunId: string): Promise<MailRunRow | null> {
  const [row] = await db.query(`SELECT * FROM mail_runs WHERE member_id = $1 AND mail_run_id = $2`, [memberId, mailRunId]);
  return row ?? null;
}

/** The run's children, oldest first (every piece sent with its mail_run_id). */
export async function loadMailRunChildren(db: Queryable, run: Pick<MailRunRow, 'member_id' | 'mail_run_id'>): Promise<MailRunChildRow[]> {
  return db.query(
    `SELECT id, status, mail_class, cost_cents, run_funded_at, created_at FROM outbound_mail
      WHERE member_id = $1 AND mail_run_id = $2 ORDER BY created_at, id`, [run.member_id, run.mail_run_id]);
}

/** What funding debits: children still waiting for funding that no funding has debited. */
export function creditsRequired(children: MailRunChildRow[]): number {
  return children.filter((c) => c.status === 'funding_pending' && !c.run_funded_at).reduce((sum, c) => sum + c.cost_cents, 0);
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function runPath(deps: Deps, run: Pick<MailRunRow, 'mail_run_id'>, suffix = ''): string {
  return `${deps.config.baseUrl}/v1/mail-runs/${encodeURIComponent(run.mail_run_id)}${suffix}`;
}

function nextStep(run: MailRunRow): string {
  switch (run.status) {
    case 'open':
      return `Add pieces with POST /v1/mail and mail_run_id=${run.mail_run_id} until closes_at, then POST /v1/mail-runs/${run.mail_run_id}/commit. ` +
        'priority, carrierx_overnight and carriery_next_day pieces are debited and submitted at once; the others wait for the run\'s funding. ' +
        'At closes_at an uncommitted run is committed automatically: funded if credits cover it, cancelled if not.';
    case 'funding_pending':
      return `Funding is pending (${run.pending_reason}). ${pendingReasonAction(run.pending_reason!)} If it is still pending at closes_at the run is cancelled.`;
    case 'funded':
      return 'Funded: every waiting piece was debited once and moves to submitted by itself; poll GET /v1/mail/{id} for each child.';
    case 'closed':
      return 'The window closed with no piece waiting for funding; nothing was charged by the run.';
    case 'cancelled':
      return 'Cancelled: the pieces that waited for funding were cancelled and nothing was charged for them. Open a new run to send them.';
  }
}

/** The run as the API shows it. */
export function toMailRun(run: MailRunRow, children: MailRunChildRow[]) {
  return {
    id: run.mail_run_id,
    object: 'mail_run' as const,
    status: run.status,
    agent_id: run.agent_id,
    opened_at: run.opened_at.toISOString(),
    closes_at: run.closes_at.toISOString(),
    window_seconds: run.window_seconds,
    committed_at: iso(run.committed_at),
    funded_at: iso(run.funded_at),
    closed_at: iso(run.closed_at),
    cancelled_at: iso(run.cancelled_at),
    cancellation_reason: run.cancellation_reason,
    pending_reason: run.pending_reason,
    children: children.map((c) => ({
      id: c.id,
      status: c.status,
      mail_class: c.mail_class,
      cost_cents: c.cost_cents,
      commits_immediately: commitsImmediately(c.mail_class),
      created_at: c.created_at.toISOString(),
    })),
    total_cents: children.filter((c) => c.status !== 'cancelled').reduce((sum, c) => sum + c.cost_cents, 0),
    credits_required_cents: creditsRequired(children),
    funded_cents: run.funded_cents,
    next_step: nextStep(run),
  };
}

export type MailRun = ReturnType<typeof toMailRun>;

async function present(deps: Deps, run: MailRunRow): Promise<MailRun> {
  return toMailRun(run, await loadMailRunChildren(deps.db, run));
}

// ---------------------------------------------------------------------------------------
// The rules every run call and every child checks

/** Runs are for live agent keys that do not force per-piece approval. */
function assertRunKey(auth: AuthContext, what: string): void {
  if (!isAgentKey(auth)) throw errors.forbidden('agent_key_required', `${what} needs an agent key (sk_agent_); member keys cannot act in a Business mail run.`);
  if (auth.testMode) throw errors.forbidden('live_key_required', `${what} needs a live agent key; Business mail runs are not available to test keys.`);
  if (auth.forceApproval) {
    throw errors.conflict('MAIL_RUN_FORCE_APPROVAL', `${what} is not possible with a force_approval key: a Business mail run is not combinable with per-piece approval.`, {
      suggestedAction: 'Use an agent credential created with force_approval false, or send the pieces on their own for approval.',
    });
  }
}

function settingsRefusal(block: 'business_required' | 'agent_auto_fill_not_authorised'): ApiError {
  return block === 'business_required'
    ? codedError(403, 'BUSINESS_REQUIRED', 'Business mail runs need a Business account.', {
      reason: 'business_required',
      suggestedAction: 'Ask your human to upgrade the account to Business, then open the run again.',
    })
    : codedError(403, 'AUTO_FILL_NOT_AUTHORISED', 'The account\'s human has not authorised Agent Auto-Fill, which Business mail runs need.', {
      reason: 'agent_auto_fill_not_authorised',
      suggestedAction: 'Ask your human to authorise Agent Auto-Fill for the account, then open the run again.',
    });
}

async function assertMemberSettings(db: Queryable, memberId: string): Promise<void> {
  const [m] = await db.query(`SELECT business, agent_auto_fill FROM members WHERE id = $1`, [memberId]);
  const block = settingsBlock({ business: m.business, agentAutoFill: m.agent_auto_fill });
  if (block) throw settingsRefusal(block);
}

/** The caller's run; another member's or agent's run is 404, as is an id that cannot name a run. */
async function visibleRun(deps: Deps, auth: AuthContext, mailRunId: string): Promise<MailRunRow> {
  const run = MAIL_RUN_ID_PATTERN.test(mailRunId) ? await loadMailRun(deps.db, auth.memberId!, mailRunId) : null;
  // Business mail runs exist in the live environment only.
  if (!run || !canSee(auth, { memberId: run.member_id, agentId: run.agent_id, testMode: false })) {
    throw codedError(404, 'MAIL_RUN_NOT_FOUND', 'Mail run not found', { suggestedAction: 'Open it first with POST /v1/mail-runs {mail_run_id}.' });
  }
  return run;
}

function runClosed(run: Pick<MailRunRow, 'mail_run_id' | 'status' | 'closes_at'>, status: string): ApiError {
  return errors.conflict('MAIL_RUN_CLOSED', `The mail run ${run.mail_run_id} no longer takes pieces (it is ${status}; its window closes at ${run.closes_at.toISOString()}).`, {
    details: { mail_run_id: run.mail_run_id, status, closes_at: run.closes_at.toISOString() },
    suggestedAction: 'Open a new run (POST /v1/mail-runs) for further pieces, or send them without mail_run_id.',
  });
}

// ---------------------------------------------------------------------------------------
// The workflow

function workflowInput(run: MailRunRow): MailRunWorkflowInput {
  return {
    mailRunUuid: run.id,
    mailRunId: run.mail_run_id,
    memberId: run.member_id,
    agentId: run.agent_id,
    status: run.status,
    openedAt: run.opened_at.toISOString(),
    windowSeconds: run.window_seconds,
  };
}

/** Also used by the reconciler to start a run's workflow again from its row. */
export function mailRunStartOptions(deps: Deps, run: MailRunRow) {
  return {
    taskQueue: deps.config.taskQueue,
    workflowId: mailRunWorkflowId(run.id),
    args: [workflowInput(run)] as [MailRunWorkflowInput],
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    typedSearchAttributes: [
      { key: ObjectStatus, value: run.status },
      { key: ObjectId, value: run.mail_run_id },
      { key: MemberId, value: run.member_id },
      { key: AgentId, value: run.agent_id },
      { key: TestMode, value: false },
    ],
  };
}

async function markStarted(deps: Deps, run: MailRunRow): Promise<void> {
  if (run.workflow_started_at) return;
  await deps.db.query(`UPDATE mail_runs SET workflow_started_at = now() WHERE id = $1 AND workflow_started_at IS NULL`, [run.id]);
}

/** The run's workflow could not be started (Temporal unreachable). */
function workflowUnavailable(what: string): ApiError {
  return errors.unavailable('MAIL_RUN_WORKFLOW_UNAVAILABLE',
    `${what} could not be confirmed right now. Repeat the same call: it never charges twice, and the run's close time stays as it is.`);
}

/** Starts `mail-run-<uuid>` unless it exists (running or finished). Safe to repeat. */
async function ensureRunWorkflow(deps: Deps, run: MailRunRow): Promise<void> {
  if (run.workflow_started_at) return;
  try {
    await deps.temporal.workflow.start(MAIL_RUN_WORKFLOW, { ...mailRunStartOptions(deps, run), workflowIdConflictPolicy: 'USE_EXISTING' });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
      deps.log.error({ err, mail_run: run.id }, 'starting the mail run workflow failed');
      throw workflowUnavailable('Opening the mail run');
    }
  }
  await markStarted(deps, run);
}

function notCommittable(run: MailRunRow): ApiError {
  return mailRunNotCommittable(`The mail run is ${run.status}; it can no longer be committed.`, { status: run.status, cancellation_reason: run.cancellation_reason });
}

function notCancellable(run: MailRunRow): ApiError {
  return mailRunNotCancellable(`The mail run is ${run.status}; only a run that is not funded yet can be cancelled.`, { status: run.status });
}

/**
 * Sends an update to the run's workflow through the gateway (starting it first if its
 * start was lost) and waits for the answer. Null when the workflow has finished: Postgres
 * has the answer. A refusal is answered from the run as it is now.
 */
async function runUpdate<R>(deps: Deps, run: MailRunRow, def: UpdateDefinition<R, []>, updateId?: string): Promise<R | null> {
  try {
    const answer = await updateWorkflow(deps, {
      workflowId: mailRunWorkflowId(run.id),
      update: def,
      args: [],
      updateId,
      startFromRow: () => ({
        workflowType: MAIL_RUN_WORKFLOW, options: mailRunStartOptions(deps, run), markStarted: () => markStarted(deps, run),
      }),
    });
    return answer.closed ? null : answer.value;
  } catch (err) {
    if (err instanceof ApiError && err.code === 'MAIL_RUN_NOT_CANCELLABLE') throw notCancellable((await loadMailRunById(deps.db, run.id))!);
    if (err instanceof ApiError && err.code === 'MAIL_RUN_NOT_COMMITTABLE') throw notCommittable((await loadMailRunById(deps.db, run.id))!);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------
// Endpoints

/**
 * POST /v1/mail-runs: opens the run (201). Opening the same mail_run_id again answers the
 * existing run (200) unchanged: its close time never moves.
 */
export async function openMailRun(deps: Deps, auth: AuthContext, input: { mail_run_id: string }): Promise<{ status: number; body: MailRun }> {
  assertRunKey(auth, 'Opening a Business mail run');
  const existing = async (run: MailRunRow) => {
    if (run.agent_id !== auth.agentId) {
      throw errors.conflict('MAIL_RUN_ID_TAKEN', 'Another agent of this account already uses this mail_run_id.', {
        suggestedAction: 'Choose a new mail_run_id (a UUID is a good choice).',
      });
    }
    await ensureRunWorkflow(deps, run);
    return { status: 200, body: await present(deps, run) };
  };
  const before = await loadMailRun(deps.db, auth.memberId!, input.mail_run_id);
  if (before) return existing(before);
  await assertMemberSettings(deps.db, auth.memberId!);
  const [inserted]: MailRunRow[] = await deps.db.query(
    `INSERT INTO mail_runs (id, mail_run_id, member_id, agent_id, opened_by_key, status, window_seconds, opened_at, closes_at)
     VALUES ($1, $2, $3, $4, $5, 'open', $6::int, now(), now() + make_interval(secs => $6::int))
     ON CONFLICT (member_id, mail_run_id) DO NOTHING RETURNING *`,
    [randomUUID(), input.mail_run_id, auth.memberId, auth.agentId, auth.ownerKey, deps.config.mailRunWindowSeconds]);
  // A concurrent open of the same id committed first: answer with its run.
  if (!inserted) return existing((await loadMailRun(deps.db, auth.memberId!, input.mail_run_id))!);
  await ensureRunWorkflow(deps, inserted);
  return { status: 201, body: await present(deps, inserted) };
}

/** GET /v1/mail-runs/{id}: the run with its children. */
export async function getMailRun(deps: Deps, auth: AuthContext, mailRunId: string): Promise<MailRun> {
  const run = await visibleRun(deps, auth, mailRunId);
  // A run whose workflow start was lost gets it now, so its window still closes.
  if (!run.workflow_started_at) await ensureRunWorkflow(deps, run).catch(() => undefined);
  return present(deps, run);
}

/**
 * POST /v1/mail-runs/{id}/commit. 200 once funded (a repeat answers the same, debiting
 * nothing); 202 while funding waits for a human (credits, Business status, Auto-Fill or
 * the daily spend cap): the body says what is missing, and the same call is retried.
 */
export async function commitMailRun(deps: Deps, auth: AuthContext, mailRunId: string): Promise<{ status: number; body: Record<string, unknown> }> {
  assertRunKey(auth, 'Committing a Business mail run');
  const run = await visibleRun(deps, auth, mailRunId);
  let alreadyCommitted = run.status === 'funded';
  let chargedCents = 0;
  let now = run;
  if (run.status === 'open' || run.status === 'funding_pending') {
    // No Update id from a key: a commit answered "funding pending" must run again when retried.
    const result = await runUpdate(deps, run, commitMailRunUpdate);
    // No answer means the workflow had already finished: another call settled the run.
    alreadyCommitted = result ? result.alreadyFunded : true;
    chargedCents = result ? result.chargedCents : 0;
    now = (await loadMailRunById(deps.db, run.id))!;
  }
  const children = await loadMailRunChildren(deps.db, now);
  const balance = await balanceCents(deps.db, now.member_id);
  const mailRun = toMailRun(now, children);
  if (now.status === 'funded') {
    return { status: 200, body: { mail_run: mailRun, status: now.status, credits_charged_cents: chargedCents, credit_balance_cents: balance, already_committed: alreadyCommitted } };
  }
  if (now.status === 'funding_pending') {
    const required = creditsRequired(children);
    return {
      status: 202,
      body: {
        mail_run: mailRun,
        status: now.status,
        pending_reason: now.pending_reason,
        credits_required_cents: required,
        credit_balance_cents: balance,
        credit_shortfall_cents: Math.max(0, required - balance),
        billing_url: billingUrl(deps),
        retry: { method: 'POST', url: runPath(deps, now, '/commit'), before: now.closes_at.toISOString() },
        suggested_action: pendingReasonAction(now.pending_reason!),
      },
    };
  }
  throw notCommittable(now);
}

/** DELETE /v1/mail-runs/{id}: before funding only; the waiting children are cancelled, nothing is charged for them. */
export async function cancelMailRun(deps: Deps, auth: AuthContext, mailRunId: string): Promise<{ mail_run: MailRun; already_cancelled: boolean }> {
  const run = await visibleRun(deps, auth, mailRunId);
  let alreadyCancelled = run.status === 'cancelled';
  let now = run;
  if (!alreadyCancelled) {
    if (run.status === 'funded' || run.status === 'closed') throw notCancellable(run);
    const result = await runUpdate(deps, run, cancelMailRunUpdate);
    alreadyCancelled = result ? result.alreadyCancelled : true;
    now = (await loadMailRunById(deps.db, run.id))!;
  }
  if (now.status !== 'cancelled') throw notCancellable(now);
  return { mail_run: await present(deps, now), already_cancelled: alreadyCancelled };
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
  if (run.status !== 'open' || run.closes_at.getTime() <= Date.now()) throw runClosed(run, run.status === 'open' ? 'past its window' : run.status);
  await ensureRunWorkflow(deps, run);
  return run;
}

/**
 * Inside the submission's transaction, after the member row is locked: the run still
 * takes pieces. A commit or the window's close locks the run row to change its status,
 * so no piece can join a run after it stopped taking them.
 */
export async function lockMailRunForChild(tx: Queryable, run: MailRunRow): Promise<void> {
  const [now] = await tx.query(`SELECT status, closes_at, closes_at > now() AS accepting FROM mail_runs WHERE id = $1 FOR SHARE`, [run.id]);
  if (now.status !== 'open' || !now.accepting) throw runClosed({ ...run, closes_at: now.closes_at }, now.status === 'open' ? 'past its window' : now.status);
  const [{ n }] = await tx.query(`SELECT count(*)::int AS n FROM outbound_mail WHERE member_id = $1 AND mail_run_id = $2`, [run.member_id, run.mail_run_id]);
  if (n >= MAIL_RUN_MAX_CHILDREN) {
    throw errors.unprocessable('MAIL_RUN_CHILD_LIMIT', `A mail run takes at most ${MAIL_RUN_MAX_CHILDREN} pieces; nothing was charged.`, {
      details: { max_children: MAIL_RUN_MAX_CHILDREN }, suggestedAction: 'Commit this run and open another one for the remaining pieces.',
    });
  }
}

// ---------------------------------------------------------------------------------------
// Operator: the human's Business status and Agent Auto-Fill authorisation

export async function setMemberRunSettings(deps: Deps, memberId: string, change: { business?: boolean; agentAutoFill?: boolean }) {
  const rows = await deps.db.query(
    `UPDATE members SET business = COALESCE($2, business), agent_auto_fill = COALESCE($3, agent_auto_fill) WHERE id = $1
     RETURNING id, business, agent_auto_fill`, [memberId, change.business ?? null, change.agentAutoFill ?? null]);
  const [row] = (Array.isArray(rows[0]) ? rows[0] : rows) as { id: string; business: boolean; agent_auto_fill: boolean }[];
  if (!row) throw new Error(`member ${memberId} not found`);
  return { member_id: row.id, business: row.business, agent_auto_fill: row.agent_auto_fill };
}
