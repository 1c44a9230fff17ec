// Transitions of a Business mail run and of its children, one per activity of
// activities/mail-runs/mail-run.ts. Each is idempotent: it locks the rows it changes
// (member, then run, then pieces), treats "already there" as done, and moves money only
// under unique ledger keys.
// Funding debits every waiting child once, as debit:mail:<child id>, all in one
// transaction, so a child's own cancel or failure refunds exactly what it cost
// (refund:mail:<id>) and a repeated or concurrent commit can never debit twice.
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Deps } from '../shared/deps';
import { balanceCents, debit, lockMemberRowReading } from '../billing/credits';
import { spentLast24h } from '../outbound-mail/safeguards';
import { loadMailRow, publishMailEvent } from '../outbound-mail/record';
import { cancelUnfundedRunChild, MailRow, markChildrenRunFunded, submitFundedRunChild } from '../outbound-mail/rows';
import { startMailWorkflow } from '../outbound-mail/workflow';
import { loadMailRunById, MailRunRow } from './record';
import { cancelRunByCaller, cancelUnfundedAtClose, closeEmptyRun, holdForFunding, markMailRunFunded } from './rows';
import { fundingBlock, isSettledMailRun, MailRunStatusName } from '../../domain/workflow-safe/mail-runs';
import type { MailStatusName } from '../../domain/workflow-safe/mail-rules';
import { outboundMailWorkflowId } from '../../workflows/outbound-mail/contracts';
import {
  CancelMailRunResult,
  FundMailRunResult,
  MAIL_RUN_FAILURE,
  mailRunSettledSignal,
} from '../../workflows/mail-runs/contracts';
import { sqlRows, sqlRun } from '../shared/sql';

