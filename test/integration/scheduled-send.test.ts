// Scheduled send (send_after, an extension beyond the spec) on the real stack: a live
// piece is debited at once but stays out of the facility's queue until its durable timer
// fires; a cancel before then refunds in full once; the wait survives a worker restart and
// a lost workflow start; the sandbox advance skips it; bad times are 400 at send_after;
// and a confirmed batch with send_after stays hidden from its facility until the time.
import type { Worker } from '@temporalio/worker';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { createWorker } from '../../worker/worker';
import { createFacility } from '../../services/accounts/accounts';
import { assignMemberFacility } from '../../services/operations/facilities';
import { mailFaults } from '../../services/outbound-mail/submit';
import { reconcileUnstartedMail } from '../../services/operations/workflow-reconciler';
import { registeredTools } from '../../api/mcp/tools';
import { outboundMailWorkflowId, startPrintingUpdate } from '../../workflows/outbound-mail/contracts';
import { batchWorkflowId, startBatchFulfilmentUpdate } from '../../workflows/batches/contracts';
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
  Sender,
  waitFor,
} from './mail-helpers';
import { batchForm, ledger as batchLedger, pdf, recipientsCsv, testKeyFor, waitForStatus } from './batch-helpers';

jest.setTimeout(120_000);

const secondsAhead = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const sleepUntil = async (iso: string, extraMs = 0) => {
  const ms = Date.parse(iso) + extraMs - Date.now();
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
};

