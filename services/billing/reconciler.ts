// The payments reconciler: every recorded Stripe event is applied and every reload a debit
// recorded is charged, even when the start of their workflow failed (Temporal unreachable
// when the webhook answered 500, or a process that stopped between a debit's commit and
// its reload's start). A Temporal Schedule runs it every STRIPE_RECONCILE_EVERY_SECONDS for
// what is older than STRIPE_RECONCILE_GRACE_SECONDS and still unapplied; a run already
// going is left alone, a failed or terminated one is run again (the work is idempotent).
import type { Deps } from '../shared/deps';
import { ensureIntervalSchedule } from '../operations/schedules';
import { startStripeEventWorkflow } from './payments';
import { startAutoReloadWorkflow } from './auto-reload';
import {
  PAYMENTS_RECONCILE_WORKFLOW,
  paymentsReconcilerScheduleId,
  type PaymentsReconcileInput,
  type PaymentsReconcileResult,
} from '../../workflows/billing/contracts';
import { sqlRows } from '../shared/sql';

export async function reconcilePayments(deps: Deps, graceSeconds: number): Promise<PaymentsReconcileResult> {
  const age = `now() - ($1 || ' seconds')::interval`;
  const events = await sqlRows<{ id: string }>(
    deps.db,
    `SELECT id FROM stripe_events WHERE processed_at IS NULL AND received_at <= ${age} ORDER BY received_at LIMIT 200`,
    [String(graceSeconds)],
  );
  for (const e of events) await startStripeEventWorkflow(deps, e.id, { restartFailed: true });
  // A reload whose charge is created waits for Stripe's event, not for a workflow.
  const reloads = await sqlRows<{ id: string; member_id: string }>(
    deps.db,
    `SELECT id, member_id FROM credit_purchases
      WHERE kind = 'auto_reload' AND status = 'pending' AND payment_intent_id IS NULL AND created_at <= ${age}
      ORDER BY created_at LIMIT 200`,
    [String(graceSeconds)],
  );
  for (const r of reloads) await startAutoReloadWorkflow(deps, r.id, r.member_id, { restartFailed: true });
  if (events.length || reloads.length)
    deps.log.info({ events: events.length, reloads: reloads.length }, 'payments reconciler started workflows');
  return { events: events.length, reloads: reloads.length };
}

/** Creates (or updates) the reconciler's Schedule. The worker calls it at start. */
export async function ensurePaymentsReconcilerSchedule(
  deps: Deps,
  overrides: { everySeconds?: number; graceSeconds?: number } = {},
): Promise<string> {
  const scheduleId = paymentsReconcilerScheduleId(deps.config.taskQueue);
  const input: PaymentsReconcileInput = {
    graceSeconds: overrides.graceSeconds ?? deps.config.stripe.reconcileGraceSeconds,
  };
  return ensureIntervalSchedule(deps, {
    scheduleId,
    workflowType: PAYMENTS_RECONCILE_WORKFLOW,
    workflowId: scheduleId,
    args: [input],
    every: (overrides.everySeconds ?? deps.config.stripe.reconcileEverySeconds) * 1000,
    catchupWindow: '1 minute',
    workflowExecutionTimeout: 10 * 60 * 1000,
  });
}
