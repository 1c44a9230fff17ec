// Legacy agent webhooks end to end: settings, signed deliveries (checked with an
// independent HMAC), retries, the event log, test deliveries, idempotent fan-out,
// deadlines, response limits and the 30-day clean-up.
import { createHmac } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { fanOut, publishEvent, recordEvent, DomainEvent } from '../../services/webhooks/events';
import { updateWebhookSettings } from '../../services/webhooks/agent-webhooks';
import { authenticate } from '../../services/accounts/auth';
import { ApiError } from '../../domain/shared/errors';
import { WEBHOOK_HISTORY_CLEANUP_WORKFLOW } from '../../workflows/operations/contracts';
import { RECONCILE_WEBHOOK_DISPATCH_WORKFLOW, webhookDispatchWorkflowId } from '../../workflows/webhooks/contracts';
import { ensureWebhookCleanupSchedule } from '../../services/webhooks/maintenance';
import { MD, newAgentKey, newAgentRow, newMemberTestKey, startReceiver, until } from './webhook-helpers';

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
function mailEvent(memberId: string, agentId: string, over: Partial<DomainEvent> = {}): DomainEvent {
  const id = `m-${Date.now()}-${seq++}`;
  return {
    eventKey: `test:${id}`,
    memberId,
    agentId,
    eventType: 'mail.submitted',
    testMode: false,
    objectType: 'outbound_mail',
    objectId: id,
    payload: {
      event_type: over.eventType ?? 'mail.submitted',
      outbound_mail_id: id,
      agent_id: agentId,
      status: 'submitted',
      test_mode: false,
    },
    ...over,
  };
}

/** Verifies X-Service-Signature the way a receiver would, with node:crypto only. */
function verifyLegacy(header: string, body: string, signingKey: string, keyId: string) {
  const m = /^(whsk_[0-9a-f]+):t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  expect(m).not.toBeNull();
  expect(m![1]).toBe(keyId);
  const secret = signingKey.slice('whsk_'.length);
  expect(secret).toHaveLength(64);
  const expected = createHmac('sha256', secret).update(`${m![2]}.${body}`).digest('hex');
  expect(m![3]).toBe(expected);
  expect(Math.abs(Number(m![2]) - Date.now() / 1000)).toBeLessThan(300);
  return Number(m![2]);
}

async function setup() {
  const member = await newMember(app.deps);
  const agentId = await newAgentRow(app.deps, member.member_id);
  return { member, agentId };
}

async function configure(memberKey: string, agentId: string, url: string, extra: Record<string, unknown> = {}) {
  const res = await api('PUT', '/v1/webhooks/settings', {
    key: memberKey,
    json: { agent_id: agentId, webhook_url: url, ...extra },
  });
  expect(res.status).toBe(200);
  return res.body;
}