describe('scheduled send (send_after)', () => {
  let app: TestApp;
  let facility: { facility_id: string; key: string };
  let replacement: { worker: Worker; connection: { close(): Promise<void> }; running: Promise<void> } | undefined;
  beforeAll(async () => {
    app = await startTestApp();
    facility = await createFacility(app.deps, 'Scheduled Send Facility');
  });
  afterAll(async () => {
    if (replacement) {
      if (replacement.worker.getState() === 'RUNNING') replacement.worker.shutdown();
      await replacement.running.catch(() => undefined);
      await replacement.connection.close();
    }
    await app.close();
  });

  const fac = (method: string, path: string) => api(app)(method, path, { key: facility.key });
  /** What the facility sees of the piece: whether its open queue lists it, and whether it can read it by id. */
  const facilityView = async (id: string) => ({
    listed: (await fac('GET', '/v1/facility/mail?limit=100')).body.items.some((i: { id: string }) => i.id === id),
    readable: (await fac('GET', `/v1/facility/mail/${id}`)).status === 200,
  });
  const HIDDEN = { listed: false, readable: false };
  const SHOWN = { listed: true, readable: true };
  const releasedAt = async (
    table: 'outbound_mail' | 'batches',
    id: string,
  ): Promise<{ send_after: Date; released_to_facility_at: Date | null }> =>
    (await app.deps.db.query(`SELECT send_after, released_to_facility_at FROM ${table} WHERE id = $1`, [id]))[0];
  /** Waits (on the database: the facility key's rate limit is not for polling) until the workflow has released the row. */
  const released = (table: 'outbound_mail' | 'batches', id: string, what: string) =>
    waitFor(async () => (await releasedAt(table, id)).released_to_facility_at !== null, what, 60000);
  const liveSender = () => newSender(app, { creditsCents: 100000, facilityId: facility.facility_id });

  it('debits a live piece at once, keeps it out of the facility queue until send_after, then shows it', async () => {
    const s = await liveSender();
    const sendAfter = secondsAhead(15); // long enough for the checks below on a loaded machine
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { send_after: sendAfter }));
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(created.body).toMatchObject({ status: 'submitted', send_after: sendAfter, cost_cents: expect.any(Number) });
    expect(created.body.human_review.next_step).toMatch(/scheduled/);
    expect(await ledger(app, id)).toEqual([
      { kind: 'debit', amount_cents: -created.body.cost_cents, entry_key: `debit:mail:${id}` },
    ]);
    expect(await balance(app, s.memberId)).toBe(100000 - created.body.cost_cents);
    expect((await api(app)('GET', `/v1/mail/${id}`, { key: s.key })).body.send_after).toBe(sendAfter);

    // Hidden: not listed, 404 by id, and the workflow itself refuses a facility step.
    expect(await facilityView(id)).toEqual(HIDDEN);
    expect((await fac('POST', `/v1/facility/mail/${id}/printing`)).status).toBe(404);
    const refused = await app.deps.temporal.workflow
      .getHandle(outboundMailWorkflowId(id))
      .executeUpdate(startPrintingUpdate, { args: [{ facilityId: facility.facility_id }] })
      .catch((e: Error) => e);
    expect(refused).toBeInstanceOf(Error);
    expect(String((refused as Error & { cause?: Error }).cause?.message ?? (refused as Error).message)).toMatch(
      /scheduled/,
    );

    await released('outbound_mail', id, 'the piece released');
    expect(await facilityView(id)).toEqual(SHOWN);
    const row = await releasedAt('outbound_mail', id);
    expect(row.released_to_facility_at!.getTime()).toBeGreaterThanOrEqual(row.send_after.getTime());
    const printing = await fac('POST', `/v1/facility/mail/${id}/printing`);
    expect(printing.status).toBe(200);
    expect(printing.body.printing_started_at).not.toBeNull();
    expect((await mailEvents(app, id)).map((e) => e.event_type)).toEqual(['mail.submitted']);
    expect(await ledger(app, id)).toHaveLength(1);
  });

  it('cancels a waiting piece with a full refund, once, and its workflow ends', async () => {
    const s = await liveSender();
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { send_after: secondsAhead(3600) }));
    expect(created.status).toBe(201);
    const id = created.body.id;
    const cancel = () => api(app)('DELETE', `/v1/mail/${id}`, { key: s.key, headers: s.headers });
    const first = await cancel();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      already_cancelled: false,
      refunded_credits_cents: created.body.cost_cents,
      credit_balance_cents: 100000,
    });
    expect(first.body.outbound_mail).toMatchObject({ status: 'cancelled', cancellation_reason: 'cancelled_by_caller' });
    const again = await cancel();
    expect(again.body).toMatchObject({ already_cancelled: true, refunded_credits_cents: 0 });
    expect((await ledger(app, id)).map((l) => [l.kind, l.amount_cents, l.entry_key])).toEqual([
      ['debit', -created.body.cost_cents, `debit:mail:${id}`],
      ['refund', created.body.cost_cents, `refund:mail:${id}`],
    ]);
    expect(await balance(app, s.memberId)).toBe(100000);
    expect(await app.deps.temporal.workflow.getHandle(outboundMailWorkflowId(id)).result()).toBe('cancelled');
    expect((await releasedAt('outbound_mail', id)).released_to_facility_at).toBeNull();
    expect(
      (await fac('GET', `/v1/facility/mail?status=cancelled&limit=100`)).body.items.some(
        (i: { id: string }) => i.id === id,
      ),
    ).toBe(false);
  });

  it('skips the wait on the sandbox advance, which then prints as usual', async () => {
    const s = await newSender(app, { environment: 'test' });
    const sendAfter = secondsAhead(86400);
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { send_after: sendAfter }));
    expect(created.body).toMatchObject({ status: 'submitted', send_after: sendAfter, test_mode: true });
    expect(created.body.human_review.next_step).toMatch(/advance skips the wait/);
    const ready = await api(app)('POST', `/v1/test/mail/${created.body.id}/advance`, { key: s.key });
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', send_after: sendAfter });
    expect((await releasedAt('outbound_mail', created.body.id)).released_to_facility_at).not.toBeNull();
    expect((await mailEvents(app, created.body.id)).map((e) => e.event_type)).toEqual(['mail.submitted', 'mail.ready']);
  });

  it('refuses a time in the past, beyond 180 days, malformed or with mail_run_id (400 at send_after), storing and charging nothing', async () => {
    const s = await liveSender();
    const cases: [string, Record<string, string>, string][] = [
      [new Date(Date.now() - 60_000).toISOString(), {}, 'must be in the future'],
      [new Date(Date.now() + 181 * 86400_000).toISOString(), {}, 'must be at most 180 days ahead'],
      ['2026-09-01 09:00', {}, 'must be an ISO 8601 date-time with a UTC offset, e.g. 2026-09-01T09:00:00Z'],
      [secondsAhead(3600), { mail_run_id: 'run-1' }, 'cannot be combined with mail_run_id'],
    ];
    for (const [sendAfter, extra, message] of cases) {
      const res = await sendLetter(app, s, letterForm(await letterPdf(), { send_after: sendAfter, ...extra }));
      expect(res.status).toBe(400);
      expect(res.body.fields).toEqual([{ path: 'send_after', message }]);
    }
    expect(await mailCount(app, s.memberId)).toBe(0);
    expect(await balance(app, s.memberId)).toBe(100000);

    // The same window applies to batch drafts.
    const member = await newMember(app.deps, { creditsCents: 10000 });
    const draft = await client(app.baseUrl)('POST', '/v1/batch-mail', {
      key: member.key,
      form: batchForm(await pdf(1), recipientsCsv(3), {
        send_after: new Date(Date.now() + 200 * 86400_000).toISOString(),
      }),
    });
    expect(draft.status).toBe(400);
    expect(draft.body.fields).toEqual([{ path: 'send_after', message: 'must be at most 180 days ahead' }]);
  });

  it('echoes send_after on a dry run and offers it in OpenAPI and the MCP tools', async () => {
    const s = await liveSender();
    const sendAfter = '2099-01-01T00:00:00+02:00';
    // Far beyond the window: a dry run is checked like a real submission.
    expect(
      (await sendLetter(app, s, letterForm(await letterPdf(), { send_after: sendAfter, dry_run: true }))).status,
    ).toBe(400);
    const near = new Date(Date.now() + 3600_000);
    near.setMilliseconds(0);
    // The same instant written at UTC+02:00; the answer gives it in UTC.
    const withOffset = `${new Date(near.getTime() + 2 * 3600_000).toISOString().slice(0, 19)}+02:00`;
    const dry = await sendLetter(app, s, letterForm(await letterPdf(), { send_after: withOffset, dry_run: true }));
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ dry_run: true, send_after: near.toISOString() });

    const doc = (await client(app.siteUrl)('GET', '/openapi.json')).body;
    // Named schemas are components: follow a $ref to the schema it names.
    const deref = (schema: { $ref?: string }) =>
      schema.$ref ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema;
    const json = (path: string, method: string, status: string) =>
      deref(doc.paths[path][method].responses[status].content['application/json'].schema);
    expect(json('/v1/mail/{id}', 'get', '200').properties.send_after.description).toMatch(
      /^Extension \(not in the spec\)/,
    );
    expect(deref(json('/v1/batch-mail/{id}', 'get', '200').properties.batch).properties.send_after).toBeDefined();
    const form = doc.paths['/v1/mail'].post.requestBody.content['multipart/form-data'].schema;
    expect(form.properties.send_after.description).toMatch(/^Extension \(not in the spec\): scheduled send/);
    expect(form.required).not.toContain('send_after');
    for (const name of ['send_outbound_mail', 'create_test_outbound_mail']) {
      const tool = registeredTools.find((t) => t.name === name)!;
      expect((tool.listing.inputSchema.properties as Record<string, unknown>).send_after).toBeDefined();
      expect(tool.listing.inputSchema.required as string[]).not.toContain('send_after');
    }
  });

  it('keeps a lost-start piece held: the reconciler starts its workflow with the wait', async () => {
    const s = await liveSender();
    const sendAfter = secondsAhead(15);
    mailFaults.afterCommit = () => {
      throw new Error('simulated crash after commit');
    };
    try {
      expect((await sendLetter(app, s, letterForm(await letterPdf(), { send_after: sendAfter }))).status).toBe(500);
    } finally {
      delete mailFaults.afterCommit;
    }
    const [{ id }] = await app.deps.db.query(`SELECT id FROM outbound_mail WHERE member_id = $1`, [s.memberId]);
    // The reconciler's own query (a grace of 1 s, as other suites' lost starts are theirs to find).
    await new Promise((r) => setTimeout(r, 1500));
    await reconcileUnstartedMail(app.deps, { graceSeconds: 1, approvalTimeoutSeconds: 3600 });
    await waitFor(async () => (await mailEvents(app, id)).length === 1, 'mail.submitted');
    expect(await facilityView(id)).toEqual(HIDDEN);
    await released('outbound_mail', id, 'the piece released');
    expect(await facilityView(id)).toEqual(SHOWN);
    const row = await releasedAt('outbound_mail', id);
    expect(row.released_to_facility_at!.getTime()).toBeGreaterThanOrEqual(row.send_after.getTime());
  });

  it('holds a confirmed batch from its facility until send_after; a held batch cancels with a full refund; the sandbox skips the wait', async () => {
    const apiBase = client(app.baseUrl);
    const member = await newMember(app.deps, { creditsCents: 100000 });
    await assignMemberFacility(app.deps, member.member_id, facility.facility_id);
    const sendAfter = secondsAhead(12);
    const draft = await apiBase('POST', '/v1/batch-mail', {
      key: member.key,
      form: batchForm(await pdf(1), recipientsCsv(5), { send_after: sendAfter }),
    });
    expect(draft.status).toBe(201);
    const id = draft.body.batch.id;
    expect(draft.body.batch.send_after).toBe(sendAfter);
    const confirmed = await apiBase('POST', `/v1/batch-mail/${id}/confirm`, { key: member.key });
    expect(confirmed.status).toBe(200);
    expect(await batchLedger(app.deps, id)).toEqual([
      { kind: 'debit', amount_cents: -draft.body.batch.pricing.total_cents, entry_key: `debit:batch:${id}` },
    ]);
    await waitForStatus(app.baseUrl, member.key, id, ['submitted']);

    const batchView = async () => ({
      listed: (await fac('GET', '/v1/facility/batches?limit=100')).body.batches.some(
        (b: { id: string }) => b.id === id,
      ),
      readable: (await fac('GET', `/v1/facility/batches/${id}`)).status === 200,
    });
    expect(await batchView()).toEqual(HIDDEN);
    expect((await fac('POST', `/v1/facility/batches/${id}/start`)).status).toBe(404);
    const refused = await app.deps.temporal.workflow
      .getHandle(batchWorkflowId(id))
      .executeUpdate(startBatchFulfilmentUpdate)
      .catch((e: Error) => e);
    expect(String((refused as Error & { cause?: Error }).cause?.message ?? (refused as Error).message)).toMatch(
      /scheduled/,
    );

    await released('batches', id, 'the batch released');
    expect(await batchView()).toEqual(SHOWN);
    const row = await releasedAt('batches', id);
    expect(row.released_to_facility_at!.getTime()).toBeGreaterThanOrEqual(row.send_after.getTime());
    const started = await fac('POST', `/v1/facility/batches/${id}/start`);
    expect(started.status).toBe(200);
    expect(started.body.batch).toMatchObject({ status: 'in_progress', send_after: sendAfter });

    // A held batch: DELETE refunds everything it was charged, once.
    const held = (
      await apiBase('POST', '/v1/batch-mail', {
        key: member.key,
        form: batchForm(await pdf(1), recipientsCsv(4), { send_after: secondsAhead(3600) }),
      })
    ).body.batch;
    await apiBase('POST', `/v1/batch-mail/${held.id}/confirm`, { key: member.key });
    await waitForStatus(app.baseUrl, member.key, held.id, ['submitted']);
    const cancelled = await apiBase('DELETE', `/v1/batch-mail/${held.id}`, { key: member.key });
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      refunded_credits_cents: held.pricing.total_cents,
      already_cancelled: false,
    });
    expect((await apiBase('DELETE', `/v1/batch-mail/${held.id}`, { key: member.key })).body).toMatchObject({
      already_cancelled: true,
      refunded_credits_cents: held.pricing.total_cents,
    });
    expect((await batchLedger(app.deps, held.id)).reduce((sum, l) => sum + l.amount_cents, 0)).toBe(0);

    // Sandbox: the first advance skips the wait and starts the batch.
    const testKey = await testKeyFor(app.deps, member.member_id);
    const sandbox = (
      await apiBase('POST', '/v1/batch-mail', {
        key: testKey,
        form: batchForm(await pdf(1), recipientsCsv(3), { send_after: secondsAhead(86400) }),
      })
    ).body.batch;
    await apiBase('POST', `/v1/batch-mail/${sandbox.id}/confirm`, { key: testKey });
    await waitForStatus(app.baseUrl, testKey, sandbox.id, ['submitted']);
    const advanced = await apiBase('POST', `/v1/batch-mail/${sandbox.id}/advance`, { key: testKey });
    expect(advanced.body).toMatchObject({ previous_status: 'submitted', batch: { status: 'in_progress' } });
  });

  it('still shows a waiting piece to the facility after a worker restart', async () => {
    const s = await liveSender();
    const sendAfter = secondsAhead(10);
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { send_after: sendAfter }));
    const id = created.body.id;
    await waitFor(async () => (await mailEvents(app, id)).length === 1, 'mail.submitted');

    app.worker!.shutdown();
    await waitFor(async () => app.worker!.getState() === 'STOPPED', 'worker shutdown');
    // The time passes with no worker: the timer has nobody to act on it, so the piece stays hidden.
    await sleepUntil(sendAfter, 1500);
    expect(await facilityView(id)).toEqual(HIDDEN);

    const created2 = await createWorker(app.deps, {
      workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH,
      taskQueue: app.deps.config.taskQueue,
    });
    replacement = { ...created2, running: created2.worker.run() };
    await released('outbound_mail', id, 'the piece released after the restart');
    expect(await facilityView(id)).toEqual(SHOWN);
    expect((await fac('POST', `/v1/facility/mail/${id}/printing`)).status).toBe(200);
    expect(await ledger(app, id)).toHaveLength(1);
  });
});
