// Webhook signature verification for both schemes the API signs with:
// - custom endpoints: Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature
//   `v1,<base64 HMAC-SHA256(id.timestamp.body)>` keyed by the base64 secret after `whsec_`;
//   several signatures space-separated while a secret rotates), by the standardwebhooks package;
// - agent webhooks: `X-Service-Signature: <whsk_ key id>:t=<ts>,v1=<hex HMAC-SHA256(ts.body)>`
//   keyed by the 64-character secret (the `whsk_` prefix of the one-time key value is not part of it).
// Both refuse a timestamp more than 5 minutes from now and compare in constant time. Verify the raw
// body bytes as received, before any JSON parsing.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export const WEBHOOK_TOLERANCE_SECONDS = 300;

export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Verifies a custom endpoint delivery and returns the parsed event; throws WebhookSignatureError
 * on a missing or wrong signature or a timestamp outside 5 minutes. `secret` is the endpoint's `whsec_...`.
 */
export function verifyStandardWebhook<T = unknown>(body: string | Buffer, headers: HeaderBag, secret: string): T {
  const wanted = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
  const values: Record<string, string> = {};
  for (const name of wanted) {
    const value = header(headers, name);
    if (!value) throw new WebhookSignatureError(`missing ${name} header`);
    values[name] = value;
  }
  try {
    return new Webhook(secret).verify(body, values) as T;
  } catch (err) {
    if (err instanceof WebhookVerificationError) throw new WebhookSignatureError(err.message);
    throw err;
  }
}

export interface AgentWebhookSignature {
  /** The whsk_ key id the header names (which key signed, during a rotation). */
  keyId: string;
  timestamp: number;
}

/**
 * Verifies an agent webhook delivery (X-Service-Signature) and returns the key id and timestamp;
 * throws WebhookSignatureError otherwise. `signingKey` is the one-time `webhook_signing_key`
 * (`whsk_` + 64 characters) or the 64-character secret alone.
 */
export function verifyAgentWebhook(
  body: string | Buffer,
  headers: HeaderBag | string,
  signingKey: string,
  opts: { toleranceSeconds?: number; now?: Date } = {},
): AgentWebhookSignature {
  const value = typeof headers === 'string' ? headers : header(headers, 'x-service-signature');
  if (!value) throw new WebhookSignatureError('missing X-Service-Signature header');
  const match = /^(whsk_[A-Za-z0-9]+):t=(\d+),v1=([0-9a-f]{64})$/.exec(value.trim());
  if (!match) throw new WebhookSignatureError('malformed X-Service-Signature header');
  const [, keyId, ts, hex] = match;
  const timestamp = Number(ts);
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - timestamp) > (opts.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS))
    throw new WebhookSignatureError('timestamp outside the tolerance');
  const secret = signingKey.startsWith('whsk_') ? signingKey.slice('whsk_'.length) : signingKey;
  const expected = createHmac('sha256', secret)
    .update(`${ts}.`)
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest();
  if (!timingSafeEqual(expected, Buffer.from(hex, 'hex'))) throw new WebhookSignatureError('signature mismatch');
  return { keyId, timestamp };
}
