// Sending recorded notifications, once each (the notifier workflow's activities call these).
//
// A row goes pending -> sending -> sent (or skipped: its kind was switched off or its
// recipient removed since; failed: the relay refused it for good; digested: a digest
// carried it). Before talking to the relay an attempt takes the row's lease and fixes its
// Message-ID; it renews the lease while it lives, and no other attempt sends the row while
// the lease runs, so a retry that starts while an earlier attempt might still be talking to
// the relay waits until that attempt ends or dies. An attempt that fails cleanly
// (connection refused, 4xx) gives the lease back at once.
// What remains: a worker that dies after the relay accepted the message and before the row
// says sent leaves the row sending; once its lease ends the retry sends it again, with the
// same Message-ID (docs/decisions/0100-owner-notifications-sent-once-from-workflows.md).
import type { Deps } from '../shared/deps';
import { isNotificationKind, DIGEST_LISTED_ITEMS, type EmailKind } from '../../domain/notifications/kinds';
import { buildEmail, messageIdDomain, PermanentSmtpFailure, sendEmail } from './email';
import { ACCOUNT_EMAIL_KINDS } from '../../domain/notifications/kinds';
import type { DeliveryOutcome, DigestInput, PendingNotifications } from '../../workflows/notifications/contracts';
import { sqlRows, sqlRun } from '../shared/sql';
import {
  claimNotification,
  finishNotification,
  insertDigest,
  markDigested,
  markPendingQueued,
  type NotificationRow,
  releaseNotificationLease,
  renewNotificationLease,
} from './notification-rows';
import { clearNotifierWake } from './notifier-rows';

/**
 * An attempt holds the row this long and renews it while it lives (every LEASE_RENEW_MS):
 * a slow but living attempt keeps it, a dead one loses it within this long.
 */
export const SEND_LEASE_SECONDS = 30;
const LEASE_RENEW_MS = 5000;

/** The lease of an earlier attempt has not ended: try again later. */
export class SendInFlight extends Error {
  override name = 'SendInFlight';
}

/**
 * What the member's notifier should look at: clears the wake-up flag first (a notice
 * recorded after this finds it clear and signals again), marks every pending row seen,
 * and answers the groups a digest may gather plus the rows sent one by one.
 */
export async function pendingNotifications(deps: Deps, memberId: string): Promise<PendingNotifications> {
  await clearNotifierWake(deps.db, memberId);
  await markPendingQueued(deps.db, memberId);
  const groups = await sqlRows<{ recipient_id: string; kind: string; oldest_id: string; count: number }>(
    deps.db,
    `SELECT recipient_id, kind, count(*)::int AS count, (array_agg(id ORDER BY created_at, id))[1] AS oldest_id
       FROM notifications
      WHERE member_id = $1 AND status = 'pending' AND NOT is_digest AND NOT (kind = ANY($2))
      GROUP BY recipient_id, kind ORDER BY min(created_at)`,
    [memberId, ACCOUNT_EMAIL_KINDS],
  );
  const immediate = await sqlRows<{ id: string }>(
    deps.db,
    `SELECT id FROM notifications
      WHERE member_id = $1 AND status IN ('pending','sending') AND (is_digest OR kind = ANY($2))
      ORDER BY created_at LIMIT 100`,
    [memberId, ACCOUNT_EMAIL_KINDS],
  );
  return {
    groups: groups.map((g) => ({ recipientId: g.recipient_id, kind: g.kind, oldestId: g.oldest_id, count: g.count })),
    immediate: immediate.map((r) => r.id),
  };
}

/** Takes the row's lease (and fixes its Message-ID), or says why not. */
async function claim(deps: Deps, id: string): Promise<NotificationRow | DeliveryOutcome> {
  const messageId = `<n.${id}@${messageIdDomain(deps.config)}>`;
  const row = await claimNotification(deps.db, id, messageId, SEND_LEASE_SECONDS);
  if (row) return row;
  const [now] = await sqlRows<{ status: string; lease_until: Date | null }>(
    deps.db,
    `SELECT status, lease_until FROM notifications WHERE id = $1`,
    [id],
  );
  if (!now) return 'skipped';
  if (now.status === 'sending') {
    throw new SendInFlight(
      `notification ${id} is being sent by an earlier attempt until ${now.lease_until?.toISOString()}`,
    );
  }
  return now.status as DeliveryOutcome;
}

async function finish(
  deps: Deps,
  id: string,
  status: 'sent' | 'skipped' | 'failed',
  detail: { response?: string; error?: string },
): Promise<void> {
  await finishNotification(deps.db, id, status, detail.response ?? null, detail.error ?? null);
}

