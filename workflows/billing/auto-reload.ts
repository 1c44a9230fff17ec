// One automatic reload: creates its off-session charge once (the activity carries the
// reload's Stripe idempotency key, so a retried attempt is the same charge). The credit
// is not added here: Stripe's signed payment_intent.succeeded adds it (stripeEventWorkflow).
// If the charge cannot be created for an hour (Stripe or the network down), the reload is
// failed and reload turned off, so the owner sees why.
import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { UNLIMITED_RETRY } from '../shared/activity-failures';
import type { AutoReloadInput, AutoReloadOutcome } from './contracts';

const { chargeAutoReloadActivity } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '1 hour',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

const { giveUpAutoReloadActivity } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: UNLIMITED_RETRY,
});

export async function autoReloadWorkflow(input: AutoReloadInput): Promise<AutoReloadOutcome> {
  try {
    return await chargeAutoReloadActivity(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    return giveUpAutoReloadActivity({ ...input, cause: 'the payment provider could not be reached for an hour' });
  }
}
