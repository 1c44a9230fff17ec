// Crashes that must lose nothing: the worker dies mid-flow and a new one carries on;
// the API dies between committing a paid piece and starting its workflow, and the
// reconciler schedule starts it.
import type { Worker } from '@temporalio/worker';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { temporal } from '@temporalio/proto';
import { createObjectStorage } from '../../services/shared/storage';
import { startTestApp, TestApp } from '../helpers/app';
import { createWorker } from '../../worker/worker';
import { mailFaults } from '../../services/outbound-mail/submit';
import { ensureMailReconcilerSchedule } from '../../services/outbound-mail/workflow';
import { outboundMailWorkflowId } from '../../workflows/outbound-mail/contracts';
import {
  api,
  balance,
  ledger,
  letterForm,
  letterPdf,
  mailCount,
  mailEvents,
  newSender,
  sendLetter,
  waitFor,
} from './mail-helpers';

describe('outbound mail survives crashes', () => {
  let app: TestApp;
  let replacement: { worker: Worker; connection: { close(): Promise<void> }; running: Promise<void> } | undefined;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    if (replacement) {
      if (replacement.worker.getState() === 'RUNNING') replacement.worker.shutdown();
      await replacement.running.catch(() => undefined);
      await replacement.connection.close();
    }
    await app.close();
  });

  it('continues a piece on a new worker after the worker is stopped mid-flow', async () => {
    const s = await newSender(app, { environment: 'test' });
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { mail_class: 'priority' }));
    const id = created.body.id;
    expect((await api(app)('POST', `/v1/test/mail/${id}/advance`, { key: s.key })).body.status).toBe('ready');

    // The worker goes away; a step requested now waits for whichever worker comes next.
    app.worker!.shutdown();
    await waitFor(async () => app.worker!.getState() === 'STOPPED', 'worker shutdown');
    const pending = api(app)('POST', `/v1/test/mail/${id}/advance`, { key: s.key });
    await new Promise((r) => setTimeout(r, 1000));
    const [row] = await app.deps.db.query(`SELECT status FROM outbound_mail WHERE id = $1`, [id]);
    expect(row.status).toBe('ready');

    const created2 = await createWorker(app.deps, {
      workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH,
      taskQueue: app.deps.config.taskQueue,
    });
    replacement = { ...created2, running: created2.worker.run() };
    const mailed = await pending;
    expect(mailed.status).toBe(200);
    expect(mailed.body).toMatchObject({ status: 'mailed', carrier: 'usps' });
    expect((await api(app)('POST', `/v1/test/mail/${id}/advance`, { key: s.key })).body.status).toBe('delivered');
    expect((await mailEvents(app, id)).map((e) => e.event_type)).toEqual([
      'mail.submitted',
      'mail.ready',
      'mail.mailed',
      'mail.delivered',
    ]);
  });

  it('starts the workflow of a paid piece whose start was lost, through the reconciler schedule', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    mailFaults.afterCommit = () => {
      throw new Error('simulated crash after commit');
    };
    let res;
    try {
      res = await sendLetter(app, s, letterForm(await letterPdf()));
    } finally {
      delete mailFaults.afterCommit;
    }
    expect(res.status).toBe(500);
    const [row] = await app.deps.db.query(
      `SELECT id, status, workflow_started_at FROM outbound_mail WHERE member_id = $1`,
      [s.memberId],
    );
    expect(row).toMatchObject({ status: 'submitted', workflow_started_at: null });
    expect((await ledger(app, row.id)).map((l) => l.kind)).toEqual(['debit']);
    await expect(app.deps.temporal.workflow.getHandle(outboundMailWorkflowId(row.id)).describe()).rejects.toThrow();

    const scheduleId = await ensureMailReconcilerSchedule(app.deps, {
      reconcileEverySeconds: 1,
      reconcileGraceSeconds: 1,
    });
    try {
      await waitFor(
        async () => {
          const [r] = await app.deps.db.query(`SELECT workflow_started_at FROM outbound_mail WHERE id = $1`, [row.id]);
          return r.workflow_started_at !== null;
        },
        'the reconciler to start the workflow',
        45000,
      );
      await waitFor(async () => (await mailEvents(app, row.id)).length === 1, 'mail.submitted');
      expect((await mailEvents(app, row.id))[0].event_type).toBe('mail.submitted');
      // The piece is now driven like any other: a cancel reaches its workflow and refunds.
      const cancel = await api(app)('DELETE', `/v1/mail/${row.id}`, { key: s.key, headers: s.headers });
      expect(cancel.body).toMatchObject({
        already_cancelled: false,
        refunded_credits_cents: -(await ledger(app, row.id))[0].amount_cents,
      });
      expect(await balance(app, s.memberId)).toBe(100000);
    } finally {
      await app.deps.temporal.schedule.getHandle(scheduleId).delete();
    }
  });

  it("announces a new piece and stores its print proof from the submission: its workflow's first task records nothing but its completion", async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const created = await sendLetter(app, s, letterForm(await letterPdf()));
    expect(created.status).toBe(201);
    // Published and stored before the answer, not by the workflow afterwards.
    expect((await mailEvents(app, created.body.id)).map((e) => e.event_type)).toEqual(['mail.submitted']);
    expect(created.body.proof_url).toMatch(/^http/);
    const handle = app.deps.temporal.workflow.getHandle(outboundMailWorkflowId(created.body.id));
    const E = temporal.api.enums.v1.EventType;
    const history = await waitFor(async () => {
      const h = await handle.fetchHistory();
      return h.events!.some((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) ? h : null;
    }, 'the first workflow task');
    const input = JSON.parse(
      Buffer.from(history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0].data!).toString(),
    );
    expect(input).toMatchObject({ announced: true, printProof: 'stored' });
    expect(history.events!.map((e) => e.eventType)).toEqual([
      E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      E.EVENT_TYPE_WORKFLOW_TASK_STARTED,
      E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    ]);
    expect(await mailEvents(app, created.body.id)).toHaveLength(1);
  });

  it('leaves the announcement to the workflow when the submission could not publish it, once', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    mailFaults.announce = () => {
      throw new Error('simulated event store failure');
    };
    let created;
    try {
      created = await sendLetter(app, s, letterForm(await letterPdf()));
    } finally {
      delete mailFaults.announce;
    }
    expect(created.status).toBe(201);
    await waitFor(
      async () => (await mailEvents(app, created.body.id)).length === 1,
      'mail.submitted from the workflow',
    );
    expect((await mailEvents(app, created.body.id))[0].event_type).toBe('mail.submitted');
    const history = await app.deps.temporal.workflow.getHandle(outboundMailWorkflowId(created.body.id)).fetchHistory();
    const input = JSON.parse(
      Buffer.from(history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0].data!).toString(),
    );
    expect(input.announced).toBeUndefined();
    expect(await ledger(app, created.body.id)).toHaveLength(1);
  });

  it('answers a retry of a crashed submission with its Idempotency-Key with the committed piece, never a second one', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const doc = await letterPdf();
    mailFaults.afterCommit = () => {
      throw new Error('simulated crash after commit');
    };
    try {
      expect((await sendLetter(app, s, letterForm(doc), { 'idempotency-key': 'crash-1' })).status).toBe(500);
    } finally {
      delete mailFaults.afterCommit;
    }
    const retry = await sendLetter(app, s, letterForm(doc), { 'idempotency-key': 'crash-1' });
    expect(retry.status).toBe(201);
    expect(await mailCount(app, s.memberId)).toBe(1);
    const [row] = await app.deps.db.query(`SELECT id FROM outbound_mail WHERE member_id = $1`, [s.memberId]);
    expect(retry.body.id).toBe(row.id);
    expect(await ledger(app, row.id)).toHaveLength(1);
  });

  it('refuses with a retryable 503 and keeps nothing when the document store is down', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const broken = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    mockClient(broken).on(PutObjectCommand).rejects(new Error('store unreachable'));
    const storage = app.deps.storage;
    app.deps.storage = createObjectStorage(app.deps.config, broken);
    try {
      const res = await sendLetter(app, s, letterForm(await letterPdf()));
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: true });
    } finally {
      app.deps.storage = storage;
    }
    expect(await mailCount(app, s.memberId)).toBe(0);
    expect(await balance(app, s.memberId)).toBe(100000);
    expect((await sendLetter(app, s, letterForm(await letterPdf()))).status).toBe(201);
  });
});
