// Scheduled send (`send_after`, an extension beyond the spec): the window a requested
// time must fall in, how long a workflow holds a paid piece or batch from the facility,
// and which steps wait for that hold to end. Pure, so the piece and batch workflows use
// the same rules as the API.

/** The furthest ahead a piece or batch can be scheduled. */
export const SEND_AFTER_MAX_DAYS = 180;

const DAY_MS = 86_400_000;

export const SEND_AFTER_FORMAT_MESSAGE = 'must be an ISO 8601 date-time with a UTC offset, e.g. 2026-09-01T09:00:00Z';

/**
 * Why a requested send_after is refused, or null when it is in the window: strictly
 * after `now` and at most SEND_AFTER_MAX_DAYS ahead. A time already passed is refused
 * rather than sent at once, so that a client's clock or time-zone mistake shows up as an
 * error instead of a letter mailed too early.
 */
export function sendAfterProblem(sendAfter: Date, now: Date): string | null {
  if (Number.isNaN(sendAfter.getTime())) return SEND_AFTER_FORMAT_MESSAGE;
  if (sendAfter.getTime() <= now.getTime()) return 'must be in the future';
  if (sendAfter.getTime() > now.getTime() + SEND_AFTER_MAX_DAYS * DAY_MS)
    return `must be at most ${SEND_AFTER_MAX_DAYS} days ahead`;
  return null;
}

/** How long the workflow still holds the piece or batch (0 once send_after has passed). */
export function holdRemainingMs(sendAfterIso: string, nowMs: number): number {
  return Math.max(0, Date.parse(sendAfterIso) - nowMs);
}

/**
 * Whether a row is still hidden from the facility: it has a send_after and its workflow
 * has not released it yet (the timer fired, or the sandbox advance skipped the wait).
 */
export function heldFromFacility(row: { send_after: Date | null; released_to_facility_at: Date | null }): boolean {
  return row.send_after !== null && row.send_after !== undefined && !row.released_to_facility_at;
}

/** The facility's steps on a piece: none of them may happen while the piece is held. */
export const FACILITY_MAIL_MOVES: readonly string[] = [
  'startPrinting',
  'printed',
  'dispatched',
  'delivered',
  'failed',
  'carrierDeliveryFailed',
];

export function heldMessage(what: 'piece' | 'batch', sendAfterIso: string): string {
  return `The ${what} is scheduled (send_after ${sendAfterIso}); the facility cannot act on it before then.`;
}
