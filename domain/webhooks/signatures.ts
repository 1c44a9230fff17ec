// Webhook signing secrets and signatures.
// Custom endpoints (Standard Webhooks): headers webhook-id, webhook-timestamp and
// webhook-signature `v1,<base64 HMAC-SHA256(id.timestamp.body)>` keyed by the base64-
// decoded secret after `whsec_`; during a secret rotation both signatures are sent,
// space-separated. Legacy agent webhooks: `X-Service-Signature: <key id>:t=<ts>,v1=<hex>`
// with HMAC-SHA256 over `<ts>.<body>` keyed by the raw 64-character secret.
import { createHmac, randomBytes } from 'node:crypto';

export const ENDPOINT_SECRET_PREFIX = 'whsec_';
export const LEGACY_KEY_PREFIX = 'whsk_';

/** `whsec_` + base64 of 32 random bytes; shown once, stored encrypted. */
export function generateEndpointSecret(): string {
  return ENDPOINT_SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** What may be shown after creation: the prefix and the first 6 characters. */
export function endpointSecretPrefix(secret: string): string {
  return secret.slice(0, ENDPOINT_SECRET_PREFIX.length + 6);
}

export function signStandardWebhook(secret: string, id: string, timestamp: number, body: string): string {
  if (!secret.startsWith(ENDPOINT_SECRET_PREFIX)) throw new Error('endpoint secret must start with whsec_');
  const key = Buffer.from(secret.slice(ENDPOINT_SECRET_PREFIX.length), 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64');
}

/** The three Standard Webhooks headers; one signature per secret (new first). */
export function standardWebhookHeaders(
  secrets: string[],
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signStandardWebhook(s, id, timestamp, body)).join(' '),
  };
}

export interface LegacySigningKey {
  /** `whsk_` + 16 hex characters; names the key in the signature header. */
  keyId: string;
  /** 64 hex characters: the HMAC key. */
  secret: string;
}

export function generateLegacySigningKey(): LegacySigningKey {
  return { keyId: LEGACY_KEY_PREFIX + randomBytes(8).toString('hex'), secret: randomBytes(32).toString('hex') };
}

/** The one-time `webhook_signing_key` value: `whsk_` + the 64-character secret. */
export function legacySigningKeyValue(key: LegacySigningKey): string {
  return LEGACY_KEY_PREFIX + key.secret;
}

export function legacySignatureHeader(key: LegacySigningKey, timestamp: number, body: string): string {
  const hex = createHmac('sha256', key.secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
  return `${key.keyId}:t=${timestamp},v1=${hex}`;
}
