import type { AddressInfo } from 'node:net';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { startServer } from '../../api/server';
import { Lifecycle } from '../../api/lifecycle';

describe('stack health and the credits read', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers /healthz with every dependency up', async () => {
    const res = await client(app.siteUrl)('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, postgres: true, temporal: true, object_store: true });
  });

  it('answers /readyz like /healthz and /livez without asking any dependency', async () => {
    const site = client(app.siteUrl);
    expect(await site('GET', '/readyz')).toMatchObject({
      status: 200,
      body: { ok: true, postgres: true, temporal: true, object_store: true },
    });
    expect(await site('GET', '/livez')).toMatchObject({ status: 200, body: { ok: true } });
  });

  it('is not ready while draining, and still alive', async () => {
    const lifecycle = new Lifecycle();
    const server = await startServer(app.deps, 0, '127.0.0.1', lifecycle);
    try {
      const site = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      expect((await site('GET', '/readyz')).status).toBe(200);
      lifecycle.draining = true;
      for (const probe of ['/readyz', '/healthz']) {
        const res = await site('GET', probe);
        expect(res).toMatchObject({ status: 503, body: { ok: false, draining: true, postgres: true } });
        expect(res.headers.get('connection')).toBe('close');
      }
      expect((await site('GET', '/livez')).status).toBe(200);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
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
    expect(res.body).toMatchObject({
      balance_cents: 1234,
      balance_display: '$12.34',
      currency: 'usd',
      test_mode: false,
    });
    expect(res.body.billing_url).toMatch(/#credits$/);
  });
});
