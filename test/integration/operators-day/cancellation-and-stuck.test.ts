// An operator's day on the real stack: "Request Cancellation" from Temporal on a piece,
// a batch, a mail run and a handling operation (cancelled with one refund while possible,
// refused and recorded after), lost starts and terminated workflows found by `stuck` and
// re-driven by `reconcile`, and the runbook's visibility queries (docs/operators.md).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../../helpers/app';
import { client } from '../../helpers/http';
import { newMember } from '../../helpers/factories';
import { mailFaults } from '../../../services/outbound-mail/submit';
import { sandboxPhotoPng } from '../../../services/outbound-mail/sandbox';
import { outboundMailWorkflowId } from '../../../workflows/outbound-mail/contracts';
import { batchWorkflowId } from '../../../workflows/batches/contracts';
import { mailRunWorkflowId } from '../../../workflows/mail-runs/contracts';
import { handlingWorkflowId } from '../../../workflows/physical-inbound/contracts';
import { FacilityStep, MailStatus, StatusChangedAt } from '../../../workflows/shared/search-attributes';
import { commands } from '../../../scripts/admin';
import type { StuckReport } from '../../../services/operations/operations';
import { balance, ledger, letterForm, letterPdf, newSender, sendLetter, Sender, waitFor } from '../mail-helpers';
import { batchForm, ensureFacility, facilityKeyFor, pdf, recipientsCsv, waitForStatus } from '../batch-helpers';
import { newWorld, receivePiece, World } from '../../helpers/physical-inbound';

jest.setTimeout(120_000);

const README = readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'operators.md'), 'utf8');

/** The query of the runbook's `temporal workflow list` line that contains `marker`, with its `$(date ...)` replaced by `since`. */
function runbookQuery(marker: string, since?: Date): string {
  const line = README.split('\n').find((l) => l.startsWith('temporal workflow list --query') && l.includes(marker));
  if (!line) throw new Error(`docs/operators.md runbook has no query with ${marker}`);
  const query = line.slice(line.indexOf('"') + 1, line.lastIndexOf('"'));
  return since ? query.replace(/\$\(date [^)]*\)/, since.toISOString()) : query;
}

function photoForm(photos: Record<string, Buffer>): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(photos))
    form.append(k, new Blob([new Uint8Array(v)], { type: 'image/png' }), `${k}.png`);
  return form;
}