function fail(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

function runNotFound(id: string): ApplicationFailure {
  return fail(MAIL_RUN_FAILURE.notFound, `Mail run ${id} not found`);
}

/**
 * Funds the run: `commit` from the agent's call, `close` when the window closes without
 * a funded run. When a member setting, the daily spend cap or the balance stands in the
 * way, a commit leaves the run funding_pending (with the reason) and the close cancels
 * it; a close with nothing waiting for funding closes the run.
 */
export async function fundMailRun(
  deps: Deps,
  input: { mailRunUuid: string; trigger: 'commit' | 'close' },
): Promise<FundMailRunResult> {
  return deps.db.transaction(async (tx) => {
    const peek = await loadMailRunById(tx, input.mailRunUuid);
    if (!peek) throw runNotFound(input.mailRunUuid);
    const { lock: memberLock, member } = await lockMemberRowReading<{
      business: boolean;
      agent_auto_fill: boolean;
      daily_spend_limit_cents: number | null;
    }>(tx, peek.member_id, ['business', 'agent_auto_fill', 'daily_spend_limit_cents']);
    if (!member) throw new Error(`the run's member ${peek.member_id} does not exist`);
    const run = (await loadMailRunById(tx, input.mailRunUuid, { forUpdate: true }))!;
    const answer = (status: MailRunStatusName, chargedCents = 0): FundMailRunResult => ({
      status,
      alreadyFunded: false,
      chargedCents,
      pendingReason: null,
    });
    if (run.status === 'funded') return { ...answer('funded'), alreadyFunded: true };
    if (run.status === 'cancelled' || run.status === 'closed') {
      throw fail(MAIL_RUN_FAILURE.notCommittable, `The run is ${run.status}; it can no longer be committed.`);
    }
    const children = await sqlRows<Pick<MailRow, 'id' | 'price_cents' | 'mail_class'>>(
      tx,
      `SELECT id, price_cents, mail_class FROM outbound_mail
            WHERE member_id = $1 AND mail_run_id = $2 AND status = 'funding_pending' AND run_funded_at IS NULL
            ORDER BY created_at, id FOR UPDATE`,
      [run.member_id, run.mail_run_id],
    );
    if (input.trigger === 'close' && children.length === 0) {
      await closeEmptyRun(tx, run.id);
      return answer('closed');
    }
    const required = children.reduce((sum, c) => sum + c.price_cents, 0);
    const block = fundingBlock({
      settings: { business: member.business, agentAutoFill: member.agent_auto_fill },
      requiredCents: required,
      balanceCents: await balanceCents(tx, run.member_id),
      dailySpendLimitCents: member.daily_spend_limit_cents,
      spentLast24hCents: await spentLast24h(tx, run.member_id),
    });
    if (block && input.trigger === 'commit') {
      await holdForFunding(tx, run.id, block);
      return { ...answer('funding_pending'), pendingReason: block };
    }
    if (block) {
      await cancelUnfundedAtClose(tx, run.id, block);
      return { ...answer('cancelled'), pendingReason: block };
    }
    for (const child of children) {
      await debit(
        deps,
        tx,
        {
          memberId: run.member_id,
          amountCents: child.price_cents,
          entryKey: `debit:mail:${child.id}`,
          referenceType: 'outbound_mail',
          referenceId: child.id,
          description: `Outbound mail ${child.id} (${child.mail_class}, Business mail run ${run.mail_run_id})`,
        },
        { memberLock },
      );
    }
    if (children.length) {
      await markChildrenRunFunded(
        tx,
        children.map((c) => c.id),
      );
    }
    await markMailRunFunded(tx, run.id, required);
    return answer('funded', required);
  });
}

/** DELETE before funding: the run is cancelled; its waiting children follow once signalled. */
export async function cancelMailRun(deps: Deps, input: { mailRunUuid: string }): Promise<CancelMailRunResult> {
  return deps.db.transaction(async (tx) => {
    const peek = await loadMailRunById(tx, input.mailRunUuid);
    if (!peek) throw runNotFound(input.mailRunUuid);
    await sqlRun(tx, `SELECT id FROM members WHERE id = $1 FOR UPDATE`, [peek.member_id]);
    const run = (await loadMailRunById(tx, input.mailRunUuid, { forUpdate: true }))!;
    if (run.status === 'cancelled') return { status: 'cancelled', alreadyCancelled: true };
    if (run.status === 'funded' || run.status === 'closed') {
      throw fail(
        MAIL_RUN_FAILURE.notCancellable,
        `The run is ${run.status}; only a run that is not funded yet can be cancelled.`,
      );
    }
    await cancelRunByCaller(tx, run.id);
    return { status: 'cancelled', alreadyCancelled: false };
  });
}

/**
 * Tells the workflow of every child still waiting for funding that the run has
 * settled (starting a workflow whose start was lost). Returns how many were told.
 */
export async function notifyMailRunChildren(
  deps: Deps,
  input: { mailRunUuid: string },
  heartbeat: (childId: string) => void,
): Promise<number> {
  const run = await loadMailRunById(deps.db, input.mailRunUuid);
  if (!run) throw runNotFound(input.mailRunUuid);
  const children = await sqlRows<Pick<MailRow, 'id' | 'status' | 'test_mode' | 'member_id' | 'agent_id'>>(
    deps.db,
    `SELECT id, status, test_mode, member_id, agent_id FROM outbound_mail
          WHERE member_id = $1 AND mail_run_id = $2 AND status = 'funding_pending' ORDER BY created_at, id`,
    [run.member_id, run.mail_run_id],
  );
  for (const child of children) {
    await startMailWorkflow(deps, child);
    try {
      await deps.temporal.workflow.getHandle(outboundMailWorkflowId(child.id)).signal(mailRunSettledSignal);
    } catch (err) {
      // The child's workflow finished meanwhile (cancelled by its sender): nothing to tell.
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    heartbeat(child.id);
  }
  return children.length;
}

/**
 * A funding_pending child's next status once its run has settled: submitted when the
 * run's funding debited it, cancelled when the run was cancelled or closed without
 * funding it (nothing was debited, so nothing is refunded). Publishes the event.
 */
export async function settleMailRunChild(
  deps: Deps,
  input: { outboundMailId: string },
): Promise<{ status: MailStatusName }> {
  const outcome = await deps.db.transaction(async (tx) => {
    const row = await loadMailRow(tx, input.outboundMailId, { forUpdate: true });
    if (!row) throw fail('MAIL_NOT_FOUND', `Outbound mail ${input.outboundMailId} not found`);
    if (row.status !== 'funding_pending') return row;
    const [run] = await sqlRows<MailRunRow>(tx, `SELECT * FROM mail_runs WHERE member_id = $1 AND mail_run_id = $2`, [
      row.member_id,
      row.mail_run_id,
    ]);
    if (!run || !isSettledMailRun(run.status)) return row;
    if (run.status === 'funded') {
      if (!row.run_funded_at)
        throw fail(
          MAIL_RUN_FAILURE.childUnfunded,
          `Outbound mail ${row.id} waits for funding, but its funded run did not debit it.`,
        );
      return submitFundedRunChild(tx, row.id);
    }
    return cancelUnfundedRunChild(tx, row.id);
  });
  // Published on every attempt that finds the settled state (the event key makes it once), so a retry after the commit still announces it.
  const settledByRun =
    (outcome.status === 'submitted' && outcome.run_funded_at !== null) ||
    (outcome.status === 'cancelled' && outcome.cancellation_reason === 'mail_run_cancelled');
  if (settledByRun) await publishMailEvent(deps, outcome, `mail.${outcome.status}`);
  return { status: outcome.status };
}
