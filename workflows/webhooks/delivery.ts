// One webhook delivery attempt series: up to maxAttempts attempts with bounded,
// jittered backoff between them. Every attempt is one activity that signs the body
// with a fresh timestamp, sends it and records the result; the workflow only decides
// whether to wait and try again.
import { ActivityFailure, proxyActivities, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { AttemptOutcome, WebhookDeliveryInput, WebhookDeliveryResult } from './contracts';
import { ObjectStatus } from '../shared/search-attributes';
import { retryDelayMs } from '../../domain/workflow-safe/webhook-retry';
import { WEBHOOK_ATTEMPT } from '../shared/activity-options';

const { attemptWebhookDelivery, failWebhookDelivery } = proxyActivities<Activities>(WEBHOOK_ATTEMPT);

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  let attempts = 0;
  let last: Pick<AttemptOutcome, 'statusCode' | 'error'> = { statusCode: null, error: null };
  for (let n = 1; n <= input.maxAttempts; n++) {
    if (n > 1) await sleep(retryDelayMs(n, input.baseDelayMs, Math.random()));
    upsertSearchAttributes([{ key: ObjectStatus, value: 'processing' }]);
    let outcome: AttemptOutcome;
    try {
      outcome = await attemptWebhookDelivery({
        deliveryId: input.deliveryId,
        series: input.series,
        attemptNumber: n,
        final: n === input.maxAttempts,
      });
    } catch (err) {
      // The attempt could not even be recorded (not a receiver failure): end the series as failed.
      const error = err instanceof ActivityFailure ? (err.cause?.message ?? err.message) : String(err);
      await failWebhookDelivery({ deliveryId: input.deliveryId, series: input.series, error });
      upsertSearchAttributes([{ key: ObjectStatus, value: 'failed' }]);
      return { deliveryId: input.deliveryId, status: 'failed', attempts, statusCode: null, error };
    }
    if (outcome.outcome !== 'stopped') attempts = n;
    last = { statusCode: outcome.statusCode, error: outcome.error };
    upsertSearchAttributes([{ key: ObjectStatus, value: outcome.status }]);
    if (outcome.status === 'delivered' || outcome.status === 'failed') {
      return { deliveryId: input.deliveryId, status: outcome.status, attempts, ...last };
    }
  }
  return { deliveryId: input.deliveryId, status: 'failed', attempts, ...last };
}
