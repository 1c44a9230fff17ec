// The statuses the router answers for every route before its handler runs, which the OpenAPI
// document derives from the access table (api/discovery/statuses.ts): 400 for a request that
// does not validate (here a NUL character in the query), 413 for a body declared larger than
// the route's limit, and 429 once the key's (or, on public routes, the address's) budget for
// the minute is spent. Every route of api/routes is called, so a new route is covered the day
// it is mounted; the contract check (test/contract/) validates each answer's body and headers
// against the document.
import http from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { allRoutes } from '../../api/routes';
import type { RouteDef } from '../../api/route';
import { Access, accessKey, ENDPOINT_ACCESS, SCOPES } from '../../domain/shared/access';
import type { KeyKind } from '../../domain/accounts/keys';
import { createFacility, insertMemberKey } from '../../services/accounts/accounts';
import { multipartBodyLimit } from '../../api/multipart';
import { JSON_BODY_LIMIT } from '../../api/router';
import { A2A_BODY_LIMIT } from '../../api/a2a/http';
import { OAUTH_BODY_LIMIT } from '../../api/oauth';

const isTest = (k: KeyKind) => k === 'member_test' || k === 'agent_test';

/** A kind of key the route lets through its access checks. */
function allowedKind(access: Access): KeyKind | null {
  if (access.callers === 'public') return null;
  const callers = access.callers;
  const order: KeyKind[] = ['member', 'agent', 'facility', 'member_test', 'agent_test'];
  return order.find(
    (k) =>
      callers.includes(k) &&
      (!access.testOnly || isTest(k)) &&
      !((access.liveOnly || access.sandboxUnsupported) && isTest(k)),
  )!;
}

function dummyPath(path: string): string {
  return path.replace(/:leadId/g, `wl_${randomBytes(8).toString('hex')}`).replace(/:[A-Za-z]+/g, () => randomUUID());
}

const label = (route: RouteDef) => accessKey(route.method, route.path);

/** A request whose headers declare `length` body bytes and send none: the answer comes before any is read. */
function declaredBody(
  url: string,
  method: string,
  key: string | undefined,
  contentType: string,
  length: number,
): Promise<{ status: number; body: { code?: string } }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method,
      headers: {
        'content-type': contentType,
        'content-length': String(length),
        ...(key ? { authorization: `Bearer ${key}` } : {}),
      },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        req.destroy();
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} });
      });
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

