import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { useTestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { newAgentWithKey } from '../helpers/agents';
import { createFacility } from '../../services/accounts/accounts';
import { generateKey, hashKey, keyPrefixOf } from '../../domain/accounts/keys';
import { answerSupportConversation } from '../../services/support/support';

describe('support tickets and facility messages', () => {
  const { app, api } = useTestApp({ worker: false });

  const V1 = { 'x-service-md-version': '1' };
  const open = (key: string, json: Record<string, unknown>, headers: Record<string, string> = {}) =>
    api('POST', '/v1/support/messages', { key, json, headers });

  describe('support tickets', () => {
    it("opens a ticket for an agent key with message.send and answers the spec's message fields", async () => {
      const member = await newMember(app.deps);
      const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['message.send'] });
      const res = await open(credential.key, { category: 'billing', body: 'My credits did not arrive.' }, V1);
      expect(res.status).toBe(201);
      expect(res.body.message).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        conversation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        support_case_id: expect.stringMatching(/^SUP-\d{6,}$/),
        category: 'billing',
        status: 'open',
        author_type: 'agent',
        agent_id: agent.id,
        body: 'My credits did not arrive.',
        created_at: expect.any(String),
      });
      expect(res.body.message.support_message_id).toBe(`${res.body.message.support_case_id}-M1`);
      expect(res.body.test_mode).toBe(false);
    });

    it.each([
      ['no category on a new ticket', { body: 'hi' }, ['category']],
      ['an unknown category', { category: 'rant', body: 'hi' }, ['category']],
      ['an empty body', { category: 'support', body: '' }, ['body']],
      ['a blank body', { category: 'support', body: '   ' }, ['body']],
      ['a 5001-character body', { category: 'support', body: 'x'.repeat(5001) }, ['body']],
      ['an unknown field', { category: 'support', body: 'hi', urgent: true }, ['body']],
      [
        'an attachment that is not base64',
        {
          category: 'support',
          body: 'hi',
          attachments: [{ filename: 'a.txt', content_type: 'text/plain', content_base64: '***' }],
        },
        ['attachments.0.content_base64'],
      ],
      [
        'an executable attachment',
        {
          category: 'support',
          body: 'hi',
          attachments: [{ filename: 'a.exe', content_type: 'application/x-msdownload', content_base64: 'AAAA' }],
        },
        ['attachments.0.content_type'],
      ],
    ])('refuses %s with 400 fields[] and records nothing', async (_label, json, paths) => {
      const member = await newMember(app.deps);
      const res = await open(member.key, json);
      expect(res.status).toBe(400);
      expect(res.body.fields.map((f: { path: string }) => f.path)).toEqual(paths);
      const [{ n }] = await app.deps.db.query(
        `SELECT count(*)::int AS n FROM support_conversations WHERE member_id = $1`,
        [member.member_id],
      );
      expect(n).toBe(0);
    });

    it('requires the instructions version from agent keys and message.send', async () => {
      const member = await newMember(app.deps);
      const { credential } = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['message.send'] });
      const missing = await open(credential.key, { category: 'support', body: 'hi' });
      expect(missing).toMatchObject({ status: 400, body: { code: 'SERVICE_MD_VERSION_REQUIRED' } });
      const { credential: noScope } = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['agent.read'] });
      const refused = await open(noScope.key, { category: 'support', body: 'hi' }, V1);
      expect(refused).toMatchObject({ status: 403, body: { reason: 'insufficient_scope' } });
    });

    it('keeps a conversation: replies, attachments in the object store, support answers, resolve', async () => {
      const member = await newMember(app.deps);
      const png = readFileSync(path.join(__dirname, '..', 'fixtures', 'documents', 'image.png'));
      const first = await open(member.key, {
        category: 'account',
        body: 'Screenshot attached.',
        attachments: [{ filename: 'screen.png', content_type: 'image/png', content_base64: png.toString('base64') }],
      });
      expect(first.status).toBe(201);
      expect(first.body.message.attachments).toEqual([
        expect.objectContaining({ filename: 'screen.png', content_type: 'image/png', size_bytes: png.length }),
      ]);
      const conversationId = first.body.message.conversation_id;

      const reply = await api('POST', `/v1/support/conversations/${conversationId}/messages`, {
        key: member.key,
        json: { body: 'Any news?' },
      });
      expect(reply.status).toBe(201);
      expect(reply.body.message).toMatchObject({
        category: 'account',
        support_message_id: `${first.body.message.support_case_id}-M2`,
      });
      const sameViaBody = await open(member.key, { conversation_id: conversationId, body: 'Third message' });
      expect(sameViaBody.body.message.support_message_id).toBe(`${first.body.message.support_case_id}-M3`);

      const answered = await answerSupportConversation(app.deps, first.body.message.support_case_id, {
        body: 'Fixed, thanks.',
      });
      expect(answered).toMatchObject({ author_type: 'support', status: 'waiting_on_member' });

      const read = await api('GET', `/v1/support/conversations/${conversationId}/messages`, { key: member.key });
      expect(read.status).toBe(200);
      expect(read.body.conversation).toMatchObject({ status: 'waiting_on_member', message_count: 4 });
      expect(read.body.messages.map((m: { author_type: string }) => m.author_type)).toEqual([
        'member',
        'member',
        'member',
        'support',
      ]);
      expect(read.body.pagination).toEqual({ total: 4, limit: 50, offset: 0, has_more: false });
      const stored = await fetch(read.body.messages[0].attachments[0].url);
      expect(Buffer.from(await stored.arrayBuffer())).toEqual(png);

      const resolved = await api('POST', `/v1/support/conversations/${conversationId}/resolve`, { key: member.key });
      expect(resolved.body.conversation).toMatchObject({ status: 'resolved', resolved_at: expect.any(String) });
      const list = await api('GET', '/v1/support/conversations?status=resolved', { key: member.key });
      expect(list.body.conversations.map((c: { id: string }) => c.id)).toEqual([conversationId]);
    });

    it("hides other members' and other agents' conversations (404; 400 when the body names one)", async () => {
      const member = await newMember(app.deps);
      const a = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['message.send'] });
      const b = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['message.send'] });
      const opened = await open(a.credential.key, { category: 'other', body: 'from agent a' }, V1);
      const id = opened.body.message.conversation_id;
      expect((await api('GET', `/v1/support/conversations/${id}/messages`, { key: b.credential.key })).status).toBe(
        404,
      );
      const hijack = await open(b.credential.key, { conversation_id: id, body: 'hijack' }, V1);
      expect(hijack.status).toBe(400);
      expect(hijack.body.fields).toEqual([
        { path: 'conversation_id', message: 'no support conversation with this id is visible to this key' },
      ]);
      expect(
        (
          await api('POST', `/v1/support/conversations/${id}/messages`, {
            key: b.credential.key,
            headers: V1,
            json: { body: 'hijack' },
          })
        ).status,
      ).toBe(404);
      const stranger = await newMember(app.deps);
      expect((await api('GET', `/v1/support/conversations/${id}/messages`, { key: stranger.key })).status).toBe(404);
      // The member sees its agents' conversations.
      expect((await api('GET', `/v1/support/conversations/${id}/messages`, { key: member.key })).status).toBe(200);
      const list = await api('GET', `/v1/support/conversations?agent_id=${a.agent.id}`, { key: member.key });
      expect(list.body.pagination.total).toBe(1);
    });

    it('limits a member to 3 unresolved tickets (422) and 3 new tickets per rolling 24 hours (429)', async () => {
      const member = await newMember(app.deps);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await open(member.key, { category: 'support', body: `ticket ${i}` });
        expect(r.status).toBe(201);
        ids.push(r.body.message.conversation_id);
      }
      const fourth = await open(member.key, { category: 'support', body: 'ticket 4' });
      expect(fourth.status).toBe(422);
      expect(fourth.body).toMatchObject({ code: 'SUPPORT_ACTIVE_TICKET_LIMIT', retryable: false });
      // Replies do not count.
      expect((await open(member.key, { conversation_id: ids[0], body: 'still there?' })).status).toBe(201);

      await api('POST', `/v1/support/conversations/${ids[0]}/resolve`, { key: member.key });
      const daily = await open(member.key, { category: 'support', body: 'ticket 4 again' });
      expect(daily.status).toBe(429);
      expect(daily.body).toMatchObject({ code: 'SUPPORT_TICKET_RATE_LIMITED', retryable: true });
      const retryAfter = Number(daily.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(23 * 3600);
      expect(retryAfter).toBeLessThanOrEqual(24 * 3600);

      // Once the oldest ticket is more than 24 hours old, a new one may be opened.
      await app.deps.db.query(
        `UPDATE support_conversations SET created_at = now() - interval '25 hours' WHERE id = $1`,
        [ids[0]],
      );
      expect((await open(member.key, { category: 'support', body: 'ticket 4 at last' })).status).toBe(201);
    });

    it('lets concurrent openings pass the limit only as far as it allows', async () => {
      const member = await newMember(app.deps);
      const results = await Promise.all(
        [0, 1, 2, 3, 4].map((i) => open(member.key, { category: 'feature', body: `idea ${i}` })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 422, 422]);
    });

    it('lets the support team answer and resolve from the operator CLI', async () => {
      const member = await newMember(app.deps);
      const opened = await open(member.key, { category: 'account', body: 'Please close my test agent.' });
      const root = path.resolve(__dirname, '..', '..');
      const { stdout } = await promisify(execFile)(
        path.join(root, 'node_modules', '.bin', 'tsx'),
        [
          path.join(root, 'scripts', 'admin.ts'),
          'support:answer',
          '--case',
          opened.body.message.support_case_id,
          '--body',
          'Done.',
          '--resolve',
          '--json',
        ],
        { cwd: root, env: { ...process.env, LOG_LEVEL: 'silent' }, timeout: 60_000 },
      );
      expect(JSON.parse(stdout).message).toMatchObject({ author_type: 'support', status: 'resolved', body: 'Done.' });
      const read = await api('GET', `/v1/support/conversations/${opened.body.message.conversation_id}/messages`, {
        key: member.key,
      });
      expect(read.body.conversation).toMatchObject({ status: 'resolved', message_count: 2 });
    });

    it('replays an Idempotency-Key without a second ticket', async () => {
      const member = await newMember(app.deps);
      const headers = { 'idempotency-key': 'support-1' };
      const a = await open(member.key, { category: 'support', body: 'once' }, headers);
      const b = await open(member.key, { category: 'support', body: 'once' }, headers);
      expect(b.status).toBe(201);
      expect(b.body.message.id).toBe(a.body.message.id);
      expect(b.headers.get('idempotent-replayed')).toBe('true');
    });
  });

  describe('facility messages', () => {
    it("carries a conversation between a member's agent and the facility that fulfils its mail", async () => {
      // The conversation goes to the facility that fulfils the member's mail (services/operations/facilities
      // assignFacility). Other test files create and reorder facilities in the same database at
      // the same time, so the test follows the addressee and gives that facility a key of its own.
      await createFacility(app.deps, 'Messages Facility');
      const member = await newMember(app.deps);
      const { credential } = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['message.send'] });

      const sent = await api('POST', '/v1/facility-messages', {
        key: credential.key,
        headers: V1,
        json: { body: 'Please fold in thirds.', subject: 'Folding' },
      });
      expect(sent.status).toBe(201);
      expect(sent.body.conversation).toMatchObject({
        subject: 'Folding',
        facility_id: expect.any(String),
        message_count: 1,
        test_mode: false,
      });
      const facility = { facility_id: sent.body.conversation.facility_id as string, key: generateKey('facility') };
      const [active] = await app.deps.db.query(`SELECT status FROM facilities WHERE id = $1`, [facility.facility_id]);
      expect(active.status).toBe('active');
      await app.deps.db.query(`INSERT INTO facility_keys (facility_id, key_hash, key_prefix) VALUES ($1, $2, $3)`, [
        facility.facility_id,
        hashKey(facility.key),
        keyPrefixOf(facility.key),
      ]);
      const conversationId = sent.body.conversation.id;

      const inbox = await api('GET', '/v1/facility/conversations', { key: facility.key });
      expect(inbox.status).toBe(200);
      expect(inbox.body.conversations.find((c: { id: string }) => c.id === conversationId)).toMatchObject({
        member_id: member.member_id,
      });
      const answer = await api('POST', `/v1/facility/conversations/${conversationId}/messages`, {
        key: facility.key,
        json: { body: 'Will do.' },
      });
      expect(answer.status).toBe(201);

      const read = await api('GET', `/v1/facility-messages/conversations/${conversationId}/messages?limit=1&offset=1`, {
        key: credential.key,
      });
      expect(read.body.messages).toEqual([
        expect.objectContaining({ sender_type: 'facility', facility_id: facility.facility_id, body: 'Will do.' }),
      ]);
      expect(read.body.pagination).toEqual({ total: 2, limit: 1, offset: 1, has_more: false });

      // Member and agent keys cannot use the facility side, and facility keys not the member side.
      expect((await api('GET', '/v1/facility/conversations', { key: member.key })).status).toBe(403);
      expect((await api('GET', '/v1/facility-messages/conversations', { key: facility.key })).status).toBe(403);
    });

    it('keeps sandbox conversations away from facilities and pages at most 100', async () => {
      const facility = await createFacility(app.deps, 'Sandbox-blind Facility');
      const member = await newMember(app.deps);
      const { credential } = await newAgentWithKey(app.baseUrl, member.key, {
        environment: 'test',
        scopes: ['message.send'],
      });
      const sent = await api('POST', '/v1/facility-messages', {
        key: credential.key,
        headers: V1,
        json: { body: 'sandbox question' },
      });
      expect(sent.body.conversation).toMatchObject({ facility_id: null, test_mode: true });
      const seen = await api('GET', `/v1/facility/conversations/${sent.body.conversation.id}/messages`, {
        key: facility.key,
      });
      expect(seen.status).toBe(404);
      // Live keys do not see sandbox conversations either.
      const live = await api('GET', '/v1/facility-messages/conversations', { key: member.key });
      expect(live.body.pagination.total).toBe(0);
      expect((await api('GET', '/v1/facility-messages/conversations?limit=101', { key: member.key })).status).toBe(400);
    });
  });
});
