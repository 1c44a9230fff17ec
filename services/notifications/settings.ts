// The owner's notification settings: the low-balance threshold, and who is told what. The
// owner (the member's own address) is always a recipient; extra recipients are added by
// address and receive nothing until they open the confirmation link emailed to them.
// Each recipient switches kinds on and off; an email's unsubscribe link (a signed token of
// its recipient and kind, no sign-in) switches its kind off for its recipient.
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import { errors } from '../../domain/shared/errors';
import {
  DEFAULT_LOW_BALANCE_THRESHOLD_CENTS,
  isNotificationKind,
  KIND_LABELS,
  NOTIFICATION_KINDS,
  NotificationKind,
} from '../../domain/notifications/kinds';
import { emailLinkKey, readLink } from '../../domain/notifications/links';
import { recordNotice } from './notices';
import { sqlRows, sqlRun } from '../shared/sql';
import {
  markRecipientConfirmed,
  disableRecipientKind,
  ensureOwnerRecipient,
  insertRecipient,
  markRecipientRemoved,
  setRecipientDisabledKinds,
} from './recipient-rows';
import { insertConfirmRecipientLink, markEmailLinkUsed } from './email-link-rows';

/** Extra recipients a member may have besides the owner. */
export const MAX_EXTRA_RECIPIENTS = 5;

export interface RecipientView {
  id: string;
  email: string;
  owner: boolean;
  status: 'active' | 'pending_confirmation';
  kinds: Record<NotificationKind, boolean>;
  created_at: string;
  confirmed_at: string | null;
}

export interface SettingsView {
  low_balance_threshold_cents: number;
  kinds: Array<{ kind: NotificationKind; description: string }>;
  recipients: RecipientView[];
  max_extra_recipients: number;
}

interface RecipientRow {
  id: string;
  is_owner: boolean;
  email: string;
  disabled_kinds: string[];
  confirmed_at: Date | null;
  created_at: Date;
}

function recipientView(r: RecipientRow): RecipientView {
  return {
    id: r.id,
    email: r.email,
    owner: r.is_owner,
    status: r.confirmed_at ? 'active' : 'pending_confirmation',
    kinds: Object.fromEntries(NOTIFICATION_KINDS.map((k) => [k, !r.disabled_kinds.includes(k)])) as Record<
      NotificationKind,
      boolean
    >,
    created_at: r.created_at.toISOString(),
    confirmed_at: r.confirmed_at?.toISOString() ?? null,
  };
}

/** The member's recipients, the owner first (its row made on first sight). */
async function recipients(db: Pick<EntityManager, 'query'>, memberId: string): Promise<RecipientRow[]> {
  await ensureOwnerRecipient(db, memberId);
  return sqlRows<RecipientRow>(
    db,
    `SELECT r.id, r.is_owner, COALESCE(r.email, m.email) AS email, r.disabled_kinds, r.confirmed_at, r.created_at
       FROM notification_recipients r JOIN members m ON m.id = r.member_id
      WHERE r.member_id = $1 AND r.removed_at IS NULL
      ORDER BY r.is_owner DESC, r.created_at`,
    [memberId],
  );
}

async function threshold(db: Pick<EntityManager, 'query'>, memberId: string): Promise<number> {
  const [s] = await sqlRows<{ low_balance_threshold_cents: number }>(
    db,
    `SELECT low_balance_threshold_cents FROM notification_settings WHERE member_id = $1`,
    [memberId],
  );
  return s ? Number(s.low_balance_threshold_cents) : DEFAULT_LOW_BALANCE_THRESHOLD_CENTS;
}

export async function getSettings(deps: Deps, memberId: string): Promise<SettingsView> {
  return {
    low_balance_threshold_cents: await threshold(deps.db, memberId),
    kinds: NOTIFICATION_KINDS.map((kind) => ({ kind, description: KIND_LABELS[kind] })),
    recipients: (await recipients(deps.db, memberId)).map(recipientView),
    max_extra_recipients: MAX_EXTRA_RECIPIENTS,
  };
}

export async function updateSettings(
  deps: Deps,
  memberId: string,
  input: { low_balance_threshold_cents?: number },
): Promise<SettingsView> {
  if (input.low_balance_threshold_cents !== undefined) {
    await sqlRun(
      deps.db,
      `INSERT INTO notification_settings (member_id, low_balance_threshold_cents) VALUES ($1, $2)
       ON CONFLICT (member_id) DO UPDATE SET low_balance_threshold_cents = $2, updated_at = now()`,
      [memberId, input.low_balance_threshold_cents],
    );
  }
  return getSettings(deps, memberId);
}

function findRecipient(rows: RecipientRow[], id: string): RecipientRow {
  const r = rows.find((x) => x.id === id);
  if (!r) throw errors.notFound('Recipient');
  return r;
}

/** Switches kinds on (true) and off (false) for one recipient; kinds not named stay as they are. */
export async function updateRecipient(
  deps: Deps,
  memberId: string,
  id: string,
  input: { kinds: Partial<Record<NotificationKind, boolean>> },
): Promise<RecipientView> {
  const current = findRecipient(await recipients(deps.db, memberId), id);
  const off = new Set(current.disabled_kinds);
  for (const [kind, on] of Object.entries(input.kinds)) {
    if (on) off.delete(kind);
    else off.add(kind);
  }
  await setRecipientDisabledKinds(
    deps.db,
    id,
    NOTIFICATION_KINDS.filter((k) => off.has(k)),
  );
  return recipientView(findRecipient(await recipients(deps.db, memberId), id));
}

