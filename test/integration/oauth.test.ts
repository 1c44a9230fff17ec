import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { useTestApp, startTestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { newAgentWithKey } from '../helpers/agents';
import {
  authorizationParams,
  callbackServer,
  CallbackServer,
  consent,
  consoleSession,
  getAuthorize,
  pkce,
  postForm,
  register,
} from '../helpers/oauth';
import { setMemberStatus } from '../../services/accounts/accounts';
import {
  createSignInLink,
  csrfToken,
  findConsoleSession,
  redeemSignInLink,
} from '../../services/accounts/console-sessions';
import { SCOPES } from '../../domain/shared/access';

describe('OAuth for MCP hosts (authorization server and resource)', () => {
  // Registrations come from many addresses (TRUST_PROXY), so the per-address budget is not what these tests spend.
  const { app, api } = useTestApp({ worker: false, env: { TRUST_PROXY: 'true' } });
  const anyAddress = () => ({ 'x-forwarded-for': `203.0.113.${Math.floor(Math.random() * 254) + 1}` });
  let cb: CallbackServer;
  beforeAll(async () => {
    cb = await callbackServer();
  });
  afterAll(async () => {
    await cb.close();
  });

  const token = (form: Record<string, string>) => postForm(`${app.siteUrl}/oauth/token`, form);
  const mcp = (accessToken: string) =>
    fetch(`${app.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  async function newClient(extra: Record<string, unknown> = {}) {
    const res = await register(
      app.siteUrl,
      {
        client_name: 'Test host',
        redirect_uris: [cb.url],
        token_endpoint_auth_method: 'none',
        ...extra,
      },
      anyAddress(),
    );
    expect(res.status).toBe(201);
    return res.body.client_id as string;
  }

  /** Registration, consent and code: everything up to the token request. */
  async function authorized(
    opts: { scope?: string; resource?: string; choice?: Record<string, string | string[]> } = {},
  ) {
    const member = await newMember(app.deps);
    const session = await consoleSession(app.deps, member.key);
    const clientId = await newClient();
    const { verifier, challenge } = pkce();
    const params = authorizationParams({
      client_id: clientId,
      redirect_uri: cb.url,
      resource: opts.resource ?? `${app.baseUrl}/mcp`,
      code_challenge: challenge,
      scope: opts.scope ?? 'mail.send agent.read',
    });
    const answer = await consent(app.siteUrl, session, params, {
      agent: 'new',
      agent_name: `host-${Math.random().toString(36).slice(2, 8)}`,
      scopes: (opts.scope ?? 'mail.send agent.read').split(' '),
      ...opts.choice,
    });
    expect(answer.status).toBe(303);
    const code = answer.query.get('code')!;
    expect(code).toBeTruthy();
    return { member, session, clientId, verifier, code, params };
  }

  async function tokens(opts: Parameters<typeof authorized>[0] = {}) {
    const a = await authorized(opts);
    const res = await token({
      grant_type: 'authorization_code',
      code: a.code,
      redirect_uri: cb.url,
      code_verifier: a.verifier,
      client_id: a.clientId,
      resource: a.params.resource,
    });
    expect(res.status).toBe(200);
    return { ...a, tokens: res.body };
  }

  const grantCount = async (memberId: string) =>
    Number((await app.deps.db.query(`SELECT count(*) FROM oauth_grants WHERE member_id = $1`, [memberId]))[0].count);

  describe('discovery', () => {
    it('advertises the authorization server, and the MCP server’s own protected-resource metadata', async () => {
      const as = await (await fetch(`${app.siteUrl}/.well-known/oauth-authorization-server`)).json();
      expect(as).toMatchObject({
        issuer: app.siteUrl,
        authorization_endpoint: `${app.siteUrl}/console/oauth/authorize`,
        token_endpoint: `${app.siteUrl}/oauth/token`,
        registration_endpoint: `${app.siteUrl}/oauth/register`,
        revocation_endpoint: `${app.siteUrl}/oauth/revoke`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['none'],
        client_id_metadata_document_supported: true,
      });
      const pr = await (await fetch(`${app.siteUrl}/.well-known/oauth-protected-resource/api/mcp`)).json();
      expect(pr).toMatchObject({ resource: `${app.baseUrl}/mcp`, authorization_servers: [app.siteUrl] });
    });

    it('answers REST and MCP without credentials with 401 and a challenge naming the metadata (and the route’s scopes)', async () => {
      const rest = await api('GET', '/v1/mail');
      expect(rest.status).toBe(401);
      expect(rest.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${app.siteUrl}/.well-known/oauth-protected-resource", scope="mail.send"`,
      );
      const res = await fetch(`${app.baseUrl}/mcp`, { method: 'POST', body: '{}' });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${app.siteUrl}/.well-known/oauth-protected-resource/api/mcp"`,
      );
      const bogus = await mcp('oauth_at_' + 'x'.repeat(40));
      expect(bogus.status).toBe(401);
      expect(bogus.headers.get('www-authenticate')).toContain('error="invalid_token"');
    });
  });

  describe('the whole flow without a browser', () => {
    it('issues tokens that act as the grant’s agent credential, only on their resource', async () => {
      const t = await tokens();
      expect(t.tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'mail.send agent.read' });
      expect(t.tokens.access_token).toMatch(/^oauth_at_/);
      expect(t.tokens.refresh_token).toMatch(/^oauth_rt_/);
      expect((await mcp(t.tokens.access_token)).status).toBe(200);
      // Bound to {base_url}/mcp: REST refuses it.
      const rest = await api('GET', '/v1/agents', { key: t.tokens.access_token });
      expect(rest.status).toBe(401);
      expect(rest.body.reason).toBe('token_audience_mismatch');
      // The grant's credential: test environment, the chosen scopes, never a usable key.
      const [grant] = await app.deps.db.query(
        `SELECT c.environment, c.scopes, c.key_prefix, c.status FROM oauth_grants g JOIN agent_credentials c ON c.id = g.credential_id
          WHERE g.member_id = $1`,
        [t.member.member_id],
      );
      expect(grant).toEqual({
        environment: 'test',
        scopes: ['mail.send', 'agent.read'],
        key_prefix: 'oauth_at_',
        status: 'active',
      });
      // Codes and tokens are stored hashed only.
      const raw = await app.deps.db.query(
        `SELECT 1 FROM oauth_access_tokens WHERE token_hash = $1 UNION ALL SELECT 1 FROM oauth_authorization_codes WHERE code_hash = $2`,
        [t.tokens.access_token, t.code],
      );
      expect(raw).toHaveLength(0);
    });

    it('a token for {base_url} works on REST with the credential’s scopes and safeguards', async () => {
      const t = await tokens({ resource: app.baseUrl, scope: 'agent.read', choice: { max_daily_pieces: '3' } });
      const agents = await api('GET', '/v1/agents', { key: t.tokens.access_token });
      expect(agents.status).toBe(200);
      expect(agents.body.agents).toHaveLength(1);
      const mail = await api('GET', '/v1/mail', { key: t.tokens.access_token });
      expect(mail.status).toBe(403);
      expect(mail.body.reason).toBe('insufficient_scope');
      expect(mail.headers.get('www-authenticate')).toContain('error="insufficient_scope", scope="mail.send"');
    });

    it('the A2A server (under {base_url}) takes a token for {base_url}, not one for the MCP server only', async () => {
      const rpc = (accessToken: string) =>
        fetch(`${app.baseUrl}/a2a`, {
          method: 'POST',
          headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: randomUUID() } }),
        });
      const apiToken = await tokens({ resource: app.baseUrl, scope: 'mail.send' });
      const ok = await rpc(apiToken.tokens.access_token);
      expect(ok.status).toBe(200);
      // Authenticated: the protocol's task-not-found error, not a 401.
      expect(((await ok.json()) as { error: { code: number } }).error.code).toBe(-32001);
      const mcpOnly = await tokens({ scope: 'mail.send' });
      const refused = await rpc(mcpOnly.tokens.access_token);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ reason: 'token_audience_mismatch' });
    });

    it('denying sends access_denied back, with state and iss, and grants nothing', async () => {
      const member = await newMember(app.deps);
      const session = await consoleSession(app.deps, member.key);
      const params = authorizationParams({
        client_id: await newClient(),
        redirect_uri: cb.url,
        resource: `${app.baseUrl}/mcp`,
        code_challenge: pkce().challenge,
      });
      const answer = await consent(app.siteUrl, session, params, { decision: 'deny' });
      expect(answer.status).toBe(303);
      expect(Object.fromEntries(answer.query)).toMatchObject({
        error: 'access_denied',
        state: 'st-1',
        iss: app.siteUrl,
      });
      expect(await grantCount(member.member_id)).toBe(0);
    });

    it('a signed-out owner goes through sign-in and back; the consent page may not be framed', async () => {
      const params = authorizationParams({
        client_id: await newClient(),
        redirect_uri: cb.url,
        resource: `${app.baseUrl}/mcp`,
        code_challenge: pkce().challenge,
        scope: 'mail.send agent.read',
      });
      const out = await getAuthorize(app.siteUrl, params);
      expect(out.status).toBe(302);
      const next = new URL(out.headers.get('location')!, app.siteUrl).searchParams.get('next')!;
      expect(Object.fromEntries(new URL(next, app.siteUrl).searchParams)).toEqual(params);
      const member = await newMember(app.deps);
      const session = await consoleSession(app.deps, member.key);
      const page = await getAuthorize(app.siteUrl, params, session.cookie);
      expect(page.status).toBe(200);
      expect(page.text).toContain('Test host');
      expect(page.text).toContain('unverified');
      expect(page.text).toContain('127.0.0.1');
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toMatch(/form-action 'self'[^;]* http:\/\/127\.0\.0\.1:\d+/);
      // Only the scopes asked for are offered.
      expect(page.text).toContain('value="mail.send"');
      expect(page.text).not.toContain('value="webhook.manage"');
    });
  });

  describe('bad input: each the RFC’s error, nothing issued', () => {
    it('unknown client: the owner is told (no redirect); the token endpoint says invalid_client', async () => {
      const params = authorizationParams({
        client_id: 'pmc_doesnotexist',
        redirect_uri: cb.url,
        resource: `${app.baseUrl}/mcp`,
        code_challenge: pkce().challenge,
      });
      const page = await getAuthorize(app.siteUrl, params);
      expect(page.status).toBe(400);
      expect(page.headers.get('location')).toBeNull();
      expect(page.text).toContain('invalid_client');
      const res = await token({
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: cb.url,
        code_verifier: 'y'.repeat(43),
        client_id: 'pmc_nope',
      });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
    });

    it('redirect URI not registered: shown, never redirected to; a loopback IP literal may change its port only', async () => {
      const clientId = await newClient();
      const base = { client_id: clientId, resource: `${app.baseUrl}/mcp`, code_challenge: pkce().challenge };
      for (const redirect_uri of [
        'https://evil.example/callback',
        `${cb.url}/../other`,
        cb.url.replace('/callback', '/other'),
      ]) {
        const page = await getAuthorize(app.siteUrl, authorizationParams({ ...base, redirect_uri }));
        expect({ redirect_uri, status: page.status, location: page.headers.get('location') }).toEqual({
          redirect_uri,
          status: 400,
          location: null,
        });
        expect(page.text).toContain('invalid_request');
      }
      const otherPort = cb.url.replace(/:\d+\//, ':1/');
      const ok = await getAuthorize(app.siteUrl, authorizationParams({ ...base, redirect_uri: otherPort }));
      expect(ok.status).toBe(302); // to sign-in: the request itself is fine
    });

    it('missing or plain PKCE, a missing or foreign resource, an unknown scope: back to the client with the error', async () => {
      const clientId = await newClient();
      const { challenge } = pkce();
      const cases: Array<[Record<string, string | undefined>, string]> = [
        [{ code_challenge: undefined }, 'invalid_request'],
        [{ code_challenge_method: 'plain', code_challenge: challenge }, 'invalid_request'],
        [{ resource: undefined }, 'invalid_request'],
        [{ resource: 'https://other.example/mcp' }, 'invalid_target'],
        [{ scope: 'mail.send root' }, 'invalid_scope'],
        [{ response_type: 'token' }, 'unsupported_response_type'],
      ];
      for (const [change, error] of cases) {
        const params: Record<string, string> = authorizationParams({
          client_id: clientId,
          redirect_uri: cb.url,
          resource: `${app.baseUrl}/mcp`,
          code_challenge: challenge,
        });
        for (const [k, v] of Object.entries(change))
          if (v === undefined) delete params[k];
          else params[k] = v;
        const res = await getAuthorize(app.siteUrl, params);
        expect({ change, status: res.status }).toEqual({ change, status: 303 });
        const q = new URL(res.headers.get('location')!).searchParams;
        expect({ change, error: q.get('error'), state: q.get('state') }).toEqual({ change, error, state: 'st-1' });
      }
      expect(
        (
          await app.deps.db.query(
            `SELECT count(*) FROM oauth_authorization_codes c JOIN oauth_clients k ON k.id = c.client_id WHERE k.client_id = $1`,
            [clientId],
          )
        )[0].count,
      ).toBe('0');
    });

    it('a code used twice is refused and ends what it issued', async () => {
      const a = await authorized();
      const form = {
        grant_type: 'authorization_code',
        code: a.code,
        redirect_uri: cb.url,
        code_verifier: a.verifier,
        client_id: a.clientId,
      };
      const first = await token(form);
      expect(first.status).toBe(200);
      const second = await token(form);
      expect(second.status).toBe(400);
      expect(second.body.error).toBe('invalid_grant');
      expect((await mcp(first.body.access_token)).status).toBe(401);
    });

    it('a code expires after 10 minutes', async () => {
      const a = await authorized();
      const [row] = await app.deps.db.query(
        `SELECT EXTRACT(EPOCH FROM c.expires_at - c.created_at)::int AS seconds FROM oauth_authorization_codes c
           JOIN oauth_clients k ON k.id = c.client_id WHERE k.client_id = $1`,
        [a.clientId],
      );
      expect(row.seconds).toBe(600);
      await app.deps.db.query(
        `UPDATE oauth_authorization_codes SET expires_at = now() - interval '1 second' WHERE client_id = (SELECT id FROM oauth_clients WHERE client_id = $1)`,
        [a.clientId],
      );
      const res = await token({
        grant_type: 'authorization_code',
        code: a.code,
        redirect_uri: cb.url,
        code_verifier: a.verifier,
        client_id: a.clientId,
      });
      expect(res.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/expired/) });
      expect(await grantCount(a.member.member_id)).toBe(0);
    });

    it('a code presented by another client, with another redirect URI, a wrong verifier or resource: refused, and still good for its own client', async () => {
      const a = await authorized();
      const other = await newClient();
      const good = {
        grant_type: 'authorization_code',
        code: a.code,
        redirect_uri: cb.url,
        code_verifier: a.verifier,
        client_id: a.clientId,
      };
      const cases: Array<[Record<string, string>, string]> = [
        [{ client_id: other }, 'invalid_grant'],
        [{ redirect_uri: `${cb.url}?x=1` }, 'invalid_grant'],
        [{ code_verifier: pkce().verifier }, 'invalid_grant'],
        [{ resource: app.baseUrl }, 'invalid_target'],
        [{ code_verifier: '' }, 'invalid_request'],
      ];
      for (const [change, error] of cases) {
        const res = await token({ ...good, ...change });
        expect({ change, status: res.status, error: res.body.error }).toEqual({ change, status: 400, error });
      }
      expect(await grantCount(a.member.member_id)).toBe(0);
      expect((await token(good)).status).toBe(200);
    });

    it('refresh rotates; a refresh token of another client is refused and changes nothing; a reused one ends the grant', async () => {
      const t = await tokens();
      const other = await newClient();
      const foreign = await token({
        grant_type: 'refresh_token',
        refresh_token: t.tokens.refresh_token,
        client_id: other,
      });
      expect(foreign.body.error).toBe('invalid_grant');
      const refreshed = await token({
        grant_type: 'refresh_token',
        refresh_token: t.tokens.refresh_token,
        client_id: t.clientId,
      });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body.refresh_token).not.toBe(t.tokens.refresh_token);
      expect((await mcp(refreshed.body.access_token)).status).toBe(200);
      // Narrower scopes on refresh, never wider.
      const wider = await token({
        grant_type: 'refresh_token',
        refresh_token: refreshed.body.refresh_token,
        client_id: t.clientId,
        scope: 'webhook.manage',
      });
      expect(wider.body.error).toBe('invalid_scope');

      const reused = await token({
        grant_type: 'refresh_token',
        refresh_token: t.tokens.refresh_token,
        client_id: t.clientId,
      });
      expect(reused.status).toBe(400);
      expect(reused.body.error).toBe('invalid_grant');
      expect((await mcp(refreshed.body.access_token)).status).toBe(401);
      const after = await token({
        grant_type: 'refresh_token',
        refresh_token: refreshed.body.refresh_token,
        client_id: t.clientId,
      });
      expect(after.body.error).toBe('invalid_grant');
    });

    it('unsupported grant types and parameters sent twice are refused', async () => {
      const clientId = await newClient();
      expect((await token({ grant_type: 'client_credentials', client_id: clientId })).body.error).toBe(
        'unsupported_grant_type',
      );
      const twice = await fetch(`${app.siteUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `grant_type=refresh_token&client_id=${clientId}&refresh_token=a&refresh_token=b`,
      });
      expect(twice.status).toBe(400);
      expect(((await twice.json()) as any).error).toBe('invalid_request');
      const json = await fetch(`${app.siteUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(((await json.json()) as any).error).toBe('invalid_request');
    });

    it('consent without the session’s CSRF token is refused and issues nothing', async () => {
      const member = await newMember(app.deps);
      const session = await consoleSession(app.deps, member.key);
      const params = authorizationParams({
        client_id: await newClient(),
        redirect_uri: cb.url,
        resource: `${app.baseUrl}/mcp`,
        code_challenge: pkce().challenge,
      });
      for (const csrf of ['', 'forged-token', (await consoleSession(app.deps, (await newMember(app.deps)).key)).csrf]) {
        const answer = await consent(app.siteUrl, { cookie: session.cookie, csrf }, params, {
          agent: 'new',
          agent_name: 'csrf-agent',
          scopes: ['mail.send'],
        });
        expect({ csrf, status: answer.status, location: answer.location }).toEqual({
          csrf,
          status: 403,
          location: null,
        });
      }
      const agents = await app.deps.db.query(`SELECT 1 FROM agents WHERE member_id = $1`, [member.member_id]);
      expect(agents).toHaveLength(0);
      expect(
        await app.deps.db.query(`SELECT 1 FROM oauth_authorization_codes WHERE member_id = $1`, [member.member_id]),
      ).toHaveLength(0);
    });

    it('the owner may grant fewer scopes than asked, never more, and an existing agent', async () => {
      const member = await newMember(app.deps);
      const { agent } = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['mail.send'] });
      const session = await consoleSession(app.deps, member.key);
      const params = authorizationParams({
        client_id: await newClient(),
        redirect_uri: cb.url,
        resource: `${app.baseUrl}/mcp`,
        code_challenge: pkce().challenge,
        scope: 'mail.send',
      });
      const more = await consent(app.siteUrl, session, params, {
        agent: agent.id,
        scopes: ['mail.send', 'webhook.manage'],
      });
      expect(more.status).toBe(400);
      expect(more.text).toContain('did not ask for webhook.manage');
      const ok = await consent(app.siteUrl, session, params, { agent: agent.id, scopes: ['mail.send'] });
      expect(ok.query.get('code')).toBeTruthy();
    });
  });

  describe('environment', () => {
    it('a live grant needs a live-capable account; test is the default', async () => {
      const live = await tokens({ choice: { environment: 'live' } });
      const [row] = await app.deps.db.query(
        `SELECT c.environment FROM oauth_grants g JOIN agent_credentials c ON c.id = g.credential_id WHERE g.member_id = $1`,
        [live.member.member_id],
      );
      expect(row.environment).toBe('live');
      const res = await mcp(live.tokens.access_token);
      expect(res.headers.get('x-test-mode')).toBe('false');

      // An account without a live member key (signed in with a link) may only grant test access.
      const member = await newMember(app.deps);
      await app.deps.db.query(`UPDATE member_api_keys SET status = 'revoked' WHERE member_id = $1`, [member.member_id]);
      const link = await createSignInLink(app.deps, member.member_id);
      const { token: cookieToken } = await redeemSignInLink(app.deps, new URL(link.url).searchParams.get('token')!);
      const s = await findConsoleSession(app.deps, cookieToken);
      const session = { cookie: `pm_console=${cookieToken}`, csrf: csrfToken(s!.csrfSecret) };
      const params = authorizationParams({
        client_id: await newClient(),
        redirect_uri: cb.url,
        resource: `${app.baseUrl}/mcp`,
        code_challenge: pkce().challenge,
        scope: 'mail.send',
      });
      const page = await getAuthorize(app.siteUrl, params, session.cookie);
      expect(page.text).toMatch(/value="live" disabled/);
      const refused = await consent(app.siteUrl, session, params, {
        agent: 'new',
        agent_name: 'no-live',
        scopes: ['mail.send'],
        environment: 'live',
      });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('cannot issue live credentials');
      expect(await app.deps.db.query(`SELECT 1 FROM agents WHERE member_id = $1`, [member.member_id])).toHaveLength(0);
      const allowed = await consent(app.siteUrl, session, params, {
        agent: 'new',
        agent_name: 'test-only',
        scopes: ['mail.send'],
      });
      expect(allowed.query.get('code')).toBeTruthy();
    });
  });

  describe('registration', () => {
    it('registers public clients only, within bounds', async () => {
      const res = await register(
        app.siteUrl,
        {
          client_name: 'Desktop host',
          redirect_uris: ['http://127.0.0.1/callback', 'com.example.desktop:/oauth'],
          token_endpoint_auth_method: 'client_secret_post',
        },
        anyAddress(),
      );
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
      });
      expect(res.body.client_id).toMatch(/^pmc_/);
      expect(res.body.client_secret).toBeUndefined();
      expect(res.headers.get('cache-control')).toBe('no-store');
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
        [{ redirect_uris: ['http://example.com/cb'] }, 'invalid_redirect_uri'],
        [{ redirect_uris: ['https://example.com/cb#frag'] }, 'invalid_redirect_uri'],
        [{ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://example.com/${i}`) }, 'invalid_redirect_uri'],
        [{ redirect_uris: [] }, 'invalid_redirect_uri'],
        [{ redirect_uris: ['https://example.com/cb'], client_name: 'x'.repeat(101) }, 'invalid_client_metadata'],
        [{ redirect_uris: ['https://example.com/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
      ];
      for (const [body, error] of bad) {
        const r = await register(app.siteUrl, body, anyAddress());
        expect({ body, status: r.status, error: r.body.error }).toEqual({ body, status: 400, error });
      }
      const huge = await register(
        app.siteUrl,
        {
          redirect_uris: ['https://example.com/cb'],
          software_statement: 'x'.repeat(17_000),
        },
        anyAddress(),
      );
      expect(huge.status).toBe(413);
    });

    it('is rate-limited per address', async () => {
      const limited = await startTestApp({
        worker: false,
        env: { TRUST_PROXY: 'true', OAUTH_REGISTRATION_RATE_LIMIT_PER_MINUTE: '2' },
      });
      try {
        const ip = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) {
          const r = await register(
            limited.siteUrl,
            { redirect_uris: ['https://example.com/cb'] },
            { 'x-forwarded-for': ip },
          );
          statuses.push(r.status);
          if (r.status === 429) expect(r.body.error).toBe('too_many_requests');
        }
        expect(statuses).toContain(429);
        expect(statuses.filter((s) => s === 201).length).toBeLessThanOrEqual(3);
      } finally {
        await limited.close();
      }
    });
  });

  describe('client ID metadata documents', () => {
    let docServer: http.Server;
    let docBase: string;
    const fetched: string[] = [];
    const documents = new Map<string, { body: unknown; cacheControl?: string }>();
    beforeAll(async () => {
      docServer = http.createServer((req, res) => {
        fetched.push(req.url ?? '');
        const doc = documents.get(req.url ?? '');
        if (!doc) {
          res.writeHead(404);
          return res.end();
        }
        res.writeHead(200, {
          'content-type': 'application/json',
          ...(doc.cacheControl ? { 'cache-control': doc.cacheControl } : {}),
        });
        res.end(JSON.stringify(doc.body));
      });
      await new Promise<void>((resolve) => docServer.listen(0, '127.0.0.1', () => resolve()));
      docBase = `http://127.0.0.1:${(docServer.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => docServer.close(resolve));
    });

    it('fetches the document once (cached), validates it, and takes its redirect URIs', async () => {
      const url = `${docBase}/client-${Date.now()}.json`;
      documents.set(new URL(url).pathname, {
        body: {
          client_id: url,
          client_name: 'Document host',
          redirect_uris: [cb.url],
          token_endpoint_auth_method: 'none',
        },
        cacheControl: 'max-age=600',
      });
      const member = await newMember(app.deps);
      const session = await consoleSession(app.deps, member.key);
      const { verifier, challenge } = pkce();
      const params = authorizationParams({
        client_id: url,
        redirect_uri: cb.url,
        resource: `${app.baseUrl}/mcp`,
        code_challenge: challenge,
        scope: 'agent.read',
      });
      const page = await getAuthorize(app.siteUrl, params, session.cookie);
      expect(page.status).toBe(200);
      expect(page.text).toContain('Document host');
      const answer = await consent(app.siteUrl, session, params, {
        agent: 'new',
        agent_name: 'doc-agent',
        scopes: ['agent.read'],
      });
      const res = await token({
        grant_type: 'authorization_code',
        code: answer.query.get('code')!,
        redirect_uri: cb.url,
        code_verifier: verifier,
        client_id: url,
      });
      expect(res.status).toBe(200);
      expect(fetched.filter((f) => f === new URL(url).pathname)).toHaveLength(1);
    });

    it('refuses a document naming another client_id, carrying a secret, or at a private address', async () => {
      const wrong = `${docBase}/wrong-${Date.now()}.json`;
      documents.set(new URL(wrong).pathname, {
        body: { client_id: 'https://elsewhere.example/c.json', client_name: 'x', redirect_uris: [cb.url] },
      });
      const secret = `${docBase}/secret-${Date.now()}.json`;
      documents.set(new URL(secret).pathname, {
        body: { client_id: secret, client_name: 'x', redirect_uris: [cb.url], client_secret: 's' },
      });
      for (const client_id of [
        wrong,
        secret,
        'https://10.0.0.1/client.json',
        'https://example.com/',
        `${docBase}/missing.json`,
      ]) {
        const page = await getAuthorize(
          app.siteUrl,
          authorizationParams({
            client_id,
            redirect_uri: cb.url,
            resource: `${app.baseUrl}/mcp`,
            code_challenge: pkce().challenge,
          }),
        );
        expect({ client_id, status: page.status, location: page.headers.get('location') }).toEqual({
          client_id,
          status: 400,
          location: null,
        });
        expect(page.text).toContain('invalid_client');
      }
    });
  });

  describe('ending grants', () => {
    it('the owner revokes a grant on the agent’s page; the client revokes by either token; revoking the credential ends it', async () => {
      const t = await tokens();
      const [grant] = await app.deps.db.query(
        `SELECT id, agent_id, credential_id FROM oauth_grants WHERE member_id = $1`,
        [t.member.member_id],
      );
      const page = await fetch(`${app.siteUrl}/console/agents/${grant.agent_id}`, {
        headers: { cookie: t.session.cookie },
      });
      const html = await page.text();
      expect(html).toContain('Test host');
      expect(html).toContain(`/grants/${grant.id}/revoke`);
      const revoke = await postForm(
        `${app.siteUrl}/console/agents/${grant.agent_id}/grants/${grant.id}/revoke`,
        { _csrf: t.session.csrf },
        { cookie: t.session.cookie },
      );
      expect(revoke.status).toBe(302);
      expect((await mcp(t.tokens.access_token)).status).toBe(401);
      const credentials = await api('GET', `/v1/agents/${grant.agent_id}/credentials`, { key: t.member.key });
      expect(credentials.body.credentials).toEqual([
        expect.objectContaining({ id: grant.credential_id, credential_type: 'oauth_grant', status: 'revoked' }),
      ]);

      const c = await tokens();
      const other = await newClient();
      const foreign = await postForm(`${app.siteUrl}/oauth/revoke`, {
        token: c.tokens.refresh_token,
        client_id: other,
      });
      expect(foreign.body.error).toBe('invalid_grant');
      expect((await mcp(c.tokens.access_token)).status).toBe(200);
      const unknown = await postForm(`${app.siteUrl}/oauth/revoke`, {
        token: 'oauth_rt_unknown',
        client_id: c.clientId,
      });
      expect(unknown.status).toBe(200);
      const own = await postForm(`${app.siteUrl}/oauth/revoke`, {
        token: c.tokens.access_token,
        client_id: c.clientId,
      });
      expect(own.status).toBe(200);
      expect((await mcp(c.tokens.access_token)).status).toBe(401);
      expect(
        (await token({ grant_type: 'refresh_token', refresh_token: c.tokens.refresh_token, client_id: c.clientId }))
          .body.error,
      ).toBe('invalid_grant');

      const d = await tokens();
      const [g] = await app.deps.db.query(`SELECT agent_id, credential_id FROM oauth_grants WHERE member_id = $1`, [
        d.member.member_id,
      ]);
      const del = await api('DELETE', `/v1/agents/${g.agent_id}/credentials/${g.credential_id}`, { key: d.member.key });
      expect(del.status).toBe(200);
      expect((await mcp(d.tokens.access_token)).status).toBe(401);
      expect(
        (await token({ grant_type: 'refresh_token', refresh_token: d.tokens.refresh_token, client_id: d.clientId }))
          .body.error,
      ).toBe('invalid_grant');
    });

    it('suspending the member ends its grants for good', async () => {
      const t = await tokens();
      await setMemberStatus(app.deps.db, t.member.member_id, 'suspended', 'test');
      expect((await mcp(t.tokens.access_token)).status).toBe(401);
      await setMemberStatus(app.deps.db, t.member.member_id, 'active', 'test');
      expect((await mcp(t.tokens.access_token)).status).toBe(401);
      const [g] = await app.deps.db.query(`SELECT revoked_reason FROM oauth_grants WHERE member_id = $1`, [
        t.member.member_id,
      ]);
      expect(g.revoked_reason).toBe('member_suspended');
    });

    it('API keys keep working as before', async () => {
      const member = await newMember(app.deps);
      const { credential } = await newAgentWithKey(app.baseUrl, member.key, { scopes: [...SCOPES] });
      expect((await api('GET', '/v1/agents', { key: credential.key })).status).toBe(200);
      expect((await mcp(credential.key)).status).toBe(200);
    });
  });
});
