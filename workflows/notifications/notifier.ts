// One notifier per member (`owner-notifier-<task queue>-<member>`), started or woken by
// signal-with-start when a notification is recorded. Each round reads what is pending
// (Postgres is the queue) and, per recipient and kind: with no digest window open, sends
// the oldest at once and opens a window of `digestWindowSeconds`; while the window is open
// it holds the rest; when the window ends it sends what gathered as one digest (or the one
// email alone) and opens the next window, or closes it when nothing came. Account emails
// (sign-up verification, recipient confirmation) are never held. With no window open and
// nothing woken it ends; the next notification starts it again. The history stays short:
// continue-as-new after a fixed number of rounds, carrying the open windows.
import { condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import {
  DigestWindow,
  OwnerNotifierInput,
  ReconcileNotificationsInput,
  ReconcileNotificationsResult,
  wakeNotifierSignal,
} from './contracts';
import { DATABASE_STEP, NOTIFICATION_DELIVERY, RECONCILER_PASS } from '../shared/activity-options';

const { pendingNotifications } = proxyActivities<Activities>(DATABASE_STEP);
const { deliverNotification, deliverDigest } = proxyActivities<Activities>(NOTIFICATION_DELIVERY);
const { reconcileNotifications } = proxyActivities<Activities>(RECONCILER_PASS);

const ROUNDS_PER_RUN = 200;

const keyOf = (w: { recipientId: string; kind: string }) => `${w.recipientId}/${w.kind}`;

export async function ownerNotifierWorkflow(input: OwnerNotifierInput): Promise<number> {
  // Started by a wake-up (signal-with-start delivers the signal too).
  let woken = true;
  setHandler(wakeNotifierSignal, () => {
    woken = true;
  });
  const windowMs = input.digestWindowSeconds * 1000;
  const windows = new Map<string, DigestWindow>((input.openWindows ?? []).map((w) => [keyOf(w), w]));
  let sent = 0;

  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    const now = Date.now();
    const ended = [...windows.values()].filter((w) => w.endsAtMs <= now);
    if (woken || ended.length) {
      woken = false;
      const pending = await pendingNotifications({ memberId: input.memberId });
      const sends: Array<Promise<unknown>> = pending.immediate.map((id) => deliverNotification({ notificationId: id }));
      const seen = new Set<string>();
      for (const g of pending.groups) {
        const key = keyOf(g);
        seen.add(key);
        const open = windows.get(key);
        if (open && open.endsAtMs > now) continue; // held for this window's digest
        if (!open || g.count === 1) sends.push(deliverNotification({ notificationId: g.oldestId }));
        else
          sends.push(
            deliverDigest({
              memberId: input.memberId,
              recipientId: g.recipientId,
              kind: g.kind,
              digestKey: `${input.memberId}/${key}/${open.endsAtMs}`,
            }),
          );
        windows.set(key, { recipientId: g.recipientId, kind: g.kind, endsAtMs: now + windowMs });
      }
      // A window in which nothing came closes: the next of its kind goes out at once.
      for (const w of ended) if (!seen.has(keyOf(w))) windows.delete(keyOf(w));
      await Promise.all(sends);
      sent += sends.length;
    }
    if (woken) continue;
    if (!windows.size) return sent;
    const next = Math.min(...[...windows.values()].map((w) => w.endsAtMs));
    const wait = next - Date.now();
    if (wait > 0) await condition(() => woken, wait);
  }
  return continueAsNew<typeof ownerNotifierWorkflow>({ ...input, openWindows: [...windows.values()] });
}

/** Started by a Temporal Schedule: approval reminders, and notifiers whose wake-up was lost. */
export async function reconcileNotificationsWorkflow(
  input: ReconcileNotificationsInput,
): Promise<ReconcileNotificationsResult> {
  return reconcileNotifications(input);
}
