// The webhook delivery workflow's contract: its id (derived from the delivery id and the
// replay series), its input and its result. One workflow per attempt series of one
// delivery; a replay of a failed delivery is a new series with a new workflow id.

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
