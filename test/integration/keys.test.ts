import { useTestApp } from '../helpers/app';
import { fieldPaths as paths } from '../helpers/http';
import { newMember } from '../helpers/factories';

describe('member API keys', () => {
  const { app, api } = useTestApp({ worker: false });

  it('creates prod keys (sk_live_) by default and test keys (sk_test_), raw key once', async () => {
    const member = await newMember(app.deps);
    const prod = await api('POST', '/v1/api-keys', { key: member.key, json: { name: 'CI' } });
    expect(prod.status).toBe(201);
    expect(prod.body).toMatchObject({
      key: expect.stringMatching(/^sk_live_[A-Za-z0-9]{40}$/),
      name: 'CI',
      environment: 'prod',
      status: 'active',
      expires_at: null,
    });
    expect(prod.body.key_prefix).toBe(prod.body.key.slice(0, 18));
    const test = await api('POST', '/v1/api-keys', {
      key: member.key,
      json: { name: 'Sandbox', environment: 'test', expires_in_days: 30 },
    });
    expect(test.status).toBe(201);
    expect(test.body.key).toMatch(/^sk_test_/);
    expect(test.body.expires_at).not.toBeNull();

    // The new keys work, in their environment.
    const viaTest = await api('GET', '/v1/credits', { key: test.body.key });
    expect(viaTest.status).toBe(200);
    expect(viaTest.headers.get('x-test-mode')).toBe('true');
    expect((await api('GET', '/v1/credits', { key: prod.body.key })).headers.get('x-test-mode')).toBe('false');

    const list = await api('GET', '/v1/api-keys', { key: member.key });
    expect(list.status).toBe(200);
    expect(list.body.api_keys.map((k: { name: string }) => k.name)).toEqual(['Default', 'CI', 'Sandbox']);
    for (const k of list.body.api_keys) expect(k).not.toHaveProperty('key');
    // Another member sees only their own.
    const other = await newMember(app.deps);
    expect((await api('GET', '/v1/api-keys', { key: other.key })).body.api_keys).toHaveLength(1);
  });

  it.each([
    ['no name', {}, ['name']],
    ['an empty name', { name: '' }, ['name']],
    ['a 65-character name', { name: 'k'.repeat(65) }, ['name']],
    ['environment live', { name: 'x', environment: 'live' }, ['environment']],
    ['environment PROD', { name: 'x', environment: 'PROD' }, ['environment']],
    ['expires_in_days 0', { name: 'x', expires_in_days: 0 }, ['expires_in_days']],
    ['an unknown field', { name: 'x', scopes: ['mail.send'] }, ['body']],
  ])('refuses %s with 400 and fields[]', async (_label, json, expected) => {
    const member = await newMember(app.deps);
    const res = await api('POST', '/v1/api-keys', { key: member.key, json });
    expect(res.status).toBe(400);
    expect(paths(res.body)).toEqual(expected);
  });

  it('accepts names of 1 and 64 characters', async () => {
    const member = await newMember(app.deps);
    expect((await api('POST', '/v1/api-keys', { key: member.key, json: { name: 'k' } })).status).toBe(201);
    expect((await api('POST', '/v1/api-keys', { key: member.key, json: { name: 'k'.repeat(64) } })).status).toBe(201);
  });

  it('rotates: the new key is returned once and works, the old one is rotated and refused with key_revoked', async () => {
    const member = await newMember(app.deps);
    const old = await api('POST', '/v1/api-keys', { key: member.key, json: { name: 'rotating', expires_in_days: 10 } });
    const res = await api('POST', `/v1/api-keys/${old.body.id}/rotate`, { key: member.key });
    expect(res.status).toBe(200);
    expect(res.body.api_key).toMatchObject({
      key: expect.stringMatching(/^sk_live_/),
      name: 'rotating',
      environment: 'prod',
      status: 'active',
      expires_at: old.body.expires_at,
    });
    expect(res.body.rotated_key).toMatchObject({
      id: old.body.id,
      status: 'rotated',
      rotated_to_id: res.body.api_key.id,
    });
    expect(res.body.rotated_key).not.toHaveProperty('key');

    const refused = await api('GET', '/v1/credits', { key: old.body.key });
    expect(refused.status).toBe(401);
    expect(refused.body.reason).toBe('key_revoked');
    expect((await api('GET', '/v1/credits', { key: res.body.api_key.key })).status).toBe(200);

    const again = await api('POST', `/v1/api-keys/${old.body.id}/rotate`, { key: member.key });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('KEY_NOT_ACTIVE');
    // A key can rotate itself; it stops working at once.
    const self = await api('POST', `/v1/api-keys/${res.body.api_key.id}/rotate`, { key: res.body.api_key.key });
    expect(self.status).toBe(200);
    expect((await api('GET', '/v1/credits', { key: res.body.api_key.key })).body.reason).toBe('key_revoked');
  });

  it('revokes: the key is refused afterwards; a repeat answers the same record', async () => {
    const member = await newMember(app.deps);
    const k = await api('POST', '/v1/api-keys', { key: member.key, json: { name: 'short-lived' } });
    const res = await api('DELETE', `/v1/api-keys/${k.body.id}`, { key: member.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: k.body.id, status: 'revoked' });
    expect((await api('GET', '/v1/api-keys', { key: k.body.key })).body.reason).toBe('key_revoked');
    expect((await api('DELETE', `/v1/api-keys/${k.body.id}`, { key: member.key })).body.status).toBe('revoked');
    expect((await api('POST', `/v1/api-keys/${k.body.id}/rotate`, { key: member.key })).status).toBe(409);
  });

  it("answers 404 for another member's key and for an unknown id", async () => {
    const a = await newMember(app.deps);
    const b = await newMember(app.deps);
    expect((await api('DELETE', `/v1/api-keys/${b.key_id}`, { key: a.key })).status).toBe(404);
    expect((await api('POST', `/v1/api-keys/${b.key_id}/rotate`, { key: a.key })).status).toBe(404);
    expect((await api('GET', '/v1/credits', { key: b.key })).status).toBe(200);
    expect((await api('DELETE', '/v1/api-keys/00000000-0000-4000-8000-000000000000', { key: a.key })).status).toBe(404);
  });

  it('test keys cannot rotate, create prod keys or revoke prod keys (403 live_key_required)', async () => {
    const member = await newMember(app.deps);
    const test = (
      await api('POST', '/v1/api-keys', { key: member.key, json: { name: 'sandbox', environment: 'test' } })
    ).body;
    const rotate = await api('POST', `/v1/api-keys/${test.id}/rotate`, { key: test.key });
    expect(rotate.status).toBe(403);
    expect(rotate.body).toMatchObject({ reason: 'live_key_required', test_mode: true });
    expect((await api('POST', '/v1/api-keys', { key: test.key, json: { name: 'escalate' } })).body.reason).toBe(
      'live_key_required',
    );
    expect((await api('DELETE', `/v1/api-keys/${member.key_id}`, { key: test.key })).body.reason).toBe(
      'live_key_required',
    );
    const sibling = await api('POST', '/v1/api-keys', {
      key: test.key,
      json: { name: 'sibling', environment: 'test' },
    });
    expect(sibling.status).toBe(201);
    expect((await api('DELETE', `/v1/api-keys/${sibling.body.id}`, { key: test.key })).status).toBe(200);
  });
});