describe("an operator's day: cancellation from Temporal and stuck work", () => {
  let app: TestApp;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    app = await startTestApp({ env: { MAIL_RECONCILE_GRACE_SECONDS: '1' } });
    api = client(app.baseUrl);
    await ensureFacility(app.deps);
  });
  afterAll(async () => {
    await app.close();
  });

  const handle = (workflowId: string) => app.deps.temporal.workflow.getHandle(workflowId);
  const mailRow = async (id: string) => (await app.deps.db.query(`SELECT * FROM outbound_mail WHERE id = $1`, [id]))[0];
  const incidents = async (objectId: string) =>
    app.deps.db.query(`SELECT * FROM workflow_incidents WHERE object_id = $1 ORDER BY created_at`, [objectId]);
  /** A facility call about piece `id`, with a key of the facility the piece was assigned to (suites share the database). */
  const fac = async (method: string, id: string, step: string, form?: FormData) => {
    const [{ facility_id }] = await app.deps.db.query(`SELECT facility_id FROM outbound_mail WHERE id = $1`, [id]);
    return api(method, `/v1/facility/mail/${id}/${step}`, { key: await facilityKeyFor(app.deps, facility_id), form });
  };

  async function submittedPiece(s: Sender): Promise<string> {
    const created = await sendLetter(app, s, letterForm(await letterPdf()));
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('submitted');
    return created.body.id;
  }

  it('a piece cancelled from Temporal before printing is cancelled and refunded once, with two requests racing a DELETE', async () => {
    const s = await newSender(app, { creditsCents: 5000 });
    const id = await submittedPiece(s);
    const paid = await balance(app, s.memberId);
    expect(paid).toBeLessThan(5000);

    const [, , deleted] = await Promise.all([
      handle(outboundMailWorkflowId(id)).cancel(),
      handle(outboundMailWorkflowId(id)).cancel(),
      api('DELETE', `/v1/mail/${id}`, { key: s.key, headers: s.headers }),
    ]);
    expect(deleted.status).toBe(200);
    await waitFor(async () => (await mailRow(id)).status === 'cancelled', 'cancelled');
    expect(await handle(outboundMailWorkflowId(id)).result()).toBe('cancelled');

    expect(await balance(app, s.memberId)).toBe(5000);
    const lines = await ledger(app, id);
    expect(lines.filter((l) => l.entry_key === `refund:mail:${id}`)).toHaveLength(1);
    expect(lines.map((l) => l.kind).sort()).toEqual(['debit', 'refund']);
    const row = await mailRow(id);
    expect(['cancelled_by_operator', 'cancelled_by_caller']).toContain(row.cancellation_reason);
    // Later requests change nothing.
    const again = await api('DELETE', `/v1/mail/${id}`, { key: s.key, headers: s.headers });
    expect(again.body.already_cancelled).toBe(true);
    expect(await balance(app, s.memberId)).toBe(5000);
  });

  it('a piece cancelled from Temporal after printing started keeps running, records why, and its later steps work', async () => {
    const s = await newSender(app, { creditsCents: 5000 });
    const id = await submittedPiece(s);
    const paid = await balance(app, s.memberId);
    expect((await fac('POST', id, 'printing')).status).toBe(200);
    const h = handle(outboundMailWorkflowId(id));
    await waitFor(
      async () => (await h.describe()).typedSearchAttributes.get(FacilityStep) === 'printing',
      'FacilityStep printing',
    );

    await h.cancel();
    const [incident] = await waitFor(async () => {
      const found = await incidents(id);
      return found.length ? found : null;
    }, 'the refused cancellation incident');
    expect(incident).toMatchObject({
      kind: 'cancel_refused',
      action: 'refused',
      object_type: 'outbound_mail',
      object_status: 'submitted',
    });
    expect(incident.detail).toMatch(/printing has started/);
    expect((await h.describe()).status.name).toBe('RUNNING');
    expect((await mailRow(id)).status).toBe('submitted');
    expect(await balance(app, s.memberId)).toBe(paid);

    // The sender's DELETE answers as before, and the facility's next step still works.
    expect((await api('DELETE', `/v1/mail/${id}`, { key: s.key, headers: s.headers })).body.code).toBe(
      'MAIL_NOT_CANCELLABLE',
    );
    const printed = await fac(
      'POST',
      id,
      'printed',
      photoForm({ pages: sandboxPhotoPng('pages', id), envelope: sandboxPhotoPng('envelope', id) }),
    );
    expect(printed.status).toBe(200);
    expect((await mailRow(id)).status).toBe('ready');
    const shown = (await commands['mail:show'].run(app.deps, { mail: id })) as Awaited<
      ReturnType<typeof import('../../../services/operations/operations').showMail>
    >;
    expect(shown.mail.status).toBe('ready');
    expect(shown.workflow.status).toBe('RUNNING');
    expect(shown.incidents).toEqual([expect.objectContaining({ kind: 'cancel_refused' })]);
    expect(shown.ledger.map((l: { kind: string }) => l.kind)).toEqual(['debit']);
  });

  it('mail:cancel cancels a piece through its workflow with one refund, and refuses after printing with the reason', async () => {
    const s = await newSender(app, { creditsCents: 5000 });
    const id = await submittedPiece(s);
    await expect(commands['mail:cancel'].run(app.deps, { mail: id, reason: 'duplicate' })).rejects.toThrow(/--refund/);
    const out = await commands['mail:cancel'].run(app.deps, { mail: id, refund: true, reason: 'customer called' });
    expect(out).toMatchObject({ status: 'cancelled', already_cancelled: false, refunded_cents: expect.any(Number) });
    expect((out as { refunded_cents: number }).refunded_cents).toBeGreaterThan(0);
    expect(await balance(app, s.memberId)).toBe(5000);
    expect((await mailRow(id)).cancellation_reason).toBe('cancelled_by_operator');
    expect(await commands['mail:cancel'].run(app.deps, { mail: id, refund: true, reason: 'again' })).toMatchObject({
      already_cancelled: true,
      refunded_cents: 0,
    });

    const printing = await submittedPiece(s);
    await fac('POST', printing, 'printing');
    await expect(
      commands['mail:cancel'].run(app.deps, { mail: printing, refund: true, reason: 'too late' }),
    ).rejects.toMatchObject({ code: 'MAIL_NOT_CANCELLABLE' });
    await expect(commands['mail:show'].run(app.deps, { mail: 'not-an-id' })).rejects.toThrow(/not an outbound mail id/);
  });

  it('a batch cancelled from Temporal before the facility starts is cancelled with its refund; after, it is refused', async () => {
    const member = await newMember(app.deps, { creditsCents: 100000 });
    const postcard = await pdf(1);
    const draft = async () =>
      (await api('POST', '/v1/batch-mail', { key: member.key, form: batchForm(postcard, recipientsCsv(3)) })).body
        .batch as { id: string };

    const a = await draft();
    expect((await api('POST', `/v1/batch-mail/${a.id}/confirm`, { key: member.key })).status).toBe(200);
    await waitForStatus(app.baseUrl, member.key, a.id, ['submitted']);
    await handle(batchWorkflowId(a.id)).cancel();
    await waitForStatus(app.baseUrl, member.key, a.id, ['cancelled']);
    expect(await handle(batchWorkflowId(a.id)).result()).toEqual({ status: 'cancelled' });
    expect(await balance(app, member.member_id)).toBe(100000);
    const refunds = await app.deps.db.query(
      `SELECT * FROM credits_ledger WHERE reference_id = $1 AND kind = 'refund'`,
      [a.id],
    );
    expect(refunds).toHaveLength(1);

    const b = await draft();
    await api('POST', `/v1/batch-mail/${b.id}/confirm`, { key: member.key });
    await waitForStatus(app.baseUrl, member.key, b.id, ['submitted']);
    const [{ facility_id }] = await app.deps.db.query(`SELECT facility_id FROM batches WHERE id = $1`, [b.id]);
    const key = await facilityKeyFor(app.deps, facility_id);
    expect((await api('POST', `/v1/facility/batches/${b.id}/start`, { key })).body.batch.status).toBe('in_progress');
    const paid = await balance(app, member.member_id);
    await handle(batchWorkflowId(b.id)).cancel();
    await waitFor(async () => (await incidents(b.id)).length > 0, 'batch incident');
    expect((await incidents(b.id))[0]).toMatchObject({ kind: 'cancel_refused', object_status: 'in_progress' });
    expect((await handle(batchWorkflowId(b.id)).describe()).status.name).toBe('RUNNING');
    // The facility finishes it as usual.
    expect(
      (
        await api('POST', `/v1/facility/batches/${b.id}/pieces`, {
          key,
          json: { status: 'mailed', ranges: [{ from: 1, to: 3 }] },
        })
      ).status,
    ).toBe(200);
    expect((await api('POST', `/v1/facility/batches/${b.id}/finish`, { key, json: {} })).body.batch.status).toBe(
      'completed',
    );
    await waitForStatus(app.baseUrl, member.key, b.id, ['completed']);
    expect(await balance(app, member.member_id)).toBeGreaterThanOrEqual(paid);
  });

  it('a mail run cancelled from Temporal before funding is cancelled with its waiting pieces', async () => {
    const s = await newSender(app, { creditsCents: 5000 });
    await commands['member:set'].run(app.deps, { member: s.memberId, business: 'true', 'agent-auto-fill': 'true' });
    const runId = `run-${randomUUID()}`;
    const windowBefore = app.deps.config.mailRunWindowSeconds;
    app.deps.config.mailRunWindowSeconds = 120;
    try {
      expect(
        (await api('POST', '/v1/mail-runs', { key: s.key, headers: s.headers, json: { mail_run_id: runId } })).status,
      ).toBe(201);
    } finally {
      app.deps.config.mailRunWindowSeconds = windowBefore;
    }
    const child = await sendLetter(app, s, letterForm(await letterPdf(), { mail_run_id: runId }));
    expect(child.body.status).toBe('funding_pending');
    const [run] = await app.deps.db.query(`SELECT id FROM mail_runs WHERE member_id = $1 AND mail_run_id = $2`, [
      s.memberId,
      runId,
    ]);

    await handle(mailRunWorkflowId(run.id)).cancel();
    expect(await handle(mailRunWorkflowId(run.id)).result()).toBe('cancelled');
    await waitFor(async () => (await mailRow(child.body.id)).status === 'cancelled', 'the run child cancelled');
    expect((await mailRow(child.body.id)).cancellation_reason).toBe('mail_run_cancelled');
    expect(await balance(app, s.memberId)).toBe(5000);
  });

  describe('handling', () => {
    let w: World;
    beforeAll(async () => {
      w = await newWorld(app, { creditsCents: 5000 });
    });

    it('an approved proposal cancelled from Temporal before the facility accepts is rejected with its refund', async () => {
      const item = await receivePiece(app, w);
      const version = (await api('GET', `/v1/agent-inbox/${item}/handling`, { key: w.agentKey })).body.version;
      const op = (
        await api('POST', `/v1/agent-inbox/${item}/handling`, {
          key: w.agentKey,
          headers: { 'x-service-md-version': '1', 'idempotency-key': randomUUID() },
          json: {
            expected_version: version,
            action_type: 'forward_original',
            mail_class: 'priority',
            destination: {
              name: 'Ada Lovelace',
              address_line1: '1 Main St',
              city: 'Austin',
              state: 'TX',
              postal_code: '78701',
              country: 'US',
            },
          },
        })
      ).body.operation;
      const before = await balance(app, w.memberId);
      expect(
        (await api('POST', `/v1/handling/${op.id}/approve`, { key: w.memberKey, json: { expected_version: 1 } })).body
          .operation.charged_cents,
      ).toBe(1750);

      await handle(handlingWorkflowId(op.id)).cancel();
      expect(await handle(handlingWorkflowId(op.id)).result()).toMatchObject({ status: 'rejected' });
      const [row] = await app.deps.db.query(
        `SELECT status, rejected_by, refunded_cents FROM handling_operations WHERE id = $1`,
        [op.id],
      );
      expect(row).toEqual({ status: 'rejected', rejected_by: 'system', refunded_cents: 1750 });
      expect(await balance(app, w.memberId)).toBe(before);
    });
  });

  it('stuck shows a lost start and a terminated workflow; reconcile starts and restarts them, and each piece then cancels with one refund', async () => {
    const s = await newSender(app, { creditsCents: 5000 });
    mailFaults.afterCommit = () => {
      throw new Error('the API died after the commit');
    };
    try {
      expect((await sendLetter(app, s, letterForm(await letterPdf()))).status).toBe(500);
    } finally {
      delete mailFaults.afterCommit;
    }
    const [{ id: lost }] = await app.deps.db.query(`SELECT id FROM outbound_mail WHERE member_id = $1`, [s.memberId]);
    const terminated = await submittedPiece(s);
    await handle(outboundMailWorkflowId(terminated)).terminate('operator pressed Terminate');

    const stuck = await waitFor(
      async () => {
        const r = (await commands.stuck.run(app.deps, { 'older-than': '1s', member: s.memberId })) as StuckReport;
        // All three views: the terminated piece counts as in its status too long only once it is over a second old.
        const ok =
          r.lost_starts.some((l) => l.object_id === lost) &&
          r.closed_workflows.some((c) => c.object_id === terminated) &&
          r.in_status_too_long.some((p) => p.id === terminated);
        return ok ? r : null;
      },
      'stuck to list both',
      30000,
    );
    expect(stuck.closed_workflows.find((c) => c.object_id === terminated)).toMatchObject({
      object_type: 'outbound_mail',
      object_status: 'submitted',
      workflow_status: 'TERMINATED',
    });
    expect(stuck.in_status_too_long.find((p) => p.id === terminated)).toMatchObject({
      status: 'submitted',
      workflow_status: 'TERMINATED',
    });

    const done = (await commands.reconcile.run(app.deps, {})) as Awaited<
      ReturnType<typeof import('../../../services/operations/operations').runReconcilersNow>
    >;
    expect(done.lost_mail_starts_started).toContain(lost);
    expect(done.closed_workflows).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ object_id: terminated, action: 'restarted', workflow_status: 'TERMINATED' }),
      ]),
    );
    expect(done.schedules).toEqual(expect.arrayContaining([`closed-workflow-reconciler-${app.deps.config.taskQueue}`]));
    expect((await handle(outboundMailWorkflowId(terminated)).describe()).status.name).toBe('RUNNING');
    expect((await incidents(terminated)).map((i: { kind: string; action: string }) => [i.kind, i.action])).toEqual([
      ['workflow_closed', 'restarted'],
    ]);
    expect((await incidents(lost)).map((i: { kind: string; action: string }) => [i.kind, i.action])).toEqual([
      ['lost_start', 'started'],
    ]);
    // A second pass finds nothing new.
    const again = (await commands.reconcile.run(app.deps, {})) as typeof done;
    expect(again.closed_workflows.filter((c) => c.object_id === terminated)).toEqual([]);

    for (const id of [lost, terminated]) {
      const del = await api('DELETE', `/v1/mail/${id}`, { key: s.key, headers: s.headers });
      expect(del.status).toBe(200);
      expect(del.body.outbound_mail.status).toBe('cancelled');
      expect((await ledger(app, id)).filter((l) => l.kind === 'refund')).toHaveLength(1);
    }
    expect(await balance(app, s.memberId)).toBe(5000);
  });

  it('the runbook queries (docs/operators.md) return exactly the pieces they describe', async () => {
    const s = await newSender(app, { creditsCents: 5000 });
    const approver = await newSender(app, { creditsCents: 5000, credential: { force_approval: true } });
    // The dev server is shared: only this test's members' workflows count.
    const mine = ` AND TaskQueue = "${app.deps.config.taskQueue}" AND MemberId IN ("${s.memberId}", "${approver.memberId}")`;
    const list = async (query: string) => {
      const ids: string[] = [];
      for await (const wf of app.deps.temporal.workflow.list({ query: query + mine })) ids.push(wf.workflowId);
      return ids.sort();
    };
    const early = await submittedPiece(s);
    const printing = await submittedPiece(s);
    await fac('POST', printing, 'printing');
    const since = new Date();
    await new Promise((r) => setTimeout(r, 1100));
    const late = await submittedPiece(s);
    const pending = (await sendLetter(app, approver, letterForm(await letterPdf()))).body;
    expect(pending.status).toBe('pending_approval');
    const pendingId: string = pending.id;

    const stuckQuery = runbookQuery('StatusChangedAt <', since);
    await waitFor(async () => {
      const got = await list(stuckQuery);
      return JSON.stringify(got) === JSON.stringify([early, printing].map(outboundMailWorkflowId).sort());
    }, `${stuckQuery} to list the two older pieces`);
    await waitFor(
      async () =>
        JSON.stringify(await list(runbookQuery("FacilityStep = 'printing'"))) ===
        JSON.stringify([outboundMailWorkflowId(printing)]),
      'printing query',
    );
    await waitFor(
      async () =>
        JSON.stringify(await list(runbookQuery("MailStatus = 'pending_approval'"))) ===
        JSON.stringify([outboundMailWorkflowId(pendingId)]),
      'approval query',
    );
    expect(late).toBeDefined();

    await handle(outboundMailWorkflowId(early)).terminate('runbook test');
    await waitFor(
      async () =>
        JSON.stringify(await list(runbookQuery("ExecutionStatus IN ('Terminated'"))) ===
        JSON.stringify([outboundMailWorkflowId(early)]),
      'closed query',
    );

    const d = await handle(outboundMailWorkflowId(late)).describe();
    expect(d.typedSearchAttributes.get(MailStatus)).toBe('submitted');
    expect(d.typedSearchAttributes.get(StatusChangedAt)).toBeInstanceOf(Date);
    expect(await d.staticSummary()).toContain(late);
  });
});
