import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';

describe('stack health and the credits read', () => {
  let app: TestApp;
  beforeAll(async () => { app = await startTestApp(); });
  afterAll(async () => { await app.close(); });

  it('answers /healthz with every dependency up', async () => {
    const res = await client(app.siteUrl)('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, postgres: true, temporal: true, object_store: true });
  });

  it('refuses a request without a key with reason token_missing', async () => {
    const res = await client(app.baseUrl)('GET', '/v1/credits');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ reason: 'token_missing', test_mode: false });
    expect(res.headers.get('x-test-mode')).toBe('false');
  });

  it('returns the balance for a member key', async () => {
    const member = await newMember(app.deps, { creditsCents: 1234 });
    const res = await client(app.baseUrl)('GET', '/v1/credits', { key: member.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ balance_cents: 1234, balance_display: '$12.34', currency: 'usd', test_mode: false });
    expect(res.body.billing_url).toMatch(/#credits$/);
  });
});
