// How a Business mail run is stored and shown: the `mail_runs` row, its children (the
// pieces sent with its mail_run_id), the credits funding still needs, and the run as the
// API shows it, with the next step in words.
import type { Deps } from '../shared/deps';
import {
  commitsImmediately,
  MailRunCancellationReason,
  MailRunPendingReason,
  MailRunStatusName,
  pendingReasonAction,
} from '../../domain/workflow-safe/mail-runs';
import type { MailStatusName } from '../../domain/workflow-safe/mail-rules';
import { sqlFirst, sqlRows, type Queryable } from '../shared/sql';

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

export async function loadMailRunById(
  db: Queryable,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<MailRunRow | null> {
  return sqlFirst<MailRunRow>(db, `SELECT * FROM mail_runs WHERE id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`, [id]);
}

export async function loadMailRun(db: Queryable, memberId: string, mailRunId: string): Promise<MailRunRow | null> {
  return sqlFirst<MailRunRow>(db, `SELECT * FROM mail_runs WHERE member_id = $1 AND mail_run_id = $2`, [
    memberId,
    mailRunId,
  ]);
}

/** The run's children, oldest first (every piece sent with its mail_run_id). */
export async function loadMailRunChildren(
  db: Queryable,
  run: Pick<MailRunRow, 'member_id' | 'mail_run_id'>,
): Promise<MailRunChildRow[]> {
  return sqlRows<MailRunChildRow>(
    db,
    `SELECT id, status, mail_class, cost_cents, run_funded_at, created_at FROM outbound_mail
      WHERE member_id = $1 AND mail_run_id = $2 ORDER BY created_at, id`,
    [run.member_id, run.mail_run_id],
  );
}

/** What funding debits: children still waiting for funding that no funding has debited. */
export function creditsRequired(children: MailRunChildRow[]): number {
  return children
    .filter((c) => c.status === 'funding_pending' && !c.run_funded_at)
    .reduce((sum, c) => sum + c.cost_cents, 0);
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function nextStep(run: MailRunRow): string {
  switch (run.status) {
    case 'open':
      return (
        `Add pieces with POST /v1/mail and mail_run_id=${run.mail_run_id} until closes_at, then POST /v1/mail-runs/${run.mail_run_id}/commit. ` +
        "priority, carrierx_overnight and carriery_next_day pieces are debited and submitted at once; the others wait for the run's funding. " +
        'At closes_at an uncommitted run is committed automatically: funded if credits cover it, cancelled if not.'
      );
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

/** The run as the API shows it, with its children as they are now. */
export async function presentMailRun(deps: Deps, run: MailRunRow): Promise<MailRun> {
  return toMailRun(run, await loadMailRunChildren(deps.db, run));
}
