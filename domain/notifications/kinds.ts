// What an owner is told by email, as pure rules: the kinds (each one the owner or an extra
// recipient can switch off), the account emails that are always sent (sign-up
// verification, a new recipient's confirmation), which business events become which kind,
// and the words each email says. No I/O: the services record and send, the templates lay
// the words out.
import { formatCents } from '../shared/money';

export const NOTIFICATION_KINDS = [
  'approval_needed',
  'approval_expiring',
  'credits_refused',
  'low_balance',
  'piece_failed',
  'handling_proposal',
  'mail_arrived',
  'endpoint_paused',
  'credits',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** Sent to one address whatever its preferences, never gathered into a digest, no unsubscribe link. */
export const ACCOUNT_EMAIL_KINDS = ['verify_email', 'confirm_recipient'] as const;
export type AccountEmailKind = (typeof ACCOUNT_EMAIL_KINDS)[number];
export type EmailKind = NotificationKind | AccountEmailKind;

export function isNotificationKind(kind: string): kind is NotificationKind {
  return (NOTIFICATION_KINDS as readonly string[]).includes(kind);
}

/** What each kind is, in the owner's words (the Notifications page and the unsubscribe page). */
export const KIND_LABELS: Record<NotificationKind, string> = {
  approval_needed: 'A letter waits for your approval',
  approval_expiring: 'An approval expires within 48 hours',
  credits_refused: 'A live submission was refused for lack of credits (at most once an hour)',
  low_balance: 'The balance fell below your low-balance threshold',
  piece_failed: 'A piece failed, the carrier could not deliver it, or a batch had failed pieces',
  handling_proposal: 'An agent proposes handling of mail at your mailbox',
  mail_arrived: 'A physical item arrived at your mailbox',
  endpoint_paused: 'A custom webhook endpoint was paused',
  credits: 'Credits bought, refunded or disputed',
};

/** The low-balance threshold of a member who never set one: $10. */
export const DEFAULT_LOW_BALANCE_THRESHOLD_CENTS = 1000;

// ---------------------------------------------------------------------------------------
// Notices: what a publisher records. `eventKey` with the recipient and the kind is unique:
// recording the same notice again changes nothing.

export interface Notice {
  memberId: string;
  kind: EmailKind;
  /** The business event or fact told, e.g. `mail:<id>:mail.pending_approval`. */
  eventKey: string;
  payload: NoticePayload;
  /** Only this recipient (account emails); otherwise every confirmed recipient with the kind on. */
  recipientId?: string;
}

export type NoticePayload = Record<string, string | number | boolean | null>;

/** A business event as publishEvent records it (services/webhooks/events.ts). */
export interface PublishedEventFacts {
  eventKey: string;
  memberId: string;
  eventType: string;
  testMode: boolean;
  objectType: string;
  objectId: string;
  payload: Record<string, unknown>;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function recipientLine(p: Record<string, unknown>): string {
  const place = [text(p.recipient_city), [text(p.recipient_state), text(p.recipient_zip)].filter(Boolean).join(' ')]
    .filter(Boolean)
    .join(', ');
  return [text(p.recipient_name) ?? text(p.recipient_company) ?? 'a recipient', place].filter(Boolean).join(', ');
}

/**
 * The notice a business event becomes, or null. Live events only: the console shows live
 * records, and the sandbox is the agent developer's to watch through its webhooks.
 * `agentName` is looked up by the caller for the events that need it.
 */
export function noticeForEvent(e: PublishedEventFacts, agentName: string | null): Notice | null {
  if (e.testMode) return null;
  const p = e.payload;
  const base = { memberId: e.memberId, eventKey: e.eventKey };
  switch (e.eventType) {
    case 'mail.pending_approval':
      return {
        ...base,
        kind: 'approval_needed',
        payload: {
          mail_id: e.objectId,
          recipient: recipientLine(p),
          cost_cents: num(p.cost_cents),
          mail_class: text(p.mail_class),
          agent_name: agentName,
        },
      };
    case 'mail.failed':
      return {
        ...base,
        kind: 'piece_failed',
        payload: {
          object: 'mail',
          mail_id: e.objectId,
          recipient: recipientLine(p),
          reason: text(p.error_message),
          carrier_delivery_failed: p.carrier_delivery_failed === true,
          agent_name: agentName,
        },
      };
    case 'batch.failed':
    case 'batch.partially_completed': {
      const failed = num(p.pieces_failed) ?? 0;
      if (e.eventType === 'batch.partially_completed' && failed === 0) return null;
      return {
        ...base,
        kind: 'piece_failed',
        payload: {
          object: 'batch',
          batch_id: e.objectId,
          job_name: text(p.job_name),
          status: text(p.status),
          pieces_failed: failed,
          pieces_mailed: num(p.pieces_mailed) ?? 0,
          total_pieces: num(p.total_pieces) ?? 0,
          reason: text(p.error_message),
          agent_name: agentName,
        },
      };
    }
    case 'inbound.received':
      // A physical item at the mailbox (forwarded email has objectType inbound_mail_item).
      if (e.objectType !== 'inbound_item') return null;
      return { ...base, kind: 'mail_arrived', payload: { item_id: e.objectId, agent_name: agentName } };
    default:
      return null;
  }
}

/** The event key of a refusal for credits: one per member and clock hour, so at most one notice an hour. */
export function creditsRefusedEventKey(memberId: string, at: Date): string {
  return `credits-refused:${memberId}:${at.toISOString().slice(0, 13)}`;
}

/** A debit crossed the threshold when the balance was at or above it before and is below it after. */
export function crossedBelow(before: number, after: number, threshold: number): boolean {
  return threshold > 0 && before >= threshold && after < threshold;
}

// ---------------------------------------------------------------------------------------
// The words. `link` paths are the site's own (the console); the renderer makes them absolute.

export interface NoticeText {
  subject: string;
  headline: string;
  /** Sentences after the headline. */
  lines: string[];
  facts: Array<[string, string]>;
  action: { label: string; path: string } | null;
}

const money = (cents: unknown) => (num(cents) === null ? '—' : formatCents(num(cents)!));
const str = (v: unknown, fallback = '—') => text(v) ?? fallback;

export function describeNotice(kind: EmailKind, p: NoticePayload): NoticeText {
  switch (kind) {
    case 'approval_needed':
      return {
        subject: `Approval needed: a letter to ${str(p.recipient)} (${money(p.cost_cents)})`,
        headline: 'A letter waits for your approval',
        lines: [
          `${str(p.agent_name, 'An agent')} asked to send a letter. Nothing is charged or printed until you approve it; unapproved letters expire after 30 days.`,
        ],
        facts: [
          ['To', str(p.recipient)],
          ['Cost', money(p.cost_cents)],
          ['Agent', str(p.agent_name)],
          ['Class', str(p.mail_class).replace(/_/g, ' ')],
        ],
        action: { label: 'Review and approve', path: `/console/mail/${p.mail_id}` },
      };
    case 'approval_expiring':
      return {
        subject: `Approval expires soon: a letter to ${str(p.recipient)}`,
        headline: 'An approval expires within 48 hours',
        lines: [
          `The letter to ${str(p.recipient)} still waits for your approval. If nobody approves it by ${str(p.expires_at)}, it is cancelled and never sent.`,
        ],
        facts: [
          ['To', str(p.recipient)],
          ['Cost', money(p.cost_cents)],
          ['Expires', str(p.expires_at)],
        ],
        action: { label: 'Review and approve', path: `/console/mail/${p.mail_id}` },
      };
    case 'credits_refused':
      return {
        subject: 'A live submission was refused: not enough credits',
        headline: 'Not enough credits',
        lines: [
          `A ${str(p.what, 'submission')} needing ${money(p.required_cents)} was refused: the balance was ${money(p.balance_cents)}. Agents cannot buy credits; add some on the billing page. You are told at most once an hour.`,
        ],
        facts: [
          ['Needed', money(p.required_cents)],
          ['Balance', money(p.balance_cents)],
        ],
        action: { label: 'Add credits', path: '/console/billing' },
      };
    case 'low_balance':
      return {
        subject: `Low balance: ${money(p.balance_cents)} left`,
        headline: 'Your balance fell below your threshold',
        lines: [
          `The balance is now ${money(p.balance_cents)}, below the ${money(p.threshold_cents)} you chose. Live letters are refused once it cannot pay for them.`,
        ],
        facts: [
          ['Balance', money(p.balance_cents)],
          ['Threshold', money(p.threshold_cents)],
        ],
        action: { label: 'Add credits', path: '/console/billing' },
      };
    case 'piece_failed':
      if (p.object === 'batch') {
        return {
          subject: `Batch ${str(p.job_name)}: ${p.pieces_failed} of ${p.total_pieces} pieces not mailed`,
          headline: `${p.pieces_failed} of ${p.total_pieces} pieces of a batch were not mailed`,
          lines: [
            `The batch ${str(p.job_name)} ended ${str(p.status).replace(/_/g, ' ')}: ${p.pieces_mailed} mailed, ${p.pieces_failed} failed. Credits for pieces not mailed are refunded.`,
            ...(text(p.reason) ? [`Reason: ${p.reason}`] : []),
          ],
          facts: [
            ['Batch', str(p.job_name)],
            ['Failed', String(p.pieces_failed)],
            ['Mailed', String(p.pieces_mailed)],
          ],
          action: { label: 'See the batch', path: `/console/batches/${p.batch_id}` },
        };
      }
      return {
        subject: p.carrier_delivery_failed
          ? `Not delivered: the letter to ${str(p.recipient)}`
          : `Failed: the letter to ${str(p.recipient)}`,
        headline: p.carrier_delivery_failed ? 'The carrier could not deliver a letter' : 'A letter failed',
        lines: [
          p.carrier_delivery_failed
            ? `The letter to ${str(p.recipient)} was mailed, but the carrier reports it undeliverable or returned. Postage was spent, so nothing is refunded.`
            : `The letter to ${str(p.recipient)} could not be printed or mailed. Its credits are refunded.`,
        ],
        facts: [
          ['To', str(p.recipient)],
          ['Problem', str(p.reason)],
          ['Agent', str(p.agent_name)],
        ],
        action: { label: 'See the letter', path: `/console/mail/${p.mail_id}` },
      };
    case 'handling_proposal':
      return {
        subject: `Approval needed: ${str(p.agent_name, 'an agent')} proposes to ${str(p.action_type).replace(/_/g, ' ')} an item`,
        headline: 'A handling proposal waits for your approval',
        lines: [
          `${str(p.agent_name, 'An agent')} proposes to ${str(p.action_type).replace(/_/g, ' ')} an item at your mailbox. Nothing happens until you approve it.`,
        ],
        facts: [
          ['Action', str(p.action_type).replace(/_/g, ' ')],
          ['Quote', money(p.quote_cents)],
          ['Agent', str(p.agent_name)],
        ],
        action: { label: 'Review the proposal', path: '/console/inbound' },
      };
    case 'mail_arrived':
      return {
        subject: 'Mail arrived at your mailbox',
        headline: 'A physical item arrived at your mailbox',
        lines: ['The facility recorded a new item for you. Its photos and any scans are in the console.'],
        facts: [['Assigned to', str(p.agent_name)]],
        action: { label: 'See the item', path: `/console/inbound/${p.item_id}` },
      };
    case 'endpoint_paused':
      return {
        subject: `Webhook endpoint paused: ${str(p.url)}`,
        headline: 'A webhook endpoint was paused',
        lines: [
          `After ${p.failures ?? 5} failed deliveries in a row, events are no longer sent to ${str(p.url)}. Fix the receiver, then verify the endpoint again to resume.`,
        ],
        facts: [
          ['Endpoint', str(p.url)],
          ['Environment', str(p.environment)],
          ['Last error', str(p.last_error)],
        ],
        action: { label: 'See the endpoint', path: `/console/webhooks/${p.endpoint_id}` },
      };
    case 'credits': {
      const what: Record<string, [string, string]> = {
        bought: ['Credits added', `${money(p.amount_cents)} of credits were added to your balance.`],
        refunded: ['Credits refunded', `A refund of ${money(p.amount_cents)} took that amount back from your balance.`],
        dispute_opened: [
          'Payment disputed',
          `A dispute was opened on a credit purchase: ${money(p.amount_cents)} is held back from your balance until it is decided.`,
        ],
        dispute_won: [
          'Dispute won',
          `The dispute was decided for you: ${money(p.amount_cents)} is back in your balance.`,
        ],
      };
      const [headline, line] = what[String(p.movement)] ?? ['Credits changed', `${money(p.amount_cents)}.`];
      return {
        subject: `${headline}: ${money(p.amount_cents)}`,
        headline,
        lines: [line],
        facts: [['Amount', money(p.amount_cents)]],
        action: { label: 'See billing', path: '/console/billing' },
      };
    }
    case 'verify_email':
      return {
        subject: 'Confirm your email address for Postal Mail',
        headline: 'Confirm your email address',
        lines: [
          `Hello ${str(p.full_name, 'there')}, an account was created with this address. Confirm that it is yours; the link works once, until ${str(p.expires_at)}.`,
          'If you did not sign up, ignore this email.',
        ],
        facts: [],
        action: { label: 'Confirm my email address', path: String(p.path) },
      };
    case 'confirm_recipient':
      return {
        subject: 'Confirm that you want Postal Mail notifications',
        headline: 'Confirm notifications to this address',
        lines: [
          `${str(p.owner_name)} (${str(p.owner_email)}) asked that this address be told of their Postal Mail account: approvals, problems and payments. Nothing is sent until you confirm; the link works once, until ${str(p.expires_at)}.`,
          'If you do not know why, ignore this email.',
        ],
        facts: [],
        action: { label: 'Confirm', path: String(p.path) },
      };
  }
}

/** A digest: the items of one kind gathered over the window, the first `items` of `total` listed. */
export function describeDigest(
  kind: NotificationKind,
  items: NoticePayload[],
  total: number,
): { subject: string; headline: string; entries: NoticeText[]; more: number } {
  const entries = items.map((p) => describeNotice(kind, p));
  const label = KIND_LABELS[kind].split(' (')[0];
  return {
    subject: `Digest: ${label} (${total})`,
    headline: `${total} since the last email of this kind: ${label.charAt(0).toLowerCase()}${label.slice(1)}`,
    entries,
    more: Math.max(0, total - items.length),
  };
}

/** Items listed in a digest; the rest are counted. */
export const DIGEST_LISTED_ITEMS = 50;
