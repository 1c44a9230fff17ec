// One scenario per workflow shape, driven through the real API, worker and stack like the
// integration tests. Each answers the workflows it made, by the history file to record
// them in; test/histories/record.ts waits for them to close and writes their histories.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestApp } from '../helpers/app';
import { client, HttpResponse } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { fixtureImage, newWorld, receivePiece, waitFor } from '../helpers/physical-inbound';
import { letterForm, letterPdf, newSender, sendLetter, Sender } from '../integration/mail-helpers';
import { batchForm, facilityKeyFor, pdf, recipientsCsv, testKeyFor, waitForStatus } from '../integration/batch-helpers';
import { answerChallenges, startReceiver } from '../integration/webhook-helpers';
import { sandboxPhotoPng } from '../../services/outbound-mail/sandbox';
import { setMemberRunSettings } from '../../services/mail-runs/mail-runs';
import { outboundMailWorkflowId } from '../../workflows/outbound-mail/contracts';
import { batchRenderWorkflowId, batchWorkflowId } from '../../workflows/batches/contracts';
import { mailRunWorkflowId } from '../../workflows/mail-runs/contracts';
import {
  handlingWorkflowId,
  inboundReceivedWorkflowId,
  scanBundleWorkflowId,
} from '../../workflows/physical-inbound/contracts';
import { webhookDeliveryWorkflowId, webhookDispatchWorkflowId } from '../../workflows/webhooks/contracts';
import { inboundExtractionWorkflowId } from '../../workflows/inbound-email/contracts';
import {
  ownerNotifierWorkflowId,
  RECONCILE_NOTIFICATIONS_WORKFLOW,
  ReconcileNotificationsInput,
} from '../../workflows/notifications/contracts';
import {
  autoReloadWorkflowId,
  PAYMENTS_RECONCILE_WORKFLOW,
  PaymentsReconcileInput,
  stripeEventWorkflowId,
} from '../../workflows/billing/contracts';
import { saveAutoReloadSettings } from '../../services/billing/auto-reload';
import {
  chargedReload,
  deliver,
  newPurchase,
  processed,
  saveCard,
  sessionEvent,
} from '../integration/payments-helpers';

export interface ScenarioContext {
  app: TestApp;
  /** The oldest active facility: live pieces are assigned to it. */
  facility: { facility_id: string; key: string };
}

export interface Scenario {
  /** The history files this scenario records (`<name>.json` under test/fixtures/histories). */
  files: string[];
  /** Drives the workflows; answers history file -> workflow id. */
  run(ctx: ScenarioContext): Promise<Record<string, string>>;
}

const MD = { 'x-service-md-version': '1' };

