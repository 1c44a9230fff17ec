// The object store is down during uploads: (1) storage points at a closed port, (2) the S3
// client answers 500 InternalError, 503 SlowDown or times out (aws-sdk-client-mock).
// A letter or batch upload then answers 503 STORAGE_UNAVAILABLE (retryable), debits
// nothing and leaves no record; once the store is back, the same request with the same
// Idempotency-Key succeeds exactly once. A sandbox advance whose photo uploads fail waits
// for the store and completes. A dry run's proof link answers 503 while the store fails.
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3ServiceException } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { insertMemberKey } from '../../services/accounts/accounts';
import { freePort } from '../../scripts/stack';
import { letterForm, letterPdf } from '../integration/mail-helpers';
import { batchForm, pdf, recipientsCsv } from '../integration/batch-helpers';
import { ledgerProblems } from './ledger';

jest.setTimeout(120000);

const MD = { 'x-service-md-version': '1' };

async function rowsOf(app: TestApp, memberId: string) {
  const [r] = await app.deps.db.query(
    `SELECT (SELECT count(*) FROM outbound_mail WHERE member_id = $1)::int AS mail,
            (SELECT count(*) FROM batches WHERE member_id = $1)::int AS batches,
            (SELECT count(*) FROM credits_ledger WHERE member_id = $1)::int AS ledger,
            (SELECT COALESCE(sum(amount_cents), 0) FROM credits_ledger WHERE member_id = $1)::int AS balance`,
    [memberId],
  );
  return r;
}

function expectUnavailable(res: { status: number; body: any }) {
  expect(res.status).toBe(503);
  expect(res.body).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: true });
  expect(typeof res.body.error).toBe('string');
}

describe('object store down: closed port', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ worker: false, env: { S3_ENDPOINT: `http://127.0.0.1:${await freePort()}` } });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a letter and a batch draft get 503, nothing is debited or recorded', async () => {
    const api = client(app.baseUrl);
    const member = await newMember(app.deps, { creditsCents: 100_000 });
    const agent = await newAgent(app.baseUrl, member.key);
    const key = (await newCredential(app.baseUrl, member.key, agent.id)).key;
    const before = await rowsOf(app, member.member_id);

    expectUnavailable(await api('POST', '/v1/mail', { key, headers: MD, form: letterForm(await letterPdf()) }));
    expectUnavailable(
      await api('POST', '/v1/batch-mail', { key, headers: MD, form: batchForm(await pdf(1), recipientsCsv(5)) }),
    );
    expect(await rowsOf(app, member.member_id)).toEqual(before);

    // Pricing needs no store: a dry run still answers.
    const dry = await api('POST', '/v1/mail', {
      key,
      headers: MD,
      form: letterForm(await letterPdf(), { dry_run: true }),
    });
    expect(dry.status).toBe(200);
    // Its proof's document cannot be stored: no proof_url, and a warning says why.
    expect(dry.body.proof_url).toBeNull();
    expect(dry.body.warnings).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'print_proof_unavailable' })]),
    );
    // Readiness (/readyz and its older name /healthz) says why; liveness does not depend on the store.
    for (const probe of ['/healthz', '/readyz']) {
      const health = await fetch(`${app.siteUrl}${probe}`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ ok: false, object_store: false, postgres: true });
    }
    expect((await fetch(`${app.siteUrl}/livez`)).status).toBe(200);
  });
});

