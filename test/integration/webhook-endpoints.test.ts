// Custom webhook endpoints end to end: creation rules, verification, Standard Webhooks
// signatures checked with the independent `standardwebhooks` package (both signatures
// during a rotation), environment/scope/subscription routing, pausing after five failed
// attempts, replay after re-verification, rules and inbound.rule_matched.
import { Webhook } from 'standardwebhooks';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { publishEvent, DomainEvent } from '../../services/webhooks/events';
import { authenticate } from '../../services/accounts/auth';
import { createWebhookEndpoint, updateWebhookEndpoint } from '../../services/webhooks/endpoints';
import { emitRuleMatches } from '../../services/webhooks/rules';
import { checkWebhookTarget, sendWebhook } from '../../services/webhooks/http';
import {
  answerChallenges,
  MD,
  newAgentKey,
  newAgentRow,
  newMemberTestKey,
  Received,
  startReceiver,
  until,
} from './webhook-helpers';

jest.setTimeout(120_000);

let app: TestApp;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_RETRY_BASE_MS: '50' } });
  api = client(app.baseUrl);
});
afterAll(async () => {
  await app.close();
});

let seq = 0;
function event(memberId: string, agentId: string | null, over: Partial<DomainEvent> = {}): DomainEvent {
  const id = `obj-${Date.now()}-${seq++}`;
  const eventType = over.eventType ?? 'mail.submitted';
  return {
    eventKey: `test:${id}`,
    memberId,
    agentId,
    eventType,
    testMode: false,
    objectType: 'outbound_mail',
    objectId: id,
    payload: { event_type: eventType, outbound_mail_id: id, agent_id: agentId },
    ...over,
  };
}

function verified(secret: string, r: Received) {
  return new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Record<string, any>;
}