/** The answer when its status is the expected one; anything else stops the recording. */
function must<T>(res: HttpResponse<T>, status: number, what: string): T {
  if (res.status !== status)
    throw new Error(`${what}: answered ${res.status}, expected ${status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

function photoForm(photos: Record<string, Buffer>, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const [k, v] of Object.entries(photos))
    form.append(k, new Blob([new Uint8Array(v)], { type: 'image/png' }), `${k}.png`);
  return form;
}

/** A live piece through every facility step: printing, printed, dispatched, delivered, with photos. */
async function facilityDelivers(ctx: ScenarioContext, id: string, opts: { startPrinting?: boolean } = {}) {
  const fac = (suffix: string, form?: FormData) =>
    client(ctx.app.baseUrl)('POST', `/v1/facility/mail/${id}${suffix}`, { key: ctx.facility.key, form });
  if (opts.startPrinting !== false) must(await fac('/printing'), 200, 'printing');
  must(
    await fac(
      '/printed',
      photoForm({ pages: sandboxPhotoPng('pages', id), envelope: sandboxPhotoPng('envelope', id) }),
    ),
    200,
    'printed',
  );
  must(
    await fac(
      '/dispatched',
      photoForm(
        { receipt: sandboxPhotoPng('receipt', id) },
        { carrier: 'usps', tracking_number: '9400100000000000000001', dispatch_method: 'post_office_counter' },
      ),
    ),
    200,
    'dispatched',
  );
  const delivered = must(
    await fac('/delivered', photoForm({ delivery: sandboxPhotoPng('delivery', id) })),
    200,
    'delivered',
  );
  if (delivered.status !== 'delivered') throw new Error(`piece ${id} is ${delivered.status}`);
}

async function liveLetter(
  ctx: ScenarioContext,
  s: Sender,
  fields: Record<string, string> = {},
): Promise<{ id: string; status: string }> {
  return must(await sendLetter(ctx.app, s, letterForm(await letterPdf(), fields)), 201, 'POST /v1/mail');
}

export const SCENARIOS: Scenario[] = [
  {
    // (a) requires_approval -> the owner approves -> facility steps to delivered.
    files: ['outbound-mail-approval'],
    async run(ctx) {
      const s = await newSender(ctx.app, { creditsCents: 100000 });
      const piece = await liveLetter(ctx, s, { requires_approval: 'true' });
      if (piece.status !== 'pending_approval') throw new Error(`piece is ${piece.status}`);
      must(await client(ctx.app.baseUrl)('POST', `/v1/mail/${piece.id}/approve`, { key: s.memberKey }), 200, 'approve');
      await facilityDelivers(ctx, piece.id, { startPrinting: false });
      return { 'outbound-mail-approval': outboundMailWorkflowId(piece.id) };
    },
  },
  {
    // (b) a live piece through every facility step; and a sandbox piece advanced to delivered.
    files: ['outbound-mail-facility', 'outbound-mail-sandbox'],
    async run(ctx) {
      const live = await liveLetter(ctx, await newSender(ctx.app, { creditsCents: 100000 }), {
        mail_class: 'priority',
      });
      await facilityDelivers(ctx, live.id);
      const s = await newSender(ctx.app, { environment: 'test' });
      const sandbox = await liveLetter(ctx, s, { mail_class: 'certified' });
      for (const step of ['ready', 'mailed', 'delivered']) {
        const moved = must(
          await client(ctx.app.baseUrl)('POST', `/v1/test/mail/${sandbox.id}/advance`, { key: s.key }),
          200,
          `advance to ${step}`,
        );
        if (moved.status !== step) throw new Error(`advance answered ${moved.status}, expected ${step}`);
      }
      return {
        'outbound-mail-facility': outboundMailWorkflowId(live.id),
        'outbound-mail-sandbox': outboundMailWorkflowId(sandbox.id),
      };
    },
  },
  {
    // (b2) a live piece whose workflow renders its print proof (patch 'render-print-proof'),
    // waited for before the facility steps so the history holds the proof activity's result.
    files: ['outbound-mail-print-proof'],
    async run(ctx) {
      const s = await newSender(ctx.app, { creditsCents: 100000 });
      const live = await liveLetter(ctx, s, { mail_class: 'priority' });
      await waitFor(
        async () => (await client(ctx.app.baseUrl)('GET', `/v1/mail/${live.id}`, { key: s.key })).body.proof_url,
        'the print proof',
        60000,
      );
      await facilityDelivers(ctx, live.id);
      return { 'outbound-mail-print-proof': outboundMailWorkflowId(live.id) };
    },
  },
  {
    // (b3) a live piece whose submission announced it (input.announced) and stored its
    // print proof (printProof 'stored'): a first workflow task with no marker and no
    // activity; a piece of 11 pages, whose proof the worker renders (printProof 'render');
    // and a requires_approval piece, announced the same way, approved and delivered.
    files: [
      'outbound-mail-announced-by-submission',
      'outbound-mail-proof-by-worker',
      'outbound-mail-approval-announced-by-submission',
    ],
    async run(ctx) {
      const s = await newSender(ctx.app, { creditsCents: 100000 });
      const live = await liveLetter(ctx, s, { mail_class: 'priority' });
      await facilityDelivers(ctx, live.id);
      const long = must(await sendLetter(ctx.app, s, letterForm(await letterPdf(11))), 201, 'POST /v1/mail (11 pages)');
      await waitFor(
        async () => (await client(ctx.app.baseUrl)('GET', `/v1/mail/${long.id}`, { key: s.key })).body.proof_url,
        'the print proof',
        60000,
      );
      await facilityDelivers(ctx, long.id);
      const pending = await liveLetter(ctx, s, { requires_approval: 'true' });
      if (pending.status !== 'pending_approval') throw new Error(`piece is ${pending.status}`);
      must(
        await client(ctx.app.baseUrl)('POST', `/v1/mail/${pending.id}/approve`, { key: s.memberKey }),
        200,
        'approve',
      );
      await facilityDelivers(ctx, pending.id, { startPrinting: false });
      return {
        'outbound-mail-announced-by-submission': outboundMailWorkflowId(live.id),
        'outbound-mail-proof-by-worker': outboundMailWorkflowId(long.id),
        'outbound-mail-approval-announced-by-submission': outboundMailWorkflowId(pending.id),
      };
    },
  },
  {
    // (c) a live batch: draft -> confirm -> submitted -> facility start, pieces, finish -> completed;
    // and a sandbox batch advanced to completed.
    files: ['batch-live', 'batch-sandbox'],
    async run(ctx) {
      const api = client(ctx.app.baseUrl);
      const member = await newMember(ctx.app.deps, { creditsCents: 100000 });
      const live = must(
        await api('POST', '/v1/batch-mail', { key: member.key, form: batchForm(await pdf(1), recipientsCsv(20)) }),
        201,
        'live draft',
      ).batch;
      must(await api('POST', `/v1/batch-mail/${live.id}/confirm`, { key: member.key }), 200, 'confirm');
      await waitForStatus(ctx.app.baseUrl, member.key, live.id, ['submitted']);
      const [{ facility_id }] = await ctx.app.deps.db.query(`SELECT facility_id FROM batches WHERE id = $1`, [live.id]);
      const facilityKey = await facilityKeyFor(ctx.app.deps, facility_id);
      const fac = (suffix: string, json?: unknown) =>
        api('POST', `/v1/facility/batches/${live.id}${suffix}`, { key: facilityKey, json });
      must(await fac('/start'), 200, 'start');
      must(await fac('/pieces', { status: 'mailed', ranges: [{ from: 1, to: 20 }] }), 200, 'pieces');
      const finished = must(await fac('/finish', {}), 200, 'finish');
      if (finished.batch.status !== 'completed') throw new Error(`batch is ${finished.batch.status}`);

      const testKey = await testKeyFor(ctx.app.deps, member.member_id);
      const sandbox = must(
        await api('POST', '/v1/batch-mail', { key: testKey, form: batchForm(await pdf(1), recipientsCsv(5)) }),
        201,
        'sandbox draft',
      ).batch;
      must(await api('POST', `/v1/batch-mail/${sandbox.id}/confirm`, { key: testKey }), 200, 'sandbox confirm');
      await waitForStatus(ctx.app.baseUrl, testKey, sandbox.id, ['submitted']);
      for (let i = 0; i < 2; i++)
        must(await api('POST', `/v1/batch-mail/${sandbox.id}/advance`, { key: testKey }), 200, 'sandbox advance');
      return { 'batch-live': batchWorkflowId(live.id), 'batch-sandbox': batchWorkflowId(sandbox.id) };
    },
  },
  {
    // (c2) a merged sandbox batch from an HTML template file: its render workflow renders the rows
    // and makes it a draft.
    files: ['batch-render'],
    async run(ctx) {
      const api = client(ctx.app.baseUrl);
      const member = await newMember(ctx.app.deps, { creditsCents: 0 });
      const testKey = await testKeyFor(ctx.app.deps, member.member_id);
      const form = new FormData();
      for (const [k, v] of Object.entries({ job_name: 'Merged', mail_type: 'letter', mailing_class: 'first_class' }))
        form.append(k, v);
      form.append('template', new Blob(['<h1>Hello {{first_name}}</h1>'], { type: 'text/html' }), 'letter.html');
      const csv = [
        'name,address,city,state,zip,first_name',
        'A One,1 Main St,Austin,TX,78701,Ada',
        'B Two,2 Main St,Austin,TX,78701,Bo',
      ];
      form.append('recipients', new Blob([csv.join('\n') + '\n'], { type: 'text/csv' }), 'recipients.csv');
      const merged = must(await api('POST', '/v1/batch-mail', { key: testKey, form }), 201, 'merged draft').batch;
      await waitForStatus(ctx.app.baseUrl, testKey, merged.id, ['draft']);
      return { 'batch-render': batchRenderWorkflowId(merged.id) };
    },
  },
  {
    // (d) a Business mail run: one child commits at once, one waits for funding; the commit
    // funds the run, which closes; the waiting child is then delivered by the facility.
    files: ['mail-run', 'outbound-mail-run-child'],
    async run(ctx) {
      const s = await newSender(ctx.app, { creditsCents: 100000 });
      await setMemberRunSettings(ctx.app.deps, s.memberId, { business: true, agentAutoFill: true });
      const api = client(ctx.app.baseUrl);
      const runId = `run-${randomUUID()}`;
      must(
        await api('POST', '/v1/mail-runs', { key: s.key, headers: s.headers, json: { mail_run_id: runId } }),
        201,
        'open run',
      );
      await liveLetter(ctx, s, { mail_run_id: runId, mail_class: 'priority' });
      const waiting = await liveLetter(ctx, s, { mail_run_id: runId, mail_class: 'first_class' });
      if (waiting.status !== 'funding_pending') throw new Error(`child is ${waiting.status}`);
      const committed = must(
        await api('POST', `/v1/mail-runs/${runId}/commit`, { key: s.key, headers: s.headers }),
        200,
        'commit',
      );
      if (committed.status !== 'funded') throw new Error(`run is ${committed.status}`);
      await waitFor(
        async () =>
          (
            await ctx.app.deps.db.query(`SELECT 1 FROM outbound_mail WHERE id = $1 AND status = 'submitted'`, [
              waiting.id,
            ])
          ).length > 0,
        'the child submitted',
      );
      await facilityDelivers(ctx, waiting.id);
      const [run] = await ctx.app.deps.db.query(`SELECT id FROM mail_runs WHERE member_id = $1 AND mail_run_id = $2`, [
        s.memberId,
        runId,
      ]);
      return { 'mail-run': mailRunWorkflowId(run.id), 'outbound-mail-run-child': outboundMailWorkflowId(waiting.id) };
    },
  },
  {
    // (e) a physical letter received, an Open & Scan proposed, approved, accepted and
    // fulfilled with two scanned pages; the operation completes after the scan's OCR.
    files: ['handling-open-and-scan', 'scan-bundle', 'inbound-received'],
    async run(ctx) {
      const api = client(ctx.app.baseUrl);
      const w = await newWorld(ctx.app, { creditsCents: 5000 });
      const item = await receivePiece(ctx.app, w);
      const version = must(
        await api('GET', `/v1/agent-inbox/${item}/handling`, { key: w.agentKey }),
        200,
        'handling',
      ).version;
      const op = must(
        await api('POST', `/v1/agent-inbox/${item}/handling`, {
          key: w.agentKey,
          headers: { ...MD, 'idempotency-key': randomUUID() },
          json: { expected_version: version, action_type: 'open_and_scan' },
        }),
        201,
        'propose',
      ).operation;
      must(
        await api('POST', `/v1/handling/${op.id}/approve`, { key: w.memberKey, json: { expected_version: 1 } }),
        200,
        'approve',
      );
      const decide = (json: unknown) =>
        api('POST', `/v1/facility/internal-inbound/handling/${op.id}/decision`, { key: w.facilityKey, json });
      const accepted = must(await decide({ decision: 'accept', expected_version: 2 }), 200, 'accept').operation;
      const form = new FormData();
      form.append('page_1', new Blob([fixtureImage('sample-envelope.png')], { type: 'image/png' }), 'p1.png');
      form.append('page_2', new Blob([fixtureImage('sample-letter.png')], { type: 'image/png' }), 'p2.png');
      form.append('source_kinds', 'envelope,letter');
      must(
        await api('POST', `/v1/facility/scan-requests/${accepted.scan_request_id}/fulfil`, {
          key: w.facilityKey,
          form,
        }),
        201,
        'fulfil',
      );
      const [bundle] = await ctx.app.deps.db.query(`SELECT id FROM scan_bundles WHERE request_id = $1`, [
        accepted.scan_request_id,
      ]);
      return {
        'handling-open-and-scan': handlingWorkflowId(op.id),
        'scan-bundle': scanBundleWorkflowId(bundle.id),
        'inbound-received': inboundReceivedWorkflowId(item),
      };
    },
  },
  {
    // (f) an agent's webhook receiver: a sandbox letter's mail.submitted goes through the
    // dispatcher, which ends when nothing is queued; and a test delivery's own workflow.
    files: ['webhook-dispatch', 'webhook-delivery-test'],
    async run(ctx) {
      const receiver = await startReceiver(answerChallenges);
      try {
        const api = client(ctx.app.baseUrl);
        const s = await newSender(ctx.app, { environment: 'test' });
        must(
          await api('PUT', '/v1/webhooks/settings', {
            key: s.memberKey,
            json: { agent_id: s.agentId, webhook_url: receiver.url },
          }),
          200,
          'webhook settings',
        );
        await liveLetter(ctx, s);
        await receiver.waitFor(1);
        const dispatcher = webhookDispatchWorkflowId(ctx.app.deps.config.taskQueue, `test:agent:${s.agentId}`);
        await ctx.app.deps.temporal.workflow.getHandle(dispatcher).result();
        const tested = must(
          await api('POST', '/v1/test/webhook', { key: s.memberKey, json: { agent_id: s.agentId } }),
          200,
          'test webhook',
        );
        if (!tested.delivered) throw new Error(`test delivery: ${JSON.stringify(tested)}`);
        const [delivery] = await ctx.app.deps.db.query(
          `SELECT id, series FROM webhook_deliveries WHERE agent_id = $1 AND kind = 'test'`,
          [s.agentId],
        );
        return {
          'webhook-dispatch': dispatcher,
          'webhook-delivery-test': webhookDeliveryWorkflowId(delivery.id, delivery.series),
        };
      } finally {
        await receiver.close();
      }
    },
  },
  {
    // (g) forwarded emails through the intake: a bill with a text PDF, and a scanned letter
    // whose PDF goes to OCR.
    files: ['inbound-extraction', 'inbound-extraction-ocr'],
    async run(ctx) {
      const api = client(ctx.app.baseUrl);
      const member = await newMember(ctx.app.deps);
      const alias = must(
        await api('POST', '/v1/inbound-forwarding-addresses', { key: member.key, json: { label: 'Home' } }),
        201,
        'alias',
      ).forwarding_address.email;
      const intake = async (name: string) =>
        must(
          await api('POST', `/v1/intake/email?recipient=${encodeURIComponent(alias)}`, {
            raw: readFileSync(path.join(__dirname, '..', 'fixtures', 'inbound', name)),
            headers: { 'content-type': 'message/rfc822', 'x-intake-secret': ctx.app.deps.config.intakeSecret },
          }),
          202,
          `intake of ${name}`,
        ).item_id as string;
      const bill = await intake('utility-bill.eml');
      const scan = await intake('scanned-letter.eml');
      return {
        'inbound-extraction': inboundExtractionWorkflowId(bill),
        'inbound-extraction-ocr': inboundExtractionWorkflowId(scan),
      };
    },
  },
  {
    // (h) scheduled send (send_after): a live piece held until its timer fires, then
    // delivered by the facility; a live batch held the same way, then fulfilled.
    files: ['outbound-mail-scheduled', 'batch-scheduled'],
    async run(ctx) {
      const api = client(ctx.app.baseUrl);
      const released = (table: string, id: string) =>
        waitFor(
          async () =>
            (
              await ctx.app.deps.db.query(
                `SELECT 1 FROM ${table} WHERE id = $1 AND released_to_facility_at IS NOT NULL`,
                [id],
              )
            ).length > 0,
          `${table} ${id} released`,
        );
      const piece = await liveLetter(ctx, await newSender(ctx.app, { creditsCents: 100000 }), {
        send_after: new Date(Date.now() + 3000).toISOString(),
      });
      await released('outbound_mail', piece.id);
      await facilityDelivers(ctx, piece.id);

      const member = await newMember(ctx.app.deps, { creditsCents: 100000 });
      const batch = must(
        await api('POST', '/v1/batch-mail', {
          key: member.key,
          form: batchForm(await pdf(1), recipientsCsv(5), { send_after: new Date(Date.now() + 8000).toISOString() }),
        }),
        201,
        'scheduled draft',
      ).batch;
      must(await api('POST', `/v1/batch-mail/${batch.id}/confirm`, { key: member.key }), 200, 'confirm');
      await waitForStatus(ctx.app.baseUrl, member.key, batch.id, ['submitted']);
      await released('batches', batch.id);
      const [{ facility_id }] = await ctx.app.deps.db.query(`SELECT facility_id FROM batches WHERE id = $1`, [
        batch.id,
      ]);
      const facilityKey = await facilityKeyFor(ctx.app.deps, facility_id);
      const fac = (suffix: string, json?: unknown) =>
        api('POST', `/v1/facility/batches/${batch.id}${suffix}`, { key: facilityKey, json });
      must(await fac('/start'), 200, 'start');
      must(await fac('/pieces', { status: 'mailed', ranges: [{ from: 1, to: 5 }] }), 200, 'pieces');
      const finished = must(await fac('/finish', {}), 200, 'finish');
      if (finished.batch.status !== 'completed') throw new Error(`batch is ${finished.batch.status}`);
      return {
        'outbound-mail-scheduled': outboundMailWorkflowId(piece.id),
        'batch-scheduled': batchWorkflowId(batch.id),
      };
    },
  },
  {
    // (i) owner notifications: three letters wait for approval at once; the member's
    // notifier sends the first at once and the other two as one digest when the window
    // (NOTIFICATION_DIGEST_WINDOW_SECONDS, short in the recorder) ends, then finds nothing
    // more and ends. And one run of the notifications reconciler.
    files: ['owner-notifier', 'notifications-reconciler'],
    async run(ctx) {
      const s = await newSender(ctx.app, { creditsCents: 100000, credential: { force_approval: true } });
      await Promise.all([1, 2, 3].map(() => liveLetter(ctx, s)));
      await waitFor(async () => {
        const [{ n }] = await ctx.app.deps.db.query(
          `SELECT count(*)::int AS n FROM notifications WHERE member_id = $1 AND status IN ('sent','digested') AND NOT is_digest`,
          [s.memberId],
        );
        return n === 3;
      }, 'the approvals told');
      const input: ReconcileNotificationsInput = {
        approvalExpiryNoticeSeconds: 172800,
        approvalTimeoutSeconds: 30 * 86400,
        overdueSeconds: 60,
      };
      const reconciler = await ctx.app.deps.temporal.workflow.start(RECONCILE_NOTIFICATIONS_WORKFLOW, {
        taskQueue: ctx.app.deps.config.taskQueue,
        workflowId: `notifications-reconciler-${randomUUID()}`,
        args: [input],
      });
      return {
        'owner-notifier': ownerNotifierWorkflowId(ctx.app.deps.config.taskQueue, s.memberId),
        'notifications-reconciler': reconciler.workflowId,
      };
    },
  },
  {
    // A paid Checkout Session's signed completion fulfilled by its event workflow; an
    // automatic reload charged when a live letter takes the balance below the threshold; one
    // run of the payments reconciler.
    files: ['stripe-event', 'auto-reload', 'payments-reconciler'],
    async run(ctx) {
      const s = await newSender(ctx.app, { creditsCents: 0 });
      const purchase = await newPurchase(ctx.app, s.memberId, 5000);
      const completed = sessionEvent('checkout.session.completed', purchase);
      const status = await deliver(ctx.app, completed);
      if (status !== 200) throw new Error(`the Stripe webhook answered ${status}`);
      const outcome = await processed(ctx.app, completed.id);
      if (!outcome.startsWith('credited')) throw new Error(`the completion was ${outcome}`);

      const saved = await saveCard(ctx.app, s.memberId);
      if (!saved.startsWith('card saved')) throw new Error(`the card setup was ${saved}`);
      await saveAutoReloadSettings(ctx.app.deps, s.memberId, {
        enabled: true,
        thresholdCents: 4999,
        amountCents: ctx.app.deps.config.stripe.purchaseMinCents,
      });
      await liveLetter(ctx, s);
      const reload = await chargedReload(ctx.app, s.memberId, 1);

      const input: PaymentsReconcileInput = { graceSeconds: 3600 };
      const reconciler = await ctx.app.deps.temporal.workflow.start(PAYMENTS_RECONCILE_WORKFLOW, {
        taskQueue: ctx.app.deps.config.taskQueue,
        workflowId: `payments-reconciler-${randomUUID()}`,
        args: [input],
      });
      return {
        'stripe-event': stripeEventWorkflowId(completed.id),
        'auto-reload': autoReloadWorkflowId(reload.id),
        'payments-reconciler': reconciler.workflowId,
      };
    },
  },
];
