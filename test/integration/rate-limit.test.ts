import { randomBytes } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { client, HttpResponse } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgentWithKey } from '../helpers/agents';

// Per-IP budgets: each test speaks from its own address (X-Forwarded-For is trusted here).
process.env.TRUST_PROXY = 'true';
const newIp = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

describe('rate limits shared by two API instances', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    // The second instance runs with a low standard rate to exercise the per-IP public budget.
    [a, b] = await Promise.all([
      startTestApp({ worker: false }),
      startTestApp({ worker: false, env: { RATE_LIMIT_PER_MINUTE: '4' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  /** Counters use fixed one-minute windows: start a burst early enough to land in one. */
  async function freshWindow() {
    const [{ s }] = await a.deps.db.query(`SELECT EXTRACT(SECOND FROM now())::float AS s`);
    if (s > 50) await new Promise((r) => setTimeout(r, (61 - s) * 1000));
  }

  function expectLimited(responses: HttpResponse[], limit: number) {
    for (const res of responses) {
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(res.headers.get('x-ratelimit-limit')).toBe(String(limit));
      expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    }
  }

  it('lets exactly 10 of 30 concurrent requests through for a key limited to 10/minute', async () => {
    const member = await newMember(a.deps, { rateLimitPerMinute: 10, creditsCents: 100 });
    await freshWindow();
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => client((i % 2 ? b : a).baseUrl)('GET', '/v1/credits', { key: member.key })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(10);
    expectLimited(
      results.filter((r) => r.status !== 200),
      10,
    );
    // One counter behind both processes: the successes counted the budget down 9..0 between them.
    for (const res of ok) expect(res.headers.get('x-ratelimit-limit')).toBe('10');
    const remaining = ok.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((x, y) => x - y);
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('counts each key separately: an agent credential of the same member has its own budget', async () => {
    const member = await newMember(a.deps, { rateLimitPerMinute: 1000 });
    const { credential } = await newAgentWithKey(a.baseUrl, member.key);
    await a.deps.db.query(`UPDATE members SET rate_limit_per_minute = 3 WHERE id = $1`, [member.member_id]);
    await freshWindow();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        client((i % 2 ? b : a).baseUrl)('GET', '/v1/credits', { key: credential.key }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expectLimited(
      results.filter((r) => r.status !== 200),
      3,
    );
    // The member key is counted apart from its agent's credential.
    expect((await client(a.baseUrl)('GET', '/v1/credits', { key: member.key })).status).toBe(200);
  });

  it('limits signups to 5 per minute per IP across both instances', async () => {
    await freshWindow();
    const ip = newIp();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        client((i % 2 ? b : a).baseUrl)('POST', '/v1/signup', {
          json: { email: 'invalid' },
          headers: { 'x-forwarded-for': ip },
        }),
      ),
    );
    expect(results.filter((r) => r.status === 400)).toHaveLength(5);
    expectLimited(
      results.filter((r) => r.status !== 400),
      5,
    );
  });

  it('limits the other public routes per IP at the standard rate', async () => {
    await freshWindow();
    const ip = newIp();
    const results = await Promise.all(
      Array.from({ length: 7 }, () =>
        client(b.baseUrl)('GET', '/v1/leads/wl_0000000000000000', { headers: { 'x-forwarded-for': ip } }),
      ),
    );
    expect(results.filter((r) => r.status === 404)).toHaveLength(4);
    expectLimited(
      results.filter((r) => r.status !== 404),
      4,
    );
  });
});
