// Which facility gets live work, as the operator sets it: the default facility, per-member
// assignment, deactivation that moves queued work, and reassigning a piece or batch no
// facility has begun, race-free against the old facility's own step. The default facility
// is global state, so this suite runs on a database of its own (other suites of the run
// rely on "the oldest active facility" of the shared one).
import { randomBytes } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { createFacility } from '../../services/accounts/accounts';
import { commands } from '../../scripts/admin';
import type { Options } from '../../scripts/admin/cli';
import { dropDatabase, ensureDatabase, migrate } from '../../scripts/stack';
import { api, letterForm, letterPdf, newSender, sendLetter, Sender, waitFor } from './mail-helpers';
import { batchForm, pdf, recipientsCsv, waitForStatus } from './batch-helpers';

type Facility = { facility_id: string; key: string };

describe('facility assignment', () => {
  let app: TestApp;
  let databaseUrl: string;
  const run = (name: string, opts: Options = {}) => commands[name].run(app.deps, opts) as Promise<any>;

  beforeAll(async () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `${url.pathname}_fa_${randomBytes(3).toString('hex')}`;
    databaseUrl = url.toString();
    await ensureDatabase(databaseUrl);
    await migrate(databaseUrl);
    app = await startTestApp({ env: { DATABASE_URL: databaseUrl } });
  });
  afterAll(async () => {
    await app.close();
    await dropDatabase(databaseUrl);
  });

  const facilityOf = async (id: string): Promise<string | null> =>
    (await app.deps.db.query(`SELECT facility_id FROM outbound_mail WHERE id = $1`, [id]))[0].facility_id;
  const get = (f: Facility, id: string) => api(app)('GET', `/v1/facility/mail/${id}`, { key: f.key });
  const startPrinting = (f: Facility, id: string) =>
    api(app)('POST', `/v1/facility/mail/${id}/printing`, { key: f.key });

  async function livePiece(s: Sender): Promise<string> {
    const created = await sendLetter(app, s, letterForm(await letterPdf()));
    expect(created.status).toBe(201);
    return created.body.id;
  }

  // Facilities created in order; `first` is the oldest.
  let first: Facility;
  let second: Facility;
  let later: Facility;
  let sender: Sender;

  it('without a default, live work goes to the oldest active facility; sandbox work to none', async () => {
    first = await createFacility(app.deps, 'First');
    second = await createFacility(app.deps, 'Second');
    sender = await newSender(app, { creditsCents: 500000 });
    const id = await livePiece(sender);
    expect(await facilityOf(id)).toBe(first.facility_id);

    const sandbox = await newSender(app, { environment: 'test' });
    const test = await sendLetter(app, sandbox, letterForm(await letterPdf()));
    expect(await facilityOf(test.body.id)).toBeNull();

    const list = await run('facility:list');
    expect(list).toMatchObject({ default_facility_id: null, new_work_goes_to: first.facility_id });
    expect(list.facilities.find((f: any) => f.id === first.facility_id).queued).toEqual({ mail: 1, batches: 0 });
  });

  it('a facility created later receives work once it is the default; the others get 404 on it', async () => {
    later = await createFacility(app.deps, 'Later');
    const set = await run('facility:set-default', { facility: later.facility_id });
    expect(set).toMatchObject({ default_facility_id: later.facility_id, previous_default_facility_id: null });

    const id = await livePiece(sender);
    expect(await facilityOf(id)).toBe(later.facility_id);
    expect((await get(later, id)).status).toBe(200);
    expect((await get(first, id)).status).toBe(404);
    expect((await startPrinting(first, id)).status).toBe(404);

    const list = await run('facility:list');
    expect(list.facilities.filter((f: any) => f.is_default).map((f: any) => f.id)).toEqual([later.facility_id]);
    expect(list.new_work_goes_to).toBe(later.facility_id);
    // Exactly one default, whoever sets it.
    await run('facility:set-default', { facility: second.facility_id });
    await run('facility:set-default', { facility: later.facility_id });
    const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM facilities WHERE is_default`);
    expect(n).toBe(1);
  });

  it('a member assigned to a facility sends its new work there; others keep the default', async () => {
    const assigned = await newSender(app, { creditsCents: 100000 });
    const out = await run('facility:assign', { member: assigned.memberId, facility: second.facility_id });
    expect(out).toMatchObject({
      member_id: assigned.memberId,
      facility_id: second.facility_id,
      previous_facility_id: null,
    });

    const mine = await livePiece(assigned);
    const theirs = await livePiece(sender);
    expect(await facilityOf(mine)).toBe(second.facility_id);
    expect(await facilityOf(theirs)).toBe(later.facility_id);

    await run('facility:assign', { member: assigned.memberId, default: true });
    expect(await facilityOf(await livePiece(assigned))).toBe(later.facility_id);
    await expect(run('facility:assign', { member: assigned.memberId })).rejects.toThrow(
      'pass either --facility ID or --default',
    );
    await expect(
      run('facility:assign', { member: '00000000-0000-0000-0000-000000000000', facility: second.facility_id }),
    ).rejects.toThrow('no member 00000000-0000-0000-0000-000000000000');
  });

  it("each facility's queue lists only its own work", async () => {
    const list = async (f: Facility) =>
      (await api(app)('GET', '/v1/facility/mail?limit=100', { key: f.key })).body.items.map((i: any) => i.facility_id);
    const [mine, firsts] = [await list(later), await list(first)];
    expect(mine.length).toBeGreaterThan(0);
    expect(new Set(mine)).toEqual(new Set([later.facility_id]));
    expect(new Set(firsts)).toEqual(new Set([first.facility_id]));
  });

  it('reassigns a piece before printing: the old facility gets 404, the new one works it; after printing it is refused', async () => {
    const id = await livePiece(sender);
    expect(await facilityOf(id)).toBe(later.facility_id);
    const moved = await run('mail:reassign', { mail: id, facility: second.facility_id });
    expect(moved).toEqual({
      mail_id: id,
      from_facility_id: later.facility_id,
      to_facility_id: second.facility_id,
      unchanged: false,
    });
    expect((await get(later, id)).status).toBe(404);
    expect((await startPrinting(later, id)).status).toBe(404);
    expect((await startPrinting(second, id)).status).toBe(200);

    const refused = run('mail:reassign', { mail: id, facility: later.facility_id });
    await expect(refused).rejects.toMatchObject({
      code: 'MAIL_NOT_REASSIGNABLE',
      message: expect.stringContaining('printing has started'),
    });
    expect(await facilityOf(id)).toBe(second.facility_id);
    await expect(
      run('mail:reassign', { mail: '00000000-0000-0000-0000-000000000000', facility: second.facility_id }),
    ).rejects.toThrow('no outbound mail 00000000-0000-0000-0000-000000000000');
  });

  it('a facility step that looked the piece up before a move commits is refused under the row lock', async () => {
    const id = await livePiece(sender);
    await waitFor(
      async () =>
        (await app.deps.db.query(`SELECT workflow_started_at FROM outbound_mail WHERE id = $1`, [id]))[0]
          .workflow_started_at,
      'workflow start',
    );
    // Hold the row: the old facility's step passes its lookup, then waits inside the activity.
    const runner = app.deps.db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      await runner.query(`SELECT id FROM outbound_mail WHERE id = $1 FOR UPDATE`, [id]);
      const step = startPrinting(later, id);
      await waitFor(
        async () =>
          (
            await app.deps.db.query(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM outbound_mail WHERE id = $1 FOR UPDATE%' AND pid <> pg_backend_pid() AND datname = current_database()`,
            )
          ).length > 0,
        'the facility step to wait on the row',
      );
      // The operator's move commits first (what reassignMail writes under the same lock).
      await runner.query(`UPDATE outbound_mail SET facility_id = $2 WHERE id = $1`, [id, first.facility_id]);
      await runner.commitTransaction();
      expect((await step).status).toBe(404);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
    const [row] = await app.deps.db.query(`SELECT facility_id, printing_started_at FROM outbound_mail WHERE id = $1`, [
      id,
    ]);
    expect(row).toEqual({ facility_id: first.facility_id, printing_started_at: null });
    expect((await startPrinting(first, id)).status).toBe(200);
  });

  it("reassignment racing the old facility's start of printing: exactly one wins", async () => {
    const ids = await Promise.all([1, 2, 3, 4].map(() => livePiece(sender)));
    for (const id of ids) {
      const [step, move] = await Promise.allSettled([
        startPrinting(later, id),
        run('mail:reassign', { mail: id, facility: first.facility_id }),
      ]);
      const started = step.status === 'fulfilled' && step.value.status === 200;
      const moved = move.status === 'fulfilled';
      expect(started !== moved).toBe(true);
      if (!started) expect(step.status === 'fulfilled' && step.value.status).toBe(404);
      if (!moved) expect((move as PromiseRejectedResult).reason.code).toBe('MAIL_NOT_REASSIGNABLE');
      const [row] = await app.deps.db.query(
        `SELECT facility_id, printing_started_at FROM outbound_mail WHERE id = $1`,
        [id],
      );
      expect(row.facility_id).toBe(started ? later.facility_id : first.facility_id);
      expect(row.printing_started_at !== null).toBe(started);
    }
  });

  it('reassigns a confirmed batch before its facility starts it, and refuses once started', async () => {
    const member = await newMember(app.deps, { creditsCents: 100000 });
    const draft = await api(app)('POST', '/v1/batch-mail', {
      key: member.key,
      form: batchForm(await pdf(1), recipientsCsv(5)),
    });
    expect(draft.status).toBe(201);
    const id = draft.body.batch.id;
    await expect(run('batch:reassign', { batch: id, facility: second.facility_id })).rejects.toMatchObject({
      code: 'BATCH_NOT_REASSIGNABLE',
    });
    expect((await api(app)('POST', `/v1/batch-mail/${id}/confirm`, { key: member.key })).status).toBe(200);
    await waitForStatus(app.baseUrl, member.key, id, ['submitted']);
    const batchFacility = async () =>
      (await app.deps.db.query(`SELECT facility_id FROM batches WHERE id = $1`, [id]))[0].facility_id;
    expect(await batchFacility()).toBe(later.facility_id);

    expect(await run('batch:reassign', { batch: id, facility: second.facility_id })).toMatchObject({
      from_facility_id: later.facility_id,
      to_facility_id: second.facility_id,
    });
    expect((await api(app)('GET', `/v1/facility/batches/${id}`, { key: later.key })).status).toBe(404);
    expect((await api(app)('POST', `/v1/facility/batches/${id}/start`, { key: later.key })).status).toBe(404);
    const started = await api(app)('POST', `/v1/facility/batches/${id}/start`, { key: second.key });
    expect(started.status).toBe(200);
    expect(started.body.batch.status).toBe('in_progress');
    await expect(run('batch:reassign', { batch: id, facility: later.facility_id })).rejects.toMatchObject({
      code: 'BATCH_NOT_REASSIGNABLE',
    });
    expect(await batchFacility()).toBe(second.facility_id);
  });

  it("batch reassignment racing the old facility's start: exactly one wins", async () => {
    const member = await newMember(app.deps, { creditsCents: 100000 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const draft = await api(app)('POST', '/v1/batch-mail', {
        key: member.key,
        form: batchForm(await pdf(1), recipientsCsv(3)),
      });
      expect(
        (await api(app)('POST', `/v1/batch-mail/${draft.body.batch.id}/confirm`, { key: member.key })).status,
      ).toBe(200);
      ids.push(draft.body.batch.id);
    }
    for (const id of ids) {
      await waitForStatus(app.baseUrl, member.key, id, ['submitted']);
      const [step, move] = await Promise.allSettled([
        api(app)('POST', `/v1/facility/batches/${id}/start`, { key: later.key }),
        run('batch:reassign', { batch: id, facility: first.facility_id }),
      ]);
      const started = step.status === 'fulfilled' && step.value.status === 200;
      const moved = move.status === 'fulfilled';
      expect(started !== moved).toBe(true);
      if (!started) expect(step.status === 'fulfilled' && step.value.status).toBe(404);
      if (!moved) expect((move as PromiseRejectedResult).reason.code).toBe('BATCH_NOT_REASSIGNABLE');
      const [row] = await app.deps.db.query(`SELECT facility_id, status FROM batches WHERE id = $1`, [id]);
      expect(row).toEqual(
        started
          ? { facility_id: later.facility_id, status: 'in_progress' }
          : { facility_id: first.facility_id, status: 'submitted' },
      );
    }
  });

  it('a batch start that looked the batch up before a move commits is refused: the claim checks ownership', async () => {
    const member = await newMember(app.deps, { creditsCents: 100000 });
    const draft = await api(app)('POST', '/v1/batch-mail', {
      key: member.key,
      form: batchForm(await pdf(1), recipientsCsv(3)),
    });
    const id = draft.body.batch.id;
    await api(app)('POST', `/v1/batch-mail/${id}/confirm`, { key: member.key });
    await waitForStatus(app.baseUrl, member.key, id, ['submitted']);
    const runner = app.deps.db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      await runner.query(`SELECT id FROM batches WHERE id = $1 FOR UPDATE`, [id]);
      const step = api(app)('POST', `/v1/facility/batches/${id}/start`, { key: later.key });
      await waitFor(
        async () =>
          (
            await app.deps.db.query(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%SET facility_claimed_at%' AND datname = current_database()`,
            )
          ).length > 0,
        'the facility start to wait on the row',
      );
      await runner.query(`UPDATE batches SET facility_id = $2 WHERE id = $1`, [id, first.facility_id]);
      await runner.commitTransaction();
      expect((await step).status).toBe(404);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
    const [row] = await app.deps.db.query(
      `SELECT facility_id, status, facility_claimed_at FROM batches WHERE id = $1`,
      [id],
    );
    expect(row).toEqual({ facility_id: first.facility_id, status: 'submitted', facility_claimed_at: null });
  });

  it("deactivation moves queued work to each member's new facility in one step and leaves begun work", async () => {
    const doomed = await createFacility(app.deps, 'Doomed');
    const a = await newSender(app, { creditsCents: 100000 });
    const b = await newSender(app, { creditsCents: 100000 });
    await run('facility:assign', { member: a.memberId, facility: doomed.facility_id });
    await run('facility:assign', { member: b.memberId, facility: doomed.facility_id });
    await run('facility:set-default', { facility: doomed.facility_id });
    const queuedA = [await livePiece(a), await livePiece(a)];
    const queuedB = await livePiece(b);
    const begun = await livePiece(a);
    expect((await startPrinting(doomed, begun)).status).toBe(200);

    // b will fall back to its own assignment elsewhere once doomed is gone.
    await run('facility:assign', { member: b.memberId, facility: first.facility_id });
    await expect(run('facility:deactivate', { facility: doomed.facility_id })).rejects.toMatchObject({
      code: 'FACILITY_HAS_WORK_IN_PROGRESS',
    });
    expect(
      (await app.deps.db.query(`SELECT status FROM facilities WHERE id = $1`, [doomed.facility_id]))[0].status,
    ).toBe('active');

    const out = await run('facility:deactivate', {
      facility: doomed.facility_id,
      'new-default': later.facility_id,
      'leave-in-progress': true,
    });
    expect(out).toMatchObject({
      status: 'inactive',
      already_inactive: false,
      assignments_removed: 1,
      default_facility_id: later.facility_id,
      left_in_progress: { mail: 1, batches: 0 },
    });
    expect(out.moved).toEqual(
      expect.arrayContaining([
        { to: later.facility_id, mail: 2, batches: 0 }, // a: no assignment left, so the default
        { to: first.facility_id, mail: 1, batches: 0 }, // b: its assignment
      ]),
    );
    for (const id of queuedA) expect(await facilityOf(id)).toBe(later.facility_id);
    expect(await facilityOf(queuedB)).toBe(first.facility_id);
    expect(await facilityOf(begun)).toBe(doomed.facility_id);
    expect((await get(later, queuedA[0])).status).toBe(200);
    const gone = await api(app)('GET', '/v1/facility/mail', { key: doomed.key });
    expect([gone.status, gone.body.reason]).toEqual([401, 'facility_inactive']);
    // New work of a goes to the default now.
    expect(await facilityOf(await livePiece(a))).toBe(later.facility_id);
    expect(await run('facility:deactivate', { facility: doomed.facility_id })).toMatchObject({
      already_inactive: true,
    });
  });

  it('refuses to deactivate the last active facility while it has queued work, changing nothing', async () => {
    // Move everything queued onto `later`, then retire every other facility.
    await app.deps.db.query(
      `UPDATE outbound_mail SET facility_id = $1 WHERE printing_started_at IS NULL AND NOT test_mode AND status = 'submitted'`,
      [later.facility_id],
    );
    for (const f of [first, second]) {
      await run('facility:deactivate', { facility: f.facility_id, 'leave-in-progress': true });
    }
    const before = (await run('facility:list')).facilities.find((f: any) => f.id === later.facility_id);
    expect(before.queued.mail).toBeGreaterThan(0);
    await expect(
      run('facility:deactivate', { facility: later.facility_id, 'leave-in-progress': true }),
    ).rejects.toMatchObject({
      code: 'FACILITY_LAST_WITH_QUEUED_WORK',
      message: expect.stringContaining('is the last active facility'),
    });
    const after = (await run('facility:list')).facilities.find((f: any) => f.id === later.facility_id);
    expect(after).toEqual(before);
  });
});
