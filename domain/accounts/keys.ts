// API key formats and hashing. Keys are random, shown once, and stored as SHA-256
// hashes; `key_prefix` (the first 18 characters) identifies a key afterwards.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type KeyKind = 'member' | 'member_test' | 'agent' | 'agent_test' | 'facility';

/** Longest prefix first: `sk_agent_test_` must win over `sk_agent_`. */
export const KEY_PREFIXES: Array<{ prefix: string; kind: KeyKind }> = [
  { prefix: 'sk_agent_test_', kind: 'agent_test' },
  { prefix: 'sk_facility_', kind: 'facility' },
  { prefix: 'sk_agent_', kind: 'agent' },
  { prefix: 'sk_live_', kind: 'member' },
  { prefix: 'sk_test_', kind: 'member_test' },
];

export const KEY_PREFIX_LENGTH = 18;
const SECRET_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const TOKEN_SHAPE = /^[A-Za-z0-9_]{16,200}$/;

function randomSecret(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += SECRET_ALPHABET[bytes[i] % SECRET_ALPHABET.length];
  return out;
}

export function prefixFor(kind: KeyKind): string {
  return KEY_PREFIXES.find((p) => p.kind === kind)!.prefix;
}

/** A new raw key of the given kind: prefix + 40 random base62 characters. */
export function generateKey(kind: KeyKind): string {
  return prefixFor(kind) + randomSecret(40);
}

/** A bearer secret of another kind (OAuth tokens): the prefix and `length` random base62 characters. */
export function generateSecret(prefix: string, length = 40): string {
  return prefix + randomSecret(length);
}

export function hashKey(rawKey: string): string {
  return sha256Hex(rawKey);
}

export function keyPrefixOf(rawKey: string): string {
  return rawKey.slice(0, KEY_PREFIX_LENGTH);
}

/** OAuth access tokens (domain/accounts/oauth.ts ACCESS_TOKEN_PREFIX) act as the agent credential of their grant. */
export const OAUTH_ACCESS_TOKEN_PREFIX = 'oauth_at_';

export type ParsedBearer =
  | { ok: true; token: string; kind: KeyKind }
  | { ok: true; token: string; kind: 'oauth_access_token' }
  | { ok: false; reason: 'token_missing' | 'token_malformed' | 'token_prefix_unknown' };

/** Classifies an Authorization header value without touching storage. */
export function parseBearer(header: string | undefined): ParsedBearer {
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'token_missing' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
  if (!match) return { ok: false, reason: 'token_malformed' };
  const token = match[1];
  if (!TOKEN_SHAPE.test(token)) return { ok: false, reason: 'token_malformed' };
  if (token.startsWith(OAUTH_ACCESS_TOKEN_PREFIX)) return { ok: true, token, kind: 'oauth_access_token' };
  const found = KEY_PREFIXES.find((p) => token.startsWith(p.prefix));
  if (!found) return { ok: false, reason: 'token_prefix_unknown' };
  return { ok: true, token, kind: found.kind };
}

/** Constant-time string comparison for secrets of possibly different lengths. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}
