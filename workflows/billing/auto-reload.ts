// One automatic reload: creates its off-session charge once (the activity carries the
// reload's Stripe idempotency key, so a retried attempt is the same charge). The credit
// is not added here: Stripe's signed payment_intent.succeeded adds it (stripeEventWorkflow).
// If the charge cannot be created for an hour (Stripe or the network down), the reload is
// failed and reload turned off, so the owner sees why.
import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { AutoReloadInput, AutoReloadOutcome } from './contracts';
import { AUTO_RELOAD_CHARGE, AUTO_RELOAD_GIVE_UP } from '../shared/activity-options';

const { chargeAutoReloadActivity } = proxyActivities<Activities>(AUTO_RELOAD_CHARGE);

const { giveUpAutoReloadActivity } = proxyActivities<Activities>(AUTO_RELOAD_GIVE_UP);

export async function autoReloadWorkflow(input: AutoReloadInput): Promise<AutoReloadOutcome> {
  try {
    return await chargeAutoReloadActivity(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    return giveUpAutoReloadActivity({ ...input, cause: 'the payment provider could not be reached for an hour' });
  }
}
