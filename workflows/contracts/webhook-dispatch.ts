// The webhook dispatcher's contract. One dispatcher workflow per receiver (an agent's
// legacy webhook or a custom endpoint) and environment sends that receiver's queued
// event deliveries in batches; publishers wake it with a signal (at most one per pass,
// see services/webhook-dispatch.ts) and it sleeps on a timer until the next retry is due.
import { defineSignal } from '@temporalio/workflow';

export const WEBHOOK_DISPATCH_WORKFLOW = 'webhookDispatchWorkflow';
export const RECONCILE_WEBHOOK_DISPATCH_WORKFLOW = 'reconcileWebhookDispatchWorkflow';

/** New deliveries are due: run a pass now. */
export const wakeDispatcherSignal = defineSignal('wakeDispatcher');

export interface WebhookDispatchInput {
  /** `<environment>:<target>`, e.g. `test:agent:<uuid>` or `live:endpoint:<uuid>`. */
  dispatchKey: string;
}

export interface DispatchPassResult {
  /** Deliveries attempted in this pass. */
  attempted: number;
  /** The pass stopped at its time budget with due deliveries left. */
  more: boolean;
  /** Milliseconds until the earliest queued delivery is due; null when none is queued. */
  nextDueInMs: number | null;
}

export interface ReconcileWebhookDispatchInput {
  /** Dispatchers with a delivery overdue by this long are woken again. */
  overdueSeconds: number;
}

/**
 * Named after the task queue too, like the schedules: deployments (and test runs) that
 * share a namespace and a database each drive their own dispatcher; claims on the rows
 * keep two dispatchers of one receiver from sending the same attempt.
 */
export function webhookDispatchWorkflowId(taskQueue: string, dispatchKey: string): string {
  return `webhook-dispatch-${taskQueue}-${dispatchKey.replace(/:/g, '-')}`;
}

export function webhookDispatchReconcilerScheduleId(taskQueue: string): string {
  return `webhook-dispatch-reconciler-${taskQueue}`;
}
