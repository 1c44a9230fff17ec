// One webhook delivery attempt series: up to maxAttempts attempts with bounded,
// jittered backoff between them. Every attempt is one activity that signs the body
// with a fresh timestamp, sends it and records the result; the workflow only decides
// whether to wait and try again.
import { proxyActivities, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { WebhookDeliveryInput, WebhookDeliveryResult } from './contracts/webhook-delivery';
import { ObjectStatus } from './search-attributes';
import { retryDelayMs } from '../domain/webhook-retry';

const { attemptWebhookDelivery } = proxyActivities<Activities>({
  // The receiver has 10 s; DNS, signing and bookkeeping fit easily in the rest.
  startToCloseTimeout: '40 seconds',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  let attempts = 0;
  let last = { statusCode: null as number | null, error: null as string | null };
  for (let n = 1; n <= input.maxAttempts; n++) {
    if (n > 1) await sleep(retryDelayMs(n, input.baseDelayMs, Math.random()));
    upsertSearchAttributes([{ key: ObjectStatus, value: 'processing' }]);
    const outcome = await attemptWebhookDelivery({ deliveryId: input.deliveryId, series: input.series, attemptNumber: n, final: n === input.maxAttempts });
    if (outcome.outcome !== 'stopped') attempts = n;
    last = { statusCode: outcome.statusCode, error: outcome.error };
    upsertSearchAttributes([{ key: ObjectStatus, value: outcome.status }]);
    if (outcome.status === 'delivered' || outcome.status === 'failed') {
      return { deliveryId: input.deliveryId, status: outcome.status, attempts, ...last };
    }
  }
  return { deliveryId: input.deliveryId, status: 'failed', attempts, ...last };
}
