// Postgres drops the application's connections (pg_terminate_backend on every backend of
// this test's API and worker, found by application_name) about twice a second while
// letters are being submitted. Clients retry 5xx answers with the same Idempotency-Key, as the spec's
// retryable errors invite. Afterwards each letter exists exactly once, was debited exactly
// once, has its workflow (which announced it), its document is stored, no stray document
// is left, and cancelling every piece refunds each exactly once.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { client, HttpResponse } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { letterForm, letterPdf } from '../integration/mail-helpers';
import { HostileApp, startHostileApp } from '../hostile/helpers';
import { outboundMailWorkflowId } from '../../workflows/outbound-mail/contracts';
import { ledgerProblems, until } from './ledger';

jest.setTimeout(240000);

const MD = { 'x-service-md-version': '1' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Postgres connections dropped during submissions', () => {
  const applicationName = `faults-pg-${randomBytes(4).toString('hex')}`;
  let app: HostileApp;
  let killer: Client;

  beforeAll(async () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.searchParams.set('application_name', applicationName);
    app = await startHostileApp({ DATABASE_URL: url.toString() });
    killer = new Client({ connectionString: process.env.DATABASE_URL });
    await killer.connect();
  });
  afterAll(async () => {
    await killer?.end();
    await app?.close();
  });

  it('loses nothing and moves money exactly once', async () => {
    const api = client(app.baseUrl);
    const member = await newMember(app.deps, { creditsCents: 1_000_000 });
    const agent = await newAgent(app.baseUrl, member.key);
    const key = (await newCredential(app.baseUrl, member.key, agent.id)).key;
    const [{ application_name: seen }] = await app.deps.db.query(
      `SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()`,
    );
    expect(seen).toBe(applicationName);

    let killing = true;
    let terminated = 0;
    const killerLoop = (async () => {
      while (killing) {
        const rows = await killer.query(
          `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`,
          [applicationName],
        );
        terminated += rows.rows.filter((r) => r.ok).length;
        // Every app connection goes, about twice a second: each letter is hit, retries get through.
        await sleep(300 + Math.random() * 400);
      }
    })();

    const letters = 24;
    const answers: Array<{ idempotencyKey: string; final: HttpResponse; attempts: number; statuses: number[] }> = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (next < letters) {
          const n = next++;
          const idempotencyKey = `pg-drop-${n}-${randomBytes(4).toString('hex')}`;
          const pdf = await letterPdf(1, `Postgres drop letter ${n}`);
          const statuses: number[] = [];
          let final: HttpResponse | undefined;
          // Retries are bounded by time, not count: on a loaded machine a submission can take longer
          // than the killer's period several times in a row (seen with 40 quick attempts).
          const giveUpAt = Date.now() + 90_000;
          while (Date.now() < giveUpAt) {
            const res = await api('POST', '/v1/mail', {
              key,
              headers: { ...MD, 'idempotency-key': idempotencyKey },
              form: letterForm(pdf),
            }).catch((err) => ({ status: 0, body: String(err), headers: new Headers() }) as HttpResponse);
            statuses.push(res.status);
            final = res;
            // 5xx, 409 IDEMPOTENCY_REQUEST_* and network errors are retryable by the spec; anything else is an answer.
            const retry = res.status === 0 || res.status >= 500 || (res.status === 409 && res.body?.retryable === true);
            if (!retry) break;
            await sleep(100 + Math.random() * 200);
          }
          answers.push({ idempotencyKey, final: final!, attempts: statuses.length, statuses });
        }
      }),
    );
    killing = false;
    await killerLoop;

    // The drops happened, and they hit requests.
    expect(terminated).toBeGreaterThan(5);
    const unanswered = answers
      .filter((a) => a.final.status !== 201)
      .map((a) => `${a.idempotencyKey}: ${a.statuses.join(',')} ${JSON.stringify(a.final.body).slice(0, 200)}`);
    expect(unanswered).toEqual([]);

    // Exactly one piece per Idempotency-Key, and each answer names it.
    const pieces: Array<{ id: string; idempotency_key: string; document_key: string; status: string }> =
      await app.deps.db.query(
        `SELECT id, idempotency_key, document_key, status FROM outbound_mail WHERE member_id = $1`,
        [member.member_id],
      );
    expect(pieces.length).toBe(letters);
    for (const a of answers) {
      const mine = pieces.filter((p) => p.idempotency_key === a.idempotencyKey);
      expect(mine.map((p) => p.id)).toEqual([a.final.body.id]);
    }

    // Every document is stored, and nothing else is (besides print proofs of these pieces,
    // which the worker stores beside their documents).
    const objects = await app.objectKeys();
    expect(objects.filter((k) => !k.endsWith('/proof.pdf')).sort()).toEqual(pieces.map((p) => p.document_key).sort());
    expect(
      objects.filter((k) => k.endsWith('/proof.pdf')).every((k) => pieces.some((p) => k === `mail/${p.id}/proof.pdf`)),
    ).toBe(true);

    // Every piece's workflow runs and announced it once.
    await until(
      'every piece announced',
      async () => {
        const [{ n }] = await app.deps.db.query(
          `SELECT count(DISTINCT object_id)::int AS n FROM events WHERE member_id = $1 AND event_type = 'mail.submitted'`,
          [member.member_id],
        );
        return n === letters;
      },
      120000,
      500,
    );
    const [{ dup }] = await app.deps.db.query(
      `SELECT count(*)::int - count(DISTINCT (object_id, event_type))::int AS dup FROM events WHERE member_id = $1`,
      [member.member_id],
    );
    expect(dup).toBe(0);
    expect(await ledgerProblems(app.deps.db, [member.member_id])).toEqual([]);

    // Cancelling refunds each piece once, and every workflow ends.
    for (const p of pieces) {
      const res = await api('DELETE', `/v1/mail/${p.id}`, { key, headers: MD });
      expect(res.status).toBe(200);
      expect(res.body.refunded_credits_cents).toBeGreaterThan(0);
      expect(await app.deps.temporal.workflow.getHandle(outboundMailWorkflowId(p.id)).result()).toBe('cancelled');
    }
    expect(await ledgerProblems(app.deps.db, [member.member_id])).toEqual([]);
    const [money] = await app.deps.db.query(
      `SELECT count(*) FILTER (WHERE kind = 'debit')::int AS debits, count(*) FILTER (WHERE kind = 'refund')::int AS refunds,
              sum(amount_cents)::int AS balance FROM credits_ledger WHERE member_id = $1`,
      [member.member_id],
    );
    expect(money).toEqual({ debits: letters, refunds: letters, balance: 1_000_000 });
  });
});
