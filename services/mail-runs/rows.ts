// Every statement that writes the `mail_runs` table (the row type and the loaders are in
// record.ts): opening a run, recording its workflow, and the moves of its funding.
import type { MailRunRow } from './record';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** Opens a run for `windowSeconds`; null when a concurrent open of the same id committed first. */
export async function insertOpenRun(
  db: Queryable,
  run: { id: string; mailRunId: string; memberId: string; agentId: string | null; ownerKey: string },
  windowSeconds: number,
): Promise<MailRunRow | null> {
  const [inserted] = await sqlRows<MailRunRow>(
    db,
    `INSERT INTO mail_runs (id, mail_run_id, member_id, agent_id, opened_by_key, status, window_seconds, opened_at, closes_at)
     VALUES ($1, $2, $3, $4, $5, 'open', $6::int, now(), now() + make_interval(secs => $6::int))
     ON CONFLICT (member_id, mail_run_id) DO NOTHING RETURNING *`,
    [run.id, run.mailRunId, run.memberId, run.agentId, run.ownerKey, windowSeconds],
  );
  return inserted ?? null;
}

/** Records that the run's workflow was started (the first time only). */
export async function markRunWorkflowStarted(db: Queryable, id: string): Promise<void> {
  await sqlRun(db, `UPDATE mail_runs SET workflow_started_at = now() WHERE id = $1 AND workflow_started_at IS NULL`, [
    id,
  ]);
}

/** The window closed with no child waiting for funding. */
export async function closeEmptyRun(tx: Queryable, id: string): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE mail_runs SET status = 'closed', closed_at = now(), pending_reason = NULL, updated_at = now() WHERE id = $1`,
    [id],
  );
}

/** A commit that `reason` stands in the way of: the run waits for funding. */
export async function holdForFunding(tx: Queryable, id: string, reason: string): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE mail_runs SET status = 'funding_pending', committed_at = COALESCE(committed_at, now()), pending_reason = $2, updated_at = now()
              WHERE id = $1`,
    [id, reason],
  );
}

/** The window closed while `reason` still stood in the way of funding. */
export async function cancelUnfundedAtClose(tx: Queryable, id: string, reason: string): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE mail_runs SET status = 'cancelled', cancelled_at = now(), cancellation_reason = 'unfunded_at_close', pending_reason = $2, updated_at = now()
              WHERE id = $1`,
    [id, reason],
  );
}

/** The run's children were debited `fundedCents` in all. */
export async function markMailRunFunded(tx: Queryable, id: string, fundedCents: number): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE mail_runs SET status = 'funded', committed_at = COALESCE(committed_at, now()), funded_at = now(), funded_cents = $2,
                  pending_reason = NULL, updated_at = now() WHERE id = $1`,
    [id, fundedCents],
  );
}

/** The caller cancelled the run before funding. */
export async function cancelRunByCaller(tx: Queryable, id: string): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE mail_runs SET status = 'cancelled', cancelled_at = now(), cancellation_reason = 'cancelled_by_caller', updated_at = now() WHERE id = $1`,
    [id],
  );
}
