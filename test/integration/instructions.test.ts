import { useTestApp } from '../helpers/app';
import { fieldPaths as paths } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent, newAgentWithKey, newCredential } from '../helpers/agents';
import { sha256Hex } from '../../domain/accounts/keys';
import { PLATFORM_FALLBACK_INSTRUCTIONS } from '../../services/accounts/instructions';

describe('instructions document', () => {
  const { app, api } = useTestApp({ worker: false });

  it('starts at the platform fallback, saves renter versions and lists them newest first', async () => {
    const member = await newMember(app.deps);
    const agent = await newAgent(app.baseUrl, member.key);
    const first = await api('GET', `/v1/agents/${agent.id}/instructions`, { key: member.key });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      agent_id: agent.id,
      text: PLATFORM_FALLBACK_INSTRUCTIONS,
      version: 1,
      hash: sha256Hex(PLATFORM_FALLBACK_INSTRUCTIONS),
      source: 'platform_fallback',
    });
    expect(Date.parse(first.body.updated_at)).not.toBeNaN();

    const text = 'Send invoices first_class. Ask before anything certified.';
    const saved = await api('PUT', `/v1/agents/${agent.id}/instructions`, {
      key: member.key,
      json: { text, expected_version: 1 },
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ text, version: 2, hash: sha256Hex(text), source: 'renter' });
    expect((await api('GET', `/v1/agents/${agent.id}/instructions`, { key: member.key })).body.version).toBe(2);
    // The agent record shows the same version and hash.
    expect((await api('GET', `/v1/agents/${agent.id}`, { key: member.key })).body.instructions).toMatchObject({
      version: 2,
      hash: sha256Hex(text),
    });

    const versions = await api('GET', `/v1/agents/${agent.id}/instructions/versions`, { key: member.key });
    expect(versions.body.versions.map((v: { version: number; source: string }) => [v.version, v.source])).toEqual([
      [2, 'renter'],
      [1, 'platform_fallback'],
    ]);
    expect(versions.body.pagination).toEqual({ total: 2, limit: 20, offset: 0, has_more: false });
    const page = await api('GET', `/v1/agents/${agent.id}/instructions/versions?limit=1&offset=1`, { key: member.key });
    expect(page.body.versions.map((v: { version: number }) => v.version)).toEqual([1]);
  });

  it('refuses a stale expected_version with 409 and saves nothing', async () => {
    const member = await newMember(app.deps);
    const agent = await newAgent(app.baseUrl, member.key);
    await api('PUT', `/v1/agents/${agent.id}/instructions`, {
      key: member.key,
      json: { text: 'v2', expected_version: 1 },
    });
    const stale = await api('PUT', `/v1/agents/${agent.id}/instructions`, {
      key: member.key,
      json: { text: 'lost update', expected_version: 1 },
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      code: 'SERVICE_MD_VERSION_MISMATCH',
      details: { current_version: 2, expected_version: 1 },
    });
    const ahead = await api('PUT', `/v1/agents/${agent.id}/instructions`, {
      key: member.key,
      json: { text: 'future', expected_version: 5 },
    });
    expect(ahead.status).toBe(409);
    expect((await api('GET', `/v1/agents/${agent.id}/instructions`, { key: member.key })).body).toMatchObject({
      version: 2,
      text: 'v2',
    });
  });

  it('lets exactly one of concurrent saves with the same expected_version win', async () => {
    const member = await newMember(app.deps);
    const agent = await newAgent(app.baseUrl, member.key);
    const pair = await Promise.all(
      ['left', 'right'].map((text) =>
        api('PUT', `/v1/agents/${agent.id}/instructions`, { key: member.key, json: { text, expected_version: 1 } }),
      ),
    );
    expect(pair.map((r) => r.status).sort()).toEqual([200, 409]);
    const winner = pair.find((r) => r.status === 200)!;

    const many = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api('PUT', `/v1/agents/${agent.id}/instructions`, {
          key: member.key,
          json: { text: `writer ${i}`, expected_version: 2 },
        }),
      ),
    );
    expect(many.filter((r) => r.status === 200)).toHaveLength(1);
    expect(many.filter((r) => r.status === 409)).toHaveLength(9);
    const rows = await app.deps.db.query(
      `SELECT version, text FROM instructions_versions WHERE agent_id = $1 ORDER BY version`,
      [agent.id],
    );
    expect(rows.map((r: { version: number }) => r.version)).toEqual([1, 2, 3]);
    expect(rows[1].text).toBe(winner.body.text);
    expect(rows[2].text).toBe(many.find((r) => r.status === 200)!.body.text);
  });

  it.each([
    ['text over 10,000 characters', { text: 'x'.repeat(10_001), expected_version: 1 }, ['text']],
    ['no expected_version', { text: 'x' }, ['expected_version']],
    ['expected_version 0', { text: 'x', expected_version: 0 }, ['expected_version']],
    ['no text', { expected_version: 1 }, ['text']],
  ])('refuses %s with 400', async (_label, json, expected) => {
    const member = await newMember(app.deps);
    const agent = await newAgent(app.baseUrl, member.key);
    const res = await api('PUT', `/v1/agents/${agent.id}/instructions`, { key: member.key, json });
    expect(res.status).toBe(400);
    expect(paths(res.body)).toEqual(expected);
  });

  it('accepts exactly 10,000 characters', async () => {
    const member = await newMember(app.deps);
    const agent = await newAgent(app.baseUrl, member.key);
    const res = await api('PUT', `/v1/agents/${agent.id}/instructions`, {
      key: member.key,
      json: { text: 'y'.repeat(10_000), expected_version: 1 },
    });
    expect(res.status).toBe(200);
  });

  it('agent keys read only their own agent (test keys too) and cannot save', async () => {
    const member = await newMember(app.deps);
    const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['mail.send'] });
    const test = await newCredential(app.baseUrl, member.key, agent.id, { environment: 'test', scopes: ['mail.send'] });
    const other = await newAgent(app.baseUrl, member.key);
    expect((await api('GET', `/v1/agents/${agent.id}/instructions`, { key: credential.key })).status).toBe(200);
    expect((await api('GET', `/v1/agents/${agent.id}/instructions`, { key: test.key })).body).toMatchObject({
      version: 1,
      test_mode: true,
    });
    expect((await api('GET', `/v1/agents/${other.id}/instructions`, { key: test.key })).status).toBe(404);
    const put = await api('PUT', `/v1/agents/${agent.id}/instructions`, {
      key: credential.key,
      json: { text: 'mine now', expected_version: 1 },
    });
    expect(put.status).toBe(403);
    expect(put.body.reason).toBe('member_key_required');
  });

  describe('proposals', () => {
    it('an agent proposes, the member lists and accepts it as the next version', async () => {
      const member = await newMember(app.deps);
      const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key);
      const proposed = await api('POST', `/v1/agents/${agent.id}/instructions/proposals`, {
        key: credential.key,
        headers: { 'x-service-md-version': '1' },
        json: { suggested_content: 'Prefer certified for legal notices.', reason: 'two notices bounced' },
      });
      expect(proposed.status).toBe(201);
      const id = proposed.body.proposal.id;
      // Nothing changes before the member decides.
      expect((await api('GET', `/v1/agents/${agent.id}/instructions`, { key: member.key })).body.version).toBe(1);

      const list = await api('GET', `/v1/agents/${agent.id}/instructions/proposals?status=pending`, {
        key: member.key,
      });
      expect(list.body.proposals.map((p: { id: string }) => p.id)).toEqual([id]);
      expect(
        (await api('GET', `/v1/agents/${agent.id}/instructions/proposals`, { key: credential.key })).body.proposals,
      ).toHaveLength(1);

      const needsVersion = await api('POST', `/v1/agents/${agent.id}/instructions/proposals/${id}/decision`, {
        key: member.key,
        json: { decision: 'accept' },
      });
      expect(needsVersion.status).toBe(400);
      expect(paths(needsVersion.body)).toEqual(['expected_version']);
      const accepted = await api('POST', `/v1/agents/${agent.id}/instructions/proposals/${id}/decision`, {
        key: member.key,
        json: { decision: 'accept', expected_version: 1 },
      });
      expect(accepted.status).toBe(200);
      expect(accepted.body.proposal).toMatchObject({ status: 'accepted', resulting_version: 2 });
      expect(accepted.body.instructions).toMatchObject({
        version: 2,
        text: 'Prefer certified for legal notices.',
        source: 'renter',
      });
      const [row] = await app.deps.db.query(
        `SELECT reason FROM instructions_versions WHERE agent_id = $1 AND version = 2`,
        [agent.id],
      );
      expect(row.reason).toBe('two notices bounced');

      const twice = await api('POST', `/v1/agents/${agent.id}/instructions/proposals/${id}/decision`, {
        key: member.key,
        json: { decision: 'reject' },
      });
      expect(twice.status).toBe(409);
      expect(twice.body.code).toBe('PROPOSAL_ALREADY_DECIDED');
    });

    it('a stale accept is refused and leaves the proposal pending; a reject changes nothing else', async () => {
      const member = await newMember(app.deps);
      const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key);
      const make = async () =>
        (
          await api('POST', `/v1/agents/${agent.id}/instructions/proposals`, {
            key: credential.key,
            headers: { 'x-service-md-version': '1' },
            json: { suggested_content: 'x' },
          })
        ).body.proposal.id;
      const a = await make();
      const b = await make();
      await api('PUT', `/v1/agents/${agent.id}/instructions`, {
        key: member.key,
        json: { text: 'owner edit', expected_version: 1 },
      });
      const stale = await api('POST', `/v1/agents/${agent.id}/instructions/proposals/${a}/decision`, {
        key: member.key,
        json: { decision: 'accept', expected_version: 1 },
      });
      expect(stale.status).toBe(409);
      expect(stale.body.code).toBe('SERVICE_MD_VERSION_MISMATCH');
      const [p] = await app.deps.db.query(`SELECT status FROM instructions_proposals WHERE id = $1`, [a]);
      expect(p.status).toBe('pending');
      const rejected = await api('POST', `/v1/agents/${agent.id}/instructions/proposals/${b}/decision`, {
        key: member.key,
        json: { decision: 'reject' },
      });
      expect(rejected.body.proposal).toMatchObject({ status: 'rejected', resulting_version: null });
      expect(rejected.body.instructions.version).toBe(2);
    });

    it('refuses content over 10,000 characters, member keys, and other agents', async () => {
      const member = await newMember(app.deps);
      const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key);
      const other = await newAgent(app.baseUrl, member.key);
      const headers = { 'x-service-md-version': '1' };
      const long = await api('POST', `/v1/agents/${agent.id}/instructions/proposals`, {
        key: credential.key,
        headers,
        json: { suggested_content: 'z'.repeat(10_001) },
      });
      expect(long.status).toBe(400);
      expect(paths(long.body)).toEqual(['suggested_content']);
      expect(
        (
          await api('POST', `/v1/agents/${agent.id}/instructions/proposals`, {
            key: credential.key,
            headers,
            json: { suggested_content: 'z'.repeat(10_000) },
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await api('POST', `/v1/agents/${other.id}/instructions/proposals`, {
            key: credential.key,
            headers,
            json: { suggested_content: 'z' },
          })
        ).status,
      ).toBe(404);
      const byMember = await api('POST', `/v1/agents/${agent.id}/instructions/proposals`, {
        key: member.key,
        json: { suggested_content: 'z' },
      });
      expect(byMember.status).toBe(403);
      expect(byMember.body.reason).toBe('agent_key_required');
      const noScope = await newCredential(app.baseUrl, member.key, agent.id, { scopes: ['agent.read'] });
      expect(
        (
          await api('POST', `/v1/agents/${agent.id}/instructions/proposals`, {
            key: noScope.key,
            headers,
            json: { suggested_content: 'z' },
          })
        ).body.reason,
      ).toBe('insufficient_scope');
    });
  });
});
