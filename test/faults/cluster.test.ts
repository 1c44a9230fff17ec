// Faults that only a cluster has, against the cluster profile (scripts/cluster.ts). Run by
// `npm run test:cluster` alone after the other suites (it kills Temporal services that
// every test would share); skipped anywhere else. This file starts two API processes and
// two worker processes of its own (the test database, a task queue of its own) and:
// - SIGKILLs the history service, then the matching service, while a paid 10,000-piece
//   batch generates its pieces and webhook deliveries wait on a slow receiver, while a
//   client keeps confirming a second batch; restarts the service after a few seconds;
// - SIGKILLs one of the two workers in the same situation; the other finishes alone;
// - stops one of the two APIs (SIGTERM) while clients submit letters to both, retrying on
//   the other API with the same Idempotency-Key.
// Afterwards: every piece once, one batch.submitted, every delivery delivered, one debit
// and at most one refund per object, balances add up, and every workflow ends. The
// recovery times and retry counts are written to .data/cluster/fault-figures.json.
// It also checks that the profile's own two APIs and two workers serve one database.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../config';
import { closeDeps, createDeps } from '../../services/shared/create-deps';
import type { Deps } from '../../services/shared/deps';
import { insertMemberKey } from '../../services/accounts/accounts';
import {
  clusterServes,
  killTemporalService,
  readClusterState,
  restartTemporalService,
  TemporalServiceName,
} from '../../scripts/cluster';
import { ROOT } from '../../scripts/stack';
import { webhookDispatchWorkflowId } from '../../workflows/webhooks/contracts';
import { outboundMailWorkflowId } from '../../workflows/outbound-mail/contracts';
import { batchWorkflowId } from '../../workflows/batches/contracts';
import { client, http, HttpResponse, RequestOptions } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { batchForm, pdf, recipientsCsv } from '../integration/batch-helpers';
import { letterForm, letterPdf } from '../integration/mail-helpers';
import { startReceiver } from '../integration/webhook-helpers';
import {
  ApiProcess,
  deleteSchedulesOf,
  ServiceProcess,
  stackEnv,
  startApiProcess,
  startWorkerProcess,
} from './children';
import { ledgerProblems, until } from './ledger';

jest.setTimeout(900000);

const cluster = process.env.TEST_CLUSTER === '1' ? readClusterState() : undefined;
const describeCluster = cluster ? describe : describe.skip;

const MD = { 'x-service-md-version': '1' };
const ROWS = 10000;
const LETTERS = 6;
const OUTAGE_MS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** A client's retry policy: network errors, 5xx and answers marked retryable are sent again. */
function retryable(res: HttpResponse): boolean {
  return res.status === 0 || res.status >= 500 || res.body?.retryable === true;
}

/** Sends until an answer that is not retryable, alternating between the API base URLs. */
async function withRetries(bases: () => string[], send: (base: string) => Promise<HttpResponse>, timeoutMs = 300000) {
  const end = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    const list = bases();
    const base = list[attempt % list.length];
    const res = await send(base).catch(
      (err) => ({ status: 0, body: String(err), headers: new Headers() }) as HttpResponse,
    );
    if (!retryable(res) || Date.now() > end) return { res, retries: attempt };
    await sleep(500);
  }
}

