// Webhook dispatch: queued event deliveries are sent by one dispatcher workflow per
// receiver and environment (workflows/webhooks/dispatch.ts). Publishers insert delivery
// rows and call wakeDispatchers; a pass (dispatchDueDeliveries, the dispatcher's
// activity) sends every due delivery of its receiver with bounded concurrency, each
// through attemptDelivery (one recorded attempt, idempotent per attempt number).
//
// Wake-ups are rationed through `webhook_dispatchers.wake_requested_at`: a publisher
// signals only when no wake-up is pending (or the pending one is older than
// WAKE_REFRESH_SECONDS), and a pass clears it before it looks for due rows. A delivery
// committed before the clear is seen by that pass; one committed after it finds the
// flag clear and signals. A wake-up lost to a crash is repaired by the next publish after
// WAKE_REFRESH_SECONDS or by the reconciler schedule (wakeOverdueDispatchers).
import type { Deps } from '../shared/deps';
import { ensureIntervalSchedule } from '../operations/schedules';
import { attemptDelivery, DeliveryRow } from './deliveries';
import { type DueDelivery, leaseDueDeliveries, recordDeliveryInternalError } from './delivery-rows';
import { retryDelayMs } from '../../domain/workflow-safe/webhook-retry';
import {
  DispatchPassResult,
  RECONCILE_WEBHOOK_DISPATCH_WORKFLOW,
  ReconcileWebhookDispatchInput,
  wakeDispatcherSignal,
  WEBHOOK_DISPATCH_WORKFLOW,
  webhookDispatchReconcilerScheduleId,
  webhookDispatchWorkflowId,
  WebhookDispatchInput,
} from '../../workflows/webhooks/contracts';
import { AgentId, MemberId, ObjectId, TestMode } from '../../workflows/shared/search-attributes';
import { sqlRows, sqlRun } from '../shared/sql';

const WAKE_REFRESH_SECONDS = 30;
/** Attempts in flight at once for one receiver. */
const PASS_CONCURRENCY = 16;
/** Rows claimed per query within a pass: two rounds of attempts (<= 10 s each). */
const PASS_BATCH = PASS_CONCURRENCY * 2;
/** A pass stops starting attempts after this long, so its activity stays short. */
const PASS_BUDGET_MS = 60_000;
/**
 * How long a claimed delivery is left to its pass before another pass may take it: more
 * than a batch can take (two 10-s rounds), so a live pass is never overtaken; a pass whose
 * worker died gives its rows back this long after it claimed them.
 */
const LEASE_SECONDS = 45;
/** Attempts that could not even be recorded (not receiver failures) before a delivery fails. */
const MAX_INTERNAL_ERRORS = 3;

/** What names a dispatcher and tags its workflow: a delivery row has it. */
export type DispatchTarget = Pick<DeliveryRow, 'environment' | 'target' | 'member_id' | 'agent_id'>;

export function dispatchKeyOf(t: Pick<DispatchTarget, 'environment' | 'target'>): string {
  return `${t.environment}:${t.target}`;
}

function parseDispatchKey(key: string): { environment: 'live' | 'test'; target: string } {
  const at = key.indexOf(':');
  const environment = key.slice(0, at);
  if (environment !== 'live' && environment !== 'test') throw new Error(`bad dispatch key ${key}`);
  return { environment, target: key.slice(at + 1) };
}

/** Signals (starting it if needed) the dispatcher of a receiver, no matter the flag. */
async function signalDispatcher(deps: Deps, t: DispatchTarget): Promise<void> {
  const dispatchKey = dispatchKeyOf(t);
  const input: WebhookDispatchInput = { dispatchKey };
  await deps.temporal.workflow.signalWithStart(WEBHOOK_DISPATCH_WORKFLOW, {
    taskQueue: deps.config.taskQueue,
    workflowId: webhookDispatchWorkflowId(deps.config.taskQueue, dispatchKey),
    args: [input],
    signal: wakeDispatcherSignal,
    signalArgs: [],
    typedSearchAttributes: [
      { key: ObjectId, value: t.target },
      { key: MemberId, value: t.member_id },
      { key: TestMode, value: t.environment === 'test' },
      ...(t.agent_id ? [{ key: AgentId, value: t.agent_id }] : []),
    ],
  });
}