async function createEndpoint(
  key: string,
  url: string,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const res = await api('POST', '/v1/webhook-endpoints', {
    key,
    headers,
    json: { name: 'Hook', url, event_types: ['*'], ...body },
  });
  if (res.status !== 201) throw new Error(`create failed ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { endpoint: any; secret: string };
}

async function activeEndpoint(key: string, url: string, body: Record<string, unknown> = {}) {
  const created = await createEndpoint(key, url, body);
  const verify = await api('POST', `/v1/webhook-endpoints/${created.endpoint.id}/verify`, { key });
  expect(verify.body).toMatchObject({ verified: true });
  return created;
}

describe('creating endpoints', () => {
  it('creates a pending endpoint, shows the whsec_ secret once and stores it encrypted', async () => {
    const member = await newMember(app.deps);
    const { endpoint, secret } = await createEndpoint(member.key, 'http://127.0.0.1:9/hook', {
      event_types: ['mail.*', 'inbound.rule_matched'],
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    expect(endpoint).toMatchObject({
      status: 'pending',
      environment: 'live',
      scope: 'account',
      agent_id: null,
      secret_prefix: secret.slice(0, 12),
      rules: [],
    });
    const read = await api('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key: member.key });
    expect(JSON.stringify(read.body)).not.toContain(secret);
    const [row] = await app.deps.db.query(`SELECT secret_enc FROM webhook_endpoints WHERE id = $1`, [endpoint.id]);
    expect(row.secret_enc).not.toContain(secret.slice(6));
  });

  it('refuses private, loopback, link-local and metadata URLs and private DNS answers in production mode', async () => {
    const member = await newMember(app.deps);
    const auth = await authenticate(app.deps, `Bearer ${member.key}`);
    const production = { ...app.deps, config: { ...app.deps.config, webhooksAllowInsecureLocal: false } };
    const input = { name: 'x', event_types: ['*'] };
    for (const url of [
      'https://127.0.0.1/h',
      'https://10.0.0.1/h',
      'https://169.254.169.254/latest',
      'https://[::1]/h',
      'https://localhost/h',
      'http://hooks.example.com/h',
      'https://hooks.example.com:8443/h',
    ]) {
      await expect(createWebhookEndpoint(production, auth, { ...input, url })).rejects.toMatchObject({ status: 400 });
    }
    const privateDns = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.1.1.1', family: 4 },
    ];
    await expect(
      createWebhookEndpoint(production, auth, { ...input, url: 'https://rebind.example.com/h' }, privateDns),
    ).rejects.toMatchObject({
      status: 400,
      options: { fields: [{ path: 'url', message: expect.stringMatching(/private/) }] },
    });
    const created = await createWebhookEndpoint(
      production,
      auth,
      { ...input, url: 'https://hooks.example.com/h' },
      async () => [{ address: '93.184.216.34', family: 4 }],
    );
    await expect(
      updateWebhookEndpoint(production, auth, created.endpoint.id, { url: 'https://[fd00:ec2::254]/h' }),
    ).rejects.toMatchObject({ status: 400 });

    // At delivery time too: the host is resolved again and private answers are refused before connecting.
    const sent = await sendWebhook({
      url: 'https://hooks.example.com/h',
      headers: {},
      body: '{}',
      kind: 'endpoint',
      allowInsecureLocal: false,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    expect(sent).toMatchObject({ ok: false, statusCode: null });
    expect(sent.error).toMatch(/^address_refused/);
    expect((await checkWebhookTarget('https://[::1]/h', 'endpoint', false)).error).toMatch(/^url_refused/);
  });

  it('allows 3 endpoints per environment, keeps environment and scope fixed, and scopes agent keys to their agent', async () => {
    const member = await newMember(app.deps);
    const testKey = await newMemberTestKey(app.deps, member.member_id);
    for (let i = 0; i < 3; i++) await createEndpoint(member.key, 'http://127.0.0.1:9/h');
    const fourth = await api('POST', '/v1/webhook-endpoints', {
      key: member.key,
      json: { name: 'x', url: 'http://127.0.0.1:9/h', event_types: ['*'] },
    });
    expect(fourth.status).toBe(422);
    expect(fourth.body.code).toBe('WEBHOOK_ENDPOINT_LIMIT');
    // An endpoint's environment is its key's: sandbox endpoints are created (and managed) with test keys.
    const sandbox = await createEndpoint(testKey, 'http://127.0.0.1:9/h', { environment: 'sandbox' });
    expect(sandbox.endpoint.environment).toBe('sandbox');
    const fromLive = await api('POST', '/v1/webhook-endpoints', {
      key: member.key,
      json: { name: 'x', url: 'http://127.0.0.1:9/h', event_types: ['*'], environment: 'sandbox' },
    });
    expect(fromLive.status).toBe(403);
    expect(fromLive.body.reason).toBe('test_key_required');
    expect((await api('GET', `/v1/webhook-endpoints/${sandbox.endpoint.id}`, { key: member.key })).status).toBe(404);

    const patch = await api('PATCH', `/v1/webhook-endpoints/${sandbox.endpoint.id}`, {
      key: testKey,
      json: { environment: 'live' },
    });
    expect(patch.status).toBe(400);
    expect(patch.body.fields[0]).toMatchObject({ path: 'environment', message: 'environment is fixed at creation' });
    const badType = await api('POST', '/v1/webhook-endpoints', {
      key: testKey,
      json: {
        name: 'x',
        url: 'http://127.0.0.1:9/h',
        event_types: ['mail.ready', 'mail.lost'],
        environment: 'sandbox',
      },
    });
    expect(badType.status).toBe(400);
    expect(badType.body.fields[0].path).toBe('event_types.1');

    const agentId = await newAgentRow(app.deps, member.member_id);
    const agentKey = await newAgentKey(app.deps, member.member_id, agentId, 'test', ['webhook.manage', 'webhook.read']);
    const noVersion = await api('POST', '/v1/webhook-endpoints', {
      key: agentKey,
      json: { name: 'a', url: 'http://127.0.0.1:9/h', event_types: ['*'], environment: 'sandbox' },
    });
    expect(noVersion.status).toBe(400);
    const mine = await createEndpoint(agentKey, 'http://127.0.0.1:9/h', { environment: 'sandbox' }, MD);
    expect(mine.endpoint).toMatchObject({ scope: 'agent', agent_id: agentId });
    const listed = await api('GET', '/v1/webhook-endpoints', { key: agentKey });
    expect(listed.body.endpoints.map((e: { id: string }) => e.id)).toEqual([mine.endpoint.id]);
    expect((await api('GET', `/v1/webhook-endpoints/${sandbox.endpoint.id}`, { key: agentKey })).status).toBe(404);

    const live = await api('POST', '/v1/webhook-endpoints', {
      key: testKey,
      json: { name: 'x', url: 'http://127.0.0.1:9/h', event_types: ['*'], environment: 'live' },
    });
    expect(live.status).toBe(403);
    expect(live.body.reason).toBe('live_key_required');
    const testList = await api('GET', '/v1/webhook-endpoints', { key: testKey });
    expect(testList.body.endpoints.every((e: { environment: string }) => e.environment === 'sandbox')).toBe(true);
    expect(
      (
        await api(
          'GET',
          `/v1/webhook-endpoints/${(await api('GET', '/v1/webhook-endpoints?environment=live', { key: member.key })).body.endpoints[0].id}`,
          { key: testKey },
        )
      ).status,
    ).toBe(404);
  });
});

describe('verification', () => {
  it('activates on the echoed challenge, uses a new challenge each time, and a URL change pauses until verified again', async () => {
    const receiver = await startReceiver(() => ({ status: 200, body: '{"challenge":"wrong"}' }));
    try {
      const member = await newMember(app.deps);
      const { endpoint, secret } = await createEndpoint(member.key, receiver.url);
      const failed = await api('POST', `/v1/webhook-endpoints/${endpoint.id}/verify`, { key: member.key });
      expect(failed.body).toMatchObject({ verified: false, status_code: 200, endpoint: { status: 'pending' } });
      expect(failed.body.error).toMatch(/^challenge_mismatch/);

      receiver.setReply(answerChallenges);
      const ok = await api('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key: member.key });
      expect(ok.body).toMatchObject({
        verification: true,
        verified: true,
        endpoint: { status: 'active', verified_at: expect.any(String) },
      });
      const [first, second] = receiver.received.map((r) => verified(secret, r));
      expect(first).toMatchObject({
        schema_version: 1,
        event_type: 'webhook.endpoint_verification',
        environment: 'live',
        data: { endpoint_id: endpoint.id },
      });
      expect(first.data.challenge).not.toBe(second.data.challenge);
      expect(receiver.received[0].headers['webhook-id']).toBe(first.event_id);

      const ping = await api('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key: member.key });
      expect(ping.body).toMatchObject({ verification: false, delivered: true });
      expect(verified(secret, receiver.received[2])).toMatchObject({
        event_type: 'webhook.test',
        data: { sample: true },
      });

      const sample = await api('POST', `/v1/webhook-endpoints/${endpoint.id}/test-sample`, {
        key: member.key,
        json: { event_type: 'inbound.context_ready' },
      });
      expect(sample.body.delivered).toBe(true);
      expect(verified(secret, receiver.received[3])).toMatchObject({
        event_type: 'inbound.context_ready',
        data: { sample: true, ocr_status: 'ready', item_id: expect.any(String) },
      });

      const moved = await api('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, {
        key: member.key,
        json: { url: receiver.url + '?v=2' },
      });
      expect(moved.body.endpoint).toMatchObject({ status: 'paused', paused_reason: 'url_changed' });
      const notActive = await api('POST', `/v1/webhook-endpoints/${endpoint.id}/test-sample`, {
        key: member.key,
        json: { event_type: 'mail.ready' },
      });
      expect(notActive.status).toBe(409);
      await publishEvent(app.deps, event(member.member_id, null));
      const again = await api('POST', `/v1/webhook-endpoints/${endpoint.id}/verify`, { key: member.key });
      expect(again.body.endpoint).toMatchObject({ status: 'active', paused_reason: null });
      // The event published while paused was not queued for the endpoint (no backfill).
      const deliveries = await api('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?status=delivered`, {
        key: member.key,
      });
      expect(deliveries.body.deliveries.map((d: { event_type: string }) => d.event_type).sort()).toEqual([
        'inbound.context_ready',
        'webhook.endpoint_verification',
        'webhook.endpoint_verification',
        'webhook.test',
      ]);
    } finally {
      await receiver.close();
    }
  });
});

