// Links in emails that act without signing in: unsubscribe (a recipient and a kind),
// sign-up verification and recipient confirmation (a one-time link row). A token is the
// fields and an HMAC-SHA256 over them and its purpose, keyed by a key derived (HKDF) from
// APP_ENCRYPTION_KEY, so nothing secret is stored and a token cannot be made for another
// recipient, kind or link. Pure: no I/O.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export type LinkPurpose = 'unsubscribe' | 'verify_email' | 'confirm_recipient';

const FIELD = /^[A-Za-z0-9_-]{1,64}$/;

/** The email-link key: its own key, derived from the key for secrets at rest. */
export function emailLinkKey(appEncryptionKeyBase64: string): Buffer {
  return Buffer.from(
    hkdfSync(
      'sha256',
      Buffer.from(appEncryptionKeyBase64, 'base64'),
      Buffer.alloc(0),
      'postal-mail email links v1',
      32,
    ),
  );
}

function mac(key: Buffer, purpose: LinkPurpose, fields: string[]): Buffer {
  return createHmac('sha256', key)
    .update([purpose, ...fields].join('\n'), 'utf8')
    .digest();
}

/** `<field>.<field>...<signature>`; fields are ids and kind names (letters, digits, - and _). */
export function signLink(key: Buffer, purpose: LinkPurpose, fields: string[]): string {
  for (const f of fields) if (!FIELD.test(f)) throw new Error(`a link field must match ${FIELD}: ${f}`);
  return [...fields, mac(key, purpose, fields).toString('base64url')].join('.');
}

/** The fields of a token signed for `purpose` with `count` fields, or null (malformed, forged, another purpose). */
export function readLink(key: Buffer, purpose: LinkPurpose, token: unknown, count: number): string[] | null {
  if (typeof token !== 'string' || token.length > 400) return null;
  const parts = token.split('.');
  if (parts.length !== count + 1) return null;
  const fields = parts.slice(0, count);
  if (!fields.every((f) => FIELD.test(f))) return null;
  const given = Buffer.from(parts[count], 'base64url');
  const expected = mac(key, purpose, fields);
  return given.length === expected.length && timingSafeEqual(given, expected) ? fields : null;
}
