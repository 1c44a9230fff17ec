// The webhook workflows' contracts.
//
// Dispatch:
//  The webhook dispatcher's contract. One dispatcher workflow per receiver (an agent's
//  legacy webhook or a custom endpoint) and environment sends that receiver's queued
//  event deliveries in batches; publishers wake it with a signal (at most one per pass,
//  see services/webhooks/dispatch.ts) and it sleeps on a timer until the next retry is due.
//
// Delivery:
//  The webhook delivery workflow's contract: its id (derived from the delivery id and the
//  replay series), its input and its result. One workflow per attempt series of one
//  delivery; a replay of a failed delivery is a new series with a new workflow id.
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

// Delivery
export const WEBHOOK_DELIVERY_WORKFLOW = 'webhookDeliveryWorkflow';

export function webhookDeliveryWorkflowId(deliveryId: string, series: number): string {
  return series === 0 ? `webhook-delivery-${deliveryId}` : `webhook-delivery-${deliveryId}-replay-${series}`;
}

export interface WebhookDeliveryInput {
  deliveryId: string;
  series: number;
  /** 1 for tests and verifications, 5 for events. */
  maxAttempts: number;
  /** First retry delay; doubles per attempt up to 8x, with jitter. */
  baseDelayMs: number;
}

export type DeliveryStatus = 'queued' | 'processing' | 'delivered' | 'failed';

export interface AttemptInput {
  deliveryId: string;
  series: number;
  attemptNumber: number;
  /** The last attempt of the series: a failure makes the delivery failed. */
  final: boolean;
}

export interface AttemptOutcome {
  /** delivered: 2xx (and the challenge, for verifications); failed: this attempt failed;
   *  stopped: nothing was sent because the receiver is gone, paused or disabled. */
  outcome: 'delivered' | 'failed' | 'stopped';
  statusCode: number | null;
  error: string | null;
  /** The delivery's status after this attempt. */
  status: DeliveryStatus;
}

export interface WebhookDeliveryResult {
  deliveryId: string;
  status: DeliveryStatus;
  attempts: number;
  statusCode: number | null;
  error: string | null;
}