describe('object store down: S3 errors and timeouts (aws-sdk-client-mock)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
  });
  afterAll(async () => {
    await app?.close();
  });

  const failures: Array<[string, () => Error]> = [
    [
      '500 InternalError',
      () =>
        new S3ServiceException({
          name: 'InternalError',
          $fault: 'server',
          $metadata: { httpStatusCode: 500 },
          message: 'We encountered an internal error',
        }),
    ],
    [
      '503 SlowDown',
      () =>
        new S3ServiceException({
          name: 'SlowDown',
          $fault: 'server',
          $metadata: { httpStatusCode: 503 },
          message: 'Please reduce your request rate',
        }),
    ],
    ['a timeout', () => Object.assign(new Error('socket timed out after 30000 ms'), { name: 'TimeoutError' })],
  ];

  it.each(failures)(
    '%s on upload: 503, nothing recorded; the retry with the same Idempotency-Key succeeds once',
    async (_label, failure) => {
      const api = client(app.baseUrl);
      const member = await newMember(app.deps, { creditsCents: 100_000 });
      const agent = await newAgent(app.baseUrl, member.key);
      const key = (await newCredential(app.baseUrl, member.key, agent.id)).key;
      const before = await rowsOf(app, member.member_id);
      const letter = await letterPdf();
      const headers = { ...MD, 'idempotency-key': `outage-${Date.now()}-${Math.random()}` };

      const s3 = mockClient(app.deps.storage.client);
      try {
        s3.on(PutObjectCommand).rejects(failure());
        s3.on(DeleteObjectCommand).rejects(failure());
        expectUnavailable(await api('POST', '/v1/mail', { key, headers, form: letterForm(letter) }));
        expectUnavailable(
          await api('POST', '/v1/batch-mail', { key, headers: MD, form: batchForm(await pdf(1), recipientsCsv(5)) }),
        );
        expect(s3.commandCalls(PutObjectCommand).length).toBeGreaterThanOrEqual(2);
      } finally {
        s3.restore();
      }
      expect(await rowsOf(app, member.member_id)).toEqual(before);

      const again = await api('POST', '/v1/mail', { key, headers, form: letterForm(letter) });
      expect(again.status).toBe(201);
      const replay = await api('POST', '/v1/mail', { key, headers, form: letterForm(letter) });
      expect([replay.status, replay.body.id]).toEqual([201, again.body.id]);
      const after = await rowsOf(app, member.member_id);
      expect(after.mail).toBe(before.mail + 1);
      expect(after.balance).toBe(before.balance - again.body.cost_cents);
      expect(await ledgerProblems(app.deps.db, [member.member_id])).toEqual([]);
    },
  );

  it("a dry run's proof_url while the store fails: 503 STORAGE_UNAVAILABLE, then the proof once it is back", async () => {
    const api = client(app.baseUrl);
    const member = await newMember(app.deps, { creditsCents: 100_000 });
    const agent = await newAgent(app.baseUrl, member.key);
    const key = (await newCredential(app.baseUrl, member.key, agent.id)).key;
    const dry = await api('POST', '/v1/mail', {
      key,
      headers: MD,
      form: letterForm(await letterPdf(), { dry_run: true }),
    });
    expect(dry.status).toBe(200);
    const s3 = mockClient(app.deps.storage.client);
    try {
      s3.on(GetObjectCommand).rejects(failures[0][1]());
      const res = await fetch(dry.body.proof_url);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: true });
    } finally {
      s3.restore();
    }
    const proof = await fetch(dry.body.proof_url);
    expect(proof.status).toBe(200);
    expect(
      Buffer.from(await proof.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
  });

  it('a sandbox advance whose photo uploads fail waits for the store and completes', async () => {
    const api = client(app.baseUrl);
    const member = await newMember(app.deps);
    await newAgent(app.baseUrl, member.key);
    const testKey = (await insertMemberKey(app.deps.db, member.member_id, { name: 'sandbox', environment: 'test' }))
      .key;
    const piece = await api('POST', '/v1/mail', { key: testKey, form: letterForm(await letterPdf()) });
    expect(piece.status).toBe(201);

    const s3 = mockClient(app.deps.storage.client);
    s3.on(PutObjectCommand).rejects(failures[0][1]());
    const advancing = api('POST', `/v1/test/mail/${piece.body.id}/advance`, { key: testKey });
    try {
      // The activity keeps failing while the store is down.
      const end = Date.now() + 30000;
      while (s3.commandCalls(PutObjectCommand).length < 2 && Date.now() < end)
        await new Promise((r) => setTimeout(r, 100));
      expect(s3.commandCalls(PutObjectCommand).length).toBeGreaterThanOrEqual(2);
      const [row] = await app.deps.db.query(`SELECT status FROM outbound_mail WHERE id = $1`, [piece.body.id]);
      expect(row.status).toBe('submitted');
    } finally {
      s3.restore();
    }
    const advanced = await advancing;
    expect(advanced.status).toBe(200);
    expect(advanced.body.status).toBe('ready');
    expect(advanced.body.fulfillment_photos.length).toBeGreaterThan(0);
    for (const photo of advanced.body.fulfillment_photos) expect((await fetch(photo.url)).status).toBe(200);
  });
});
