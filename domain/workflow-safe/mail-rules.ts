// Pure rules of an outbound piece: its statuses and which moves each allows, the
// spending safeguards, the per-key daily piece limit, duplicate protection's window,
// sandbox carrier details and the created_after/created_before filter bounds. The
// piece workflow imports this module, so it stays free of I/O and Node built-ins.

/**
 * `funding_pending`: a child of a Business mail run that waits, outside fulfillment and
 * not yet debited, until its run is funded (then submitted) or cancelled.
 */
export const MAIL_STATUSES = [
  'pending_approval',
  'funding_pending',
  'submitted',
  'ready',
  'mailed',
  'delivered',
  'failed',
  'cancelled',
] as const;
export type MailStatusName = (typeof MAIL_STATUSES)[number];

export const TERMINAL_MAIL_STATUSES: readonly MailStatusName[] = ['delivered', 'failed', 'cancelled'];

export function isTerminalMailStatus(status: string): boolean {
  return (TERMINAL_MAIL_STATUSES as readonly string[]).includes(status);
}

/** `mail.<status>`: every status change publishes the event of the new status. */
export function mailEventType(status: MailStatusName): string {
  return `mail.${status}`;
}

export const PHOTO_CATEGORIES = ['pages', 'envelope', 'receipt', 'delivery'] as const;
export type PhotoCategory = (typeof PHOTO_CATEGORIES)[number];

/** How the facility handed a piece to its carrier. */
export const DISPATCH_METHODS = ['post_office_counter', 'carrier_pickup', 'drop_box'] as const;
export type DispatchMethod = (typeof DISPATCH_METHODS)[number];

export const CANCELLATION_REASONS = [
  'cancelled_by_caller',
  'rejected_by_owner',
  'approval_timed_out',
  'mail_run_cancelled',
  'cancelled_by_operator',
] as const;
export type CancellationReason = (typeof CANCELLATION_REASONS)[number];

/** Statuses from which each move is allowed. */
export const MOVES = {
  approve: ['pending_approval'],
  reject: ['pending_approval'],
  /** DELETE /v1/mail/{id}: while submitted and before printing starts (or still awaiting approval or funding). */
  cancel: ['pending_approval', 'funding_pending', 'submitted'],
  startPrinting: ['submitted'],
  printed: ['submitted'],
  dispatched: ['ready'],
  delivered: ['mailed'],
  /** A facility failure happens before the piece is in the carrier's hands. */
  failed: ['submitted', 'ready'],
  carrierDeliveryFailed: ['mailed'],
} as const satisfies Record<string, readonly MailStatusName[]>;
export type MailMove = keyof typeof MOVES;

export function moveAllowed(move: MailMove, status: string): boolean {
  return (MOVES[move] as readonly string[]).includes(status);
}

/** The sandbox `advance` step: submitted -> ready -> mailed -> delivered. */
export function nextTestStep(status: string): 'printed' | 'dispatched' | 'delivered' | null {
  if (status === 'submitted') return 'printed';
  if (status === 'ready') return 'dispatched';
  if (status === 'mailed') return 'delivered';
  return null;
}

/** The carrier that carries a mail class (private-carrier classes name theirs). */
export function carrierForClass(mailClass: string): string {
  if (mailClass.startsWith('carrierx_')) return 'carrierx';
  if (mailClass.startsWith('carriery_')) return 'carriery';
  return 'usps';
}

/** A sandbox tracking number derived from the piece id, so a retried step gives the same one. */
export function sandboxTrackingNumber(outboundMailId: string, mailClass: string): string {
  const digits = outboundMailId
    .replace(/[^0-9a-f]/gi, '')
    .split('')
    .map((c) => (parseInt(c, 16) % 10).toString())
    .join('');
  const prefix = mailClass.startsWith('carrierx_') ? 'CX' : mailClass.startsWith('carriery_') ? 'CY' : '9400';
  return `TEST${prefix}${digits.slice(0, 18)}`;
}

export interface SpendCheck {
  costCents: number;
  /** X-Max-Cost-Cents, when sent. */
  maxCostCents: number | null;
  perTransactionLimitCents: number | null;
  dailySpendLimitCents: number | null;
  /** Net live spend (debits minus refunds) of the member over the last 24 hours. */
  spentLast24hCents: number;
  /** Test pieces cost nothing, so only the caller's own cap applies to them. */
  live: boolean;
}

