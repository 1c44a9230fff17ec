import { useTestApp } from '../helpers/app';
import { fieldPaths as paths } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent, newAgentWithKey, newCredential } from '../helpers/agents';
import { allRoutes } from '../../api/routes';
import { accessKey, ENDPOINT_ACCESS } from '../../domain/shared/access';
import { createAgent, getOutboundMailbox } from '../../services/accounts/agents';
import { authenticate } from '../../services/accounts/auth';
import { instructionsHash, PLATFORM_FALLBACK_INSTRUCTIONS } from '../../services/accounts/instructions';

describe('agents, credentials, mailboxes and discovery', () => {
  const { app, api } = useTestApp({ worker: false });

  describe('POST /v1/agents', () => {
    it('creates the agent and its instructions version 1 in one go, with a webhook signing key shown once', async () => {
      const member = await newMember(app.deps);
      const res = await api('POST', '/v1/agents', {
        key: member.key,
        json: {
          name: 'billing-bot',
          display_name: 'Billing Bot',
          description: 'Pays bills by mail',
          webhook_url: 'http://127.0.0.1:9/billing',
        },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'billing-bot',
        display_name: 'Billing Bot',
        description: 'Pays bills by mail',
        webhook_url: 'http://127.0.0.1:9/billing',
        status: 'active',
        mailbox_id: `mbx_${res.body.id}`,
        instructions: { version: 1, hash: instructionsHash(PLATFORM_FALLBACK_INSTRUCTIONS) },
        recent_webhooks: [],
        test_mode: false,
        webhook_signing_key: expect.any(String),
        webhook_signing_key_id: expect.stringMatching(/^whsk_/),
      });
      const versions = await app.deps.db.query(
        `SELECT version, source FROM instructions_versions WHERE agent_id = $1`,
        [res.body.id],
      );
      expect(versions).toEqual([{ version: 1, source: 'platform_fallback' }]);
      const read = await api('GET', `/v1/agents/${res.body.id}`, { key: member.key });
      expect(read.body.webhook_signing_key_id).toBe(res.body.webhook_signing_key_id);
      expect(read.body).not.toHaveProperty('webhook_signing_key');
    });

    it('issues a signing key when PATCH sets the first webhook_url, and not again', async () => {
      const member = await newMember(app.deps);
      const agent = await newAgent(app.baseUrl, member.key);
      expect((await api('GET', `/v1/agents/${agent.id}`, { key: member.key })).body.webhook_signing_key_id).toBeNull();
      const set = await api('PATCH', `/v1/agents/${agent.id}`, {
        key: member.key,
        json: { webhook_url: 'http://127.0.0.1:9/first' },
      });
      expect(set.body.webhook_signing_key).toEqual(expect.any(String));
      const moved = await api('PATCH', `/v1/agents/${agent.id}`, {
        key: member.key,
        json: { webhook_url: 'http://127.0.0.1:9/second' },
      });
      expect(moved.body).not.toHaveProperty('webhook_signing_key');
      expect(moved.body.webhook_signing_key_id).toBe(set.body.webhook_signing_key_id);
    });

    it('refuses private, loopback or plain-http webhook URLs outside local mode, and creates nothing', async () => {
      const member = await newMember(app.deps);
      const auth = await authenticate(app.deps, `Bearer ${member.key}`);
      const production = { ...app.deps, config: { ...app.deps.config, webhooksAllowInsecureLocal: false } };
      for (const url of [
        'http://127.0.0.1:9/x',
        'https://10.0.0.1/x',
        'https://169.254.169.254/latest',
        'https://[::1]/x',
      ]) {
        await expect(createAgent(production, auth, { name: 'hooked', webhook_url: url })).rejects.toMatchObject({
          status: 400,
        });
      }
      expect((await api('GET', '/v1/agents', { key: member.key })).body.agents).toEqual([]);
    });

    it('answers a duplicate name (any case) with the nested 409 agent_name_taken, per member', async () => {
      const member = await newMember(app.deps);
      await newAgent(app.baseUrl, member.key, { name: 'mailer' });
      const dup = await api('POST', '/v1/agents', { key: member.key, json: { name: 'MAILER' } });
      expect(dup.status).toBe(409);
      expect(dup.body.error).toEqual({
        type: 'invalid_request',
        message: expect.any(String),
        code: 'agent_name_taken',
      });
      // Concurrent creations with one name: one wins.
      const race = await Promise.all(
        [0, 1, 2].map(() => api('POST', '/v1/agents', { key: member.key, json: { name: 'racer' } })),
      );
      expect(race.map((r) => r.status).sort()).toEqual([201, 409, 409]);
      // Another member may use the same name.
      const other = await newMember(app.deps);
      expect((await api('POST', '/v1/agents', { key: other.key, json: { name: 'mailer' } })).status).toBe(201);
    });

    it.each([
      ['no name', {}, ['name']],
      ['a 1-character name', { name: 'a' }, ['name']],
      ['a 51-character name', { name: 'n'.repeat(51) }, ['name']],
      ['a webhook_url that is not a URL', { name: 'ok-name', webhook_url: 'hooks' }, ['webhook_url']],
      ['a webhook_url that is not http(s)', { name: 'ok-name', webhook_url: 'ftp://127.0.0.1/x' }, ['webhook_url']],
      ['a display_name that is not a string', { name: 'ok-name', display_name: 5 }, ['display_name']],
      ['an unknown field', { name: 'ok-name', owner: 'x' }, ['body']],
    ])('refuses %s with 400 and fields[]', async (_label, json, expected) => {
      const member = await newMember(app.deps);
      const res = await api('POST', '/v1/agents', { key: member.key, json });
      expect(res.status).toBe(400);
      expect(paths(res.body)).toEqual(expected);
      const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM agents WHERE member_id = $1`, [
        member.member_id,
      ]);
      expect(n).toBe(0);
    });

    it('accepts names of exactly 2 and 50 characters; agent keys cannot create agents', async () => {
      const member = await newMember(app.deps);
      expect((await api('POST', '/v1/agents', { key: member.key, json: { name: 'ab' } })).status).toBe(201);
      expect((await api('POST', '/v1/agents', { key: member.key, json: { name: 'x'.repeat(50) } })).status).toBe(201);
      const { credential } = await newAgentWithKey(app.baseUrl, member.key);
      const res = await api('POST', '/v1/agents', { key: credential.key, json: { name: 'spawned' } });
      expect(res.status).toBe(403);
      expect(res.body.reason).toBe('member_key_required');
    });
  });

  describe('PATCH and DELETE /v1/agents/:id', () => {
    it('updates fields, keeps names unique, and validates', async () => {
      const member = await newMember(app.deps);
      const a = await newAgent(app.baseUrl, member.key, { name: 'first' });
      await newAgent(app.baseUrl, member.key, { name: 'second' });
      const ok = await api('PATCH', `/v1/agents/${a.id}`, {
        key: member.key,
        json: { description: 'now described', webhook_url: null },
      });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ name: 'first', description: 'now described', webhook_url: null });
      const dup = await api('PATCH', `/v1/agents/${a.id}`, { key: member.key, json: { name: 'Second' } });
      expect(dup.status).toBe(409);
      expect(dup.body.error.code).toBe('agent_name_taken');
      const bad = await api('PATCH', `/v1/agents/${a.id}`, { key: member.key, json: { name: 'x' } });
      expect(paths(bad.body)).toEqual(['name']);
      const badId = await api('PATCH', '/v1/agents/not-a-uuid', { key: member.key, json: {} });
      expect(paths(badId.body)).toEqual(['params.id']);
    });

    it('archives an agent: gone from reads, credentials revoked, name free again; test keys may not', async () => {
      const member = await newMember(app.deps);
      const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key);
      const testMember = await api('POST', '/v1/api-keys', {
        key: member.key,
        json: { name: 'sandbox', environment: 'test' },
      });
      const refused = await api('DELETE', `/v1/agents/${agent.id}`, { key: testMember.body.key });
      expect(refused.status).toBe(403);
      expect(refused.body.reason).toBe('live_key_required');

      const res = await api('DELETE', `/v1/agents/${agent.id}`, { key: member.key });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: agent.id, deleted: true, revoked_credentials: 1 });
      expect((await api('GET', `/v1/agents/${agent.id}`, { key: member.key })).status).toBe(404);
      expect((await api('DELETE', `/v1/agents/${agent.id}`, { key: member.key })).status).toBe(404);
      expect((await api('GET', '/v1/agents', { key: member.key })).body.agents).toEqual([]);
      expect((await api('GET', '/v1/credits', { key: credential.key })).body.reason).toBe('key_revoked');
      expect((await api('POST', '/v1/agents', { key: member.key, json: { name: agent.name } })).status).toBe(201);
    });
  });

  describe('POST /v1/agents/:id/credentials', () => {
    let memberKey: string;
    let agentId: string;
    beforeAll(async () => {
      const member = await newMember(app.deps);
      memberKey = member.key;
      agentId = (await newAgent(app.baseUrl, memberKey)).id;
    });
    const create = (json: unknown) => api('POST', `/v1/agents/${agentId}/credentials`, { key: memberKey, json });

    it('returns the credential record with the raw key once', async () => {
      const res = await create({
        scopes: ['mail.send', 'billing.read', 'mail.send'],
        force_approval: true,
        max_daily_pieces: 3,
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        key: expect.stringMatching(/^sk_agent_(?!test_)[A-Za-z0-9]{40}$/),
        credential_type: 'api_key',
        agent_id: agentId,
        scopes: ['mail.send', 'billing.read'],
        status: 'active',
        environment: 'live',
        expires_at: null,
        force_approval: true,
        max_daily_pieces: 3,
      });
      expect(res.body.key_prefix).toBe(res.body.key.slice(0, 18));

      const list = await api('GET', `/v1/agents/${agentId}/credentials`, { key: memberKey });
      const listed = list.body.credentials.find((c: { id: string }) => c.id === res.body.id);
      expect(listed).toMatchObject({ key_prefix: res.body.key_prefix, status: 'active' });
      expect(listed).not.toHaveProperty('key');

      // The key carries its settings into authentication.
      const auth = await authenticate(app.deps, `Bearer ${res.body.key}`);
      expect(auth).toMatchObject({ kind: 'agent', agentId, forceApproval: true, maxDailyPieces: 3, testMode: false });
    });

    it('issues sk_agent_test_ keys for environment test; defaults force_approval false and max_daily_pieces null', async () => {
      const res = await create({ scopes: ['mail.send'], environment: 'test' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ environment: 'test', force_approval: false, max_daily_pieces: null });
      expect(res.body.key).toMatch(/^sk_agent_test_/);
    });

    it.each([
      ['no scopes', {}, ['scopes']],
      ['an empty scopes array', { scopes: [] }, ['scopes']],
      ['an unknown scope', { scopes: ['mail.send', 'root'] }, ['scopes.1']],
      ['environment null', { scopes: ['mail.send'], environment: null }, ['environment']],
      ['environment LIVE', { scopes: ['mail.send'], environment: 'LIVE' }, ['environment']],
      ['environment Live', { scopes: ['mail.send'], environment: 'Live' }, ['environment']],
      ['environment sandbox', { scopes: ['mail.send'], environment: 'sandbox' }, ['environment']],
      ['expires_in_days 0', { scopes: ['mail.send'], expires_in_days: 0 }, ['expires_in_days']],
      ['expires_in_days 1.5', { scopes: ['mail.send'], expires_in_days: 1.5 }, ['expires_in_days']],
      ['expires_in_days "7"', { scopes: ['mail.send'], expires_in_days: '7' }, ['expires_in_days']],
      ['force_approval "true"', { scopes: ['mail.send'], force_approval: 'true' }, ['force_approval']],
      ['max_daily_pieces 0', { scopes: ['mail.send'], max_daily_pieces: 0 }, ['max_daily_pieces']],
      ['max_daily_pieces 2.5', { scopes: ['mail.send'], max_daily_pieces: 2.5 }, ['max_daily_pieces']],
      [
        'max_daily_pieces 2147483648 (over a Postgres integer)',
        { scopes: ['mail.send'], max_daily_pieces: 2147483648 },
        ['max_daily_pieces'],
      ],
      ['an unknown field', { scopes: ['mail.send'], admin: true }, ['body']],
    ])('refuses %s with 400 and fields[]', async (_label, json, expected) => {
      const [{ before }] = await app.deps.db.query(
        `SELECT count(*)::int AS before FROM agent_credentials WHERE agent_id = $1`,
        [agentId],
      );
      const res = await create(json);
      expect(res.status).toBe(400);
      expect(paths(res.body)).toEqual(expected);
      const [{ after }] = await app.deps.db.query(
        `SELECT count(*)::int AS after FROM agent_credentials WHERE agent_id = $1`,
        [agentId],
      );
      expect(after).toBe(before);
    });

    it('accepts max_daily_pieces 2147483647, the largest a Postgres integer holds', async () => {
      const res = await create({ scopes: ['mail.send'], max_daily_pieces: 2147483647 });
      expect(res.status).toBe(201);
      expect(res.body.max_daily_pieces).toBe(2147483647);
    });

    it('accepts max_daily_pieces null and expires_in_days 1', async () => {
      const res = await create({ scopes: ['mail.send'], max_daily_pieces: null, expires_in_days: 1 });
      expect(res.status).toBe(201);
      expect(res.body.max_daily_pieces).toBeNull();
      expect(res.body.expires_at).not.toBeNull();
    });

    it("404 for another member's agent; test member keys issue test credentials only; agent keys cannot issue", async () => {
      const stranger = await newMember(app.deps);
      expect(
        (await api('POST', `/v1/agents/${agentId}/credentials`, { key: stranger.key, json: { scopes: ['mail.send'] } }))
          .status,
      ).toBe(404);
      expect((await api('GET', `/v1/agents/${agentId}/credentials`, { key: stranger.key })).status).toBe(404);

      const testKey = (
        await api('POST', '/v1/api-keys', { key: memberKey, json: { name: 'sandbox', environment: 'test' } })
      ).body.key;
      const live = await api('POST', `/v1/agents/${agentId}/credentials`, {
        key: testKey,
        json: { scopes: ['mail.send'] },
      });
      expect(live.status).toBe(403);
      expect(live.body).toMatchObject({ reason: 'live_key_required', test_mode: true });
      const test = await api('POST', `/v1/agents/${agentId}/credentials`, {
        key: testKey,
        json: { scopes: ['mail.send'], environment: 'test' },
      });
      expect(test.status).toBe(201);

      const agentKey = await newCredential(app.baseUrl, memberKey, agentId);
      expect(
        (await api('POST', `/v1/agents/${agentId}/credentials`, { key: agentKey.key, json: { scopes: ['mail.send'] } }))
          .status,
      ).toBe(403);
    });

    it('revokes once and answers the revoked record again', async () => {
      const cred = await newCredential(app.baseUrl, memberKey, agentId);
      const first = await api('DELETE', `/v1/agents/${agentId}/credentials/${cred.id}`, { key: memberKey });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ id: cred.id, status: 'revoked', revoked_at: expect.any(String) });
      const again = await api('DELETE', `/v1/agents/${agentId}/credentials/${cred.id}`, { key: memberKey });
      expect(again.body.revoked_at).toBe(first.body.revoked_at);
      expect(
        (
          await api('DELETE', `/v1/agents/${agentId}/credentials/00000000-0000-4000-8000-000000000000`, {
            key: memberKey,
          })
        ).status,
      ).toBe(404);
    });
  });

  describe('GET /v1/mailboxes', () => {
    it('lists one outbound endpoint per agent (own only for agent keys) with the profile return address', async () => {
      const member = await newMember(app.deps);
      const a = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['mailbox.read'] });
      const b = await newAgent(app.baseUrl, member.key, { display_name: 'Second' });
      const all = await api('GET', '/v1/mailboxes', { key: member.key });
      expect(all.status).toBe(200);
      expect(all.body.mailboxes).toEqual([
        {
          id: `mbx_${a.agent.id}`,
          type: 'outbound',
          agent_id: a.agent.id,
          name: a.agent.name,
          status: 'active',
          return_address: {
            name: 'Test Member',
            company: null,
            line1: '1 Return Way',
            line2: null,
            city: 'Austin',
            state: 'TX',
            zip: '78701',
          },
        },
        expect.objectContaining({ id: `mbx_${b.id}`, name: 'Second' }),
      ]);
      const own = await api('GET', '/v1/mailboxes', { key: a.credential.key });
      expect(own.body.mailboxes.map((m: { agent_id: string }) => m.agent_id)).toEqual([a.agent.id]);
      expect(JSON.stringify(all.body)).not.toMatch(/receiving|street_address/);

      const noScope = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['agent.read'] });
      expect((await api('GET', '/v1/mailboxes', { key: noScope.credential.key })).body.reason).toBe(
        'insufficient_scope',
      );
    });

    it('resolves the sending mailbox of an agent, and 404 "no active mailbox" otherwise', async () => {
      const member = await newMember(app.deps);
      const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key);
      const other = await newAgent(app.baseUrl, member.key);
      const agentAuth = await authenticate(app.deps, `Bearer ${credential.key}`);
      await expect(getOutboundMailbox(app.deps, agentAuth, agent.id)).resolves.toMatchObject({
        id: `mbx_${agent.id}`,
        status: 'active',
      });
      await expect(getOutboundMailbox(app.deps, agentAuth, other.id)).rejects.toMatchObject({
        status: 404,
        message: 'No active mailbox for this agent',
      });
      await api('DELETE', `/v1/agents/${other.id}`, { key: member.key });
      const memberAuth = await authenticate(app.deps, `Bearer ${member.key}`);
      await expect(getOutboundMailbox(app.deps, memberAuth, other.id)).rejects.toMatchObject({ status: 404 });
    });
  });

  describe('GET /v1 discovery', () => {
    it('lists every route with its keys and scopes from the access table, and the documents', async () => {
      const res = await api('GET', '/v1');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        api_version: '1.0.0',
        base_url: app.baseUrl,
        mcp_url: `${app.baseUrl}/mcp`,
        a2a_url: `${app.baseUrl}/a2a`,
        documents: expect.objectContaining({
          openapi_json: `${app.siteUrl}/openapi.json`,
          openapi_yaml: `${app.siteUrl}/openapi.yaml`,
          llms_txt: `${app.siteUrl}/llms.txt`,
          agent_card: `${app.siteUrl}/.well-known/agent.json`,
        }),
      });
      expect(res.body.endpoints).toHaveLength(allRoutes.length);
      for (const route of allRoutes) {
        const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
        const entry = res.body.endpoints.find(
          (e: { method: string; path: string }) => e.method === route.method.toUpperCase() && e.path === path,
        );
        expect(entry).toBeDefined();
        const access = ENDPOINT_ACCESS[accessKey(route.method, route.path)];
        expect(entry.auth).toEqual(access.callers === 'public' ? ['public'] : access.callers);
        expect(entry.scopes).toEqual(access.scopes ?? []);
      }
      const credits = res.body.endpoints.find((e: { path: string }) => e.path === '/v1/credits');
      expect(credits).toMatchObject({ any_scope: ['billing.read', 'mail.send'], live_only: false });
    });
  });
});