describe('statuses the router answers on every route', () => {
  let app: TestApp;
  const keys = {} as Record<KeyKind, string>;

  beforeAll(async () => {
    app = await startTestApp({
      worker: false,
      env: { RATE_LIMIT_PER_MINUTE: '1000000', SIGNUP_RATE_LIMIT_PER_MINUTE: '1000000' },
    });
    const member = await newMember(app.deps, { creditsCents: 1000 });
    keys.member = member.key;
    keys.member_test = (
      await insertMemberKey(app.deps.db, member.member_id, { name: 'sandbox', environment: 'test' })
    ).key;
    const agent = await newAgent(app.baseUrl, member.key);
    keys.agent = (await newCredential(app.baseUrl, member.key, agent.id, { scopes: [...SCOPES] })).key;
    keys.agent_test = (
      await newCredential(app.baseUrl, member.key, agent.id, { scopes: [...SCOPES], environment: 'test' })
    ).key;
    keys.facility = (await createFacility(app.deps, 'Router statuses facility')).key;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers 400 naming query.probe for a NUL character in the query, on every route', async () => {
    const api = client(app.baseUrl);
    const problems: string[] = [];
    for (const route of allRoutes) {
      const kind = allowedKind(ENDPOINT_ACCESS[label(route)]);
      const res = await api(route.method.toUpperCase(), `${dummyPath(route.path)}?probe=%00`, {
        key: kind ? keys[kind] : undefined,
      });
      const paths = (res.body?.fields ?? []).map((f: { path: string }) => f.path);
      if (res.status !== 400 || !(paths.includes('query.probe') || route.multipart))
        problems.push(`${label(route)}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
    expect(problems).toEqual([]);
  });

  it('answers 413 BODY_TOO_LARGE, before reading, for a body declared over the limit, on every route with a body', async () => {
    const problems: string[] = [];
    const routes = allRoutes.filter((r) => r.body || r.multipart);
    expect(routes.length).toBeGreaterThan(50);
    for (const route of routes) {
      const kind = allowedKind(ENDPOINT_ACCESS[label(route)]);
      const limit = route.multipart ? multipartBodyLimit(route.multipart) : JSON_BODY_LIMIT;
      const res = await declaredBody(
        `${app.baseUrl}${dummyPath(route.path)}`,
        route.method.toUpperCase(),
        kind ? keys[kind] : undefined,
        route.multipart ? 'multipart/form-data; boundary=probe' : 'application/json',
        limit + 1,
      );
      if (res.status !== 413 || res.body.code !== 'BODY_TOO_LARGE')
        problems.push(`${label(route)}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
    expect(problems).toEqual([]);
  });

  it('answers the same on the surfaces beside the REST routes: A2A, /agent/auth and the OAuth endpoints', async () => {
    const a2a = `${app.baseUrl}/a2a`;
    const rpc = { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: randomUUID() } };
    const noKey = await client(app.baseUrl)('POST', '/a2a', { json: rpc });
    expect({ status: noKey.status, reason: noKey.body.reason }).toEqual({ status: 401, reason: 'token_missing' });
    expect(noKey.headers.get('www-authenticate')).toContain('resource_metadata=');
    const over = async (url: string, contentType: string, limit: number, key?: string) =>
      (await declaredBody(url, 'POST', key, contentType, limit + 1)).status;
    expect(await over(a2a, 'application/json', A2A_BODY_LIMIT, keys.agent)).toBe(413);
    expect(await over(`${app.siteUrl}/agent/auth`, 'application/json', 16 * 1024)).toBe(413);
    const form = 'application/x-www-form-urlencoded';
    expect(await over(`${app.siteUrl}/oauth/token`, form, OAUTH_BODY_LIMIT)).toBe(413);
    expect(await over(`${app.siteUrl}/oauth/revoke`, form, OAUTH_BODY_LIMIT)).toBe(413);
    // RFC 7009: an unknown client is invalid_client, 401.
    const revoke = await fetch(`${app.siteUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': form },
      body: new URLSearchParams({ token: 'oauth_rt_unknown', client_id: `client_${randomUUID()}` }).toString(),
    });
    expect({ status: revoke.status, error: ((await revoke.json()) as { error: string }).error }).toEqual({
      status: 401,
      error: 'invalid_client',
    });
  });

  it('answers 429 RATE_LIMITED with Retry-After once the minute is spent: per key, and per address on public routes', async () => {
    const limited = await startTestApp({
      worker: false,
      env: { RATE_LIMIT_PER_MINUTE: '1', SIGNUP_RATE_LIMIT_PER_MINUTE: '1' },
    });
    try {
      const api = client(limited.baseUrl);
      const member = await newMember(limited.deps, { rateLimitPerMinute: 1 });
      const problems: string[] = [];
      // The first request spends the key's minute; a window that turns meanwhile can give back one more.
      await api('GET', '/v1/credits', { key: member.key });
      await api('GET', '/v1/credits', { key: member.key });
      for (const route of allRoutes) {
        const access = ENDPOINT_ACCESS[label(route)];
        if (access.callers === 'public' && !access.ipRateLimit) continue;
        const key = access.callers === 'public' ? undefined : member.key;
        // The key's rate limit comes before its kind is checked: any key of the account is counted.
        let res = await api(route.method.toUpperCase(), dummyPath(route.path), { key });
        for (let i = 0; res.status !== 429 && i < 3; i++)
          res = await api(route.method.toUpperCase(), dummyPath(route.path), { key });
        const retryAfter = Number(res.headers.get('retry-after'));
        if (res.status !== 429 || res.body.code !== 'RATE_LIMITED' || !(retryAfter >= 0 && retryAfter <= 60))
          problems.push(`${label(route)}: ${res.status} retry-after ${res.headers.get('retry-after')}`);
      }
      // The A2A endpoint counts against the same key.
      const a2a = await api('POST', '/a2a', {
        key: member.key,
        json: { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: randomUUID() } },
      });
      if (a2a.status !== 429 || !a2a.headers.get('retry-after')) problems.push(`POST /a2a: ${a2a.status}`);
      expect(problems).toEqual([]);
    } finally {
      await limited.close();
    }
  });
});
