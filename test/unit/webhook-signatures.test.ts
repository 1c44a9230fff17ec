import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  endpointSecretPrefix,
  generateEndpointSecret,
  generateLegacySigningKey,
  legacySignatureHeader,
  legacySigningKeyValue,
  standardWebhookHeaders,
} from '../../domain/webhooks/signatures';
import { decryptSecret, encryptSecret } from '../../domain/shared/secrets';
import { LOCAL_DEV_ENCRYPTION_KEY, loadConfig } from '../../config';
import { retryDelayMs } from '../../domain/workflow-safe/webhook-retry';
import {
  fitPayload,
  isSubscribed,
  renderEnvelope,
  renderLegacyBody,
  subscriptionProblem,
  ENDPOINT_EVENT_TYPES,
  LEGACY_EVENT_TYPES,
  MAX_REQUEST_BYTES,
} from '../../domain/webhooks/events';

describe('custom endpoint signatures (Standard Webhooks)', () => {
  it('makes whsec_ secrets of 32 random bytes', () => {
    const secret = generateEndpointSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(generateEndpointSecret()).not.toBe(secret);
    expect(endpointSecretPrefix(secret)).toBe(secret.slice(0, 12));
  });

  it('verifies with the standardwebhooks package, with both secrets during a rotation', () => {
    const oldSecret = generateEndpointSecret();
    const newSecret = generateEndpointSecret();
    const body = JSON.stringify({ schema_version: 1, event_id: 'evt', data: { x: 'é' } });
    const ts = Math.floor(Date.now() / 1000);
    const headers = standardWebhookHeaders([newSecret, oldSecret], 'evt_1', ts, body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(newSecret).verify(body, headers)).toMatchObject({ event_id: 'evt' });
    expect(new Webhook(oldSecret).verify(body, headers)).toMatchObject({ event_id: 'evt' });
    expect(() => new Webhook(generateEndpointSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(newSecret).verify(body + ' ', headers)).toThrow();
  });
});

describe('legacy X-Service-Signature', () => {
  it('is HMAC-SHA256 over "<t>.<body>" keyed by the raw 64-character secret', () => {
    const key = generateLegacySigningKey();
    expect(key.keyId).toMatch(/^whsk_[0-9a-f]{16}$/);
    expect(key.secret).toMatch(/^[0-9a-f]{64}$/);
    const value = legacySigningKeyValue(key);
    expect(value).toBe(`whsk_${key.secret}`);
    const body = '{"event_type":"mail.mailed"}';
    const header = legacySignatureHeader(key, 1700000000, body);
    const m = /^(whsk_[0-9a-f]{16}):t=(\d+),v1=([0-9a-f]{64})$/.exec(header)!;
    expect(m[1]).toBe(key.keyId);
    const raw = value.slice('whsk_'.length);
    expect(m[3]).toBe(createHmac('sha256', raw).update(`${m[2]}.${body}`).digest('hex'));
  });
});

describe('secrets at rest', () => {
  it('round-trips with AES-256-GCM and detects tampering or a wrong key', () => {
    const stored = encryptSecret(LOCAL_DEV_ENCRYPTION_KEY, 'whsec_abc');
    expect(stored).not.toContain('whsec_abc');
    expect(encryptSecret(LOCAL_DEV_ENCRYPTION_KEY, 'whsec_abc')).not.toBe(stored);
    expect(decryptSecret(LOCAL_DEV_ENCRYPTION_KEY, stored)).toBe('whsec_abc');
    const parts = stored.split('.');
    parts[3] = Buffer.from('whsec_abd').toString('base64url');
    expect(() => decryptSecret(LOCAL_DEV_ENCRYPTION_KEY, parts.join('.'))).toThrow();
    expect(() => decryptSecret(Buffer.alloc(32, 7).toString('base64'), stored)).toThrow();
  });

  it('needs APP_ENCRYPTION_KEY of 32 bytes, and in production at all', () => {
    expect(loadConfig({}).appEncryptionKey).toBe(LOCAL_DEV_ENCRYPTION_KEY);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/APP_ENCRYPTION_KEY/);
    expect(() => loadConfig({ APP_ENCRYPTION_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/32 bytes/);
    const key = Buffer.alloc(32, 1).toString('base64');
    expect(
      loadConfig({
        NODE_ENV: 'production',
        APP_ENCRYPTION_KEY: key,
        STRIPE_SECRET_KEY: 'sk_live_TestOnlyNotARealKey',
        STRIPE_WEBHOOK_SECRET: 'whsec_TestOnlyNotARealSecret',
        SMTP_URL: 'smtps://relay.example.com:465',
        MAIL_FROM: 'Postal Mail <notifications@example.com>',
      }).appEncryptionKey,
    ).toBe(key);
  });
});

describe('retry timing', () => {
  it('doubles from the base, caps at 8x and jitters into the upper half', () => {
    expect([2, 3, 4, 5].map((n) => retryDelayMs(n, 1000, 1))).toEqual([1000, 2000, 4000, 8000]);
    expect([2, 3, 4, 5].map((n) => retryDelayMs(n, 1000, 0))).toEqual([500, 1000, 2000, 4000]);
    expect(retryDelayMs(9, 1000, 1)).toBe(8000);
  });
});

describe('subscriptions and bodies', () => {
  it('matches exact types, families and *', () => {
    expect(isSubscribed(['*'], 'mail.ready')).toBe(true);
    expect(isSubscribed(['mail.*'], 'mail.ready')).toBe(true);
    expect(isSubscribed(['mail.*'], 'batch.completed')).toBe(false);
    expect(isSubscribed([], 'mail.ready')).toBe(false);
    expect(isSubscribed(['mail.mailed'], 'mail.ready')).toBe(false);
    expect(subscriptionProblem('inbound.received', LEGACY_EVENT_TYPES)).toMatch(/unknown/);
    expect(subscriptionProblem('inbound.*', ENDPOINT_EVENT_TYPES)).toBeNull();
    expect(subscriptionProblem('mail.shredded', ENDPOINT_EVENT_TYPES)).toMatch(/unknown/);
  });

  const event = {
    id: 'e1',
    eventType: 'mail.ready',
    environment: 'test' as const,
    createdAt: new Date('2026-01-01T00:00:00Z'),
    agentId: 'a1',
    payload: {},
  };

  it('wraps endpoint events in the schema_version 1 envelope', () => {
    expect(JSON.parse(renderEnvelope(event, { outbound_mail_id: 'm1' }))).toEqual({
      schema_version: 1,
      event_id: 'e1',
      event_type: 'mail.ready',
      created_at: '2026-01-01T00:00:00.000Z',
      environment: 'test',
      data: { outbound_mail_id: 'm1' },
    });
  });

  it('renders the legacy standard and wrapped formats', () => {
    expect(JSON.parse(renderLegacyBody(event, { outbound_mail_id: 'm1' }, 'standard', 'a1'))).toEqual({
      event_type: 'mail.ready',
      outbound_mail_id: 'm1',
    });
    const wrapped = JSON.parse(renderLegacyBody(event, { outbound_mail_id: 'm1' }, 'wrapped', 'a1'));
    expect(wrapped).toMatchObject({ agentId: 'a1', deliver: true });
    expect(wrapped.message).toContain('"outbound_mail_id":"m1"');
  });

  it('keeps bodies at most 64 KiB by dropping bulky fields', () => {
    const big = {
      outbound_mail_id: 'm1',
      callback_url: 'https://x/v1/mail/m1',
      metadata: { blob: 'x'.repeat(70_000) },
      agent_notes: 'y'.repeat(300),
    };
    const fitted = fitPayload(big, (p) => renderEnvelope(event, p))!;
    expect(fitted.truncated).toBe(true);
    expect(Buffer.byteLength(fitted.body)).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
    expect(JSON.parse(fitted.body).data).toEqual({
      outbound_mail_id: 'm1',
      callback_url: 'https://x/v1/mail/m1',
      truncated: true,
    });
    expect(fitPayload({ a: 1 }, (p) => renderEnvelope(event, p))).toMatchObject({ truncated: false });
  });
});
