// SIGTERM to the API and worker processes (as a deployment's rollout sends it): the API
// stops accepting connections, finishes the request in flight and exits; a request that
// does not finish within SHUTDOWN_GRACE_SECONDS is cut and the process still exits. The
// worker stops taking tasks, finishes the activity in flight (a webhook delivery the
// receiver answers late), records it once, and exits.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { letterForm, letterPdf } from '../integration/mail-helpers';
import { startReceiver } from '../integration/webhook-helpers';
import { webhookDispatchWorkflowId } from '../../workflows/webhooks/contracts';
import { portOpen } from '../../scripts/stack';
import { deleteSchedulesOf, stackEnv, startApiProcess, startWorkerProcess } from './children';
import { until } from './ledger';

jest.setTimeout(240000);

const MD = { 'x-service-md-version': '1' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A multipart body as fetch would send it, so it can be written to a socket in parts. */
async function encoded(form: FormData): Promise<{ body: Buffer; contentType: string }> {
  const req = new Request('http://127.0.0.1/', { method: 'POST', body: form });
  return { body: Buffer.from(await req.arrayBuffer()), contentType: req.headers.get('content-type')! };
}

/** Starts a POST whose body is written only up to `sentBytes`; the rest waits for `finish()`. */
function slowUpload(url: string, headers: Record<string, string>, body: Buffer, sentBytes: number) {
  const req = http.request(url, { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } });
  const answer = new Promise<{ status: number; connection: string | undefined; body: string } | { error: string }>(
    (resolve) => {
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            connection: res.headers.connection,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      });
      req.on('error', (err) => resolve({ error: err.message }));
    },
  );
  req.write(body.subarray(0, sentBytes));
  return { answer, finish: () => req.end(body.subarray(sentBytes)) };
}

describe('graceful shutdown on SIGTERM', () => {
  let app: TestApp;
  beforeAll(async () => {
    // The API here only creates keys; the processes under test are children.
    app = await startTestApp({ worker: false });
  });
  afterAll(async () => {
    await deleteSchedulesOf(app.deps.temporal, app.deps.config.taskQueue);
    await app?.close();
  });

  async function sender() {
    const member = await newMember(app.deps, { creditsCents: 100_000 });
    const agent = await newAgent(app.baseUrl, member.key);
    const credential = await newCredential(app.baseUrl, member.key, agent.id, {
      scopes: ['mail.send', 'webhook.manage', 'webhook.read'],
    });
    return credential.key;
  }

  it('the API finishes the request in flight, refuses new connections, and exits', async () => {
    const key = await sender();
    const api = await startApiProcess({
      env: stackEnv({ SHUTDOWN_GRACE_SECONDS: '30', LOG_LEVEL: 'info' }),
      capture: true,
    });
    const port = Number(new URL(api.siteUrl).port);
    const { body, contentType } = await encoded(
      letterForm(await letterPdf(1, 'In flight during SIGTERM'), { dry_run: true }),
    );
    const upload = slowUpload(
      `${api.baseUrl}/v1/mail`,
      { authorization: `Bearer ${key}`, 'content-type': contentType, ...MD },
      body,
      Math.floor(body.length / 2),
    );
    await sleep(300);

    api.proc.child.kill('SIGTERM');
    await until('the API to stop accepting connections', async () => !(await portOpen(port)), 30000, 50);
    expect(api.proc.running).toBe(true);
    upload.finish();

    const answer = await upload.answer;
    expect(answer).toMatchObject({ status: 200, connection: 'close' });
    expect(JSON.parse((answer as { body: string }).body)).toMatchObject({ dry_run: true });
    expect(await api.proc.exited).toEqual({ code: 0, signal: null });
    expect(api.proc.text()).toContain('api stopped');
    expect(api.proc.text()).not.toContain('grace period over');
  });

  it('the API cuts a request that outlasts the grace period and still exits', async () => {
    const key = await sender();
    const api = await startApiProcess({ env: stackEnv({ SHUTDOWN_GRACE_SECONDS: '1' }), capture: true });
    const { body, contentType } = await encoded(letterForm(await letterPdf(1, 'Never finished'), { dry_run: true }));
    const stuck = slowUpload(
      `${api.baseUrl}/v1/mail`,
      { authorization: `Bearer ${key}`, 'content-type': contentType, ...MD },
      body,
      100,
    );
    await sleep(300);

    api.proc.child.kill('SIGTERM');
    const exited = await Promise.race([api.proc.exited, sleep(60000).then(() => 'still running')]);
    expect(exited).toEqual({ code: 0, signal: null });
    expect(await stuck.answer).toHaveProperty('error');
    expect(api.proc.text()).toContain('grace period over');
  });

  it('the worker finishes the delivery in flight, records it once, and exits', async () => {
    const taskQueue = app.deps.config.taskQueue;
    const env = stackEnv({ WORKER_SHUTDOWN_GRACE_SECONDS: '60', WEBHOOK_RETRY_BASE_MS: '200', LOG_LEVEL: 'info' });
    const worker = await startWorkerProcess(app.deps.temporal, { env, taskQueue, capture: true });
    const holding: Array<() => void> = [];
    const receiver = await startReceiver(
      () => new Promise((resolve) => holding.push(() => resolve({ status: 200, body: 'late' }))),
    );
    try {
      const key = await sender();
      const api = client(app.baseUrl);
      expect(
        (
          await api('PUT', '/v1/webhooks/settings', {
            key,
            headers: MD,
            json: { webhook_url: receiver.url, enabled: true, event_types: ['mail.submitted'] },
          })
        ).status,
      ).toBe(200);
      const sent = await api('POST', '/v1/mail', {
        key,
        headers: MD,
        form: letterForm(await letterPdf(1, `Delivered while the worker drains ${randomBytes(3).toString('hex')}`)),
      });
      expect(sent.status).toBe(201);
      await receiver.waitFor(1, 60000);

      worker.child.kill('SIGTERM');
      await until('the worker to start draining', async () => worker.text().includes('worker draining'), 30000, 50);
      await sleep(1000);
      expect(worker.running).toBe(true);
      holding.splice(0).forEach((answer) => answer());
      expect(await worker.exited).toEqual({ code: 0, signal: null });
      expect(worker.text()).toContain('worker stopped');

      const deliveries: Array<{ status: string; attempts_count: number; environment: string; target: string }> =
        await app.deps.db.query(
          `SELECT d.status, d.attempts_count, d.environment, d.target FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          WHERE e.object_id = $1 AND e.event_type = 'mail.submitted' AND d.target_type = 'agent_webhook'`,
          [sent.body.id],
        );
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({ status: 'delivered', attempts_count: 1 });
      expect(receiver.received).toHaveLength(1);

      // A new worker lets the receiver's dispatcher finish (nothing is left to send).
      const next = await startWorkerProcess(app.deps.temporal, { env, taskQueue });
      try {
        const d = deliveries[0];
        expect(
          typeof (await app.deps.temporal.workflow
            .getHandle(webhookDispatchWorkflowId(taskQueue, `${d.environment}:${d.target}`))
            .result()),
        ).toBe('number');
      } finally {
        await next.stop();
      }
    } finally {
      holding.splice(0).forEach((answer) => answer());
      await worker.stop();
      await receiver.close();
    }
  });
});
