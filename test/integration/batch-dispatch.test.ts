// Confirm while no worker serves the batch workflow: the API answers 503
// BATCH_GENERATION_DISPATCH_PENDING after its wait, and once a worker is back the
// queued confirmation is carried out by itself: charged once, generated, submitted.
import type { Worker } from '@temporalio/worker';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { createWorker } from '../../worker/worker';
import { batchForm, ledger, pdf, recipientsCsv, waitForStatus } from './batch-helpers';

describe('batch confirm while generation cannot be dispatched', () => {
  let app: TestApp;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  let connection: { close(): Promise<void> } | undefined;

  beforeAll(async () => {
    app = await startTestApp({ worker: false, env: { WORKFLOW_UPDATE_DEADLINE_MS: '3000' } });
  });
  afterAll(async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running?.catch(() => undefined);
    await connection?.close();
    await app.close();
  });

  it('answers 503 with the batch still unpaid, then confirms by itself when a worker comes back', async () => {
    const api = client(app.baseUrl);
    const member = await newMember(app.deps, { creditsCents: 10000 });
    const created = await api('POST', '/v1/batch-mail', {
      key: member.key,
      form: batchForm(await pdf(1), recipientsCsv(40)),
    });
    expect(created.status).toBe(201);
    const id = created.body.batch.id;

    const res = await api('POST', `/v1/batch-mail/${id}/confirm`, { key: member.key });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      code: 'BATCH_GENERATION_DISPATCH_PENDING',
      retryable: true,
      details: { status: 'draft', credits_charged: false },
    });
    expect(await ledger(app.deps, id)).toEqual([]);

    const created2 = await createWorker(app.deps, {
      workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH,
      taskQueue: app.deps.config.taskQueue,
    });
    worker = created2.worker;
    connection = created2.connection;
    running = worker.run();

    const submitted = await waitForStatus(app.baseUrl, member.key, id, ['submitted'], 60000);
    expect(submitted.batch.pieces.created).toBe(40);
    expect(await ledger(app.deps, id)).toEqual([
      { kind: 'debit', amount_cents: -1120, entry_key: `debit:batch:${id}` },
    ]);

    const repeat = await api('POST', `/v1/batch-mail/${id}/confirm`, { key: member.key });
    expect(repeat.body).toMatchObject({ already_confirmed: true, credits_charged_cents: 1120 });
    expect(await ledger(app.deps, id)).toHaveLength(1);
  });
});
