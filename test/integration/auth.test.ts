import { useTestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { newAgent, newAgentWithKey, newCredential } from '../helpers/agents';
import { createFacility } from '../../services/accounts/accounts';
import { generateKey, hashKey } from '../../domain/accounts/keys';

describe('authentication, scopes and key environments', () => {
  const { app, api } = useTestApp({ worker: false });

  describe('every 401 reason', () => {
    const expect401 = async (headers: Record<string, string>, reason: string) => {
      const res = await api('GET', '/v1/credits', { headers });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ reason, test_mode: false });
      expect(typeof res.body.error).toBe('string');
    };

    it('token_missing, token_malformed, token_prefix_unknown, key_not_found', async () => {
      await expect401({}, 'token_missing');
      await expect401({ authorization: 'Basic dXNlcjpwYXNzd29yZA==' }, 'token_malformed');
      await expect401({ authorization: 'Bearer sk_live_abc def' }, 'token_malformed');
      await expect401({ authorization: 'Bearer pk_live_abcdefghijklmnopqrstuvwxyz012345' }, 'token_prefix_unknown');
      await expect401({ authorization: `Bearer ${generateKey('member')}` }, 'key_not_found');
      await expect401({ authorization: `Bearer ${generateKey('agent_test')}` }, 'key_not_found');
    });

    it('key_revoked for a revoked member key and a revoked agent credential', async () => {
      const member = await newMember(app.deps);
      const extra = await api('POST', '/v1/api-keys', { key: member.key, json: { name: 'to revoke' } });
      expect((await api('DELETE', `/v1/api-keys/${extra.body.id}`, { key: member.key })).status).toBe(200);
      await expect401({ authorization: `Bearer ${extra.body.key}` }, 'key_revoked');

      const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key);
      expect(
        (await api('DELETE', `/v1/agents/${agent.id}/credentials/${credential.id}`, { key: member.key })).status,
      ).toBe(200);
      await expect401({ authorization: `Bearer ${credential.key}` }, 'key_revoked');
    });

    it('key_expired once expires_at has passed', async () => {
      const member = await newMember(app.deps);
      const { credential } = await newAgentWithKey(app.baseUrl, member.key);
      expect((await api('GET', '/v1/credits', { key: credential.key })).status).toBe(200);
      await app.deps.db.query(`UPDATE agent_credentials SET expires_at = now() - interval '1 second' WHERE id = $1`, [
        credential.id,
      ]);
      await expect401({ authorization: `Bearer ${credential.key}` }, 'key_expired');
      await app.deps.db.query(`UPDATE member_api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [
        member.key_id,
      ]);
      await expect401({ authorization: `Bearer ${member.key}` }, 'key_expired');
    });

    it('member_suspended for every key of a suspended member', async () => {
      const member = await newMember(app.deps);
      const { credential } = await newAgentWithKey(app.baseUrl, member.key);
      await app.deps.db.query(`UPDATE members SET status = 'suspended' WHERE id = $1`, [member.member_id]);
      await expect401({ authorization: `Bearer ${member.key}` }, 'member_suspended');
      await expect401({ authorization: `Bearer ${credential.key}` }, 'member_suspended');
    });

    it('facility_inactive for the key of an inactive facility', async () => {
      const facility = await createFacility(app.deps, 'Inactive test facility');
      await app.deps.db.query(`UPDATE facilities SET status = 'inactive' WHERE id = $1`, [facility.facility_id]);
      await expect401({ authorization: `Bearer ${facility.key}` }, 'facility_inactive');
    });
  });

  it('refuses an agent key without the scope with 403 insufficient_scope', async () => {
    const member = await newMember(app.deps);
    const { credential } = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['agent.read'] });
    const res = await api('GET', '/v1/credits', { key: credential.key });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      reason: 'insufficient_scope',
      details: { required_scopes: ['billing.read', 'mail.send'] },
    });
    expect((await api('GET', '/v1/agents', { key: credential.key })).status).toBe(200);
  });

  it('agent credentials get 401 on /v1/api-keys', async () => {
    const member = await newMember(app.deps);
    const { credential } = await newAgentWithKey(app.baseUrl, member.key);
    for (const [method, path] of [
      ['GET', '/v1/api-keys'],
      ['POST', '/v1/api-keys'],
    ]) {
      const res = await api(method, path, { key: credential.key, json: method === 'POST' ? { name: 'x' } : undefined });
      expect(res.status).toBe(401);
    }
  });

  describe('agent isolation', () => {
    it("an agent key cannot read another agent's profile or instructions (404), nor another member's", async () => {
      const member = await newMember(app.deps);
      const a = await newAgentWithKey(app.baseUrl, member.key);
      const b = await newAgentWithKey(app.baseUrl, member.key);
      const stranger = await newMember(app.deps);
      const c = await newAgent(app.baseUrl, stranger.key);

      expect((await api('GET', `/v1/agents/${a.agent.id}`, { key: a.credential.key })).status).toBe(200);
      expect((await api('GET', `/v1/agents/${a.agent.id}/instructions`, { key: a.credential.key })).status).toBe(200);
      for (const path of [
        `/v1/agents/${b.agent.id}`,
        `/v1/agents/${b.agent.id}/instructions`,
        `/v1/agents/${b.agent.id}/instructions/versions`,
        `/v1/agents/${c.id}`,
      ]) {
        const res = await api('GET', path, { key: a.credential.key });
        expect(res.status).toBe(404);
      }
      // Member keys see all their own agents, never another member's.
      expect((await api('GET', `/v1/agents/${b.agent.id}/instructions`, { key: member.key })).status).toBe(200);
      expect((await api('GET', `/v1/agents/${c.id}`, { key: member.key })).status).toBe(404);
      expect(
        (await api('POST', `/v1/agents/${c.id}/credentials`, { key: member.key, json: { scopes: ['mail.send'] } }))
          .status,
      ).toBe(404);

      const list = await api('GET', '/v1/agents', { key: a.credential.key });
      expect(list.body.agents.map((x: { id: string }) => x.id)).toEqual([a.agent.id]);
      const all = await api('GET', '/v1/agents', { key: member.key });
      expect(all.body.agents.map((x: { id: string }) => x.id).sort()).toEqual([a.agent.id, b.agent.id].sort());
    });
  });

  it('never stores a raw key: every row of every table is free of it, and its hash is stored', async () => {
    const member = await newMember(app.deps);
    const memberKey = await api('POST', '/v1/api-keys', {
      key: member.key,
      json: { name: 'scan me', environment: 'test' },
    });
    const agent = await newAgent(app.baseUrl, member.key);
    const live = await newCredential(app.baseUrl, member.key, agent.id, { environment: 'live' });
    const test = await newCredential(app.baseUrl, member.key, agent.id, { environment: 'test' });
    const rotated = await api('POST', `/v1/api-keys/${memberKey.body.id}/rotate`, { key: member.key });
    const facility = await createFacility(app.deps, 'Scan facility');
    const raw = [member.key, memberKey.body.key, live.key, test.key, rotated.body.api_key.key, facility.key];
    for (const k of raw) expect(k).toMatch(/^sk_/);

    const tables: Array<{ table_name: string }> = await app.deps.db.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(['member_api_keys', 'agent_credentials', 'facility_keys']),
    );
    let dump = '';
    for (const { table_name } of tables) {
      const rows: Array<{ r: string }> = await app.deps.db.query(`SELECT t::text AS r FROM "${table_name}" t`);
      dump += rows.map((x) => x.r).join('\n');
    }
    for (const k of raw) {
      expect(dump.includes(k)).toBe(false);
      expect(dump.includes(hashKey(k))).toBe(true);
    }
    // The stored prefix is the first 18 characters, not more.
    const [row] = await app.deps.db.query(`SELECT key_prefix FROM agent_credentials WHERE id = $1`, [live.id]);
    expect(row.key_prefix).toBe(live.key.slice(0, 18));
  });

  it('sets expires_at from expires_in_days and omits expiry without it', async () => {
    const member = await newMember(app.deps);
    const agent = await newAgent(app.baseUrl, member.key);
    const res = await api('POST', `/v1/agents/${agent.id}/credentials`, {
      key: member.key,
      json: { scopes: ['mail.send'], expires_in_days: 3 },
    });
    expect(res.status).toBe(201);
    const lifetime = Date.parse(res.body.expires_at) - Date.parse(res.body.created_at);
    expect(Math.abs(lifetime - 3 * 86_400_000)).toBeLessThan(60_000);
    const none = await api('POST', `/v1/agents/${agent.id}/credentials`, {
      key: member.key,
      json: { scopes: ['mail.send'] },
    });
    expect(none.body.expires_at).toBeNull();
  });

  describe('X-Service-MD-Version on mutating agent routes', () => {
    it('PATCH /v1/agents/:id: missing 400, malformed 400, stale 409, current passes; member keys need none', async () => {
      const member = await newMember(app.deps);
      const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key);
      const patch = (headers: Record<string, string>, json: unknown = { description: 'updated' }) =>
        api('PATCH', `/v1/agents/${agent.id}`, { key: credential.key, json, headers });

      const missing = await patch({});
      expect(missing.status).toBe(400);
      expect(missing.body.code).toBe('SERVICE_MD_VERSION_REQUIRED');
      for (const notDigits of ['abc', '0x1', '1e0', '1.0', '-1', '0']) {
        expect((await patch({ 'x-service-md-version': notDigits })).body.code).toBe('SERVICE_MD_VERSION_REQUIRED');
      }

      const saved = await api('PUT', `/v1/agents/${agent.id}/instructions`, {
        key: member.key,
        json: { text: 'Be brief.', expected_version: 1 },
      });
      expect(saved.body.version).toBe(2);
      const stale = await patch({ 'x-service-md-version': '1' });
      expect(stale.status).toBe(409);
      expect(stale.body).toMatchObject({
        code: 'SERVICE_MD_VERSION_MISMATCH',
        details: { current_version: 2, sent_version: 1 },
      });
      const [before] = await app.deps.db.query(`SELECT description FROM agents WHERE id = $1`, [agent.id]);
      expect(before.description).toBeNull(); // refused requests change nothing

      const ok = await patch({ 'x-service-md-version': '2' });
      expect(ok.status).toBe(200);
      expect(ok.body.description).toBe('updated');

      const byMember = await api('PATCH', `/v1/agents/${agent.id}`, {
        key: member.key,
        json: { display_name: 'Owner set' },
      });
      expect(byMember.status).toBe(200);
      expect(byMember.body.display_name).toBe('Owner set');
    });

    it('POST /v1/agents/:id/instructions/proposals follows the same guard', async () => {
      const member = await newMember(app.deps);
      const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key);
      const body = { suggested_content: 'Always use first_class unless told otherwise.', reason: 'cheaper' };
      const path = `/v1/agents/${agent.id}/instructions/proposals`;
      expect((await api('POST', path, { key: credential.key, json: body })).body.code).toBe(
        'SERVICE_MD_VERSION_REQUIRED',
      );
      expect(
        (await api('POST', path, { key: credential.key, json: body, headers: { 'x-service-md-version': '7' } })).status,
      ).toBe(409);
      const ok = await api('POST', path, { key: credential.key, json: body, headers: { 'x-service-md-version': '1' } });
      expect(ok.status).toBe(201);
      expect(ok.body.proposal).toMatchObject({
        status: 'pending',
        base_version: 1,
        suggested_content: body.suggested_content,
      });
    });
  });

  describe('X-Test-Mode and test_mode', () => {
    it('are true for test keys and false for live keys, on successes and on errors', async () => {
      const member = await newMember(app.deps);
      const agent = await newAgent(app.baseUrl, member.key, { webhook_url: 'http://127.0.0.1:9/agent' });
      const live = await newCredential(app.baseUrl, member.key, agent.id, { environment: 'live' });
      const test = await newCredential(app.baseUrl, member.key, agent.id, { environment: 'test' });
      expect(test.key.startsWith('sk_agent_test_')).toBe(true);
      expect(live.key.startsWith('sk_agent_') && !live.key.startsWith('sk_agent_test_')).toBe(true);

      const testRead = await api('GET', `/v1/agents/${agent.id}`, { key: test.key });
      expect(testRead.status).toBe(200);
      expect(testRead.headers.get('x-test-mode')).toBe('true');
      expect(testRead.body).toMatchObject({ test_mode: true, recent_webhooks: [] });
      const testInstructions = await api('GET', `/v1/agents/${agent.id}/instructions`, { key: test.key });
      expect(testInstructions.status).toBe(200);
      expect(testInstructions.body.test_mode).toBe(true);

      const refused = await api('PATCH', `/v1/agents/${agent.id}`, {
        key: test.key,
        json: { description: 'x' },
        headers: { 'x-service-md-version': '1' },
      });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ reason: 'live_key_required', test_mode: true });
      expect(refused.headers.get('x-test-mode')).toBe('true');

      const liveRead = await api('GET', `/v1/agents/${agent.id}`, { key: live.key });
      expect(liveRead.headers.get('x-test-mode')).toBe('false');
      expect(liveRead.body.test_mode).toBe(false);
      const liveError = await api('GET', `/v1/agents/00000000-0000-4000-8000-000000000000`, { key: live.key });
      expect(liveError.status).toBe(404);
      expect(liveError.body.test_mode).toBe(false);
      expect(liveError.headers.get('x-test-mode')).toBe('false');
    });

    it('live keys see the recent live deliveries to the agent webhook; test keys never do', async () => {
      const member = await newMember(app.deps);
      const agent = await newAgent(app.baseUrl, member.key, { webhook_url: 'http://127.0.0.1:9/recent' });
      const live = await newCredential(app.baseUrl, member.key, agent.id, { environment: 'live' });
      const test = await newCredential(app.baseUrl, member.key, agent.id, { environment: 'test' });
      for (const environment of ['live', 'test']) {
        const [event] = await app.deps.db.query(
          `INSERT INTO events (event_key, member_id, agent_id, event_type, environment, object_type, object_id, payload)
           VALUES ($1, $2, $3, 'mail.submitted', $4, 'outbound_mail', $5, '{}') RETURNING id`,
          [`auth-test:${agent.id}:${environment}`, member.member_id, agent.id, environment, `mail-${environment}`],
        );
        await app.deps.db.query(
          `INSERT INTO webhook_deliveries (event_id, target, target_type, member_id, agent_id, event_type, environment, status, max_attempts, delivered_at)
           VALUES ($1, $2, 'agent_webhook', $3, $4, 'mail.submitted', $5, 'delivered', 5, now())`,
          [event.id, `agent:${agent.id}`, member.member_id, agent.id, environment],
        );
      }
      const seen = await api('GET', `/v1/agents/${agent.id}`, { key: live.key });
      expect(seen.body.recent_webhooks).toEqual([
        expect.objectContaining({ event_type: 'mail.submitted', status: 'delivered', test_mode: false }),
      ]);
      expect((await api('GET', `/v1/agents/${agent.id}`, { key: member.key })).body.recent_webhooks).toHaveLength(1);
      expect((await api('GET', `/v1/agents/${agent.id}`, { key: test.key })).body.recent_webhooks).toEqual([]);
    });
  });
});
