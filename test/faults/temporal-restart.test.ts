// The Temporal server dies mid-flow and comes back on the same port with the same
// database file; the worker process keeps running through it. It is a dev server of this test's own (the shared test server is never
// touched), with a Postgres database of its own too (its reconciler must not start other
// test files' pieces on this server). While it is down, letters are still accepted (the record and its debit
// commit; the workflow start is lost) and sandbox advances fail; after the restart the
// reconciler starts the lost workflows, the advances are retried, and every piece reaches
// its end: each event once, each debit and refund once, every workflow completed.
import { ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { client, HttpResponse } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { insertMemberKey } from '../../services/accounts/accounts';
import { Client } from 'pg';
import {
  ensureDatabase,
  freePort,
  migrate,
  portOpen,
  TEMPORAL_BIN,
  TEMPORAL_SQLITE_PRAGMAS,
} from '../../scripts/stack';
import { SEARCH_ATTRIBUTE_REGISTRATIONS } from '../../workflows/shared/search-attributes';
import { outboundMailWorkflowId } from '../../workflows/outbound-mail/contracts';
import { letterForm, letterPdf } from '../integration/mail-helpers';
import { ledgerProblems, until } from './ledger';
import { ServiceProcess, stackEnv, startWorkerProcess } from './children';

jest.setTimeout(300000);

const MD = { 'x-service-md-version': '1' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class DevServer {
  private child?: ChildProcess;
  constructor(
    readonly port: number,
    readonly httpPort: number,
    readonly dbFile: string,
  ) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const args = [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '127.0.0.1',
      '--port',
      String(this.port),
      '--http-port',
      String(this.httpPort),
      '--db-filename',
      this.dbFile,
      '--log-level',
      'error',
      ...TEMPORAL_SQLITE_PRAGMAS,
    ];
    for (const sa of SEARCH_ATTRIBUTE_REGISTRATIONS) args.push('--search-attribute', sa);
    this.child = spawn(TEMPORAL_BIN, args, { stdio: 'ignore' });
    await until('the Temporal dev server', () => portOpen(this.port), 90000, 200);
  }

  async kill9(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    await until('the port to close', async () => !(await portOpen(this.port)), 30000, 100);
  }
}

/** Retries what a client would retry (5xx, network errors) until `ok` or the deadline. */
async function retried(send: () => Promise<HttpResponse>, timeoutMs = 90000): Promise<HttpResponse> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const res = await send().catch((err) => ({ status: 0, body: String(err), headers: new Headers() }) as HttpResponse);
    if ((res.status > 0 && res.status < 500) || Date.now() > end) return res;
    await sleep(500);
  }
}