export interface Refusal {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** The first spending safeguard that refuses this cost (422), or null. */
export function spendRefusal(c: SpendCheck): Refusal | null {
  if (c.maxCostCents !== null && c.costCents > c.maxCostCents) {
    return {
      code: 'MAX_COST_EXCEEDED',
      message: `The piece costs ${c.costCents} cents, above the X-Max-Cost-Cents cap of ${c.maxCostCents}.`,
      details: { cost_cents: c.costCents, max_cost_cents: c.maxCostCents },
    };
  }
  if (!c.live) return null;
  if (c.perTransactionLimitCents !== null && c.costCents > c.perTransactionLimitCents) {
    return {
      code: 'PER_TRANSACTION_LIMIT_EXCEEDED',
      message: `The piece costs ${c.costCents} cents, above the account's per-transaction limit of ${c.perTransactionLimitCents}.`,
      details: { cost_cents: c.costCents, per_transaction_limit_cents: c.perTransactionLimitCents },
    };
  }
  if (c.dailySpendLimitCents !== null && c.spentLast24hCents + c.costCents > c.dailySpendLimitCents) {
    return {
      code: 'DAILY_SPEND_LIMIT_EXCEEDED',
      message: `Sending would bring the last 24 hours' spend to ${c.spentLast24hCents + c.costCents} cents, above the daily cap of ${c.dailySpendLimitCents}.`,
      details: {
        cost_cents: c.costCents,
        daily_spend_limit_cents: c.dailySpendLimitCents,
        spent_last_24h_cents: c.spentLast24hCents,
        remaining_today_cents: Math.max(0, c.dailySpendLimitCents - c.spentLast24hCents),
      },
    };
  }
  return null;
}

export interface DailyPieces {
  limit: number | null;
  /** Pieces this key created in the last 24 hours. */
  used: number;
}

export function dailyPiecesRefusal(d: DailyPieces): Refusal | null {
  if (d.limit === null || d.used < d.limit) return null;
  return {
    code: 'MAX_DAILY_PIECES_EXCEEDED',
    message: `This key may send ${d.limit} pieces per 24 hours and has sent ${d.used}.`,
    details: { max_daily_pieces: d.limit, pieces_last_24h: d.used, remaining_pieces: 0 },
  };
}

/**
 * The dry-run warning about the key's daily piece limit: given when the key has a limit
 * and at most a fifth of it (at least 1) remains, including when none remains.
 */
export function dailyPiecesWarning(d: DailyPieces): {
  code: string;
  message: string;
  max_daily_pieces: number;
  pieces_last_24h: number;
  remaining_pieces: number;
} | null {
  if (d.limit === null) return null;
  const remaining = Math.max(0, d.limit - d.used);
  if (remaining > Math.max(1, Math.floor(d.limit / 5))) return null;
  return {
    code: 'max_daily_pieces',
    message:
      remaining === 0
        ? `This key has used all ${d.limit} pieces of its 24-hour limit; a real submission now would be refused (422).`
        : `This key has ${remaining} of ${d.limit} pieces left in its 24-hour window.`,
    max_daily_pieces: d.limit,
    pieces_last_24h: d.used,
    remaining_pieces: remaining,
  };
}

/** Duplicate protection looks back this far. */
export const DUPLICATE_WINDOW_HOURS = 24;
/** Statuses that no longer count as an earlier copy of the same letter. */
export const DUPLICATE_IGNORED_STATUSES: readonly MailStatusName[] = ['cancelled', 'failed'];

/**
 * A created_after / created_before bound: an ISO 8601 date-time, or YYYY-MM-DD. A
 * date-only created_before includes that whole UTC day (so it becomes the next day's
 * midnight, exclusive). Returns null when the text is neither.
 */
export function parseCreatedBound(value: string, side: 'after' | 'before'): { at: Date; inclusive: boolean } | null {
  const text = value.trim();
  const dateOnly = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (dateOnly) {
    const [y, m, d] = [Number(dateOnly[1]), Number(dateOnly[2]), Number(dateOnly[3])];
    const day = new Date(Date.UTC(y, m - 1, d));
    if (day.getUTCFullYear() !== y || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return null;
    if (side === 'before') return { at: new Date(day.getTime() + 86400000), inclusive: false };
    return { at: day, inclusive: true };
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(text)) return null;
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) return null;
  return { at, inclusive: true };
}
