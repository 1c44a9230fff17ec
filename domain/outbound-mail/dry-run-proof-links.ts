// The link a dry run answers as proof_url: everything the proof's renderer needs besides the
// document's bytes (stored by their hash), signed, with an expiry. Nothing about the proof is
// stored when the dry run answers; the first GET of the link renders it
// (services/outbound-mail/print-proofs.ts). A token is the JSON claim sealed with AES-256-GCM
// (base64url of nonce, ciphertext and tag) under a key derived (HKDF) from APP_ENCRYPTION_KEY:
// a client can neither forge one nor point one at another document or address, and the
// recipient's address does not show in the URL (access logs, browser history). Pure: no I/O,
// the clock is passed in.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { MailAddress } from './address';
import type { DocumentType } from './documents';

/** What a proof link names: the proof's content, its date and when the link expires. */
export interface DryRunProofClaim {
  /** Expiry, Unix seconds. */
  exp: number;
  /** The UTC day the proof is dated (YYYY-MM-DD): the proof's only varying bytes, and its folder. */
  day: string;
  document: { sha256: string; type: DocumentType; pageCount: number };
  recipient: MailAddress;
  returnAddress: MailAddress | null;
  mailClass: string;
  color: boolean;
  duplex: boolean;
}

/** Tokens longer than this are refused unread (addresses are at most a few hundred characters). */
const MAX_TOKEN_LENGTH = 4096;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const SHA256 = /^[a-f0-9]{64}$/;

const keys = new Map<string, Buffer>();

/** The proof-link key: its own key, derived from the key for secrets at rest (once per process). */
export function dryRunProofLinkKey(appEncryptionKeyBase64: string): Buffer {
  let key = keys.get(appEncryptionKeyBase64);
  if (!key) {
    key = Buffer.from(
      hkdfSync(
        'sha256',
        Buffer.from(appEncryptionKeyBase64, 'base64'),
        Buffer.alloc(0),
        'postal-mail dry-run proof links v1',
        32,
      ),
    );
    keys.set(appEncryptionKeyBase64, key);
  }
  return key;
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export function signDryRunProofLink(key: Buffer, claim: DryRunProofClaim): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(claim), 'utf8'), cipher.final()]);
  return Buffer.concat([nonce, sealed, cipher.getAuthTag()]).toString('base64url');
}

export type DryRunProofLinkReading =
  { ok: true; claim: DryRunProofClaim } | { ok: false; problem: 'invalid' | 'expired' };

/** The claim of a token this deployment sealed, unless it is malformed, forged or past its expiry at `nowSeconds`. */
export function readDryRunProofLink(key: Buffer, token: string, nowSeconds: number): DryRunProofLinkReading {
  const invalid = { ok: false, problem: 'invalid' } as const;
  if (token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) return invalid;
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.length <= NONCE_BYTES + TAG_BYTES) return invalid;
  let claim: DryRunProofClaim;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const opened = Buffer.concat([
      decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]);
    claim = JSON.parse(opened.toString('utf8')) as DryRunProofClaim;
  } catch {
    // A changed byte, another key or a cut token fails the tag.
    return invalid;
  }
  // Sealed here, so only a claim of another shape (a later version's) can fail these.
  if (
    typeof claim !== 'object' ||
    claim === null ||
    typeof claim.exp !== 'number' ||
    !DAY.test(String(claim.day)) ||
    !SHA256.test(String(claim.document?.sha256)) ||
    typeof claim.recipient !== 'object'
  )
    return invalid;
  if (claim.exp <= nowSeconds) return { ok: false, problem: 'expired' };
  return { ok: true, claim };
}