describe('Temporal server restarted mid-flow', () => {
  let server: DevServer;
  let app: TestApp;
  let databaseUrl: string;
  let worker: ServiceProcess;

  beforeAll(async () => {
    server = new DevServer(
      await freePort(),
      await freePort(),
      path.join(os.tmpdir(), `faults-temporal-${randomBytes(4).toString('hex')}.sqlite`),
    );
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `${url.pathname}_trestart_${randomBytes(3).toString('hex')}`;
    databaseUrl = url.toString();
    await Promise.all([server.start(), ensureDatabase(databaseUrl).then(() => migrate(databaseUrl))]);
    app = await startTestApp({
      worker: false,
      env: { TEMPORAL_ADDRESS: server.address, DATABASE_URL: databaseUrl, RATE_LIMIT_PER_MINUTE: '1000000' },
    });
    // The worker process creates the reconciler schedule at start; here it runs every 2 s.
    worker = await startWorkerProcess(app.deps.temporal, {
      taskQueue: app.deps.config.taskQueue,
      env: stackEnv({
        TEMPORAL_ADDRESS: server.address,
        DATABASE_URL: databaseUrl,
        MAIL_RECONCILE_EVERY_SECONDS: '2',
        MAIL_RECONCILE_GRACE_SECONDS: '2',
      }),
    });
  });

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await server?.kill9();
    rmSync(server.dbFile, { force: true });
    if (databaseUrl) {
      const admin = new Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      await admin
        .query(`DROP DATABASE IF EXISTS "${new URL(databaseUrl).pathname.slice(1)}" WITH (FORCE)`)
        .catch(() => undefined);
      await admin.end();
    }
  });

  it('loses no piece, no event, no charge', async () => {
    const api = client(app.baseUrl);
    const member = await newMember(app.deps, { creditsCents: 1_000_000 });
    const agent = await newAgent(app.baseUrl, member.key);
    const key = (await newCredential(app.baseUrl, member.key, agent.id)).key;
    const testKey = (await insertMemberKey(app.deps.db, member.member_id, { name: 'sandbox', environment: 'test' }))
      .key;
    const submit = async (k: string, n: string) =>
      api('POST', '/v1/mail', { key: k, headers: k === key ? MD : {}, form: letterForm(await letterPdf(1, n)) });

    const live: string[] = [];
    const sandbox: string[] = [];
    for (let i = 0; i < 4; i++) {
      const a = await submit(key, `live before ${i}`);
      const b = await submit(testKey, `test before ${i}`);
      expect([a.status, b.status]).toEqual([201, 201]);
      live.push(a.body.id);
      sandbox.push(b.body.id);
    }
    for (const id of sandbox)
      expect((await api('POST', `/v1/test/mail/${id}/advance`, { key: testKey })).status).toBe(200);

    // Down: advances are in flight when the server dies.
    const inFlight = sandbox.map((id) => retried(() => api('POST', `/v1/test/mail/${id}/advance`, { key: testKey })));
    await sleep(50);
    await server.kill9();

    // Letters sent while it is down are accepted (after the client's start attempt gives up):
    // record and debit commit, the start is lost.
    const during = await Promise.all([0, 1, 2].map((i) => submit(key, `live during ${i}`)));
    for (const res of during) {
      expect(res.status).toBe(201);
      live.push(res.body.id);
    }
    const [{ unstarted }] = await app.deps.db.query(
      `SELECT count(*)::int AS unstarted FROM outbound_mail WHERE id = ANY($1) AND workflow_started_at IS NULL`,
      [live],
    );
    expect(unstarted).toBeGreaterThanOrEqual(3);
    await sleep(2000);

    await server.start();
    // An advance whose answer was lost with the server may have been applied before the
    // client's retry applied the next step too (the sandbox advance is "one more step").
    for (const res of await Promise.all(inFlight)) {
      expect(res.status).toBe(200);
      expect(['mailed', 'delivered']).toContain(res.body.status);
    }

    // The reconciler starts the lost workflows; each piece is announced exactly once.
    await until(
      'every live piece announced',
      async () => {
        const [{ n }] = await app.deps.db.query(
          `SELECT count(DISTINCT object_id)::int AS n FROM events WHERE object_id = ANY($1) AND event_type = 'mail.submitted'`,
          [live],
        );
        return n === live.length;
      },
      120000,
      500,
    );

    // Every piece reaches its end.
    for (const id of sandbox) {
      const now = await api('GET', `/v1/mail/${id}`, { key: testKey });
      if (now.body.status === 'delivered') continue;
      const res = await retried(() => api('POST', `/v1/test/mail/${id}/advance`, { key: testKey }));
      expect([res.status, res.body.status]).toEqual([200, 'delivered']);
    }
    for (const id of live) {
      const res = await retried(() => api('DELETE', `/v1/mail/${id}`, { key, headers: MD }));
      expect([res.status, res.body.outbound_mail?.status]).toEqual([200, 'cancelled']);
    }
    for (const id of [...live, ...sandbox]) {
      const result = await app.deps.temporal.workflow.getHandle(outboundMailWorkflowId(id)).result();
      expect(result).toBe(sandbox.includes(id) ? 'delivered' : 'cancelled');
    }

    const events: Array<{ object_id: string; event_type: string; n: number }> = await app.deps.db.query(
      `SELECT object_id, event_type, count(*)::int AS n FROM events WHERE object_id = ANY($1) GROUP BY object_id, event_type`,
      [[...live, ...sandbox]],
    );
    expect(events.filter((e) => e.n !== 1)).toEqual([]);
    const kinds = (id: string) =>
      events
        .filter((e) => e.object_id === id)
        .map((e) => e.event_type)
        .sort();
    for (const id of sandbox)
      expect(kinds(id)).toEqual(['mail.delivered', 'mail.mailed', 'mail.ready', 'mail.submitted']);
    for (const id of live) expect(kinds(id)).toEqual(['mail.cancelled', 'mail.submitted']);

    expect(await ledgerProblems(app.deps.db, [member.member_id])).toEqual([]);
    const [money] = await app.deps.db.query(
      `SELECT count(*) FILTER (WHERE kind = 'debit')::int AS debits, count(*) FILTER (WHERE kind = 'refund')::int AS refunds,
              sum(amount_cents)::int AS balance FROM credits_ledger WHERE member_id = $1`,
      [member.member_id],
    );
    expect(money).toEqual({ debits: live.length, refunds: live.length, balance: 1_000_000 });
  });
});