describe('PUT /v1/webhooks/settings', () => {
  it('returns the signing key once, encrypts secrets at rest, and keeps fields not sent', async () => {
    const { member, agentId } = await setup();
    const first = await configure(member.key, agentId, 'http://127.0.0.1:9/hook', {
      event_types: ['mail.*'],
      auth_type: 'bearer',
      auth_token: 'receiver-token-1',
    });
    expect(first.webhook_signing_key).toMatch(/^whsk_[0-9a-f]{64}$/);
    expect(first.signing_key_id).toMatch(/^whsk_[0-9a-f]{16}$/);
    expect(first).toMatchObject({
      agent_id: agentId,
      enabled: true,
      event_types: ['mail.*'],
      auth_type: 'bearer',
      auth_token_set: true,
      payload_format: 'standard',
    });
    expect(JSON.stringify(first)).not.toContain('receiver-token-1');

    const second = await api('PUT', '/v1/webhooks/settings', {
      key: member.key,
      json: { agent_id: agentId, payload_format: 'wrapped' },
    });
    expect(second.status).toBe(200);
    expect(second.body.webhook_signing_key).toBeUndefined();
    expect(second.body).toMatchObject({
      event_types: ['mail.*'],
      auth_type: 'bearer',
      payload_format: 'wrapped',
      signing_key_id: first.signing_key_id,
    });

    const [row] = await app.deps.db.query(
      `SELECT webhook_signing_secret_enc, webhook_auth_token_enc FROM agents WHERE id = $1`,
      [agentId],
    );
    expect(row.webhook_signing_secret_enc).not.toContain(first.webhook_signing_key.slice(5));
    expect(row.webhook_auth_token_enc).not.toContain('receiver-token-1');

    const rotated = await api('PUT', '/v1/webhooks/settings', {
      key: member.key,
      json: { agent_id: agentId, rotate_signing_key: true },
    });
    expect(rotated.body.webhook_signing_key).toMatch(/^whsk_[0-9a-f]{64}$/);
    expect(rotated.body.signing_key_id).not.toBe(first.signing_key_id);
  });

  it('validates input with dot-path fields and changes nothing on refusal', async () => {
    const { member, agentId } = await setup();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ agent_id: agentId, auth_type: 'bearer' }, 'auth_token'],
      [{ agent_id: agentId, auth_type: 'header', auth_token: 'secret-token' }, 'auth_header_name'],
      [{ agent_id: agentId, event_types: ['mail.ready', 'inbound.received'] }, 'event_types.1'],
      [{ agent_id: agentId, auth_header_name: 'Content-Type' }, 'auth_header_name'],
      [{ agent_id: agentId, surprise: true }, 'surprise'],
      [{ webhook_url: 'http://127.0.0.1:9/x' }, 'agent_id'],
    ];
    for (const [json, path] of cases) {
      const res = await api('PUT', '/v1/webhooks/settings', { key: member.key, json });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.fields)).toContain(path);
    }
    const [row] = await app.deps.db.query(`SELECT webhook_url, webhook_auth_type FROM agents WHERE id = $1`, [agentId]);
    expect(row).toEqual({ webhook_url: null, webhook_auth_type: 'hmac' });
  });

  it('needs a live key, webhook.manage for agent keys, and refuses private URLs in production mode', async () => {
    const { member, agentId } = await setup();
    const testKey = await newMemberTestKey(app.deps, member.member_id);
    const refused = await api('PUT', '/v1/webhooks/settings', {
      key: testKey,
      json: { agent_id: agentId, webhook_url: 'http://127.0.0.1:9/x' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.reason).toBe('live_key_required');
    const agentTest = await newAgentKey(app.deps, member.member_id, agentId, 'test', [
      'webhook.manage',
      'webhook.read',
    ]);
    expect((await api('GET', '/v1/webhooks/events', { key: agentTest })).body.reason).toBe('live_key_required');
    const noScope = await newAgentKey(app.deps, member.member_id, agentId, 'live', ['mail.send']);
    const scoped = await api('PUT', '/v1/webhooks/settings', {
      key: noScope,
      headers: MD,
      json: { webhook_url: 'http://127.0.0.1:9/x' },
    });
    expect(scoped.status).toBe(403);
    expect(scoped.body.reason).toBe('insufficient_scope');

    const production = { ...app.deps, config: { ...app.deps.config, webhooksAllowInsecureLocal: false } };
    const auth = await authenticate(app.deps, `Bearer ${member.key}`);
    for (const url of [
      'https://127.0.0.1/x',
      'https://10.0.0.1/x',
      'https://169.254.169.254/x',
      'https://[::1]/x',
      'http://hooks.example.com/x',
    ]) {
      await expect(
        updateWebhookSettings(production, auth, { agent_id: agentId, webhook_url: url }),
      ).rejects.toMatchObject({ status: 400 });
    }
    await expect(
      updateWebhookSettings(
        production,
        auth,
        { agent_id: agentId, webhook_url: 'https://hooks.example.com/x' },
        async () => [{ address: '192.168.0.10', family: 4 }],
      ),
    ).rejects.toBeInstanceOf(ApiError);
    const ok = await updateWebhookSettings(
      production,
      auth,
      { agent_id: agentId, webhook_url: 'https://hooks.example.com:8443/x' },
      async () => [{ address: '93.184.216.34', family: 4 }],
    );
    expect(ok.webhook_url).toBe('https://hooks.example.com:8443/x');
  });
});

