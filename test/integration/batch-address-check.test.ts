// The offline address check over a batch's recipients (extension) through the real API and
// Postgres: the draft carries the summary, nothing is skipped or repriced for it, and
// batches from before the check show null.
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { batchForm, pdf, testKeyFor } from './batch-helpers';

describe('batch address check (extension)', () => {
  let app: TestApp;
  let api: ReturnType<typeof client>;
  let testKey: string;
  let postcard: Buffer;

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    const member = await newMember(app.deps, { creditsCents: 0 });
    testKey = await testKeyFor(app.deps, member.member_id);
    postcard = await pdf(1);
  });
  afterAll(async () => {
    await app.close();
  });

  const csv = (lines: string[]) => Buffer.from(['name,address,address2,city,state,zip', ...lines].join('\n') + '\n');

  it('summarises the valid rows on the draft, naming the doubtful row, without skipping or repricing it', async () => {
    const res = await api('POST', '/v1/batch-mail', {
      key: testKey,
      form: batchForm(
        postcard,
        csv([
          'The President,1600 Pennsylvania Ave NW,,Washington,DC,20500',
          'Empire State,350 Fifth Avenue,Floor 20,New York,NY,10118',
          'Bad zip row,1,,Nowhere,XX,ABCDE',
          'Apple,1 Apple Park Way,,Cupertino,CA,90210',
        ]),
      ),
    });
    expect(res.status).toBe(201);
    const b = res.body.batch;
    // Row 4 is skipped by the CSV rules (state and ZIP), so the doubtful recipient is row 5.
    expect(b.recipients).toMatchObject({ total_rows: 4, valid: 3, skipped: 1 });
    expect(b.recipients.skipped_rows.map((s: { row: number }) => s.row)).toEqual([4]);
    expect(b.recipients.address_check).toEqual({
      likely: 2,
      doubtful: 1,
      unknown: 0,
      doubtful_rows: [
        { row: 5, warnings: [expect.stringMatching(/ZIP 90210 belongs to BEVERLY HILLS, CA, not CUPERTINO/)] },
      ],
    });
    expect(b.pieces.total).toBe(3);

    // The price is the estimate's for 3 pieces: the doubtful row is still printed and paid for.
    const estimate = await api('POST', '/v1/batch-mail/estimate', {
      key: testKey,
      json: { mail_type: 'postcard_4x6', mailing_class: 'first_class', quantity: 3, page_count: 1 },
    });
    expect(b.pricing.total_cents).toBe(estimate.body.estimate.total_cents);
    expect(b.pricing.subtotal_cents).toBe(estimate.body.estimate.subtotal_cents);
    const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM batch_recipients WHERE batch_id = $1`, [
      b.id,
    ]);
    expect(n).toBe(3);

    const read = await api('GET', `/v1/batch-mail/${b.id}`, { key: testKey });
    expect(read.body.batch.recipients.address_check).toEqual(b.recipients.address_check);
  });

  it('counts every doubtful row but lists the first 50, and shows null for batches from before the check', async () => {
    const rows = Array.from({ length: 60 }, (_, i) => `Person ${i + 1},${i + 1} Main St,,Austin,TX,10001`);
    const res = await api('POST', '/v1/batch-mail', { key: testKey, form: batchForm(postcard, csv(rows)) });
    expect(res.status).toBe(201);
    const check = res.body.batch.recipients.address_check;
    expect(check).toMatchObject({ likely: 0, doubtful: 60, unknown: 0 });
    expect(check.doubtful_rows).toHaveLength(50);
    expect(check.doubtful_rows[0].row).toBe(2);
    expect(check.doubtful_rows[49].row).toBe(51);
    expect(res.body.batch.recipients.valid).toBe(60);

    await app.deps.db.query(`UPDATE batches SET address_check = NULL WHERE id = $1`, [res.body.batch.id]);
    const old = await api('GET', `/v1/batch-mail/${res.body.batch.id}`, { key: testKey });
    expect(old.status).toBe(200);
    expect(old.body.batch.recipients.address_check).toBeNull();
  });
});
