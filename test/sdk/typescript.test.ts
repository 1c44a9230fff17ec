// The TypeScript SDK (sdk/typescript) against the real test stack: the generated operations
// through the hand-written client (API key, retries, typed errors), uploads from bytes, a
// stream and a path, and both webhook verifiers on deliveries the app really sent.
import { randomUUID } from 'node:crypto';
import { createReadStream, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, TestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { createFacility } from '../../services/accounts/accounts';
import { letterPdf, mailCount, newSender, RECIPIENT } from '../integration/mail-helpers';
import { pdf, recipientsCsv, testKeyFor } from '../integration/batch-helpers';
import { answerChallenges, newAgentRow, startReceiver } from '../integration/webhook-helpers';
import {
  ApiError,
  createPostalMailClient,
  document,
  getV1MailId,
  InsufficientCreditsError,
  NotFoundError,
  postV1BatchMail,
  postV1BatchMailIdConfirm,
  postV1Mail,
  postV1MailIdApprove,
  postV1TestWebhook,
  postV1WebhookEndpoints,
  postV1WebhookEndpointsIdVerify,
  putV1WebhooksSettings,
  ValidationError,
  verifyAgentWebhook,
  verifyStandardWebhook,
  WebhookSignatureError,
} from '../../sdk/typescript/src';

jest.setTimeout(120_000);

let app: TestApp;
let facility: { facility_id: string };

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_RETRY_BASE_MS: '50' } });
  facility = await createFacility(app.deps, 'SDK Facility');
});
afterAll(async () => {
  await app?.close();
});

const sdk = (apiKey: string) => createPostalMailClient({ baseUrl: app.baseUrl, apiKey });

