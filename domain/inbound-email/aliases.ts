// Intake alias rules: the enumerations of an inbound forwarding alias, how random local
// parts are made, which vanity local parts are allowed, and which status moves exist.
// An alias is an email address, never a physical address.

export const ALIAS_TYPES = ['random', 'vanity'] as const;
export const ALIAS_STATUSES = ['active', 'paused', 'archived'] as const;
export const AUTOMATION_LEVELS = ['high', 'medium', 'low'] as const;
export const APPROVAL_MODES = ['always_require', 'require_for_sensitive', 'allow_rules'] as const;
/** Where the mail sent to the alias comes from. */
export const SOURCE_TYPES = ['email_forward', 'scan_to_email', 'phone_capture', 'other'] as const;
/** Who acts on items: the assigned agent or the member in person. */
export const HANDLED_BY = ['agent', 'member'] as const;
/** How mail reaches the intake: MX to the SMTP receiver, a provider's inbound webhook, or either. */
export const CAPTURE_METHODS = ['smtp', 'webhook', 'any'] as const;

export type AliasStatus = (typeof ALIAS_STATUSES)[number];

export const VANITY_MIN = 3;
export const VANITY_MAX = 40;
export const RANDOM_LOCAL_PART_LENGTH = 16;

/** Role and system mailboxes a member may not claim. */
export const RESERVED_LOCAL_PARTS = new Set([
  'abuse',
  'admin',
  'administrator',
  'billing',
  'help',
  'hostmaster',
  'info',
  'mailer-daemon',
  'no-reply',
  'noreply',
  'postmaster',
  'root',
  'security',
  'support',
  'webmaster',
  'www',
  'intake',
  'bounce',
  'bounces',
]);

/** Why a requested vanity local part cannot be used; null when it can. */
export function vanityProblem(requested: string): string | null {
  const local = requested.trim().toLowerCase();
  if (local.length < VANITY_MIN || local.length > VANITY_MAX) return `must be ${VANITY_MIN}-${VANITY_MAX} characters`;
  if (!/^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/.test(local)) {
    return 'may use only a-z, 0-9 and . _ - (not at the start or end)';
  }
  if (/[._-]{2}/.test(local)) return 'may not repeat . _ - characters';
  if (RESERVED_LOCAL_PARTS.has(local)) return 'is reserved';
  return null;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** A random local part from random bytes (5 bits per character, 80 bits for 16 characters). */
export function randomLocalPart(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < RANDOM_LOCAL_PART_LENGTH) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (out.length < RANDOM_LOCAL_PART_LENGTH)
    throw new Error(`randomLocalPart needs ${Math.ceil((RANDOM_LOCAL_PART_LENGTH * 5) / 8)} bytes`);
  // Starts with a letter so that it never reads as a number.
  return /^[a-z]/.test(out) ? out : `m${out.slice(1)}`;
}

/** Archived is final: its address is never handed out or reactivated again. */
export function aliasStatusMoveProblem(from: AliasStatus, to: AliasStatus): string | null {
  if (from === to) return null;
  if (from === 'archived') return 'an archived alias cannot be reactivated; create a new alias';
  return null;
}

/** How a delivery to an alias in this status is answered. */
export function deliveryRefusal(
  status: AliasStatus,
): { code: 'ALIAS_PAUSED' | 'ALIAS_ARCHIVED'; permanent: boolean; message: string } | null {
  if (status === 'paused')
    return {
      code: 'ALIAS_PAUSED',
      permanent: false,
      message: 'This intake alias is paused; its owner can resume it. Retry later.',
    };
  if (status === 'archived')
    return {
      code: 'ALIAS_ARCHIVED',
      permanent: true,
      message: 'This intake alias is archived and accepts no more mail.',
    };
  return null;
}
