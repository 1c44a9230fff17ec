// The owner notifier's contract. One notifier workflow per member (and task queue) sends
// the member's recorded notifications: the first of a kind to a recipient at once, then,
// for as long as the digest window after it lasts, it holds the others of that kind and
// sends them together as one digest when the window ends. Publishers record rows and wake
// it with a signal (services/notifications/notices.ts); it reads what is pending from
// Postgres, so a lost wake-up loses nothing (the reconciler wakes it again).
import { defineSignal } from '@temporalio/workflow';

export const OWNER_NOTIFIER_WORKFLOW = 'ownerNotifierWorkflow';
export const RECONCILE_NOTIFICATIONS_WORKFLOW = 'reconcileNotificationsWorkflow';

/** New notifications are recorded: look at what is pending now. */
export const wakeNotifierSignal = defineSignal('wakeNotifier');

/** A digest window: emails of `kind` to the recipient wait until `endsAtMs` (epoch ms, workflow time). */
export interface DigestWindow {
  recipientId: string;
  kind: string;
  endsAtMs: number;
}

export interface OwnerNotifierInput {
  memberId: string;
  /** How long after an email further ones of its kind to the same recipient are held for a digest. */
  digestWindowSeconds: number;
  /** Windows still open when the previous run continued as new. */
  openWindows?: DigestWindow[];
}

/** Pending notifications of one recipient and kind. */
export interface PendingGroup {
  recipientId: string;
  kind: string;
  oldestId: string;
  count: number;
}

export interface PendingNotifications {
  /** Notifications of the kinds a digest may gather, grouped. */
  groups: PendingGroup[];
  /** Sent one by one, never held: account emails, and digests recorded but not sent yet. */
  immediate: string[];
}

export interface DigestInput {
  memberId: string;
  recipientId: string;
  kind: string;
  /** Unique per window: the digest's own notification key, so a retried activity sends the same digest. */
  digestKey: string;
}

/** sent, or why not: skipped (the kind was switched off, the recipient removed), failed (the relay refused it for good). */
export type DeliveryOutcome = 'sent' | 'skipped' | 'failed' | 'digested';

export interface ReconcileNotificationsInput {
  /** Pending letters whose approval expires within this many seconds get their reminder. */
  approvalExpiryNoticeSeconds: number;
  /** How long a letter waits for approval before it is cancelled (MAIL_APPROVAL_TIMEOUT_SECONDS). */
  approvalTimeoutSeconds: number;
  /** Notifications recorded this long ago that no notifier has seen are woken again. */
  overdueSeconds: number;
}

export interface ReconcileNotificationsResult {
  reminders: number;
  woken: number;
}

/** Named after the task queue too, like the webhook dispatchers: deployments sharing a namespace each run their own. */
export function ownerNotifierWorkflowId(taskQueue: string, memberId: string): string {
  return `owner-notifier-${taskQueue}-${memberId}`;
}

export function notificationsReconcilerScheduleId(taskQueue: string): string {
  return `notifications-reconciler-${taskQueue}`;
}
