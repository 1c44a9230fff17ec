// Business mail runs against the real stack: who may open a run, children that wait for
// funding and children that commit immediately, commit answering 202 until a human acts,
// the window closing on time (funded, cancelled or closed), DELETE before and after
// funding, and exactly one debit per child under concurrent commits.
import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { topUp } from '../../services/billing/credits';
import { setMemberRunSettings } from '../../services/mail-runs/mail-runs';
import { commands } from '../../scripts/admin';
import {
  api,
  balance,
  ledger,
  letterForm,
  letterPdf,
  mailEvents,
  newSender,
  sendLetter,
  Sender,
  waitFor,
} from './mail-helpers';

describe('Business mail runs', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });
  // Most tests need time to commit by hand; the window tests shorten it.
  beforeEach(() => {
    app.deps.config.mailRunWindowSeconds = 120;
  });

  async function businessSender(opts: { creditsCents?: number } = {}): Promise<Sender> {
    const s = await newSender(app, { creditsCents: opts.creditsCents ?? 100000 });
    await setMemberRunSettings(app.deps, s.memberId, { business: true, agentAutoFill: true });
    return s;
  }
  const newRunId = () => `run-${randomUUID()}`;
  const open = (s: Sender, id: string) =>
    api(app)('POST', '/v1/mail-runs', { key: s.key, headers: s.headers, json: { mail_run_id: id } });
  const commit = (s: Sender, id: string) =>
    api(app)('POST', `/v1/mail-runs/${id}/commit`, { key: s.key, headers: s.headers });
  const cancel = (s: Sender, id: string) =>
    api(app)('DELETE', `/v1/mail-runs/${id}`, { key: s.key, headers: s.headers });
  const getRun = (key: string, id: string) => api(app)('GET', `/v1/mail-runs/${id}`, { key });
  const child = async (s: Sender, id: string, mailClass = 'first_class', extra: Record<string, string> = {}) =>
    sendLetter(app, s, letterForm(await letterPdf(), { mail_run_id: id, mail_class: mailClass, ...extra }));
  const mailRow = async (id: string) => (await app.deps.db.query(`SELECT * FROM outbound_mail WHERE id = $1`, [id]))[0];
  const runRow = async (s: Sender, id: string) =>
    (await app.deps.db.query(`SELECT * FROM mail_runs WHERE member_id = $1 AND mail_run_id = $2`, [s.memberId, id]))[0];
  const statusOf = async (id: string) => (await mailRow(id)).status as string;

  it('opens only for a live agent key without force_approval of a Business member whose human authorised Auto-Fill', async () => {
    const member = await newMember(app.deps, { creditsCents: 1000 });
    const agent = await newAgent(app.baseUrl, member.key);
    const live = await newCredential(app.baseUrl, member.key, agent.id, { environment: 'live' });
    const test = await newCredential(app.baseUrl, member.key, agent.id, { environment: 'test' });
    const forced = await newCredential(app.baseUrl, member.key, agent.id, {
      environment: 'live',
      force_approval: true,
    });
    const headers = { 'x-service-md-version': '1' };
    const post = (key: string, body: unknown) => api(app)('POST', '/v1/mail-runs', { key, headers, json: body });
    const id = newRunId();

    expect((await post(member.key, { mail_run_id: id })).body).toMatchObject({ reason: 'agent_key_required' });
    const testKey = await post(test.key, { mail_run_id: id });
    expect(testKey.status).toBe(403);
    expect(testKey.body.reason).toBe('live_key_required');
    const notBusiness = await post(live.key, { mail_run_id: id });
    expect(notBusiness.status).toBe(403);
    expect(notBusiness.body).toMatchObject({ code: 'BUSINESS_REQUIRED', reason: 'business_required' });

    // The operator CLI records the human's decisions.
    const set = await commands['member:set'].run(app.deps, { member: member.member_id, business: 'true' });
    expect(set).toEqual({ member_id: member.member_id, business: true, agent_auto_fill: false });
    const noAutoFill = await post(live.key, { mail_run_id: id });
    expect(noAutoFill.status).toBe(403);
    expect(noAutoFill.body).toMatchObject({ code: 'AUTO_FILL_NOT_AUTHORISED' });
    await commands['member:set'].run(app.deps, { member: member.member_id, 'agent-auto-fill': 'true' });

    const forcedRes = await post(forced.key, { mail_run_id: id });
    expect(forcedRes.status).toBe(409);
    expect(forcedRes.body.code).toBe('MAIL_RUN_FORCE_APPROVAL');
    const bad = await post(live.key, { mail_run_id: 'has space', extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.fields.map((f: { path: string }) => f.path).sort()).toEqual(['body', 'mail_run_id']);
    expect(await app.deps.db.query(`SELECT 1 FROM mail_runs WHERE member_id = $1`, [member.member_id])).toHaveLength(0);

    const opened = await post(live.key, { mail_run_id: id });
    expect(opened.status).toBe(201);
    expect(opened.body).toMatchObject({
      id,
      object: 'mail_run',
      status: 'open',
      agent_id: agent.id,
      window_seconds: 120,
      children: [],
      total_cents: 0,
      test_mode: false,
    });
    expect(Date.parse(opened.body.closes_at) - Date.parse(opened.body.opened_at)).toBe(120 * 1000);

    // Opening again (even with another window configured) answers the same run: the close time never moves.
    app.deps.config.mailRunWindowSeconds = 600;
    const again = await post(live.key, { mail_run_id: id });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      opened_at: opened.body.opened_at,
      closes_at: opened.body.closes_at,
      window_seconds: 120,
    });

    // The id belongs to this member's agent: another agent cannot take it or see it; the owner's member key can read it.
    const other = await newAgent(app.baseUrl, member.key);
    const otherKey = await newCredential(app.baseUrl, member.key, other.id, { environment: 'live' });
    expect((await post(otherKey.key, { mail_run_id: id })).body.code).toBe('MAIL_RUN_ID_TAKEN');
    expect((await getRun(otherKey.key, id)).status).toBe(404);
    expect((await getRun(member.key, id)).body).toMatchObject({ id, status: 'open' });
    const stranger = await businessSender();
    expect((await getRun(stranger.key, id)).status).toBe(404);

    const [row] = await app.deps.db.query(
      `SELECT workflow_started_at FROM mail_runs WHERE member_id = $1 AND mail_run_id = $2`,
      [member.member_id, id],
    );
    expect(row.workflow_started_at).not.toBeNull();
  });

  it('refuses mail_run_id with dry_run or requires_approval, for unknown runs and from test keys, storing nothing', async () => {
    const s = await businessSender();
    const id = newRunId();
    expect((await open(s, id)).status).toBe(201);
    const dry = await child(s, id, 'first_class', { dry_run: 'true' });
    expect(dry.status).toBe(400);
    expect(dry.body.fields).toEqual([{ path: 'mail_run_id', message: 'cannot be combined with dry_run' }]);
    const approval = await child(s, id, 'first_class', { requires_approval: 'true' });
    expect(approval.status).toBe(400);
    expect(approval.body.fields).toEqual([
      { path: 'mail_run_id', message: 'cannot be combined with requires_approval' },
    ]);
    const unknown = await child(s, newRunId());
    expect(unknown.status).toBe(400);
    expect(unknown.body.fields).toEqual([
      { path: 'mail_run_id', message: 'no mail run with this id is visible to this key' },
    ]);

    const testKey = await newCredential(app.baseUrl, s.memberKey, s.agentId, { environment: 'test' });
    const fromTest = await sendLetter(
      app,
      { ...s, key: testKey.key },
      letterForm(await letterPdf(), { mail_run_id: id }),
    );
    expect(fromTest.status).toBe(403);
    expect(fromTest.body.reason).toBe('live_key_required');
    expect((await getRun(s.key, id)).body.children).toEqual([]);
    expect(await balance(app, s.memberId)).toBe(100000);
  });

  it('debits and submits priority, carrierx_overnight and carriery_next_day children at once; others wait, uncharged, for the commit', async () => {
    const s = await businessSender();
    const id = newRunId();
    expect((await open(s, id)).status).toBe(201);
    const immediate: Record<string, { id: string; cost: number }> = {};
    let spent = 0;
    for (const mailClass of ['priority', 'carrierx_overnight', 'carriery_next_day']) {
      const res = await child(s, id, mailClass);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ status: 'submitted', mail_run_id: id, mail_class: mailClass });
      expect(await ledger(app, res.body.id)).toEqual([
        { kind: 'debit', amount_cents: -res.body.cost_cents, entry_key: `debit:mail:${res.body.id}` },
      ]);
      spent += res.body.cost_cents;
      immediate[mailClass] = { id: res.body.id, cost: res.body.cost_cents };
    }
    const waiting = await child(s, id, 'first_class');
    expect(waiting.status).toBe(201);
    expect(waiting.body).toMatchObject({
      status: 'funding_pending',
      submitted_at: null,
      mail_run_id: id,
      credit_balance_cents: 100000 - spent,
    });
    expect(waiting.body.human_review.cost.charged).toBe(false);
    expect(waiting.body.human_review.next_step).toContain(`/v1/mail-runs/${id}/commit`);
    expect(await ledger(app, waiting.body.id)).toEqual([]);
    expect(await balance(app, s.memberId)).toBe(100000 - spent);
    // A waiting child lists under its own status.
    expect(
      (await api(app)('GET', '/v1/mail?status=funding_pending', { key: s.key })).body.mail.map(
        (m: { id: string }) => m.id,
      ),
    ).toEqual([waiting.body.id]);

    const run = (await getRun(s.key, id)).body;
    expect(
      run.children.map((c: { id: string; status: string; commits_immediately: boolean }) => [
        c.id,
        c.status,
        c.commits_immediately,
      ]),
    ).toEqual([
      [immediate.priority.id, 'submitted', true],
      [immediate.carrierx_overnight.id, 'submitted', true],
      [immediate.carriery_next_day.id, 'submitted', true],
      [waiting.body.id, 'funding_pending', false],
    ]);
    expect(run).toMatchObject({
      total_cents: spent + waiting.body.cost_cents,
      credits_required_cents: waiting.body.cost_cents,
      funded_cents: 0,
    });

    const committed = await commit(s, id);
    expect(committed.status).toBe(200);
    expect(committed.body).toMatchObject({
      status: 'funded',
      credits_charged_cents: waiting.body.cost_cents,
      already_committed: false,
    });
    await waitFor(async () => (await statusOf(waiting.body.id)) === 'submitted', 'the waiting child to be submitted');
    expect(await ledger(app, waiting.body.id)).toEqual([
      { kind: 'debit', amount_cents: -waiting.body.cost_cents, entry_key: `debit:mail:${waiting.body.id}` },
    ]);
    await waitFor(
      async () => (await mailEvents(app, waiting.body.id)).some((e) => e.event_type === 'mail.submitted'),
      'mail.submitted of the child',
    );
    // The immediate children were not charged a second time.
    for (const c of Object.values(immediate)) expect(await ledger(app, c.id)).toHaveLength(1);
    expect(await balance(app, s.memberId)).toBe(100000 - spent - waiting.body.cost_cents);
  });

  it('answers commit with 202 until a human adds credits and authorises Auto-Fill again, then funds the run once', async () => {
    const s = await businessSender({ creditsCents: 100 });
    const id = newRunId();
    const opened = await open(s, id);
    const a = await child(s, id);
    const b = await child(s, id);
    expect([a.status, a.body.status, b.body.status]).toEqual([201, 'funding_pending', 'funding_pending']);
    const total = a.body.cost_cents + b.body.cost_cents;

    const first = await commit(s, id);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({
      status: 'funding_pending',
      pending_reason: 'insufficient_credits',
      credits_required_cents: total,
      credit_balance_cents: 100,
      credit_shortfall_cents: total - 100,
      retry: { method: 'POST', before: opened.body.closes_at },
      mail_run: { status: 'funding_pending', closes_at: opened.body.closes_at, credits_required_cents: total },
    });
    expect(first.body.billing_url).toMatch(/#credits$/);
    expect(first.body.retry.url).toMatch(new RegExp(`/api/v1/mail-runs/${id}/commit$`));
    expect(first.body.suggested_action).toContain('billing_url');
    // Committed runs take no more pieces.
    const late = await child(s, id);
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('MAIL_RUN_CLOSED');

    await topUp(app.deps.db, { memberId: s.memberId, amountCents: 10000, entryKey: `topup:test:${randomUUID()}` });
    await setMemberRunSettings(app.deps, s.memberId, { agentAutoFill: false });
    const settings = await commit(s, id);
    expect(settings.status).toBe(202);
    expect(settings.body.pending_reason).toBe('agent_auto_fill_not_authorised');
    expect(await balance(app, s.memberId)).toBe(10100);

    await setMemberRunSettings(app.deps, s.memberId, { agentAutoFill: true });
    const funded = await commit(s, id);
    expect(funded.status).toBe(200);
    expect(funded.body).toMatchObject({
      status: 'funded',
      credits_charged_cents: total,
      credit_balance_cents: 10100 - total,
      already_committed: false,
      mail_run: {
        status: 'funded',
        funded_cents: total,
        credits_required_cents: 0,
        pending_reason: null,
        closes_at: opened.body.closes_at,
      },
    });
    for (const c of [a, b]) {
      await waitFor(async () => (await statusOf(c.body.id)) === 'submitted', 'children submitted');
      expect(await ledger(app, c.body.id)).toEqual([
        { kind: 'debit', amount_cents: -c.body.cost_cents, entry_key: `debit:mail:${c.body.id}` },
      ]);
      const record = (await api(app)('GET', `/v1/mail/${c.body.id}`, { key: s.key })).body;
      expect(record.human_review.cost.charged).toBe(true);
    }
    const repeat = await commit(s, id);
    expect(repeat.status).toBe(200);
    expect(repeat.body).toMatchObject({ credits_charged_cents: 0, already_committed: true });
    expect(await balance(app, s.memberId)).toBe(10100 - total);
  });

  it('closes the window on time: a run that can be funded is funded, one that cannot is cancelled with its children, an empty one is closed', async () => {
    app.deps.config.mailRunWindowSeconds = 4;
    const rich = await businessSender();
    const poor = await businessSender({ creditsCents: 50 });
    const [fundedId, cancelledId, emptyId] = [newRunId(), newRunId(), newRunId()];
    expect((await open(rich, fundedId)).status).toBe(201);
    expect((await open(poor, cancelledId)).status).toBe(201);
    const empty = await open(rich, emptyId);
    expect(empty.body.window_seconds).toBe(4);
    const paid = await child(rich, fundedId);
    const unpaid = await child(poor, cancelledId);
    expect([paid.body.status, unpaid.body.status]).toEqual(['funding_pending', 'funding_pending']);
    expect((await getRun(rich.key, fundedId)).body.status).toBe('open');

    const settled = async (s: Sender, id: string) => {
      const r = await getRun(s.key, id);
      return ['funded', 'cancelled', 'closed'].includes(r.body.status) ? r.body : null;
    };
    const funded = await waitFor(() => settled(rich, fundedId), 'the funded run to settle');
    const cancelled = await waitFor(() => settled(poor, cancelledId), 'the unfunded run to settle');
    const closed = await waitFor(() => settled(rich, emptyId), 'the empty run to settle');

    // Nothing happened before closes_at: each outcome is recorded at or after it.
    expect(funded).toMatchObject({
      status: 'funded',
      funded_cents: paid.body.cost_cents,
      committed_at: expect.any(String),
    });
    expect(Date.parse(funded.funded_at)).toBeGreaterThanOrEqual(Date.parse(funded.closes_at));
    expect(cancelled).toMatchObject({
      status: 'cancelled',
      cancellation_reason: 'unfunded_at_close',
      pending_reason: 'insufficient_credits',
    });
    expect(Date.parse(cancelled.cancelled_at)).toBeGreaterThanOrEqual(Date.parse(cancelled.closes_at));
    expect(closed).toMatchObject({ status: 'closed', funded_cents: 0 });
    expect(Date.parse(closed.closed_at)).toBeGreaterThanOrEqual(Date.parse(closed.closes_at));

    await waitFor(async () => (await statusOf(paid.body.id)) === 'submitted', 'the funded child to be submitted');
    expect(await ledger(app, paid.body.id)).toHaveLength(1);
    await waitFor(async () => (await statusOf(unpaid.body.id)) === 'cancelled', 'the unfunded child to be cancelled');
    expect(await mailRow(unpaid.body.id)).toMatchObject({
      cancellation_reason: 'mail_run_cancelled',
      run_funded_at: null,
    });
    await waitFor(
      async () => (await mailEvents(app, unpaid.body.id)).some((e) => e.event_type === 'mail.cancelled'),
      'mail.cancelled',
    );
    expect(await ledger(app, unpaid.body.id)).toEqual([]);
    expect(await balance(app, poor.memberId)).toBe(50);

    // After the close: no more pieces, no commit, and opening the id again does not reopen or extend it.
    const late = await child(rich, emptyId);
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('MAIL_RUN_CLOSED');
    expect((await commit(poor, cancelledId)).body.code).toBe('MAIL_RUN_NOT_COMMITTABLE');
    const reopened = await open(rich, emptyId);
    expect(reopened.status).toBe(200);
    expect(reopened.body).toMatchObject({ status: 'closed', closes_at: empty.body.closes_at });
  });

  it('DELETE cancels a run before funding (its waiting children, not the immediate ones) and is refused after funding', async () => {
    const s = await businessSender();
    const id = newRunId();
    await open(s, id);
    const waiting = await child(s, id);
    const urgent = await child(s, id, 'priority');
    expect([waiting.body.status, urgent.body.status]).toEqual(['funding_pending', 'submitted']);
    const before = await balance(app, s.memberId);

    const deleted = await cancel(s, id);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({
      already_cancelled: false,
      mail_run: { status: 'cancelled', cancellation_reason: 'cancelled_by_caller' },
    });
    await waitFor(async () => (await statusOf(waiting.body.id)) === 'cancelled', 'the waiting child to be cancelled');
    expect((await mailRow(waiting.body.id)).cancellation_reason).toBe('mail_run_cancelled');
    expect(await statusOf(urgent.body.id)).toBe('submitted');
    expect(await ledger(app, waiting.body.id)).toEqual([]);
    expect(await balance(app, s.memberId)).toBe(before);
    expect((await cancel(s, id)).body).toMatchObject({ already_cancelled: true });
    const commitAfter = await commit(s, id);
    expect(commitAfter.status).toBe(409);
    expect(commitAfter.body.code).toBe('MAIL_RUN_NOT_COMMITTABLE');

    const fundedId = newRunId();
    await open(s, fundedId);
    await child(s, fundedId);
    expect((await commit(s, fundedId)).status).toBe(200);
    const refused = await cancel(s, fundedId);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'MAIL_RUN_NOT_CANCELLABLE', details: { status: 'funded' } });
  });

  it('a child its sender cancels while waiting is never charged; the commit funds the others', async () => {
    const s = await businessSender();
    const id = newRunId();
    await open(s, id);
    const keep = await child(s, id);
    const drop = await child(s, id);
    const dropped = await api(app)('DELETE', `/v1/mail/${drop.body.id}`, { key: s.key, headers: s.headers });
    expect(dropped.status).toBe(200);
    expect(dropped.body).toMatchObject({
      refunded_credits_cents: 0,
      outbound_mail: { status: 'cancelled', cancellation_reason: 'cancelled_by_caller' },
    });
    const committed = await commit(s, id);
    expect(committed.body).toMatchObject({ status: 'funded', credits_charged_cents: keep.body.cost_cents });
    expect(await ledger(app, drop.body.id)).toEqual([]);
    expect(committed.body.mail_run.total_cents).toBe(keep.body.cost_cents);
  });

  it('debits every child exactly once when two commits race', async () => {
    const s = await businessSender({ creditsCents: 20000 });
    const id = newRunId();
    await open(s, id);
    const children = [await child(s, id), await child(s, id), await child(s, id, 'certified')];
    const total = children.reduce((sum, c) => sum + c.body.cost_cents, 0);

    const answers = await Promise.all([commit(s, id), commit(s, id), commit(s, id)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(answers.map((r) => r.body.credits_charged_cents).sort((x, y) => x - y)).toEqual([0, 0, total]);
    expect(answers.filter((r) => !r.body.already_committed)).toHaveLength(1);
    for (const c of children) {
      expect(await ledger(app, c.body.id)).toEqual([
        { kind: 'debit', amount_cents: -c.body.cost_cents, entry_key: `debit:mail:${c.body.id}` },
      ]);
      await waitFor(async () => (await statusOf(c.body.id)) === 'submitted', 'children submitted');
    }
    expect(await balance(app, s.memberId)).toBe(20000 - total);
    expect(await runRow(s, id)).toMatchObject({ status: 'funded', funded_cents: total });
  });
});
