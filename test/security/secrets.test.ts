// Raw credentials never rest anywhere but in the caller's hands. The API and the worker
// run as child processes with LOG_LEVEL=debug while every kind of secret is created and
// used: member keys (created, rotated, test), agent credentials, a facility key, a
// password, the legacy webhook signing key and bearer token, custom endpoint secrets
// (created and rotated, signing real deliveries) and the intake secret. Afterwards no
// text or JSON column of any table and no line the processes logged contains any of them.
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../config';
import { closeDeps, createDeps } from '../../services/shared/create-deps';
import type { Deps } from '../../services/shared/deps';
import { createFacility } from '../../services/accounts/accounts';
import { newMember } from '../helpers/factories';
import { client } from '../helpers/http';
import { answerChallenges, startReceiver } from '../integration/webhook-helpers';
import {
  ApiProcess,
  deleteSchedulesOf,
  ServiceProcess,
  stackEnv,
  startApiProcess,
  startWorkerProcess,
} from '../faults/children';

jest.setTimeout(240000);

const MD = { 'x-service-md-version': '1' };

/** Every secret the run handled, with the part after a known prefix (a store that strips the prefix is caught too). */
function withBodies(secrets: string[]): string[] {
  const out = new Set<string>();
  for (const s of secrets) {
    out.add(s);
    const body = s.replace(/^(sk_agent_test_|sk_facility_|sk_agent_|sk_live_|sk_test_|whsec_|whsk_)/, '');
    if (body.length >= 16) out.add(body);
  }
  return [...out];
}