/** The recipient's address, if the row may still go to it. */
async function addressee(
  deps: Deps,
  row: NotificationRow,
): Promise<{ email: string; recipientId: string; ownerName: string | null } | null> {
  const [r] = await sqlRows<{
    id: string;
    is_owner: boolean;
    disabled_kinds: string[];
    confirmed_at: Date | null;
    removed_at: Date | null;
    email: string;
    full_name: string;
  }>(
    deps.db,
    `SELECT r.id, r.is_owner, r.disabled_kinds, r.confirmed_at, r.removed_at, COALESCE(r.email, m.email) AS email, m.full_name
       FROM notification_recipients r JOIN members m ON m.id = r.member_id
      WHERE r.id = $1`,
    [row.recipient_id],
  );
  if (!r || r.removed_at) return null;
  if (isNotificationKind(row.kind) && (!r.confirmed_at || r.disabled_kinds.includes(row.kind))) return null;
  return { email: r.email, recipientId: r.id, ownerName: r.full_name };
}

/**
 * Sends one notification row (a single notice or a digest), once. Answers what became of
 * it; throws to be tried again (relay unreachable or 4xx, an earlier attempt's lease).
 */
export async function deliverNotification(
  deps: Deps,
  id: string,
  heartbeat: () => void = () => undefined,
): Promise<DeliveryOutcome> {
  const claimed = await claim(deps, id);
  if (typeof claimed === 'string') return claimed;
  const row = claimed;
  const to = await addressee(deps, row);
  if (!to) {
    await finish(deps, id, 'skipped', { error: 'the kind was switched off or the recipient removed' });
    return 'skipped';
  }
  let content: Parameters<typeof buildEmail>[2];
  if (row.is_digest) {
    const items = await sqlRows<{ payload: NotificationRow['payload'] }>(
      deps.db,
      `SELECT payload FROM notifications WHERE digest_id = $1 ORDER BY created_at, id LIMIT $2`,
      [id, DIGEST_LISTED_ITEMS],
    );
    const [{ total }] = await sqlRows<{ total: number }>(
      deps.db,
      `SELECT count(*)::int AS total FROM notifications WHERE digest_id = $1`,
      [id],
    );
    if (total === 0) {
      await finish(deps, id, 'skipped', { error: 'nothing left to gather' });
      return 'skipped';
    }
    content = { kind: row.kind, digest: { items: items.map((i) => i.payload), total } };
  } else {
    content = { kind: row.kind, payload: row.payload };
  }
  const email = buildEmail(deps.config, to, content);
  const beat = setInterval(() => {
    heartbeat();
    renewNotificationLease(deps.db, id, SEND_LEASE_SECONDS).catch((err) =>
      deps.log.warn({ err, notification_id: id }, 'renewing a notification lease failed'),
    );
  }, LEASE_RENEW_MS);
  try {
    const response = await sendEmail(deps.config, email, row.message_id!);
    await finish(deps, id, 'sent', { response });
    return 'sent';
  } catch (err) {
    if (err instanceof PermanentSmtpFailure) {
      deps.log.warn({ err, notification_id: id }, 'the relay refused a notification for good');
      await finish(deps, id, 'failed', { error: err.message });
      return 'failed';
    }
    // Nothing was accepted: give the lease back so the next attempt need not wait for it.
    await releaseNotificationLease(deps.db, id, `${(err as Error).message}`.slice(0, 500)).catch(() => undefined);
    throw err;
  } finally {
    clearInterval(beat);
  }
}

/**
 * Gathers every pending notification of one recipient and kind into a digest row (once per
 * digest key: a retried activity finds the same digest and the same items) and sends it.
 */
export async function deliverDigest(
  deps: Deps,
  input: DigestInput,
  heartbeat: () => void = () => undefined,
): Promise<DeliveryOutcome> {
  const digestId = await deps.db.transaction(async (tx) => {
    const created = await insertDigest(tx, input.memberId, input.recipientId, input.kind, `digest:${input.digestKey}`);
    if (!created) {
      const [existing] = await sqlRows<{ id: string }>(
        tx,
        `SELECT id FROM notifications WHERE event_key = $1 AND recipient_id = $2 AND kind = $3`,
        [`digest:${input.digestKey}`, input.recipientId, input.kind],
      );
      return existing.id;
    }
    await markDigested(tx, input.memberId, input.recipientId, input.kind, created.id);
    return created.id;
  });
  return deliverNotification(deps, digestId, heartbeat);
}