describe('event routing and signatures', () => {
  it('wraps events in the envelope and routes by environment, scope and subscription', async () => {
    const receiver = await startReceiver(answerChallenges);
    try {
      const member = await newMember(app.deps);
      const agentA = await newAgentRow(app.deps, member.member_id);
      const agentB = await newAgentRow(app.deps, member.member_id);
      const live = await activeEndpoint(member.key, receiver.url + '?ep=live', { event_types: ['mail.*'] });
      const scoped = await activeEndpoint(member.key, receiver.url + '?ep=scoped', {
        agent_id: agentA,
        event_types: ['batch.completed'],
      });
      const sandbox = await activeEndpoint(
        await newMemberTestKey(app.deps, member.member_id),
        receiver.url + '?ep=sandbox',
        { environment: 'sandbox', event_types: ['*'] },
      );
      const before = receiver.received.length;

      const mail = await publishEvent(app.deps, event(member.member_id, agentB, { eventType: 'mail.mailed' }));
      await publishEvent(
        app.deps,
        event(member.member_id, agentB, { eventType: 'batch.completed', objectType: 'batch' }),
      );
      const batchA = await publishEvent(
        app.deps,
        event(member.member_id, agentA, { eventType: 'batch.completed', objectType: 'batch' }),
      );
      const sandboxEvent = await publishEvent(
        app.deps,
        event(member.member_id, agentA, { eventType: 'mail.ready', testMode: true }),
      );
      const got = (await receiver.waitFor(before + 3)).slice(before);
      await new Promise((r) => setTimeout(r, 1000));
      expect(receiver.received).toHaveLength(before + 3);

      const byEndpoint = (id: string) => got.filter((r) => r.headers['webhook-id'] && deliveredTo(id, r));
      const deliveredTo = (id: string, r: Received) => {
        const secret =
          id === live.endpoint.id ? live.secret : id === scoped.endpoint.id ? scoped.secret : sandbox.secret;
        try {
          verified(secret, r);
          return true;
        } catch {
          return false;
        }
      };
      const [liveGot] = byEndpoint(live.endpoint.id);
      expect(verified(live.secret, liveGot)).toEqual({
        schema_version: 1,
        event_id: mail.id,
        event_type: 'mail.mailed',
        created_at: expect.any(String),
        environment: 'live',
        data: expect.objectContaining({ event_type: 'mail.mailed', agent_id: agentB }),
      });
      expect(liveGot.headers['webhook-id']).toBe(mail.id);
      expect(Number(liveGot.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);
      expect(byEndpoint(scoped.endpoint.id).map((r) => verified(scoped.secret, r).event_id)).toEqual([batchA.id]);
      expect(byEndpoint(sandbox.endpoint.id).map((r) => verified(sandbox.secret, r))).toEqual([
        expect.objectContaining({ event_id: sandboxEvent.id, environment: 'test' }),
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('during a secret rotation signs with both secrets for the window', async () => {
    const receiver = await startReceiver(answerChallenges);
    try {
      const member = await newMember(app.deps);
      const { endpoint, secret: oldSecret } = await activeEndpoint(member.key, receiver.url);
      const rotated = await api('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { key: member.key });
      expect(rotated.status).toBe(200);
      const newSecret: string = rotated.body.secret;
      expect(newSecret).toMatch(/^whsec_/);
      expect(newSecret).not.toBe(oldSecret);
      expect(rotated.body.endpoint.secret_rotation.previous_secret_expires_at).toEqual(expect.any(String));
      const hoursLeft =
        (Date.parse(rotated.body.endpoint.secret_rotation.previous_secret_expires_at) - Date.now()) / 3600_000;
      expect(hoursLeft).toBeGreaterThan(23);

      const before = receiver.received.length;
      await publishEvent(app.deps, event(member.member_id, null));
      const [r] = (await receiver.waitFor(before + 1)).slice(before);
      expect((r.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
      expect(verified(newSecret, r).event_type).toBe('mail.submitted');
      expect(verified(oldSecret, r).event_type).toBe('mail.submitted');

      // After the window only the new secret signs.
      await app.deps.db.query(
        `UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`,
        [endpoint.id],
      );
      await publishEvent(app.deps, event(member.member_id, null));
      const [after] = (await receiver.waitFor(before + 2)).slice(before + 1);
      expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
      expect(verified(newSecret, after).event_type).toBe('mail.submitted');
      expect(() => verified(oldSecret, after)).toThrow();
    } finally {
      await receiver.close();
    }
  });
});

describe('failures, pausing and replay', () => {
  it('pauses the endpoint after five failed attempts; after re-verification a replay delivers with a new timestamp and signature', async () => {
    let down = false;
    const receiver = await startReceiver((r) => {
      if (JSON.parse(r.body).event_type === 'webhook.endpoint_verification') return answerChallenges(r, 0);
      return down ? { status: 502, body: 'bad gateway' } : { status: 204 };
    });
    try {
      const member = await newMember(app.deps);
      const { endpoint, secret } = await activeEndpoint(member.key, receiver.url);
      down = true;
      const published = await publishEvent(app.deps, event(member.member_id, null));
      const [delivery] = await until(
        () => app.deps.db.query(`SELECT * FROM webhook_deliveries WHERE event_id = $1`, [published.id]),
        (rows) => rows[0]?.status === 'failed',
      );
      const ep = await api('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key: member.key });
      expect(ep.body.endpoint).toMatchObject({
        status: 'paused',
        paused_reason: 'consecutive_failures',
        consecutive_failures: 5,
      });
      const detail = await api('GET', `/v1/webhook-deliveries/${delivery.id}`, { key: member.key });
      expect(detail.body.delivery).toMatchObject({ status: 'failed', attempts_count: 5 });
      expect(detail.body.delivery.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([
        502, 502, 502, 502, 502,
      ]);
      expect(detail.body.delivery.last_error).toMatch(/paused/);

      // Events while paused are not queued for the endpoint.
      await publishEvent(app.deps, event(member.member_id, null));
      const early = await api('POST', `/v1/webhook-deliveries/${delivery.id}/replay`, { key: member.key });
      expect(early.status).toBe(409);
      expect(early.body.code).toBe('WEBHOOK_ENDPOINT_NOT_ACTIVE');

      down = false;
      const reverified = await api('POST', `/v1/webhook-endpoints/${endpoint.id}/verify`, { key: member.key });
      expect(reverified.body.endpoint).toMatchObject({ status: 'active', consecutive_failures: 0 });
      const failedAttempts = receiver.received.filter((r) => r.headers['webhook-id'] === published.id);
      expect(failedAttempts).toHaveLength(5);
      await new Promise((r) => setTimeout(r, 1100)); // so the replay's timestamp is a new second

      const replay = await api('POST', `/v1/webhook-deliveries/${delivery.id}/replay`, { key: member.key });
      expect(replay.status).toBe(202);
      expect(replay.body.delivery).toMatchObject({ status: 'queued', replays: 1 });
      const done = await until(
        () => api('GET', `/v1/webhook-deliveries/${delivery.id}`, { key: member.key }),
        (r) => r.body.delivery?.status === 'delivered',
      );
      expect(
        done.body.delivery.attempts.map((a: { series: number; status_code: number }) => [a.series, a.status_code]),
      ).toEqual([
        [0, 502],
        [0, 502],
        [0, 502],
        [0, 502],
        [0, 502],
        [1, 204],
      ]);
      const replayed = receiver.received.filter((r) => r.headers['webhook-id'] === published.id);
      expect(replayed).toHaveLength(6);
      const last = replayed[5];
      expect(verified(secret, last).event_id).toBe(published.id);
      expect(Number(last.headers['webhook-timestamp'])).toBeGreaterThan(
        Number(failedAttempts[4].headers['webhook-timestamp']),
      );
      expect(last.headers['webhook-signature']).not.toBe(failedAttempts[4].headers['webhook-signature']);

      const twice = await api('POST', `/v1/webhook-deliveries/${delivery.id}/replay`, { key: member.key });
      expect(twice.status).toBe(409);
      expect(twice.body.code).toBe('WEBHOOK_DELIVERY_NOT_REPLAYABLE');
      const log = await api('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?event_type=mail.submitted`, {
        key: member.key,
      });
      expect(log.body.deliveries).toEqual([
        expect.objectContaining({ id: delivery.id, status: 'delivered', replays: 1 }),
      ]);
    } finally {
      await receiver.close();
    }
  });
});

describe('internal failures', () => {
  it('ends the series as failed (not stuck processing) when the attempt itself cannot run', async () => {
    const receiver = await startReceiver(answerChallenges);
    try {
      const member = await newMember(app.deps);
      const { endpoint } = await activeEndpoint(member.key, receiver.url);
      await app.deps.db.query(`UPDATE webhook_endpoints SET secret_enc = 'v1.broken.secret.value' WHERE id = $1`, [
        endpoint.id,
      ]);
      const published = await publishEvent(app.deps, event(member.member_id, null));
      const [delivery] = await until(
        () =>
          app.deps.db.query(`SELECT status, last_error FROM webhook_deliveries WHERE event_id = $1`, [published.id]),
        (rows) => rows[0]?.status === 'failed',
        60_000,
      );
      expect(delivery.last_error).toMatch(/^internal_error/);
      expect(receiver.received.filter((r) => r.headers['webhook-id'] === published.id)).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });
});

describe('rules', () => {
  it('manages up to 10 rules and sends inbound.rule_matched once per item and rule, only to the owning endpoint', async () => {
    const receiver = await startReceiver(answerChallenges);
    try {
      const member = await newMember(app.deps);
      const agentId = await newAgentRow(app.deps, member.member_id);
      const owner = await activeEndpoint(member.key, receiver.url + '?ep=owner', {
        event_types: ['mail.*'],
        rules: [
          {
            name: 'IRS notices',
            source: 'any',
            match: 'all',
            terms: ['ＩＲＳ', 'final notice'],
            exclude_terms: ['sample'],
          },
        ],
      });
      const other = await activeEndpoint(member.key, receiver.url + '?ep=other', { event_types: ['inbound.*'] });
      const [rule] = owner.endpoint.rules;
      expect(rule).toMatchObject({
        name: 'IRS notices',
        source: 'any',
        match: 'all',
        terms: ['ＩＲＳ', 'final notice'],
        exclude_terms: ['sample'],
      });

      const bad = await api('POST', `/v1/webhook-endpoints/${owner.endpoint.id}/rules`, {
        key: member.key,
        json: { name: 'x', terms: ['ok', '  '] },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.fields[0].path).toBe('terms.1');
      // A term of a zero-width space (or name of one) shows nothing and can never be matched.
      const invisible = await api('POST', `/v1/webhook-endpoints/${owner.endpoint.id}/rules`, {
        key: member.key,
        json: { name: '\u2060', terms: ['\u200B'], exclude_terms: ['\uFEFF\u200D'] },
      });
      expect(invisible.status).toBe(400);
      expect(invisible.body.fields).toEqual(
        ['name', 'terms.0', 'exclude_terms.0'].map((path) => ({ path, message: 'must contain a visible character' })),
      );
      for (let i = 0; i < 9; i++) {
        const created = await api('POST', `/v1/webhook-endpoints/${owner.endpoint.id}/rules`, {
          key: member.key,
          json: { name: `r${i}`, source: 'letter', terms: [`zz-never-${i}`] },
        });
        expect(created.status).toBe(201);
      }
      const eleventh = await api('POST', `/v1/webhook-endpoints/${owner.endpoint.id}/rules`, {
        key: member.key,
        json: { name: 'r10', terms: ['x'] },
      });
      expect(eleventh.status).toBe(422);
      expect(eleventh.body.code).toBe('WEBHOOK_RULE_LIMIT');
      const renamed = await api('PATCH', `/v1/webhook-endpoints/${owner.endpoint.id}/rules/${rule.id}`, {
        key: member.key,
        json: { name: 'IRS final notices' },
      });
      expect(renamed.body.rule).toMatchObject({ name: 'IRS final notices', match: 'all' });
      const listed = await api('GET', `/v1/webhook-endpoints/${owner.endpoint.id}/rules`, { key: member.key });
      expect(listed.body.rules).toHaveLength(10);
      const removed = await api(
        'DELETE',
        `/v1/webhook-endpoints/${owner.endpoint.id}/rules/${listed.body.rules[9].id}`,
        { key: member.key },
      );
      expect(removed.body).toMatchObject({ deleted: true });

      const itemId = '00000000-0000-4000-8000-000000000001';
      const input = {
        memberId: member.member_id,
        agentId,
        itemId,
        environment: 'live' as const,
        sourceDomain: 'internal_team',
        pages: [
          { pageId: 'p1', sourceKind: 'physical' as const, ocrStatus: 'ready' as const, text: 'Department of the IRS' },
          {
            pageId: 'p2',
            sourceKind: 'physical' as const,
            ocrStatus: 'ready' as const,
            text: 'FINAL   Notice of intent',
          },
        ],
      };
      const pending = await emitRuleMatches(app.deps, {
        ...input,
        pages: [input.pages[0], { ...input.pages[1], ocrStatus: 'pending', text: null }],
      });
      expect(pending).toEqual([]);
      const before = receiver.received.length;
      const first = await emitRuleMatches(app.deps, input);
      const second = await emitRuleMatches(app.deps, input);
      expect(first).toHaveLength(1);
      expect(second).toEqual(first);
      const [r] = (await receiver.waitFor(before + 1)).slice(before);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(receiver.received).toHaveLength(before + 1);
      expect(verified(owner.secret, r)).toEqual({
        schema_version: 1,
        event_id: first[0],
        event_type: 'inbound.rule_matched',
        created_at: expect.any(String),
        environment: 'live',
        data: {
          item_id: itemId,
          agent_id: agentId,
          source_domain: 'internal_team',
          ocr_status: 'ready',
          rule_id: rule.id,
          rule_name: 'IRS final notices',
          endpoint_id: owner.endpoint.id,
        },
      });
      expect(() => verified(other.secret, r)).toThrow();

      const excluded = await emitRuleMatches(app.deps, {
        ...input,
        itemId: '00000000-0000-4000-8000-000000000002',
        pages: [
          ...input.pages,
          { pageId: 'p3', sourceKind: 'physical' as const, ocrStatus: 'ready' as const, text: 'SAMPLE' },
        ],
      });
      expect(excluded).toEqual([]);
      const sandbox = await emitRuleMatches(app.deps, {
        ...input,
        itemId: '00000000-0000-4000-8000-000000000003',
        environment: 'test',
      });
      expect(sandbox).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('deleting an endpoint removes it with its rules and history', async () => {
    const member = await newMember(app.deps);
    const { endpoint } = await createEndpoint(member.key, 'http://127.0.0.1:9/h', {
      rules: [{ name: 'r', terms: ['x'] }],
    });
    const deleted = await api('DELETE', `/v1/webhook-endpoints/${endpoint.id}`, { key: member.key });
    expect(deleted.body).toMatchObject({ id: endpoint.id, deleted: true });
    expect((await api('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key: member.key })).status).toBe(404);
    expect(
      await app.deps.db.query(`SELECT 1 FROM webhook_endpoint_rules WHERE endpoint_id = $1`, [endpoint.id]),
    ).toEqual([]);
  });
});