describe('legacy deliveries', () => {
  it('signs with X-Service-Signature, retries until the receiver recovers, and logs 5 attempts', async () => {
    const receiver = await startReceiver((_r, n) =>
      n <= 4 ? { status: 500, body: 'down' } : { status: 200, body: 'ok' },
    );
    try {
      const { member, agentId } = await setup();
      const settings = await configure(member.key, agentId, receiver.url);
      const published = await publishEvent(app.deps, mailEvent(member.member_id, agentId));
      const got = await receiver.waitFor(5);
      const timestamps = got.map((r) =>
        verifyLegacy(
          r.headers['x-service-signature'] as string,
          r.body,
          settings.webhook_signing_key,
          settings.signing_key_id,
        ),
      );
      expect(new Set(got.map((r) => r.body)).size).toBe(1);
      expect(JSON.parse(got[4].body)).toMatchObject({ event_type: 'mail.submitted', agent_id: agentId });
      expect(got[4].headers['x-service-event-id']).toBe(published.id);
      expect(timestamps[4]).toBeGreaterThanOrEqual(timestamps[0]);

      const detail = await until(
        () => api('GET', `/v1/webhooks/events/${published.id}`, { key: member.key }),
        (r) => r.body.event?.status === 'delivered',
      );
      expect(detail.body.event.attempts).toHaveLength(5);
      expect(detail.body.event.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([
        500, 500, 500, 500, 200,
      ]);
      expect(detail.body.event.attempts[0]).toMatchObject({
        attempt_number: 1,
        outcome: 'failed',
        error: 'http_500',
        response_body: 'down',
      });
      expect(detail.body.event.attempts[4].response_time_ms).toEqual(expect.any(Number));
      expect(detail.body.event.payload).toMatchObject({ outbound_mail_id: expect.any(String) });

      const list = await api('GET', `/v1/webhooks/events?agent_id=${agentId}&status=delivered`, { key: member.key });
      expect(list.status).toBe(200);
      expect(list.body.events).toEqual([
        expect.objectContaining({
          id: published.id,
          event_type: 'mail.submitted',
          status: 'delivered',
          delivered_at: expect.any(String),
        }),
      ]);
      expect(list.body.pagination).toMatchObject({ total: 1, has_more: false });
      expect((await api('GET', '/v1/webhooks/events?status=failed', { key: member.key })).body.events).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('sends bearer or custom-header auth and the wrapped format, and honours subscriptions and enabled', async () => {
    const receiver = await startReceiver();
    try {
      const { member, agentId } = await setup();
      await configure(member.key, agentId, receiver.url, {
        auth_type: 'header',
        auth_token: 'tok-123456',
        auth_header_name: 'X-Receiver-Token',
        payload_format: 'wrapped',
        event_types: ['mail.mailed', 'batch.*'],
      });
      await publishEvent(app.deps, mailEvent(member.member_id, agentId)); // mail.submitted: not subscribed
      await publishEvent(app.deps, mailEvent(member.member_id, agentId, { eventType: 'mail.mailed' }));
      const [r] = await receiver.waitFor(1);
      expect(r.headers['x-receiver-token']).toBe('tok-123456');
      expect(r.headers['x-service-signature']).toMatch(/^whsk_/);
      const body = JSON.parse(r.body);
      expect(body).toMatchObject({ agentId, deliver: true });
      expect(body.message).toContain('mail.mailed');

      await configure(member.key, agentId, receiver.url, {
        auth_type: 'bearer',
        auth_token: 'bearer-abcdef',
        payload_format: 'standard',
        event_types: ['*'],
      });
      await publishEvent(app.deps, mailEvent(member.member_id, agentId, { eventType: 'mail.ready' }));
      const got = await receiver.waitFor(2);
      expect(got[1].headers.authorization).toBe('Bearer bearer-abcdef');

      await configure(member.key, agentId, receiver.url, { enabled: false });
      await publishEvent(app.deps, mailEvent(member.member_id, agentId, { eventType: 'mail.delivered' }));
      await configure(member.key, agentId, receiver.url, { enabled: true, event_types: [] });
      await publishEvent(app.deps, mailEvent(member.member_id, agentId, { eventType: 'mail.failed' }));
      const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE agent_id = $1`, [
        agentId,
      ]);
      expect(n).toBe(2);
    } finally {
      await receiver.close();
    }
  });

  it('publishing the same event twice (and fanning out again) delivers once', async () => {
    const receiver = await startReceiver();
    try {
      const { member, agentId } = await setup();
      await configure(member.key, agentId, receiver.url);
      const event = mailEvent(member.member_id, agentId);
      const a = await publishEvent(app.deps, event);
      const b = await publishEvent(app.deps, event);
      expect(b).toEqual({ id: a.id, created: false });
      await fanOut(app.deps, a.id);
      await receiver.waitFor(1);
      await until(
        () => app.deps.db.query(`SELECT status FROM webhook_deliveries WHERE event_id = $1`, [a.id]),
        (rows) => rows[0]?.status === 'delivered',
      );
      await fanOut(app.deps, a.id);
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.received).toHaveLength(1);
      const rows = await app.deps.db.query(`SELECT id FROM webhook_deliveries WHERE event_id = $1`, [a.id]);
      expect(rows).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('sandbox events reach the agent webhook signed, with test_mode true', async () => {
    const receiver = await startReceiver();
    try {
      const { member, agentId } = await setup();
      const settings = await configure(member.key, agentId, receiver.url);
      await publishEvent(app.deps, mailEvent(member.member_id, agentId, { testMode: true }));
      const [r] = await receiver.waitFor(1);
      verifyLegacy(
        r.headers['x-service-signature'] as string,
        r.body,
        settings.webhook_signing_key,
        settings.signing_key_id,
      );
      const list = await until(
        () => api('GET', '/v1/webhooks/events', { key: member.key }),
        (res) => res.body.events?.[0]?.status === 'delivered',
      );
      expect(list.body.events[0].test_mode).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  it('counts an 11-second answer as a failed attempt and cuts a 1 MB answer at 4 KiB', async () => {
    const receiver = await startReceiver((_r, n) =>
      n === 1 ? { status: 200, delayMs: 11_000 } : { status: 200, body: 'nul\u0000' + 'x'.repeat(1024 * 1024) },
    );
    try {
      const { member, agentId } = await setup();
      await configure(member.key, agentId, receiver.url);
      const published = await publishEvent(app.deps, mailEvent(member.member_id, agentId));
      const detail = await until(
        () => api('GET', `/v1/webhooks/events/${published.id}`, { key: member.key }),
        (r) => r.body.event?.status === 'delivered',
        60_000,
      );
      const [slow, big] = detail.body.event.attempts;
      expect(slow).toMatchObject({ outcome: 'failed', status_code: null });
      expect(slow.error).toMatch(/^timeout/);
      expect(big).toMatchObject({ outcome: 'delivered', status_code: 200 });
      expect(big.response_body.length).toBeLessThanOrEqual(4096);
      expect(big.response_body.startsWith('nulx')).toBe(true);
    } finally {
      await receiver.close();
    }
  });
});

describe('dispatcher', () => {
  it('sends a burst of 150 events with a handful of wake-up signals, keeps sandbox and live apart, and ends when idle', async () => {
    // The receiver holds its answers until every event is published, so the dispatcher is
    // busy in one pass while the events keep coming.
    let publishedAll: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      publishedAll = resolve;
    });
    const receiver = await startReceiver(async () => {
      await gate;
      return { status: 200, body: 'ok' };
    });
    try {
      const { member, agentId } = await setup();
      await configure(member.key, agentId, receiver.url);
      const live = Array.from({ length: 150 }, () => mailEvent(member.member_id, agentId));
      const sandbox = mailEvent(member.member_id, agentId, { testMode: true });
      for (let i = 0; i < live.length; i += 10)
        await Promise.all(live.slice(i, i + 10).map((e) => publishEvent(app.deps, e)));
      await publishEvent(app.deps, sandbox);
      publishedAll();
      await receiver.waitFor(151);
      await until(
        () =>
          app.deps.db.query(`SELECT status FROM webhook_deliveries WHERE agent_id = $1 AND status <> 'delivered'`, [
            agentId,
          ]),
        (rows) => rows.length === 0,
      );
      expect(new Set(receiver.received.map((r) => r.headers['x-service-event-id'])).size).toBe(151);

      const liveHandle = app.deps.temporal.workflow.getHandle(
        webhookDispatchWorkflowId(app.deps.config.taskQueue, `live:agent:${agentId}`),
      );
      const sandboxHandle = app.deps.temporal.workflow.getHandle(
        webhookDispatchWorkflowId(app.deps.config.taskQueue, `test:agent:${agentId}`),
      );
      // Nothing queued: both dispatchers end by themselves; the live one attempted all 150.
      expect(await liveHandle.result()).toBe(150);
      expect(await sandboxHandle.result()).toBe(1);
      const history = await liveHandle.fetchHistory();
      const signals = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes).length;
      expect(signals).toBeGreaterThanOrEqual(1);
      expect(signals).toBeLessThan(15);
    } finally {
      await receiver.close();
    }
  });
});

describe('request and response limits', () => {
  it('does not follow redirects and keeps request bodies within 64 KiB', async () => {
    const target = await startReceiver();
    const receiver = await startReceiver(() => ({ status: 307, headers: { location: target.url } }));
    try {
      const { member, agentId } = await setup();
      await configure(member.key, agentId, receiver.url);
      const redirected = await api('POST', '/v1/test/webhook', { key: member.key, json: { agent_id: agentId } });
      expect(redirected.body).toMatchObject({ delivered: false, status_code: 307 });
      expect(redirected.body.error).toMatch(/redirects are not followed/);
      expect(target.received).toHaveLength(0);

      receiver.setReply(() => ({ status: 200 }));
      const big = mailEvent(member.member_id, agentId);
      big.payload = {
        ...big.payload,
        callback_url: 'http://127.0.0.1/v1/mail/x',
        metadata: { blob: 'x'.repeat(100_000) },
      };
      await publishEvent(app.deps, big);
      const [, r] = await receiver.waitFor(2);
      expect(Buffer.byteLength(r.body)).toBeLessThanOrEqual(64 * 1024);
      expect(JSON.parse(r.body)).toMatchObject({
        event_type: 'mail.submitted',
        truncated: true,
        callback_url: 'http://127.0.0.1/v1/mail/x',
      });
      expect(JSON.parse(r.body).metadata).toBeUndefined();
    } finally {
      await receiver.close();
      await target.close();
    }
  });
});

describe('POST /v1/test/webhook', () => {
  it('sends a signed synthetic delivery to the agent webhook and returns its result', async () => {
    const receiver = await startReceiver(() => ({ status: 202, body: 'accepted' }));
    try {
      const { member, agentId } = await setup();
      const settings = await configure(member.key, agentId, receiver.url);
      const res = await api('POST', '/v1/test/webhook', { key: member.key, json: { agent_id: agentId } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ delivered: true, status_code: 202, error: null });
      expect(res.body.delivery.attempts).toHaveLength(1);
      const [r] = receiver.received;
      verifyLegacy(
        r.headers['x-service-signature'] as string,
        r.body,
        settings.webhook_signing_key,
        settings.signing_key_id,
      );
      expect(JSON.parse(r.body)).toMatchObject({
        event_type: 'webhook.test',
        sample: true,
        agent_id: agentId,
        test_mode: false,
      });

      const agentTest = await newAgentKey(app.deps, member.member_id, agentId, 'test', ['mail.send']);
      const sample = await api('POST', '/v1/test/webhook', { key: agentTest, json: { event_type: 'mail.mailed' } });
      expect(sample.body.delivered).toBe(true);
      expect(JSON.parse(receiver.received[1].body)).toMatchObject({
        event_type: 'mail.mailed',
        sample: true,
        test_mode: true,
        status: 'mailed',
      });

      receiver.setReply(() => ({ status: 503, body: 'busy' }));
      const failed = await api('POST', '/v1/test/webhook', { key: member.key, json: { agent_id: agentId } });
      expect(failed.body).toMatchObject({ delivered: false, status_code: 503, error: 'http_503' });
      expect(failed.body.delivery.status).toBe('failed');

      const other = await newAgentRow(app.deps, member.member_id);
      const missing = await api('POST', '/v1/test/webhook', { key: member.key, json: { agent_id: other } });
      expect(missing.status).toBe(409);
      expect(missing.body.code).toBe('WEBHOOK_NOT_CONFIGURED');
    } finally {
      await receiver.close();
    }
  });
});

describe('delivery history clean-up', () => {
  it('is scheduled daily, idempotently, on the worker task queue', async () => {
    const id = await ensureWebhookCleanupSchedule(app.deps);
    expect(await ensureWebhookCleanupSchedule(app.deps)).toBe(id);
    const handle = app.deps.temporal.schedule.getHandle(id);
    try {
      const described = await handle.describe();
      expect(described.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: WEBHOOK_HISTORY_CLEANUP_WORKFLOW,
        taskQueue: app.deps.config.taskQueue,
      });
      expect(described.spec.intervals?.[0]?.every).toBe(24 * 3600 * 1000);
    } finally {
      await handle.delete();
    }
  });

  it('wakes the dispatcher of deliveries left waiting by a lost wake-up (a crash between insert and signal)', async () => {
    const receiver = await startReceiver();
    try {
      const { member, agentId } = await setup();
      await configure(member.key, agentId, receiver.url);
      // The event and its delivery row exist, but the process died before waking the dispatcher.
      const recorded = await recordEvent(app.deps.db, mailEvent(member.member_id, agentId));
      const [d] = await app.deps.db.query(
        `INSERT INTO webhook_deliveries (event_id, target, target_type, member_id, agent_id, event_type, environment, max_attempts, next_attempt_at)
         VALUES ($1, $2, 'agent_webhook', $3, $4, 'mail.submitted', 'live', 5, now() - interval '10 minutes') RETURNING id`,
        [recorded.id, `agent:${agentId}`, member.member_id, agentId],
      );
      const woken = await app.deps.temporal.workflow.execute(RECONCILE_WEBHOOK_DISPATCH_WORKFLOW, {
        taskQueue: app.deps.config.taskQueue,
        workflowId: `webhook-dispatch-reconcile-${Date.now()}`,
        args: [{ overdueSeconds: 300 }],
      });
      expect(woken).toBeGreaterThanOrEqual(1);
      await receiver.waitFor(1);
      await until(
        () => app.deps.db.query(`SELECT status FROM webhook_deliveries WHERE id = $1`, [d.id]),
        (rows) => rows[0].status === 'delivered',
      );
      expect(JSON.parse(receiver.received[0].body).event_type).toBe('mail.submitted');
    } finally {
      await receiver.close();
    }
  });

  it('deletes deliveries and attempts older than 30 days and keeps newer ones', async () => {
    const receiver = await startReceiver();
    try {
      const { member, agentId } = await setup();
      await configure(member.key, agentId, receiver.url);
      const old = await publishEvent(app.deps, mailEvent(member.member_id, agentId));
      const recent = await publishEvent(app.deps, mailEvent(member.member_id, agentId, { eventType: 'mail.ready' }));
      const test = await api('POST', '/v1/test/webhook', { key: member.key, json: { agent_id: agentId } });
      await until(
        () =>
          app.deps.db.query(`SELECT status FROM webhook_deliveries WHERE agent_id = $1 AND status <> 'delivered'`, [
            agentId,
          ]),
        (rows) => rows.length === 0,
      );
      const [oldDelivery] = await app.deps.db.query(`SELECT id FROM webhook_deliveries WHERE event_id = $1`, [old.id]);
      await app.deps.db.query(
        `UPDATE webhook_deliveries SET created_at = now() - interval '31 days' WHERE event_id = $1 OR id = $2`,
        [old.id, test.body.delivery.id],
      );
      await app.deps.db.query(`UPDATE events SET created_at = now() - interval '31 days' WHERE id = $1`, [
        test.body.delivery.event_id,
      ]);

      const result = await app.deps.temporal.workflow.execute(WEBHOOK_HISTORY_CLEANUP_WORKFLOW, {
        taskQueue: app.deps.config.taskQueue,
        workflowId: `webhook-history-cleanup-test-${Date.now()}`,
        args: [{ retentionDays: 30 }],
      });
      expect(result.deletedDeliveries).toBeGreaterThanOrEqual(2);
      expect(result.deletedSyntheticEvents).toBeGreaterThanOrEqual(1);
      expect(
        await app.deps.db.query(`SELECT 1 FROM webhook_deliveries WHERE id IN ($1, $2)`, [
          oldDelivery.id,
          test.body.delivery.id,
        ]),
      ).toEqual([]);
      expect(
        await app.deps.db.query(`SELECT 1 FROM webhook_delivery_attempts WHERE delivery_id = $1`, [oldDelivery.id]),
      ).toEqual([]);
      expect(await app.deps.db.query(`SELECT 1 FROM events WHERE id = $1`, [test.body.delivery.event_id])).toEqual([]);
      // Business events stay in the event log; newer deliveries stay.
      expect(await app.deps.db.query(`SELECT 1 FROM events WHERE id = $1`, [old.id])).toHaveLength(1);
      expect(await app.deps.db.query(`SELECT 1 FROM webhook_deliveries WHERE event_id = $1`, [recent.id])).toHaveLength(
        1,
      );
    } finally {
      await receiver.close();
    }
  });
});