/** Wakes the dispatchers of these deliveries' receivers unless a wake-up is already on its way. */
export async function wakeDispatchers(deps: Deps, targets: DispatchTarget[]): Promise<void> {
  const seen = new Set<string>();
  for (const t of targets) {
    const key = dispatchKeyOf(t);
    if (seen.has(key)) continue;
    seen.add(key);
    const claimed = await sqlRows<{ dispatch_key: string }>(
      deps.db,
      `INSERT INTO webhook_dispatchers (dispatch_key, wake_requested_at) VALUES ($1, now())
       ON CONFLICT (dispatch_key) DO UPDATE SET wake_requested_at = now()
        WHERE webhook_dispatchers.wake_requested_at IS NULL
           OR webhook_dispatchers.wake_requested_at < now() - make_interval(secs => $2)
       RETURNING dispatch_key`,
      [key, WAKE_REFRESH_SECONDS],
    );
    if (!claimed.length) continue;
    try {
      await signalDispatcher(deps, t);
    } catch (err) {
      // Let the caller's retry (or the next publish) signal again.
      await sqlRun(deps.db, `UPDATE webhook_dispatchers SET wake_requested_at = NULL WHERE dispatch_key = $1`, [
        key,
      ]).catch(() => undefined);
      throw err;
    }
  }
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

/**
 * One pass of a dispatcher: sends every due event delivery of the receiver (one attempt
 * each), until none is due or the budget is spent, then reports when the next is due.
 */
export async function dispatchDueDeliveries(
  deps: Deps,
  dispatchKey: string,
  heartbeat: () => void = () => undefined,
): Promise<DispatchPassResult> {
  const { environment, target } = parseDispatchKey(dispatchKey);
  await sqlRun(deps.db, `UPDATE webhook_dispatchers SET wake_requested_at = NULL WHERE dispatch_key = $1`, [
    dispatchKey,
  ]);
  const started = Date.now();
  let attempted = 0;
  for (;;) {
    // Claimed under a lease: another pass (a retried activity whose first run is still
    // alive) skips these rows until the lease ends; an attempt records the real next time.
    const due = await leaseDueDeliveries(deps.db, target, environment, PASS_BATCH, LEASE_SECONDS);
    if (!due.length) break;
    await eachLimited(due, PASS_CONCURRENCY, async (d) => {
      const attemptNumber = d.series_attempts + 1;
      try {
        await attemptDelivery(deps, {
          deliveryId: d.id,
          series: d.series,
          attemptNumber,
          final: attemptNumber >= d.max_attempts,
        });
      } catch (err) {
        await recordInternalError(deps, d, err);
      }
      heartbeat();
    });
    attempted += due.length;
    if (Date.now() - started > PASS_BUDGET_MS) return { attempted, more: true, nextDueInMs: 0 };
  }
  const [next] = await sqlRows<{ ms: string | null }>(
    deps.db,
    `SELECT ceil(extract(epoch FROM (min(next_attempt_at) - now())) * 1000)::bigint AS ms FROM webhook_deliveries
      WHERE target = $1 AND environment = $2 AND kind = 'event' AND status IN ('queued','processing')`,
    [target, environment],
  );
  return { attempted, more: false, nextDueInMs: next.ms === null ? null : Math.max(0, Number(next.ms)) };
}

/**
 * An attempt that could not be recorded (a database error, a secret that no longer
 * decrypts): try again after the retry backoff; after MAX_INTERNAL_ERRORS the delivery
 * fails, so a poisoned row cannot keep its dispatcher busy forever.
 */
async function recordInternalError(deps: Deps, d: DueDelivery, err: unknown): Promise<void> {
  const message = `internal_error: ${err instanceof Error ? err.message : String(err)}`.slice(0, 1000);
  deps.log.warn({ err, delivery_id: d.id }, 'webhook delivery attempt failed internally');
  await recordDeliveryInternalError(
    deps.db,
    d,
    message,
    MAX_INTERNAL_ERRORS,
    retryDelayMs(d.internal_errors + 2, deps.config.webhookRetryBaseMs, Math.random()),
  );
}

/** Wakes (unconditionally) every dispatcher with a delivery overdue by `overdueSeconds`. */
export async function wakeOverdueDispatchers(deps: Deps, overdueSeconds: number): Promise<number> {
  const overdue = await sqlRows<DispatchTarget>(
    deps.db,
    `SELECT DISTINCT ON (target, environment) target, environment, member_id, agent_id FROM webhook_deliveries
      WHERE kind = 'event' AND status IN ('queued','processing') AND next_attempt_at < now() - make_interval(secs => $1)
      ORDER BY target, environment LIMIT 1000`,
    [overdueSeconds],
  );
  for (const o of overdue) await signalDispatcher(deps, o);
  return overdue.length;
}

/** Creates or updates the reconciler schedule (every minute) on this deployment's task queue. */
export async function ensureWebhookDispatchReconcilerSchedule(deps: Deps): Promise<string> {
  const input: ReconcileWebhookDispatchInput = { overdueSeconds: 120 };
  return ensureIntervalSchedule(deps, {
    scheduleId: webhookDispatchReconcilerScheduleId(deps.config.taskQueue),
    workflowType: RECONCILE_WEBHOOK_DISPATCH_WORKFLOW,
    workflowId: `webhook-dispatch-reconciler-${deps.config.taskQueue}`,
    args: [input],
    every: '1 minute',
    catchupWindow: '1 minute',
    workflowExecutionTimeout: 10 * 60 * 1000,
  });
}
