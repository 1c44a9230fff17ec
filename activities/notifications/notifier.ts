// The owner notifier's activities (worker only): adapters over services/notifications.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Deps } from '../../services/shared/deps';
import {
  deliverDigest,
  deliverNotification,
  pendingNotifications,
  SendInFlight,
} from '../../services/notifications/delivery';
import { reconcileNotifications } from '../../services/notifications/reconciler';
import type {
  DeliveryOutcome,
  DigestInput,
  PendingNotifications,
  ReconcileNotificationsInput,
  ReconcileNotificationsResult,
} from '../../workflows/notifications/contracts';

/** A heartbeat while the relay talks, so a worker that dies mid-send is noticed in seconds, not minutes. */
const beat = () => Context.current().heartbeat();

/** An earlier attempt's lease: retried on the activity's own backoff, without an error stack in the logs. */
function leaseWait(err: unknown): never {
  if (err instanceof SendInFlight) throw ApplicationFailure.retryable(err.message, 'SendInFlight');
  throw err;
}

export function createNotificationActivities(deps: Deps) {
  return {
    async pendingNotifications(input: { memberId: string }): Promise<PendingNotifications> {
      return pendingNotifications(deps, input.memberId);
    },
    async deliverNotification(input: { notificationId: string }): Promise<DeliveryOutcome> {
      return deliverNotification(deps, input.notificationId, beat).catch(leaseWait);
    },
    async deliverDigest(input: DigestInput): Promise<DeliveryOutcome> {
      return deliverDigest(deps, input, beat).catch(leaseWait);
    },
    async reconcileNotifications(input: ReconcileNotificationsInput): Promise<ReconcileNotificationsResult> {
      return reconcileNotifications(deps, input);
    },
  };
}