describeCluster('the cluster profile', () => {
  const taskQueue = `${process.env.TEMPORAL_TASK_QUEUE ?? 'test'}-cluster-${randomBytes(3).toString('hex')}`;
  const env = stackEnv({ TEMPORAL_TASK_QUEUE: taskQueue, WEBHOOK_RETRY_BASE_MS: '200', SHUTDOWN_GRACE_SECONDS: '10' });
  const figures: Record<string, Record<string, number | string>> = {};
  const memberIds: string[] = [];
  let deps: Deps;
  let apis: ApiProcess[] = [];
  let workers: ServiceProcess[] = [];
  const bases = () => apis.filter((a) => a.proc.running).map((a) => a.baseUrl);
  const api = (m: string, p: string, o: RequestOptions = {}) => http(bases()[0], m, p, o);

  beforeAll(async () => {
    deps = await createDeps(loadConfig({ ...process.env, TEMPORAL_TASK_QUEUE: taskQueue }), {
      poolSize: 4,
      name: 'cluster-faults',
    });
    workers = await Promise.all([0, 1].map(() => startWorkerProcess(deps.temporal, { env, taskQueue, capture: true })));
    apis = await Promise.all([0, 1].map(() => startApiProcess({ env, capture: true })));
  });

  afterAll(async () => {
    await Promise.all([...apis.map((a) => a.proc.stop()), ...workers.map((w) => w.stop())]);
    if (deps) {
      await deleteSchedulesOf(deps.temporal, taskQueue);
      await closeDeps(deps);
    }
    const file = path.join(ROOT, '.data', 'cluster', 'fault-figures.json');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), figures }, null, 2) + '\n');
  });

  it("the profile's two APIs and two workers serve one database", async () => {
    const state = cluster!;
    expect(state.apis).toHaveLength(2);
    expect(state.workers).toHaveLength(2);
    const profile = await createDeps(
      loadConfig({ ...process.env, DATABASE_URL: state.databaseUrl, TEMPORAL_TASK_QUEUE: state.taskQueue }),
      { poolSize: 2, name: 'cluster-profile' },
    );
    try {
      for (const a of state.apis) {
        expect((await http(a.siteUrl, 'GET', '/livez')).status).toBe(200);
        expect(await http(a.siteUrl, 'GET', '/readyz')).toMatchObject({
          status: 200,
          body: { ok: true, postgres: true, temporal: true, object_store: true },
        });
      }
      const member = await newMember(profile);
      const testKey = (await insertMemberKey(profile.db, member.member_id, { name: 'sandbox', environment: 'test' }))
        .key;
      await newAgent(`${state.apis[0].siteUrl}/api`, member.key);
      const [first, second] = state.apis.map((a) => client(`${a.siteUrl}/api`));
      const sent = await first('POST', '/v1/mail', {
        key: testKey,
        form: letterForm(await letterPdf(1, 'Cluster profile letter')),
      });
      expect(sent.status).toBe(201);
      expect((await second('GET', `/v1/mail/${sent.body.id}`, { key: testKey })).body.status).toBe('submitted');
      for (const next of ['ready', 'mailed', 'delivered']) {
        const res = await second('POST', `/v1/test/mail/${sent.body.id}/advance`, { key: testKey });
        expect([res.status, res.body.status]).toEqual([200, next]);
      }
      expect(await profile.temporal.workflow.getHandle(outboundMailWorkflowId(sent.body.id)).result()).toBe(
        'delivered',
      );
    } finally {
      await closeDeps(profile);
    }
  });

  /** A batch generating its pieces, webhook deliveries held by the receiver, and a draft to confirm during the fault. */
  async function workInFlight(tag: string) {
    const member = await newMember(deps, { creditsCents: 10_000_000 });
    memberIds.push(member.member_id);
    const agent = await newAgent(bases()[0], member.key);
    const credential = await newCredential(bases()[0], member.key, agent.id, {
      scopes: ['mail.send', 'webhook.manage', 'webhook.read'],
    });
    const holding: Array<() => void> = [];
    let hold = true;
    const receiver = await startReceiver(() =>
      hold
        ? new Promise((resolve) => holding.push(() => resolve({ status: 200, body: 'late' })))
        : { status: 200, body: 'ok' },
    );
    const release = () => {
      hold = false;
      holding.splice(0).forEach((answer) => answer());
    };
    const settings = await api('PUT', '/v1/webhooks/settings', {
      key: credential.key,
      headers: MD,
      json: { webhook_url: receiver.url, enabled: true, event_types: ['*'] },
    });
    expect(settings.status).toBe(200);

    const letters: string[] = [];
    for (let i = 0; i < LETTERS; i++) {
      const res = await api('POST', '/v1/mail', {
        key: credential.key,
        headers: MD,
        form: letterForm(await letterPdf(1, `${tag} letter ${i}`)),
      });
      expect(res.status).toBe(201);
      letters.push(res.body.id);
    }
    await receiver.waitFor(3, 120000);

    const draft = async (rows: number, name: string) => {
      const res = await api('POST', '/v1/batch-mail', {
        key: member.key,
        form: batchForm(await pdf(1), recipientsCsv(rows), { job_name: name }),
      });
      expect(res.status).toBe(201);
      return res.body.batch.id as string;
    };
    const batch = await draft(ROWS, `${tag}: generating during the fault`);
    const confirmedDuring = await draft(50, `${tag}: confirmed during the fault`);
    expect((await api('POST', `/v1/batch-mail/${batch}/confirm`, { key: member.key })).status).toBe(200);
    const createdAtFault = await until(
      'pieces being generated',
      async () => {
        const [row] = await deps.db.query(`SELECT count(*)::int AS n FROM batch_pieces WHERE batch_id = $1`, [batch]);
        return row.n > 0 ? row.n : null;
      },
      120000,
      10,
    );
    return { member, credential, receiver, release, letters, batch, confirmedDuring, createdAtFault };
  }

  type Flight = Awaited<ReturnType<typeof workInFlight>>;

  /** Confirms the second batch through the fault, as a client would: same Idempotency-Key, retried on either API. */
  function confirmThroughFault(f: Flight, since: number) {
    const key = `confirm-${f.confirmedDuring}`;
    return withRetries(bases, (base) =>
      http(base, 'POST', `/v1/batch-mail/${f.confirmedDuring}/confirm`, {
        key: f.member.key,
        headers: { 'Idempotency-Key': key },
      }),
    ).then((r) => ({ ...r, answeredAfterMs: Date.now() - since }));
  }

  /** Waits for everything in flight to finish, checks the invariants, then ends every workflow. */
  async function settle(f: Flight, since: number) {
    type Delivery = { status: string; event_id: string; environment: string; target: string };
    const [submittedAfterMs, [deliveries, deliveredAfterMs]] = await Promise.all([
      until(
        'the batch to be submitted',
        async () => {
          const [row] = await deps.db.query(`SELECT status FROM batches WHERE id = $1`, [f.batch]);
          return row.status === 'submitted' ? Date.now() - since : null;
        },
        600000,
        200,
      ),
      until(
        'every delivery to be delivered',
        async () => {
          const rows: Delivery[] = await deps.db.query(
            `SELECT d.status, d.event_id, d.environment, d.target FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
            WHERE e.object_id = ANY($1) AND d.target_type = 'agent_webhook'`,
            [f.letters],
          );
          return rows.length >= LETTERS && rows.every((r) => r.status === 'delivered')
            ? ([rows, Date.now() - since] as const)
            : null;
        },
        600000,
        200,
      ),
    ]);

    const [pieces] = await deps.db.query(
      `SELECT count(*)::int AS n, count(DISTINCT batch_sequence)::int AS distinct_n, min(batch_sequence) AS lo, max(batch_sequence) AS hi
         FROM batch_pieces WHERE batch_id = $1`,
      [f.batch],
    );
    expect(pieces).toEqual({ n: ROWS, distinct_n: ROWS, lo: 1, hi: ROWS });
    const submittedEvents = async () =>
      (
        await deps.db.query(
          `SELECT count(*)::int AS n FROM events WHERE object_id = $1 AND event_type = 'batch.submitted'`,
          [f.batch],
        )
      )[0].n;
    await until('batch.submitted to be published', async () => (await submittedEvents()) > 0, 120000);
    expect(await submittedEvents()).toBe(1);
    const receivedIds = new Set(f.receiver.received.map((r) => r.headers['x-service-event-id']));
    for (const d of deliveries) expect(receivedIds.has(d.event_id)).toBe(true);
    expect(await ledgerProblems(deps.db, memberIds)).toEqual([]);

    // Every workflow ends: both batches and every letter are cancelled (each refunded once),
    // and the receiver's dispatcher finishes once nothing is left to send.
    for (const id of [f.batch, f.confirmedDuring]) {
      const { res } = await withRetries(bases, (base) =>
        http(base, 'DELETE', `/v1/batch-mail/${id}`, { key: f.member.key }),
      );
      expect(res.status).toBe(200);
      await deps.temporal.workflow.getHandle(batchWorkflowId(id)).result();
    }
    for (const id of f.letters) {
      const { res } = await withRetries(bases, (base) =>
        http(base, 'DELETE', `/v1/mail/${id}`, { key: f.credential.key, headers: MD }),
      );
      expect([res.status, res.body.outbound_mail?.status]).toEqual([200, 'cancelled']);
      expect(await deps.temporal.workflow.getHandle(outboundMailWorkflowId(id)).result()).toBe('cancelled');
    }
    for (const key of new Set(deliveries.map((d) => `${d.environment}:${d.target}`))) {
      expect(typeof (await deps.temporal.workflow.getHandle(webhookDispatchWorkflowId(taskQueue, key)).result())).toBe(
        'number',
      );
    }
    expect(await ledgerProblems(deps.db, memberIds)).toEqual([]);
    const [money] = await deps.db.query(
      `SELECT count(*) FILTER (WHERE kind = 'debit')::int AS debits, count(*) FILTER (WHERE kind = 'refund')::int AS refunds,
              sum(amount_cents)::int AS balance FROM credits_ledger WHERE member_id = $1`,
      [f.member.member_id],
    );
    expect(money).toEqual({ debits: LETTERS + 2, refunds: LETTERS + 2, balance: 10_000_000 });
    await f.receiver.close();
    return { submittedAfterMs, deliveredAfterMs };
  }

  for (const service of ['history', 'matching'] as TemporalServiceName[]) {
    it(`SIGKILL of the ${service} service mid batch generation and mid delivery: everything completes once after its restart`, async () => {
      const f = await workInFlight(`${service} kill`);
      await killTemporalService(service);
      const killedAt = Date.now();
      const confirm = confirmThroughFault(f, killedAt);
      await sleep(OUTAGE_MS);
      f.release();
      await restartTemporalService(service);
      const restartedAt = Date.now();
      await until('the cluster to serve again', () => clusterServes(cluster!.frontendAddress), 300000, 200);
      const servesAfterMs = Date.now() - restartedAt;

      const answered = await confirm;
      expect(answered.res.status).toBe(200);
      const { submittedAfterMs, deliveredAfterMs } = await settle(f, restartedAt);
      figures[`${service} SIGKILL`] = {
        'pieces generated when killed': f.createdAtFault,
        'outage (kill -> restart), s': seconds(restartedAt - killedAt),
        'restart -> cluster serves, s': seconds(servesAfterMs),
        'restart -> 10,000-piece batch submitted, s': seconds(submittedAfterMs),
        'restart -> every held delivery delivered, s': seconds(deliveredAfterMs),
        'confirm during the fault: client retries': answered.retries,
        'confirm during the fault: answered after kill, s': seconds(answered.answeredAfterMs),
      };
    });
  }

  it('SIGKILL of one of two workers mid batch generation and mid delivery: the other finishes alone', async () => {
    const f = await workInFlight('worker kill');
    const [victim, survivor] = workers;
    await victim.kill9();
    const killedAt = Date.now();
    const confirm = confirmThroughFault(f, killedAt);
    f.release();
    const answered = await confirm;
    expect(answered.res.status).toBe(200);
    const { submittedAfterMs, deliveredAfterMs } = await settle(f, killedAt);
    expect(survivor.running).toBe(true);
    figures['one of two workers SIGKILL'] = {
      'pieces generated when killed': f.createdAtFault,
      'kill -> 10,000-piece batch submitted, s': seconds(submittedAfterMs),
      'kill -> every held delivery delivered, s': seconds(deliveredAfterMs),
      'confirm after the kill: client retries': answered.retries,
    };
    workers = [survivor, await startWorkerProcess(deps.temporal, { env, taskQueue, capture: true })];
  });

  it('SIGTERM to one of two APIs while clients submit to both: each letter once, the stopped API drains', async () => {
    const member = await newMember(deps, { creditsCents: 1_000_000 });
    memberIds.push(member.member_id);
    const agent = await newAgent(bases()[0], member.key);
    const key = (await newCredential(bases()[0], member.key, agent.id)).key;
    const [stopped, other] = apis;
    const document = await letterPdf(1, 'Sent while an API stops');
    const perClient = 12;
    let retries = 0;
    let stoppedAt = 0;
    let sent = 0;
    // Four clients, each sending its letters one after another, alternating between both APIs.
    const clients = [0, 1, 2, 3].map(async (c) => {
      const ids: string[] = [];
      for (let i = 0; i < perClient; i++) {
        const idempotencyKey = `letter-${c}-${i}-${randomBytes(4).toString('hex')}`;
        const preferred = () => {
          const live = bases();
          return (c + i) % 2 === 0 ? live : [...live].reverse();
        };
        const { res, retries: r } = await withRetries(preferred, (base) =>
          http(base, 'POST', '/v1/mail', {
            key,
            headers: { ...MD, 'Idempotency-Key': idempotencyKey },
            form: letterForm(document, { allow_duplicate: true }),
          }),
        );
        expect(res.status).toBe(201);
        retries += r;
        ids.push(res.body.id);
        if (++sent === 8) {
          stoppedAt = Date.now();
          stopped.proc.child.kill('SIGTERM');
        }
      }
      return ids;
    });
    const exitedAt = stopped.proc.exited.then((exit) => ({ exit, at: Date.now() }));
    const ids = (await Promise.all(clients)).flat();
    const { exit, at } = await exitedAt;
    expect(exit).toEqual({ code: 0, signal: null });
    const drainedAfterMs = at - stoppedAt;
    expect(stopped.proc.text()).not.toContain('grace period over');
    expect(other.proc.running).toBe(true);

    expect(new Set(ids).size).toBe(4 * perClient);
    const [{ n }] = await deps.db.query(`SELECT count(*)::int AS n FROM outbound_mail WHERE member_id = $1`, [
      member.member_id,
    ]);
    expect(n).toBe(4 * perClient);
    await until(
      'every letter announced',
      async () => {
        const [row] = await deps.db.query(
          `SELECT count(DISTINCT object_id)::int AS n FROM events WHERE object_id = ANY($1) AND event_type = 'mail.submitted'`,
          [ids],
        );
        return row.n === ids.length;
      },
      120000,
      200,
    );
    for (const id of ids) {
      const { res } = await withRetries(bases, (base) => http(base, 'DELETE', `/v1/mail/${id}`, { key, headers: MD }));
      expect(res.status).toBe(200);
      expect(await deps.temporal.workflow.getHandle(outboundMailWorkflowId(id)).result()).toBe('cancelled');
    }
    expect(await ledgerProblems(deps.db, memberIds)).toEqual([]);
    figures['one of two APIs SIGTERM'] = {
      'letters submitted by 4 clients': ids.length,
      'client retries (on the other API)': retries,
      'SIGTERM -> stopped API exited, s': seconds(drainedAfterMs),
    };
    apis = [other, await startApiProcess({ env, capture: true })];
  });
});