describe('no raw secret in the database or the logs', () => {
  let deps: Deps;
  let api: ApiProcess;
  let worker: ServiceProcess;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const secrets: string[] = [];
  const intakeSecret = `intake-${randomBytes(16).toString('hex')}`;
  let taskQueue: string;

  beforeAll(async () => {
    taskQueue = `${process.env.TEMPORAL_TASK_QUEUE ?? 'test'}-secrets-${randomBytes(3).toString('hex')}`;
    const env = stackEnv({
      LOG_LEVEL: 'debug',
      TEMPORAL_TASK_QUEUE: taskQueue,
      INBOUND_INTAKE_SECRET: intakeSecret,
      WEBHOOK_RETRY_BASE_MS: '200',
      SIGNUP_RATE_LIMIT_PER_MINUTE: '1000',
    });
    deps = await createDeps(loadConfig({ ...process.env, ...env } as NodeJS.ProcessEnv), {
      poolSize: 2,
      name: 'secrets-test',
    });
    receiver = await startReceiver(answerChallenges);
    [api, worker] = await Promise.all([
      startApiProcess({ env, capture: true }),
      startWorkerProcess(deps.temporal, { env, capture: true, taskQueue }),
    ]);
    secrets.push(intakeSecret);
  });

  afterAll(async () => {
    await Promise.all([api?.proc.stop(), worker?.stop()]);
    await receiver?.close();
    if (deps) {
      await deleteSchedulesOf(deps.temporal, taskQueue);
      await closeDeps(deps);
    }
  });

  it('creates, rotates and uses every kind of secret', async () => {
    const call = client(api.baseUrl);
    const ok = async (status: number, res: Promise<{ status: number; body: any }>) => {
      const r = await res;
      if (r.status !== status) throw new Error(`expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };

    const password = `Pw-${randomBytes(12).toString('hex')}`;
    secrets.push(password);
    await ok(
      201,
      call('POST', '/v1/signup', {
        json: { email: `sec-${randomBytes(4).toString('hex')}@example.test`, password, full_name: 'Secret Keeper' },
      }),
    );

    const member = await newMember(deps, { creditsCents: 10000 });
    secrets.push(member.key);
    const key = member.key;
    const extra = await ok(201, call('POST', '/v1/api-keys', { key, json: { name: 'second' } }));
    const testKey = await ok(
      201,
      call('POST', '/v1/api-keys', { key, json: { name: 'sandbox', environment: 'test' } }),
    );
    secrets.push(extra.key, testKey.key);
    const rotated = await ok(200, call('POST', `/v1/api-keys/${extra.id}/rotate`, { key }));
    secrets.push(rotated.api_key.key);
    await ok(200, call('GET', '/v1/credits', { key: rotated.api_key.key }));
    await ok(200, call('GET', '/v1/credits', { key: testKey.key }));

    const agent = await ok(
      201,
      call('POST', '/v1/agents', { key, json: { name: `agent-${randomBytes(3).toString('hex')}` } }),
    );
    const credential = await ok(
      201,
      call('POST', `/v1/agents/${agent.id}/credentials`, {
        key,
        json: { scopes: ['mail.send', 'webhook.manage', 'webhook.read', 'agent.read'] },
      }),
    );
    const testCredential = await ok(
      201,
      call('POST', `/v1/agents/${agent.id}/credentials`, {
        key,
        json: { scopes: ['mail.send', 'agent.read'], environment: 'test' },
      }),
    );
    secrets.push(credential.key, testCredential.key);

    const bearer = `tok_${randomBytes(16).toString('hex')}`;
    secrets.push(bearer);
    const settings = await ok(
      200,
      call('PUT', '/v1/webhooks/settings', {
        key: credential.key,
        headers: MD,
        json: { webhook_url: receiver.url, enabled: true, event_types: ['*'], auth_type: 'bearer', auth_token: bearer },
      }),
    );
    expect(settings.webhook_signing_key).toMatch(/^whsk_/);
    secrets.push(settings.webhook_signing_key);

    const endpoint = await ok(
      201,
      call('POST', '/v1/webhook-endpoints', {
        key,
        json: { name: 'secret endpoint', url: receiver.url, event_types: ['mail.submitted', 'mail.ready'] },
      }),
    );
    secrets.push(endpoint.secret);
    const verified = await ok(200, call('POST', `/v1/webhook-endpoints/${endpoint.endpoint.id}/verify`, { key }));
    expect(verified.verified).toBe(true);
    const rotatedSecret = await ok(
      200,
      call('POST', `/v1/webhook-endpoints/${endpoint.endpoint.id}/rotate-secret`, { key }),
    );
    secrets.push(rotatedSecret.secret);

    // Deliveries signed with every secret: the agent webhook test and a sandbox piece's events.
    await ok(200, call('POST', '/v1/test/webhook', { key: credential.key, json: {} }));
    const piece = await ok(
      201,
      call('POST', '/v1/test/mail', {
        key: testCredential.key,
        headers: MD,
        json: {
          recipient_name: 'Jane Doe',
          recipient_line1: '1 Main St',
          recipient_city: 'Austin',
          recipient_state: 'TX',
          recipient_zip: '78701',
        },
      }),
    );
    await ok(200, call('POST', `/v1/test/mail/${piece.id}/advance`, { key: testCredential.key, headers: MD }));

    const facility = await createFacility(deps, 'Secrets facility');
    secrets.push(facility.key);
    await ok(200, call('GET', '/v1/facility/mail', { key: facility.key }));

    // The intake secret in a header, refused and accepted.
    await call('POST', `/v1/intake/email?recipient=nobody@${deps.config.inboundEmailDomain}`, {
      raw: 'Subject: x\r\n\r\nx',
      headers: { 'x-intake-secret': intakeSecret },
    });
    await call('POST', `/v1/intake/email?recipient=nobody@${deps.config.inboundEmailDomain}`, {
      raw: 'Subject: x\r\n\r\nx',
      headers: { 'x-intake-secret': `${intakeSecret}x` },
    });

    // Wait until the worker has sent the piece's events (signed with the rotated endpoint secret).
    await receiver.waitFor(4, 60000);
    expect(receiver.received.some((r) => r.headers.authorization === `Bearer ${bearer}`)).toBe(true);
  });

  /** Columns (table.column) of any text, JSON or array type that contain one of the needles. */
  async function columnsContaining(needles: string[]): Promise<string[]> {
    const columns: Array<{ table_name: string; column_name: string }> = await deps.db.query(
      `SELECT c.table_name, c.column_name FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
        WHERE c.table_schema = 'public' AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY')`,
    );
    expect(columns.length).toBeGreaterThan(50);
    const found: string[] = [];
    for (const { table_name: t, column_name: c } of columns) {
      const [row] = await deps.db.query(
        `SELECT count(*)::int AS n FROM "${t}" x, unnest($1::text[]) s WHERE strpos(x."${c}"::text, s) > 0`,
        [needles],
      );
      if (row.n > 0) found.push(`${t}.${c}`);
    }
    return found;
  }

  it('stores none of them in any text or JSON column', async () => {
    expect(await columnsContaining(withBodies(secrets))).toEqual([]);
    // The scan finds what is there: the first 18 characters of a key are stored as key_prefix.
    const prefix = secrets.find((s) => s.startsWith('sk_live_'))!.slice(0, 18);
    expect(await columnsContaining([prefix])).toContain('member_api_keys.key_prefix');
  });

  it('logs none of them, at debug level, in the API or the worker', async () => {
    const apiLog = api.proc.text();
    const workerLog = worker.text();
    // The capture works: the API logged the requests above.
    expect(apiLog).toContain('"msg":"request"');
    expect(apiLog).toContain('/v1/api-keys');
    expect(workerLog).toContain('worker started');
    const leaks = withBodies(secrets).flatMap((s) => [
      ...(apiLog.includes(s) ? [`api: ${s.slice(0, 12)}...`] : []),
      ...(workerLog.includes(s) ? [`worker: ${s.slice(0, 12)}...`] : []),
    ]);
    expect(leaks).toEqual([]);
  });
});