/** The error a call threw (fails the test when it did not throw). */
async function refusal(call: Promise<unknown>): Promise<ApiError> {
  try {
    await call;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('the call did not throw');
}

describe('sending', () => {
  it('prices a letter with dry_run from bytes, a stream and a file path', async () => {
    const s = await newSender(app, { creditsCents: 100000, facilityId: facility.facility_id });
    const client = sdk(s.key);
    const bytes = await letterPdf(2);
    const dir = mkdtempSync(path.join(tmpdir(), 'sdk-'));
    const file = path.join(dir, 'letter.pdf');
    writeFileSync(file, bytes);
    const sources = [
      await document(bytes),
      await document(createReadStream(file), { filename: 'letter.pdf' }),
      await document({ path: file }),
    ];
    for (const doc of sources) {
      expect(doc.name).toMatch(/\.pdf$/);
      const { data, response } = await postV1Mail({
        client,
        body: { ...RECIPIENT, dry_run: true, document: doc },
        throwOnError: true,
      });
      expect(response.status).toBe(200);
      expect(data).toMatchObject({ dry_run: true, page_count: 2, mail_class: 'first_class' });
      expect((data as { cost_cents: number }).cost_cents).toBeGreaterThan(0);
    }
    expect(await mailCount(app, s.memberId)).toBe(0);
  });

  it('sends a live letter that waits for approval, then approves it with the member key', async () => {
    const s = await newSender(app, {
      creditsCents: 100000,
      facilityId: facility.facility_id,
      credential: { force_approval: true },
    });
    const created = await postV1Mail({
      client: sdk(s.key),
      body: { ...RECIPIENT, document: await document(await letterPdf()) },
      throwOnError: true,
    });
    expect(created.response.status).toBe(201);
    const piece = created.data as { id: string; status: string; credits_required_cents: number };
    expect(piece.status).toBe('pending_approval');

    const approved = await postV1MailIdApprove({
      client: sdk(s.memberKey),
      path: { id: piece.id },
      throwOnError: true,
    });
    expect(approved.data).toMatchObject({
      credits_charged_cents: piece.credits_required_cents,
      outbound_mail: { id: piece.id, status: 'submitted' },
    });
    const read = await getV1MailId({ client: sdk(s.key), path: { id: piece.id }, throwOnError: true });
    expect(read.data).toMatchObject({ id: piece.id, status: 'submitted' });
  });

  it('creates and confirms a sandbox batch from a template and a recipients file', async () => {
    const member = await newMember(app.deps);
    const client = sdk(await testKeyFor(app.deps, member.member_id));
    const created = await postV1BatchMail({
      client,
      body: {
        job_name: 'SDK batch',
        mail_type: 'postcard_4x6',
        mailing_class: 'first_class',
        template: await document(await pdf(1), { filename: 'template.pdf' }),
        recipients: await document(recipientsCsv(3), { filename: 'recipients.csv' }),
      },
      throwOnError: true,
    });
    expect(created.response.status).toBe(201);
    const batch = created.data.batch;
    expect(batch.recipients.valid).toBe(3);
    const confirmed = await postV1BatchMailIdConfirm({ client, path: { id: batch.id }, throwOnError: true });
    expect(confirmed.data).toMatchObject({ sandbox: true, credits_charged_cents: 0, already_confirmed: false });
  });
});

describe('typed errors', () => {
  // The client throws on refusals by default: these calls do not ask for it.
  it('throws ValidationError with fields[], InsufficientCreditsError with the billing fields, NotFoundError', async () => {
    const s = await newSender(app, { creditsCents: 0, facilityId: facility.facility_id });
    const client = sdk(s.key);

    const invalid = await refusal(
      postV1Mail({
        client,
        body: { ...RECIPIENT, recipient_zip: 'not a zip', document: await document(await letterPdf()) },
      }),
    );
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid.status).toBe(400);
    expect(invalid.retryable).toBe(false);
    expect(invalid.fields.map((f) => f.path)).toContain('recipient_zip');
    expect(invalid.requestId).toBeTruthy();

    const poor = await refusal(
      postV1Mail({ client, body: { ...RECIPIENT, document: await document(await letterPdf()) } }),
    );
    expect(poor).toBeInstanceOf(InsufficientCreditsError);
    expect(poor.code).toBe('INSUFFICIENT_CREDITS');
    const credits = poor as InsufficientCreditsError;
    expect(credits.billingUrl).toMatch(/#credits$/);
    expect(credits.creditsRequiredCents).toBeGreaterThan(0);
    expect(credits.creditShortfallCents).toBe(credits.creditsRequiredCents);
    expect(await mailCount(app, s.memberId)).toBe(0);

    const missing = await refusal(getV1MailId({ client, path: { id: randomUUID() } }));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.status).toBe(404);
  });
});

