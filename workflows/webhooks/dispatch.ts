// One dispatcher per receiver and environment (`webhook-dispatch-<environment>-<target>`):
// each pass is one activity that sends every due delivery of that receiver (bounded
// concurrency, one recorded attempt each) and says when the next retry is due. Between
// passes the workflow sleeps until that moment or until a publisher's wake-up signal.
// With nothing queued it ends; the next event starts it again (signal-with-start). The
// history stays short: continue-as-new after a fixed number of passes.
import { condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { ReconcileWebhookDispatchInput, wakeDispatcherSignal, WebhookDispatchInput } from './contracts';
import { WEBHOOK_DISPATCH_PASS, WEBHOOK_WAKE } from '../shared/activity-options';

const { dispatchWebhookDeliveries } = proxyActivities<Activities>(WEBHOOK_DISPATCH_PASS);
const { wakeOverdueWebhookDispatchers } = proxyActivities<Activities>(WEBHOOK_WAKE);

const PASSES_PER_RUN = 200;

export async function webhookDispatchWorkflow(input: WebhookDispatchInput): Promise<number> {
  let woken = false;
  let attempted = 0;
  setHandler(wakeDispatcherSignal, () => {
    woken = true;
  });
  for (let pass = 0; pass < PASSES_PER_RUN; pass++) {
    woken = false;
    const result = await dispatchWebhookDeliveries({ dispatchKey: input.dispatchKey });
    attempted += result.attempted;
    if (result.more) continue;
    if (result.nextDueInMs === null) {
      // Nothing queued: end unless a publisher woke us meanwhile.
      if (!woken) return attempted;
      continue;
    }
    if (result.nextDueInMs > 0) await condition(() => woken, result.nextDueInMs);
  }
  return continueAsNew<typeof webhookDispatchWorkflow>(input);
}

/** Started by a Temporal Schedule: wakes dispatchers whose due deliveries wait too long. */
export async function reconcileWebhookDispatchWorkflow(input: ReconcileWebhookDispatchInput): Promise<number> {
  return wakeOverdueWebhookDispatchers(input);
}
