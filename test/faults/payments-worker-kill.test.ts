// The worker process is SIGKILLed in the middle of fulfilling Stripe events: the API (in
// this process) has recorded them and started their workflows; the worker's activity is
// inside its ledger transaction, held there by a lock this test keeps on the members' rows.
// After the kill the lock is released and another worker starts: each session is credited
// exactly once (the killed transaction never committed; the retried activity does), and
// every event ends applied.
import { Client } from 'pg';
import { startTestApp, TestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { deleteSchedulesOf, ServiceProcess, stackEnv, startWorkerProcess } from './children';
import { until } from './ledger';
import { deliver, newPurchase, sessionEvent, type TestPurchase } from '../integration/payments-helpers';

jest.setTimeout(300000);

describe('worker killed with SIGKILL mid-fulfilment of Stripe events', () => {
  let app: TestApp;
  let taskQueue: string;
  const workers: ServiceProcess[] = [];

  const startWorker = async () => {
    const w = await startWorkerProcess(app.deps.temporal, { env: stackEnv(), taskQueue, capture: true });
    workers.push(w);
    return w;
  };

  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    taskQueue = app.deps.config.taskQueue;
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    if (app) {
      await deleteSchedulesOf(app.deps.temporal, taskQueue);
      await app.close();
    }
  });

  it('each session is credited once after a new worker takes over', async () => {
    const members = await Promise.all(Array.from({ length: 3 }, () => newMember(app.deps)));
    const purchases: TestPurchase[] = [];
    for (const m of members) purchases.push(await newPurchase(app, m.member_id, 5000));

    // Hold the members' rows: the fulfilment blocks inside its transaction, after reading its event.
    const holder = new Client({ connectionString: process.env.DATABASE_URL });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(`SELECT id FROM members WHERE id = ANY($1) FOR UPDATE`, [members.map((m) => m.member_id)]);

    const first = await startWorker();
    const events = purchases.map((p) => sessionEvent('checkout.session.completed', p));
    // Each delivered twice at once, as Stripe may.
    const statuses = await Promise.all(events.flatMap((e) => [deliver(app, e), deliver(app, e)]));
    expect(statuses).toEqual(Array(6).fill(200));

    // Wait until the worker's fulfilments wait on the held rows: mid-transaction.
    await until(
      'the fulfilments to wait on the member rows',
      async () => {
        const [row] = await app.deps.db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%FROM members%FOR UPDATE%'`,
        );
        return row.n >= 1;
      },
      60000,
    );
    await first.kill9();
    await holder.query('ROLLBACK');
    await holder.end();

    await startWorker();
    await until(
      'every event to be applied',
      async () => {
        const rows = await app.deps.db.query(
          `SELECT count(*)::int AS n FROM stripe_events WHERE id = ANY($1) AND processed_at IS NOT NULL`,
          [events.map((e) => e.id)],
        );
        return rows[0].n === events.length;
      },
      180000,
      500,
    );
    for (const [i, m] of members.entries()) {
      const ledger = await app.deps.db.query(
        `SELECT amount_cents, entry_key FROM credits_ledger WHERE member_id = $1`,
        [m.member_id],
      );
      expect(ledger).toEqual([{ amount_cents: 5000, entry_key: `stripe:session:${purchases[i].stripe_session_id}` }]);
      const [p] = await app.deps.db.query(`SELECT status FROM credit_purchases WHERE id = $1`, [purchases[i].id]);
      expect(p.status).toBe('paid');
    }
  });
});
