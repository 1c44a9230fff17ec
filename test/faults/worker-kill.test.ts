// The worker process is SIGKILLed in the middle of its work and another one is started:
// (1) while a paid 10,000-piece batch is generating its pieces, (2) while webhook
// deliveries are waiting on a slow receiver. Afterwards every piece exists exactly once,
// the batch reaches submitted with one batch.submitted event, every delivery is
// delivered, the money moved exactly once and every workflow finished.
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { batchForm, pdf, recipientsCsv } from '../integration/batch-helpers';
import { letterForm, letterPdf } from '../integration/mail-helpers';
import { webhookDispatchWorkflowId } from '../../workflows/webhooks/contracts';
import { startReceiver } from '../integration/webhook-helpers';
import { deleteSchedulesOf, ServiceProcess, stackEnv, startWorkerProcess } from './children';
import { ledgerProblems, until } from './ledger';

jest.setTimeout(300000);

const MD = { 'x-service-md-version': '1' };

describe('worker killed with SIGKILL mid-flow', () => {
  let app: TestApp;
  let api: ReturnType<typeof client>;
  let taskQueue: string;
  const workers: ServiceProcess[] = [];
  const memberIds: string[] = [];

  const startWorker = async () => {
    const w = await startWorkerProcess(app.deps.temporal, {
      env: stackEnv({ WEBHOOK_RETRY_BASE_MS: '200' }),
      taskQueue,
      capture: true,
    });
    workers.push(w);
    return w;
  };

  beforeAll(async () => {
    // The API runs here; the worker is a child process on the API's task queue.
    app = await startTestApp({ worker: false, env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
    api = client(app.baseUrl);
    taskQueue = app.deps.config.taskQueue;
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    if (app) {
      await deleteSchedulesOf(app.deps.temporal, taskQueue);
      await app.close();
    }
  });

  it('mid batch generation: a new worker finishes it, each piece once, one debit, one batch.submitted', async () => {
    const first = await startWorker();
    const member = await newMember(app.deps, { creditsCents: 10_000_000 });
    memberIds.push(member.member_id);
    const rows = 10000;
    const draft = await api('POST', '/v1/batch-mail', {
      key: member.key,
      form: batchForm(await pdf(1), recipientsCsv(rows), { job_name: 'Kill during generation' }),
    });
    expect(draft.status).toBe(201);
    const id: string = draft.body.batch.id;
    const confirm = await api('POST', `/v1/batch-mail/${id}/confirm`, { key: member.key });
    expect(confirm.status).toBe(200);

    // Kill as soon as some, but not all, pieces exist.
    const createdAtKill = await until(
      'pieces being generated',
      async () => {
        const [row] = await app.deps.db.query(`SELECT count(*)::int AS n FROM batch_pieces WHERE batch_id = $1`, [id]);
        return row.n > 0 ? row.n : null;
      },
      120000,
      10,
    );
    await first.kill9();
    expect(first.running).toBe(false);
    expect(createdAtKill).toBeLessThan(rows);
    const [{ status: statusAtKill }] = await app.deps.db.query(`SELECT status FROM batches WHERE id = $1`, [id]);
    expect(statusAtKill).toBe('generating');

    await startWorker();
    await until(
      'the batch to be submitted',
      async () => {
        const [row] = await app.deps.db.query(`SELECT status FROM batches WHERE id = $1`, [id]);
        return row.status === 'submitted';
      },
      180000,
    );

    const [pieces] = await app.deps.db.query(
      `SELECT count(*)::int AS n, count(DISTINCT batch_sequence)::int AS distinct_n, min(batch_sequence) AS lo, max(batch_sequence) AS hi
         FROM batch_pieces WHERE batch_id = $1`,
      [id],
    );
    expect(pieces).toEqual({ n: rows, distinct_n: rows, lo: 1, hi: rows });
    // batch.submitted is published by the activity after the status commit: wait for it, then
    // check it exists once.
    const submittedEvents = async () =>
      (
        await app.deps.db.query(
          `SELECT count(*)::int AS n FROM events WHERE object_id = $1 AND event_type = 'batch.submitted'`,
          [id],
        )
      )[0].n;
    await until('batch.submitted to be published', async () => (await submittedEvents()) > 0, 60000);
    expect(await submittedEvents()).toBe(1);
    const [batch] = await app.deps.db.query(
      `SELECT pieces_created, credits_charged_cents, total_cents FROM batches WHERE id = $1`,
      [id],
    );
    expect(batch.pieces_created).toBe(rows);
    expect(batch.credits_charged_cents).toBe(batch.total_cents);
    expect(await ledgerProblems(app.deps.db, memberIds)).toEqual([]);

    // The workflow is alive and still takes updates: a cancel refunds the whole charge and ends it.
    const handle = app.deps.temporal.workflow.getHandle(`batch-mail-${id}`);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const cancel = await api('DELETE', `/v1/batch-mail/${id}`, { key: member.key });
    expect(cancel.status).toBe(200);
    expect(cancel.body.refunded_credits_cents).toBe(batch.total_cents);
    await handle.result();
    expect(await ledgerProblems(app.deps.db, memberIds)).toEqual([]);
  });

  it('mid webhook delivery: every event is delivered after a new worker starts', async () => {
    if (!workers.some((w) => w.running)) await startWorker();
    const holding: Array<() => void> = [];
    // The first requests hang until the worker is dead; later ones answer at once.
    let hold = true;
    const receiver = await startReceiver(() =>
      hold
        ? new Promise((resolve) => holding.push(() => resolve({ status: 200, body: 'late' })))
        : { status: 200, body: 'ok' },
    );
    try {
      const member = await newMember(app.deps, { creditsCents: 100_000 });
      memberIds.push(member.member_id);
      const agent = await newAgent(app.baseUrl, member.key);
      const credential = await newCredential(app.baseUrl, member.key, agent.id, {
        scopes: ['mail.send', 'webhook.manage', 'webhook.read'],
      });
      const settings = await api('PUT', '/v1/webhooks/settings', {
        key: credential.key,
        headers: MD,
        json: { webhook_url: receiver.url, enabled: true, event_types: ['*'] },
      });
      expect(settings.status).toBe(200);

      const pieces = 6;
      const ids: string[] = [];
      for (let i = 0; i < pieces; i++) {
        const res = await api('POST', '/v1/mail', {
          key: credential.key,
          headers: MD,
          form: letterForm(await letterPdf(1, `Kill during delivery ${i}`)),
        });
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }

      await receiver.waitFor(3, 120000);
      const victim = workers.find((w) => w.running)!;
      await victim.kill9();
      hold = false;
      holding.splice(0).forEach((answer) => answer());
      await startWorker();

      const deliveries = await until(
        'every delivery to be delivered',
        async () => {
          const rows: Array<{ id: string; status: string; event_id: string; environment: string; target: string }> =
            await app.deps.db.query(
              `SELECT d.id, d.status, d.event_id, d.environment, d.target FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
            WHERE e.object_id = ANY($1) AND d.target_type = 'agent_webhook'`,
              [ids],
            );
          return rows.length >= pieces && rows.every((r) => r.status === 'delivered') ? rows : null;
        },
        180000,
        500,
      );
      // Every event reached the receiver (at least once: a retried attempt may repeat one).
      const receivedIds = new Set(receiver.received.map((r) => r.headers['x-service-event-id']));
      for (const d of deliveries) expect(receivedIds.has(d.event_id)).toBe(true);
      // The receiver's dispatcher workflow finished once nothing was left to send.
      const dispatchKeys = new Set(deliveries.map((d) => `${d.environment}:${d.target}`));
      expect(dispatchKeys.size).toBe(1);
      for (const key of dispatchKeys) {
        const attempted = await app.deps.temporal.workflow
          .getHandle(webhookDispatchWorkflowId(taskQueue, key))
          .result();
        expect(typeof attempted).toBe('number');
      }
      expect(await ledgerProblems(app.deps.db, memberIds)).toEqual([]);
    } finally {
      hold = false;
      holding.splice(0).forEach((answer) => answer());
      await receiver.close();
    }
  });
});