describe('webhook verification', () => {
  it('verifies a custom endpoint delivery (Standard Webhooks) and refuses a tampered one', async () => {
    const receiver = await startReceiver(answerChallenges);
    try {
      const member = await newMember(app.deps);
      const client = sdk(member.key);
      const created = await postV1WebhookEndpoints({
        client,
        body: { name: 'SDK hook', url: receiver.url, event_types: ['*'] },
        throwOnError: true,
      });
      const { endpoint, secret } = created.data as { endpoint: { id: string }; secret: string };
      const verified = await postV1WebhookEndpointsIdVerify({ client, path: { id: endpoint.id }, throwOnError: true });
      expect(verified.data).toMatchObject({ verified: true });

      const [delivery] = await receiver.waitFor(1);
      const event = verifyStandardWebhook<{ event_type: string }>(delivery.body, delivery.headers, secret);
      expect(event.event_type).toBe('webhook.endpoint_verification');

      const tampered = delivery.body.replace('webhook.endpoint_verification', 'mail.delivered');
      expect(() => verifyStandardWebhook(tampered, delivery.headers, secret)).toThrow(WebhookSignatureError);
      const otherSecret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
      expect(() => verifyStandardWebhook(delivery.body, delivery.headers, otherSecret)).toThrow(WebhookSignatureError);
      expect(() => verifyStandardWebhook(delivery.body, {}, secret)).toThrow(/missing webhook-id/);
    } finally {
      await receiver.close();
    }
  });

  it('verifies an agent webhook delivery (X-Service-Signature) and refuses a tampered or stale one', async () => {
    const receiver = await startReceiver(() => ({ status: 200, body: '{"ok":true}' }));
    try {
      const member = await newMember(app.deps);
      const agentId = await newAgentRow(app.deps, member.member_id);
      const client = sdk(member.key);
      const settings = await putV1WebhooksSettings({
        client,
        body: { agent_id: agentId, webhook_url: receiver.url },
        throwOnError: true,
      });
      const { webhook_signing_key: signingKey, signing_key_id: keyId } = settings.data as {
        webhook_signing_key: string;
        signing_key_id: string;
      };
      const sent = await postV1TestWebhook({ client, body: { agent_id: agentId }, throwOnError: true });
      expect(sent.data).toMatchObject({ delivered: true });

      const [delivery] = await receiver.waitFor(1);
      const signature = verifyAgentWebhook(delivery.body, delivery.headers, signingKey);
      expect(signature.keyId).toBe(keyId);
      expect(JSON.parse(delivery.body)).toMatchObject({ event_type: 'webhook.test', agent_id: agentId });

      const tampered = delivery.body.replace(agentId, randomUUID());
      expect(() => verifyAgentWebhook(tampered, delivery.headers, signingKey)).toThrow(WebhookSignatureError);
      const later = new Date((signature.timestamp + 301) * 1000);
      expect(() => verifyAgentWebhook(delivery.body, delivery.headers, signingKey, { now: later })).toThrow(
        /tolerance/,
      );
      expect(() => verifyAgentWebhook(delivery.body, delivery.headers, 'whsk_' + '0'.repeat(64))).toThrow(
        /signature mismatch/,
      );
    } finally {
      await receiver.close();
    }
  });
});

describe('retries', () => {
  let limited: TestApp;
  beforeAll(async () => {
    // Two-second windows: a 429's Retry-After is at most 2 s.
    limited = await startTestApp({ worker: false, env: { RATE_LIMIT_WINDOW_SECONDS: '2' } });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('retries a 429 after Retry-After with the same Idempotency-Key, and the letter is made once', async () => {
    const s = await newSender(limited, { environment: 'test' });
    await limited.deps.db.query(`UPDATE members SET rate_limit_per_minute = 1 WHERE id = $1`, [s.memberId]);
    const seen: Array<{ status: number; key: string | null; retryAfter: string | null }> = [];
    const recording: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const response = await fetch(request);
      seen.push({
        status: response.status,
        key: request.headers.get('idempotency-key'),
        retryAfter: response.headers.get('retry-after'),
      });
      return response;
    };
    const client = createPostalMailClient({ baseUrl: limited.baseUrl, apiKey: s.key, fetch: recording });
    // The budget of 1 is spent by a first request in the same window (tried again if the window turned).
    let sends = 0;
    for (let attempt = 0; attempt < 5 && seen[0]?.status !== 429; attempt++) {
      seen.length = 0;
      await fetch(`${limited.baseUrl}/v1/credits`, { headers: { authorization: `Bearer ${s.key}` } });
      sends++;
      const created = await postV1Mail({
        client,
        body: { ...RECIPIENT, document: await document(await letterPdf()) },
        throwOnError: true,
      });
      expect(created.response.status).toBe(201);
    }
    expect(seen.map((r) => r.status)).toEqual([429, 201]);
    expect(Number(seen[0].retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(seen[0].retryAfter)).toBeLessThanOrEqual(2);
    expect(seen[0].key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1].key).toBe(seen[0].key);
    // One letter per call, however many attempts it took.
    expect(await mailCount(limited, s.memberId)).toBe(sends);
  });
});
