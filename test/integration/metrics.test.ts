// Prometheus metrics. The API counts and times requests by route template and status and
// serves them at /metrics to the bearer of METRICS_TOKEN. The worker's metrics come from the
// Temporal SDK's runtime, which is installed once per process before the first worker: this
// Jest process may have installed it already without an exporter, so the worker part runs
// the real worker entry (worker/main.ts) as a child process with WORKER_METRICS_ADDRESS.
import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { commands } from '../../scripts/admin';
import { freePort } from '../../scripts/stack';
import { deleteSchedulesOf, ServiceProcess, stackEnv, startWorkerProcess } from '../faults/children';
import { letterForm, letterPdf, newSender, sendLetter, waitFor } from './mail-helpers';

const TOKEN = 'metrics-token-0123456789abcdef';

/** The value of the sample `name{labels}` whose labels include all of `want` (0 when absent). */
function sample(text: string, name: string, want: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(want).every(([k, v]) => labels[k] === v)) total += Number(m[3]);
  }
  return total;
}

describe('API metrics', () => {
  let app: TestApp;
  let plain: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ worker: false, env: { METRICS_TOKEN: TOKEN } });
    plain = await startTestApp({ worker: false });
  });
  afterAll(async () => {
    await app.close();
    await plain.close();
  });

  const scrape = async () => {
    const res = await fetch(`${app.siteUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    return res.text();
  };

  it('counts requests by route template and status, and times them', async () => {
    const member = await newMember(app.deps);
    const api = client(app.baseUrl);
    const missing = { method: 'GET', route: '/api/v1/mail/:id', status: '404' };
    const credits = { method: 'GET', route: '/api/v1/credits', status: '200' };
    const before = await scrape();

    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) expect((await api('GET', `/v1/mail/${id}`, { key: member.key })).status).toBe(404);
    expect((await api('GET', '/v1/credits', { key: member.key })).status).toBe(200);
    expect((await api('GET', '/v1/credits')).status).toBe(401);
    expect((await api('GET', `/v1/no-such-thing/${ids[0]}`)).status).toBe(404);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      sample(after, name, labels) - sample(before, name, labels);
    expect(delta('http_requests_total', missing)).toBe(3);
    expect(delta('http_requests_total', credits)).toBe(1);
    expect(delta('http_requests_total', { ...credits, status: '401' })).toBe(1);
    expect(delta('http_requests_total', { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(delta('http_request_duration_seconds_count', missing)).toBe(3);
    expect(sample(after, 'http_request_duration_seconds_bucket', { ...missing, le: '+Inf' })).toBe(
      sample(after, 'http_requests_total', missing),
    );
    // Raw paths never become labels.
    for (const id of ids) expect(after).not.toContain(id);
    // prom-client's default process metrics.
    expect(sample(after, 'process_cpu_user_seconds_total', {})).toBeGreaterThan(0);
    expect(after).toContain('nodejs_eventloop_lag_seconds');
  });

  it('serves /metrics only with the token, and not at all without METRICS_TOKEN', async () => {
    const none = await client(app.siteUrl)('GET', '/metrics');
    expect([none.status, none.body.reason]).toEqual([401, 'token_missing']);
    const wrong = await client(app.siteUrl)('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect([wrong.status, wrong.body.reason]).toEqual([401, 'key_not_found']);
    expect(
      (await client(plain.siteUrl)('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(404);
  });
});

describe('worker metrics (worker/main.ts as a child process)', () => {
  let app: TestApp;
  let worker: ServiceProcess | undefined;
  let metricsUrl: string;
  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    const address = `127.0.0.1:${await freePort()}`;
    metricsUrl = `http://${address}/metrics`;
    worker = await startWorkerProcess(app.deps.temporal, {
      taskQueue: app.deps.config.taskQueue,
      env: stackEnv({ WORKER_METRICS_ADDRESS: address }),
      capture: true,
    });
  }, 240_000);
  afterAll(async () => {
    await worker?.stop();
    await deleteSchedulesOf(app.deps.temporal, app.deps.config.taskQueue);
    await app.close();
  });

  it("serves the Temporal SDK's metrics and counts a failed activity by type and failure", async () => {
    const failures = async () =>
      sample(await (await fetch(metricsUrl)).text(), 'postal_activity_failures_total', {
        activity_type: 'approveMail',
        failure_type: 'INSUFFICIENT_CREDITS',
        non_retryable: 'true',
      });
    const before = await failures();

    // A piece awaiting approval whose owner has no credits: approving it fails in the approveMail activity.
    const s = await newSender(app, { creditsCents: 0 });
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { requires_approval: 'true' }));
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('pending_approval');
    await expect(commands.approve.run(app.deps, { mail: created.body.id })).rejects.toMatchObject({ status: 402 });

    await waitFor(
      async () => (await failures()) === before + 1,
      'the activity failure counter to count the failed approval',
    );
    const text = await (await fetch(metricsUrl)).text();
    // The SDK's own metrics, from the same exporter.
    expect(
      sample(text, 'temporal_activity_execution_failed_total', { activity_type: 'approveMail' }),
    ).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^temporal_worker_task_slots_available\{/m);
    expect(text).toMatch(/^temporal_workflow_task_schedule_to_start_latency_bucket\{/m);
  }, 120_000);
});
