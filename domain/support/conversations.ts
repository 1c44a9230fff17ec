// Rules of the two human conversation channels: support tickets and facility messages.
// Pure: limits, case references, attachment checks and the ticket-limit decision.

export const SUPPORT_CATEGORIES = ['support', 'billing', 'feature', 'account', 'other'] as const;
export type SupportCategory = (typeof SUPPORT_CATEGORIES)[number];

export const SUPPORT_STATUSES = ['open', 'waiting_on_member', 'resolved'] as const;
export type SupportStatus = (typeof SUPPORT_STATUSES)[number];

/** Body of a support or facility message (characters). */
export const MESSAGE_BODY_MAX = 5000;

/** Per member: tickets not yet resolved, and new tickets in any rolling 24 hours. */
export const MAX_ACTIVE_TICKETS = 3;
export const MAX_NEW_TICKETS_PER_DAY = 3;
export const NEW_TICKET_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Facility message pages: default 50, max 100. */
export const FACILITY_MESSAGES_PAGE = { limit: 50, max: 100 } as const;

/** Support attachments travel base64 inside JSON (REST and MCP alike), so they stay small. */
export const MAX_ATTACHMENTS = 3;
export const MAX_ATTACHMENT_TOTAL_BYTES = 512 * 1024;
export const ATTACHMENT_CONTENT_TYPES = [
  'application/pdf',
  'image/png',
  'image/jpeg',
  'text/plain',
  'text/csv',
] as const;
export const ATTACHMENT_FILENAME_MAX = 200;

/** The reference a human quotes to support: SUP-000042. */
export function supportCaseId(caseNumber: number | string): string {
  return `SUP-${String(caseNumber).padStart(6, '0')}`;
}

/** One message inside a case: SUP-000042-M3 is its third message. */
export function supportMessageId(caseNumber: number | string, sequence: number): string {
  return `${supportCaseId(caseNumber)}-M${sequence}`;
}

export type TicketLimitRefusal =
  { kind: 'active'; active: number } | { kind: 'daily'; opened: number; retryAfterSeconds: number };

/**
 * Whether the member may open one more ticket. `openedInWindow` are the creation times
 * of tickets opened in the last 24 hours (any order).
 */
export function ticketLimitRefusal(active: number, openedInWindow: Date[], now: Date): TicketLimitRefusal | null {
  if (active >= MAX_ACTIVE_TICKETS) return { kind: 'active', active };
  const recent = openedInWindow.filter((d) => now.getTime() - d.getTime() < NEW_TICKET_WINDOW_MS);
  if (recent.length >= MAX_NEW_TICKETS_PER_DAY) {
    // The window frees a slot when the oldest ticket in it turns 24 hours old.
    const oldest = Math.min(...recent.map((d) => d.getTime()));
    const retryAfterSeconds = Math.max(1, Math.ceil((oldest + NEW_TICKET_WINDOW_MS - now.getTime()) / 1000));
    return { kind: 'daily', opened: recent.length, retryAfterSeconds };
  }
  return null;
}

export interface AttachmentProblem {
  path: string;
  message: string;
}

/** Decodes strict base64 (standard alphabet, optional padding); null when malformed. */
export function decodeBase64(text: string): Buffer | null {
  const clean = text.replace(/\s+/g, '');
  if (clean.length === 0 || clean.length % 4 === 1 || !/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) return null;
  return Buffer.from(clean, 'base64');
}

/** Total-size rule over decoded attachments; per-field rules live in the request schema. */
export function attachmentTotalProblem(sizes: number[], basePath = 'attachments'): AttachmentProblem | null {
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total > MAX_ATTACHMENT_TOTAL_BYTES) {
    return {
      path: basePath,
      message: `attachments may total at most ${MAX_ATTACHMENT_TOTAL_BYTES} bytes after decoding (got ${total})`,
    };
  }
  return null;
}