/**
 * Adds an extra recipient and emails it a confirmation link; until it is opened the
 * recipient receives nothing. The owner's own address and one already listed are refused.
 */
export async function addRecipient(deps: Deps, memberId: string, email: string): Promise<RecipientView> {
  const address = email.trim();
  const id = await deps.db.transaction(async (tx) => {
    // Serialises additions of one member (the limit below).
    const [member] = await sqlRows<{ email: string; full_name: string }>(
      tx,
      `SELECT email, full_name FROM members WHERE id = $1 FOR UPDATE`,
      [memberId],
    );
    const listed = await recipients(tx, memberId);
    if (listed.some((r) => r.email.toLowerCase() === address.toLowerCase())) {
      throw errors.conflict('RECIPIENT_EXISTS', `${address} already receives notifications of this account.`, {
        suggestedAction: 'Change the kinds it receives instead, or remove it first.',
      });
    }
    if (listed.filter((r) => !r.is_owner).length >= MAX_EXTRA_RECIPIENTS) {
      throw errors.conflict('RECIPIENT_LIMIT', `At most ${MAX_EXTRA_RECIPIENTS} extra recipients.`, {
        suggestedAction: 'Remove one first.',
      });
    }
    const r = await insertRecipient(tx, memberId, address);
    const expires = new Date(Date.now() + deps.config.notifications.emailLinkHours * 3600_000);
    const link = await insertConfirmRecipientLink(tx, memberId, r.id, expires);
    await recordNotice(tx, {
      memberId,
      kind: 'confirm_recipient',
      eventKey: `confirm-recipient:${link.id}`,
      recipientId: r.id,
      payload: {
        link_id: link.id,
        owner_name: member.full_name,
        owner_email: member.email,
        expires_at: expires
          .toISOString()
          .replace('T', ' ')
          .replace(/\.\d+Z$/, ' UTC'),
      },
    });
    return r.id as string;
  });
  return recipientView(findRecipient(await recipients(deps.db, memberId), id));
}

export async function removeRecipient(deps: Deps, memberId: string, id: string): Promise<RecipientView> {
  const r = findRecipient(await recipients(deps.db, memberId), id);
  if (r.is_owner) {
    throw errors.conflict('RECIPIENT_IS_OWNER', "The owner's own address cannot be removed.", {
      suggestedAction: 'Switch off the kinds the owner should not receive instead.',
    });
  }
  await markRecipientRemoved(deps.db, id);
  return recipientView(r);
}

// ---------------------------------------------------------------------------------------
// Links in emails (no sign-in): the token is the authority.

const linkError = (what: string) =>
  errors.badRequest(
    'EMAIL_LINK_INVALID',
    `This ${what} link is not valid: it was used already, it expired, or it was mistyped.`,
    { suggestedAction: 'Open the newest email, or change notification settings in the console.' },
  );

/** What an unsubscribe link stops, for its confirm page. */
export async function unsubscribeTarget(
  deps: Deps,
  token: unknown,
): Promise<{ recipientId: string; kind: NotificationKind; email: string; label: string; alreadyOff: boolean }> {
  const fields = readLink(emailLinkKey(deps.config.appEncryptionKey), 'unsubscribe', token, 2);
  if (!fields || !isNotificationKind(fields[1])) throw linkError('unsubscribe');
  const [recipientId, kind] = fields as [string, NotificationKind];
  const [r] = await sqlRows<{ email: string; disabled_kinds: string[]; removed_at: Date | null }>(
    deps.db,
    `SELECT COALESCE(r.email, m.email) AS email, r.disabled_kinds, r.removed_at
       FROM notification_recipients r JOIN members m ON m.id = r.member_id WHERE r.id = $1`,
    [recipientId],
  );
  if (!r) throw linkError('unsubscribe');
  return {
    recipientId,
    kind,
    email: r.email,
    label: KIND_LABELS[kind],
    alreadyOff: Boolean(r.removed_at) || (r.disabled_kinds as string[]).includes(kind),
  };
}

/** Switches the link's kind off for its recipient (again and again: each click works). */
export async function unsubscribe(deps: Deps, token: unknown) {
  const target = await unsubscribeTarget(deps, token);
  await disableRecipientKind(deps.db, target.recipientId, target.kind);
  return { ...target, alreadyOff: true };
}

/** Uses a one-time link of `purpose` (the update that marks it used is the check). */
export async function useEmailLink(
  tx: Pick<EntityManager, 'query'>,
  key: Buffer,
  purpose: 'verify_email' | 'confirm_recipient',
  token: unknown,
): Promise<{ member_id: string; recipient_id: string | null } | null> {
  const fields = readLink(key, purpose, token, 1);
  if (!fields) return null;
  const link = await markEmailLinkUsed(tx, fields[0], purpose);
  return link ?? null;
}

/** An extra recipient opened its confirmation link: from now on it is told what it has switched on. */
export async function confirmRecipient(deps: Deps, token: unknown): Promise<{ email: string }> {
  return deps.db.transaction(async (tx) => {
    const link = await useEmailLink(tx, emailLinkKey(deps.config.appEncryptionKey), 'confirm_recipient', token);
    if (!link?.recipient_id) throw linkError('confirmation');
    const [r] = await markRecipientConfirmed(tx, link.recipient_id);
    if (!r) throw linkError('confirmation');
    return { email: r.email };
  });
}
