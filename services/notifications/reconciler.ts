// The notifications reconciler, run by a Temporal Schedule every
// NOTIFICATION_RECONCILE_EVERY_SECONDS: records the reminder of each live letter whose
// approval expires within NOTIFICATION_APPROVAL_EXPIRY_NOTICE_SECONDS (a letter waits
// MAIL_APPROVAL_TIMEOUT_SECONDS from its creation, then its workflow cancels it), gives
// back rows whose sending attempt was abandoned (a notifier terminated mid-send), and
// wakes the notifiers of rows no notifier has seen (their wake-up was lost to a crash).
import type { Deps } from '../shared/deps';
import { ensureIntervalSchedule } from '../operations/schedules';
import { notifyOwner, signalNotifier } from './notices';
import {
  notificationsReconcilerScheduleId,
  RECONCILE_NOTIFICATIONS_WORKFLOW,
  ReconcileNotificationsInput,
  ReconcileNotificationsResult,
} from '../../workflows/notifications/contracts';
import { sqlRows, sqlRun } from '../shared/sql';
import { releaseAbandonedSends } from './notification-rows';

/** Reminders recorded per run; the rest wait for the next run. */
const REMINDERS_PER_RUN = 500;

export async function recordApprovalReminders(deps: Deps, input: ReconcileNotificationsInput): Promise<number> {
  const due = await sqlRows<{
    id: string;
    member_id: string;
    recipient_name: string | null;
    recipient_company: string | null;
    recipient_city: string;
    recipient_state: string;
    recipient_zip: string;
    cost_cents: number;
    expires_at: Date;
  }>(
    deps.db,
    `SELECT m.id, m.member_id, m.recipient_name, m.recipient_company, m.recipient_city, m.recipient_state, m.recipient_zip,
            m.cost_cents, m.created_at + make_interval(secs => $1) AS expires_at
       FROM outbound_mail m
      WHERE m.status = 'pending_approval' AND NOT m.test_mode
        AND m.created_at <= now() - make_interval(secs => $1 - $2)
        AND m.created_at > now() - make_interval(secs => $1)
        AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.event_key = 'mail:' || m.id || ':approval_expiring')
      ORDER BY m.created_at LIMIT $3`,
    [input.approvalTimeoutSeconds, input.approvalExpiryNoticeSeconds, REMINDERS_PER_RUN],
  );
  for (const m of due) {
    const place = [m.recipient_city, `${m.recipient_state} ${m.recipient_zip}`].join(', ');
    await notifyOwner(deps, {
      memberId: m.member_id,
      kind: 'approval_expiring',
      eventKey: `mail:${m.id}:approval_expiring`,
      payload: {
        mail_id: m.id,
        recipient: `${m.recipient_name ?? m.recipient_company ?? 'a recipient'}, ${place}`,
        cost_cents: Number(m.cost_cents),
        expires_at: m.expires_at
          .toISOString()
          .replace('T', ' ')
          .replace(/\.\d+Z$/, ' UTC'),
      },
    });
  }
  return due.length;
}

/** Gives back abandoned attempts and wakes every notifier with rows waiting unseen; answers how many were woken. */
export async function wakeOverdueNotifiers(deps: Deps, overdueSeconds: number): Promise<number> {
  // A row still `sending` long after its lease: its notifier stopped (terminated, say) mid-send.
  await releaseAbandonedSends(deps.db);
  const members = await sqlRows<{ member_id: string }>(
    deps.db,
    `SELECT DISTINCT member_id FROM notifications
      WHERE status = 'pending' AND queued_at IS NULL AND created_at < now() - make_interval(secs => $1) LIMIT 1000`,
    [overdueSeconds],
  );
  for (const m of members) await signalNotifier(deps, m.member_id);
  return members.length;
}

export async function reconcileNotifications(
  deps: Deps,
  input: ReconcileNotificationsInput,
): Promise<ReconcileNotificationsResult> {
  const reminders = await recordApprovalReminders(deps, input);
  const woken = await wakeOverdueNotifiers(deps, input.overdueSeconds);
  return { reminders, woken };
}

/** Creates or updates the reconciler schedule on this deployment's task queue. */
export async function ensureNotificationsReconcilerSchedule(deps: Deps): Promise<string> {
  const every = deps.config.notifications.reconcileEverySeconds;
  const input: ReconcileNotificationsInput = {
    approvalExpiryNoticeSeconds: deps.config.notifications.approvalExpiryNoticeSeconds,
    approvalTimeoutSeconds: deps.config.outboundMail.approvalTimeoutSeconds,
    overdueSeconds: 60,
  };
  return ensureIntervalSchedule(deps, {
    scheduleId: notificationsReconcilerScheduleId(deps.config.taskQueue),
    workflowType: RECONCILE_NOTIFICATIONS_WORKFLOW,
    workflowId: `notifications-reconciler-${deps.config.taskQueue}`,
    args: [input],
    every: `${every} seconds`,
    catchupWindow: `${Math.max(60, every)} seconds`,
    workflowExecutionTimeout: 10 * 60 * 1000,
  });
}
