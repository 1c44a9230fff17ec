// Documented refusals outside the facility flows, each produced on an object in the state the
// refusal is about and shown to change nothing: IDEMPOTENCY_KEY_REUSED on submit, approve,
// support replies and expected shipments; rejecting a piece no longer pending approval; a
// batch sent with a stale instructions version; Open & Scan without credits; the managed
// items' search while it cannot run; and the per-address budget of client metadata documents
// on the OAuth authorize and token endpoints.
import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { HttpResponse } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { postForm } from '../helpers/oauth';
import { newWorld, receivePiece } from '../helpers/physical-inbound';
import { api, balance, letterForm, letterPdf, mailCount, newSender, sendLetter } from './mail-helpers';
import { batchForm, pdf, recipientsCsv } from './batch-helpers';

function expectCode(res: HttpResponse, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
}

const V1 = { 'x-service-md-version': '1' };

describe('documented refusals', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('refuses approving another piece under a used Idempotency-Key, and rejecting an approved piece', async () => {
    const s = await newSender(app, { creditsCents: 100000, credential: { force_approval: true } });
    const first = (await sendLetter(app, s, letterForm(await letterPdf()))).body;
    const second = (await sendLetter(app, s, letterForm(await letterPdf()))).body;
    expect([first.status, second.status]).toEqual(['pending_approval', 'pending_approval']);
    const approve = (id: string) =>
      api(app)('POST', `/v1/mail/${id}/approve`, {
        key: s.memberKey,
        headers: { 'idempotency-key': `approve-${s.agentId}` },
      });

    const approved = await approve(first.id);
    expect(approved.body.outbound_mail.status).toBe('submitted');
    const charged = await balance(app, s.memberId);
    expectCode(await approve(second.id), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect((await api(app)('GET', `/v1/mail/${second.id}`, { key: s.memberKey })).body.status).toBe('pending_approval');

    const reject = await api(app)('POST', `/v1/mail/${first.id}/reject`, { key: s.memberKey });
    expectCode(reject, 409, 'MAIL_NOT_PENDING_APPROVAL');
    expect((await api(app)('GET', `/v1/mail/${first.id}`, { key: s.memberKey })).body.status).toBe('submitted');
    expect(await balance(app, s.memberId)).toBe(charged);
  });

  it('refuses a sandbox piece under a used Idempotency-Key with another body, creating nothing', async () => {
    const s = await newSender(app, { environment: 'test' });
    const recipient = {
      recipient_name: 'A Person',
      recipient_line1: '1 Main St',
      recipient_city: 'Austin',
      recipient_state: 'TX',
      recipient_zip: '78701',
    };
    const create = (json: Record<string, unknown>) =>
      api(app)('POST', '/v1/test/mail', {
        key: s.key,
        headers: { ...s.headers, 'idempotency-key': 'sandbox-1' },
        json,
      });
    expect((await create(recipient)).status).toBe(201);
    expectCode(await create({ ...recipient, recipient_name: 'Another Person' }), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await mailCount(app, s.memberId)).toBe(1);
  });

  it('refuses a support reply under a used Idempotency-Key with another body', async () => {
    const member = await newMember(app.deps);
    const opened = await api(app)('POST', '/v1/support/messages', {
      key: member.key,
      json: { category: 'other', body: 'Where is my letter?' },
    });
    expect(opened.status).toBe(201);
    const conversation = opened.body.message.conversation_id as string;
    const reply = (body: string) =>
      api(app)('POST', `/v1/support/conversations/${conversation}/messages`, {
        key: member.key,
        headers: { 'idempotency-key': 'reply-1' },
        json: { body },
      });
    expect((await reply('Any news?')).status).toBe(201);
    expectCode(await reply('Still waiting.'), 422, 'IDEMPOTENCY_KEY_REUSED');
    const read = await api(app)('GET', `/v1/support/conversations/${conversation}/messages`, { key: member.key });
    expect(read.body.messages.map((m: { body: string }) => m.body)).toEqual(['Where is my letter?', 'Any news?']);
  });

  it('refuses an expected shipment under a used Idempotency-Key with another body', async () => {
    const w = await newWorld(app);
    const create = (tracking: string) =>
      api(app)('POST', '/v1/expected-shipments', {
        key: w.agentKey,
        headers: { ...V1, 'idempotency-key': 'shipment-1' },
        json: { tracking_number: tracking },
      });
    expect((await create('1Z999AA10123456784')).status).toBe(201);
    expectCode(await create('1Z999AA10123456785'), 422, 'IDEMPOTENCY_KEY_REUSED');
    const list = await api(app)('GET', '/v1/expected-shipments', { key: w.agentKey });
    expect(list.body.expected_shipments.map((e: { tracking_number: string }) => e.tracking_number)).toEqual([
      '1Z999AA10123456784',
    ]);
  });

  it('refuses a whole batch form sent with a stale X-Service-MD-Version, storing nothing', async () => {
    const s = await newSender(app, { creditsCents: 10000 });
    const res = await api(app)('POST', '/v1/batch-mail', {
      key: s.key,
      headers: { 'x-service-md-version': '999' },
      form: batchForm(await pdf(1), recipientsCsv(3)),
    });
    expectCode(res, 409, 'SERVICE_MD_VERSION_MISMATCH');
    const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM batches WHERE member_id = $1`, [
      s.memberId,
    ]);
    expect(n).toBe(0);
  });

  it("refuses a member's Open & Scan without the credits for it (402), creating no operation", async () => {
    const w = await newWorld(app, { creditsCents: 0 });
    const item = await receivePiece(app, w);
    const res = await api(app)('POST', `/v1/inbound-items/${item}/actions`, {
      key: w.memberKey,
      headers: { 'idempotency-key': `scan-${item}` },
      json: {
        action_type: 'open_and_scan',
        expected_version: 1,
        expected_quote: { amount_cents: 500, currency: 'usd' },
      },
    });
    expectCode(res, 402, 'INSUFFICIENT_CREDITS');
    expect(res.body).toMatchObject({ credits_required_cents: 500, credit_balance_cents: 0 });
    expect(typeof res.body.billing_url).toBe('string');
    const ops = await app.deps.db.query(`SELECT id FROM handling_operations WHERE item_id = $1`, [item]);
    expect(ops).toEqual([]);
    expect(await balance(app, w.memberId)).toBe(0);
  });

  it('answers a search of managed items 503 while it cannot run, never an unfiltered list', async () => {
    const w = await newWorld(app);
    await receivePiece(app, w);
    const runner = app.deps.db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      await runner.query('LOCK TABLE inbound_search_fields IN ACCESS EXCLUSIVE MODE');
      const res = await api(app)('GET', '/v1/inbound-items?q=letter', { key: w.memberKey });
      expectCode(res, 503, 'SEARCH_UNAVAILABLE');
      expect(res.body.retryable).toBe(true);
      expect(res.body.items).toBeUndefined();
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    expect((await api(app)('GET', '/v1/inbound-items?q=letter', { key: w.memberKey })).body.items).toHaveLength(1);
  });
});

describe('the per-address budget of client metadata documents', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({
      worker: false,
      env: { TRUST_PROXY: 'true', OAUTH_REGISTRATION_RATE_LIMIT_PER_MINUTE: '1' },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers 429 on authorize and token once an address has fetched its documents this minute', async () => {
    // An address of its own, so the budget is not shared with other suites of the run.
    const ip = `203.0.113.${Math.floor(Math.random() * 250) + 1}`;
    const clientId = () => `http://127.0.0.1:9/clients/${randomUUID()}.json`;
    const authorize = (client: string) =>
      fetch(
        `${app.siteUrl}/console/oauth/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: client,
          redirect_uri: 'http://127.0.0.1:9/callback',
          code_challenge: 'x'.repeat(43),
          code_challenge_method: 'S256',
          state: 'st',
          resource: `${app.baseUrl}/mcp`,
        })}`,
        { redirect: 'manual', headers: { 'x-forwarded-for': ip } },
      );
    // The first document is fetched (nothing answers there, so the client is unknown) and uses the budget.
    const first = await authorize(clientId());
    expect(first.status).not.toBe(429);
    await first.text();
    const limited = await authorize(clientId());
    expect(limited.status).toBe(429);
    expect(await limited.text()).toMatch(/Too many client metadata documents/);

    const token = await postForm(
      `${app.siteUrl}/oauth/token`,
      {
        grant_type: 'authorization_code',
        code: 'unused',
        redirect_uri: 'http://127.0.0.1:9/callback',
        code_verifier: 'v'.repeat(43),
        client_id: clientId(),
      },
      { 'x-forwarded-for': ip },
    );
    expect(token.status).toBe(429);
    expect(token.body).toMatchObject({ error: 'temporarily_unavailable' });
  });
});
