// Submitting outbound mail against the real stack: prices, every safeguard (each refuses
// before spending and leaves no record), duplicate protection, idempotency and
// concurrent spending, reads, filters and isolation.
import { startTestApp, TestApp } from '../helpers/app';
import { priceOutboundMail, MailClass } from '../../domain/outbound-mail/pricing';
import { assignFacility } from '../../services/operations/facilities';
import {
  api,
  balance,
  ledger,
  letterForm,
  letterPdf,
  mailCount,
  newSender,
  RECIPIENT,
  sendLetter,
  Sender,
} from './mail-helpers';

async function expectedPrice(
  app: TestApp,
  mailClass: MailClass,
  pageCount: number,
  opts: { color?: boolean; duplex?: boolean; zip?: string } = {},
) {
  const facility = await assignFacility(app.deps.db, false);
  return priceOutboundMail({
    pageCount,
    color: opts.color ?? false,
    duplex: opts.duplex ?? false,
    mailClass,
    destinationZip: opts.zip ?? RECIPIENT.recipient_zip,
    destinationCountry: 'US',
    originZip: facility.originZip,
  });
}

describe('POST /v1/mail', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('charges exactly the priced total for several classes and returns the breakdown and review', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const cases: { mailClass: MailClass; pages: number; color?: boolean; duplex?: boolean }[] = [
      { mailClass: 'first_class', pages: 1 },
      { mailClass: 'certified', pages: 3, color: true },
      { mailClass: 'carrierx_2day', pages: 2, duplex: true },
      { mailClass: 'priority', pages: 5 },
    ];
    let expectedBalance = 100000;
    for (const c of cases) {
      const expected = await expectedPrice(app, c.mailClass, c.pages, c);
      const res = await sendLetter(
        app,
        s,
        letterForm(await letterPdf(c.pages), {
          mail_class: c.mailClass,
          color: Boolean(c.color),
          duplex: Boolean(c.duplex),
          metadata: JSON.stringify({ order: c.mailClass, nested: { a: [1, 2] } }),
        }),
      );
      expect(res.status).toBe(201);
      expectedBalance -= expected.total_cents;
      expect(res.body).toMatchObject({
        status: 'submitted',
        mail_class: c.mailClass,
        page_count: c.pages,
        cost_cents: expected.total_cents,
        credits_required_cents: expected.total_cents,
        credit_balance_cents: expectedBalance,
        test_mode: false,
        metadata: { order: c.mailClass, nested: { a: [1, 2] } },
        agent_id: s.agentId,
      });
      expect(res.body.cost_breakdown).toEqual(expected);
      expect(res.body.estimated_live_cost_cents).toBeUndefined();
      expect(res.body.pdf_url).toMatch(/^http/);
      expect(res.body.human_review).toMatchObject({
        send_to: { name: 'Jane Doe', line1: '123 Main St', city: 'Austin', state: 'TX', zip: '78701' },
        return_address: { line1: '1 Return Way', city: 'Austin', state: 'TX', zip: '78701' },
        mail_class: c.mailClass,
        document: { type: 'pdf', page_count: c.pages },
        safeguards: { duplicate_protection: 'checked', requires_approval: false },
      });
      expect(res.body.human_review.next_step).toContain('DELETE');
      expect(await ledger(app, res.body.id)).toEqual([
        { kind: 'debit', amount_cents: -expected.total_cents, entry_key: `debit:mail:${res.body.id}` },
      ]);
    }
    expect(await balance(app, s.memberId)).toBe(expectedBalance);
  });

  it('returns the member profile return address unless one is sent, and refuses half a return address', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const res = await sendLetter(
      app,
      s,
      letterForm(await letterPdf(), {
        return_name: 'Office',
        return_line1: '9 Side St',
        return_city: 'Dallas',
        return_state: 'tx',
        return_zip: '75201',
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      return_name: 'Office',
      return_line1: '9 Side St',
      return_city: 'Dallas',
      return_state: 'TX',
      return_zip: '75201',
    });
    const half = await sendLetter(app, s, letterForm(await letterPdf(), { return_line1: '9 Side St' }));
    expect(half.status).toBe(400);
    expect(half.body.fields.map((f: { path: string }) => f.path).sort()).toEqual([
      'return_city',
      'return_state',
      'return_zip',
    ]);
  });

  it('validates fields with dot paths and stores nothing', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const form = letterForm(await letterPdf(), {
      recipient_name: '',
      recipient_state: 'Texas',
      recipient_zip: '7870',
      mail_class: 'pigeon',
      recipient_country: 'CA',
      package_id: 'nope',
    });
    const res = await sendLetter(app, s, form);
    expect(res.status).toBe(400);
    expect(res.body.fields.map((f: { path: string }) => f.path).sort()).toEqual([
      'mail_class',
      'package_id',
      'recipient_country',
      'recipient_state',
      'recipient_zip',
    ]);
    const nobody = await sendLetter(app, s, letterForm(await letterPdf(), { recipient_name: '' }));
    expect(nobody.status).toBe(400);
    expect(nobody.body.fields).toEqual([
      { path: 'recipient_name', message: 'recipient_name or recipient_company is required' },
    ]);
    const missingDoc = await sendLetter(app, s, letterForm(null));
    expect(missingDoc.status).toBe(400);
    expect(missingDoc.body.fields).toEqual([expect.objectContaining({ path: 'document' })]);
    const badDoc = await sendLetter(app, s, letterForm(Buffer.from('%PDF-garbage'), {}, 'letter.pdf'));
    expect(badDoc.status).toBe(400);
    expect(await mailCount(app, s.memberId)).toBe(0);
    expect(await balance(app, s.memberId)).toBe(100000);
    // A company alone is enough; it prints between name and street.
    const company = await sendLetter(
      app,
      s,
      letterForm(await letterPdf(), { recipient_name: '', recipient_company: 'ACME Corp' }),
    );
    expect(company.status).toBe(201);
    expect(company.body.human_review.send_to.formatted).toBe('ACME Corp\n123 Main St\nAustin, TX 78701');
  });

  it('answers a dry run with the price and warnings and writes nothing', async () => {
    const s = await newSender(app, { creditsCents: 100, credential: { max_daily_pieces: 1 } });
    const expected = await expectedPrice(app, 'first_class', 2);
    const res = await sendLetter(app, s, letterForm(await letterPdf(2), { dry_run: 'true' }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      dry_run: true,
      cost_cents: expected.total_cents,
      credits_required_cents: expected.total_cents,
      cost_breakdown: expected,
      test_mode: false,
    });
    expect(res.body.cost_display).toMatch(/^\$/);
    const codes = res.body.warnings.map((w: { code: string }) => w.code);
    expect(codes).toEqual(expect.arrayContaining(['max_daily_pieces', 'insufficient_credits']));
    expect(await mailCount(app, s.memberId)).toBe(0);
    expect(await balance(app, s.memberId)).toBe(100);
  });

  it('refuses above X-Max-Cost-Cents with 422 before spending', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const expected = await expectedPrice(app, 'first_class', 1);
    const res = await sendLetter(app, s, letterForm(await letterPdf()), {
      'x-max-cost-cents': String(expected.total_cents - 1),
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'MAX_COST_EXCEEDED', retryable: false });
    const bad = await sendLetter(app, s, letterForm(await letterPdf()), { 'x-max-cost-cents': 'lots' });
    expect(bad.status).toBe(400);
    const ok = await sendLetter(app, s, letterForm(await letterPdf()), {
      'x-max-cost-cents': String(expected.total_cents),
    });
    expect(ok.status).toBe(201);
    expect(await mailCount(app, s.memberId)).toBe(1);
  });

  it('refuses above the per-transaction limit and the daily spend cap with 422', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const price = (await expectedPrice(app, 'first_class', 1)).total_cents;
    await app.deps.db.query(`UPDATE members SET per_transaction_limit_cents = $2 WHERE id = $1`, [
      s.memberId,
      price - 1,
    ]);
    const perTx = await sendLetter(app, s, letterForm(await letterPdf()));
    expect(perTx.status).toBe(422);
    expect(perTx.body.code).toBe('PER_TRANSACTION_LIMIT_EXCEEDED');

    await app.deps.db.query(
      `UPDATE members SET per_transaction_limit_cents = NULL, daily_spend_limit_cents = $2 WHERE id = $1`,
      [s.memberId, price + price / 2],
    );
    expect((await sendLetter(app, s, letterForm(await letterPdf()))).status).toBe(201);
    const daily = await sendLetter(app, s, letterForm(await letterPdf()));
    expect(daily.status).toBe(422);
    expect(daily.body).toMatchObject({ code: 'DAILY_SPEND_LIMIT_EXCEEDED', details: { spent_last_24h_cents: price } });
    expect(await mailCount(app, s.memberId)).toBe(1);
    expect(await balance(app, s.memberId)).toBe(100000 - price);
  });

  it('refuses the piece past max_daily_pieces with 422, for test keys too', async () => {
    for (const environment of ['live', 'test'] as const) {
      const s = await newSender(app, { creditsCents: 100000, environment, credential: { max_daily_pieces: 2 } });
      expect((await sendLetter(app, s, letterForm(await letterPdf()))).status).toBe(201);
      expect((await sendLetter(app, s, letterForm(await letterPdf()))).status).toBe(201);
      const third = await sendLetter(app, s, letterForm(await letterPdf()));
      expect(third.status).toBe(422);
      expect(third.body).toMatchObject({
        code: 'MAX_DAILY_PIECES_EXCEEDED',
        details: { max_daily_pieces: 2, remaining_pieces: 0 },
      });
      const dry = await sendLetter(app, s, letterForm(await letterPdf(), { dry_run: true }));
      expect(dry.status).toBe(200);
      expect(dry.body.warnings).toEqual(
        expect.arrayContaining([expect.objectContaining({ code: 'max_daily_pieces', remaining_pieces: 0 })]),
      );
      expect(await mailCount(app, s.memberId)).toBe(2);
    }
  });

  it('holds requires_approval and force_approval pieces as pending_approval without a debit', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const price = (await expectedPrice(app, 'first_class', 1)).total_cents;
    const requested = await sendLetter(
      app,
      s,
      letterForm(await letterPdf(), { requires_approval: 'true', metadata: '{"zeta":1,"alpha":{"y":2,"b":3}}' }),
    );
    expect(requested.status).toBe(201);
    expect(requested.body).toMatchObject({
      status: 'pending_approval',
      requires_approval: true,
      cost_cents: price,
      credits_required_cents: price,
      human_review: { safeguards: { approval_source: 'request' }, cost: { charged: false } },
    });
    expect(requested.body.human_review.next_step).toContain('approve');
    // metadata comes back exactly as sent, key order included.
    const read = await api(app)('GET', `/v1/mail/${requested.body.id}`, { key: s.key });
    expect(JSON.stringify(read.body.metadata)).toBe('{"zeta":1,"alpha":{"y":2,"b":3}}');
    const forced = await newSender(app, { creditsCents: 100000, credential: { force_approval: true } });
    const res = await sendLetter(app, forced, letterForm(await letterPdf()));
    expect(res.body).toMatchObject({
      status: 'pending_approval',
      human_review: { safeguards: { approval_source: 'force_approval' } },
    });
    expect(await ledger(app, requested.body.id)).toEqual([]);
    expect(await ledger(app, res.body.id)).toEqual([]);
    expect(await balance(app, s.memberId)).toBe(100000);
  });

  it('refuses the same letter to the same recipient within 24 hours with 409 and the existing id, unless allow_duplicate', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const doc = await letterPdf(1, 'The same letter');
    const first = await sendLetter(app, s, letterForm(doc));
    expect(first.status).toBe(201);
    const after = await balance(app, s.memberId);
    // Different spelling of the same address, different metadata and a new Idempotency-Key: still the same letter.
    const again = await sendLetter(
      app,
      s,
      letterForm(doc, { recipient_name: 'JANE DOE', recipient_line1: '123 Main Street', metadata: '{"try":2}' }),
      { 'idempotency-key': 'another-key' },
    );
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      code: 'DUPLICATE_OUTBOUND_MAIL',
      retryable: false,
      details: { existing_outbound_mail_id: first.body.id },
    });
    expect(await balance(app, s.memberId)).toBe(after);
    expect(await mailCount(app, s.memberId)).toBe(1);
    // Another class is another letter; allow_duplicate sends the same one on purpose.
    expect((await sendLetter(app, s, letterForm(doc, { mail_class: 'priority' }))).status).toBe(201);
    const deliberate = await sendLetter(app, s, letterForm(doc, { allow_duplicate: 'true' }));
    expect(deliberate.status).toBe(201);
    expect(deliberate.body.human_review.safeguards.duplicate_protection).toBe('bypassed');
  });

  it('refuses with 402 and the shortfall when credits are short, leaving no record', async () => {
    const s = await newSender(app, { creditsCents: 50 });
    const price = (await expectedPrice(app, 'first_class', 1)).total_cents;
    const res = await sendLetter(app, s, letterForm(await letterPdf()));
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({
      code: 'INSUFFICIENT_CREDITS',
      retryable: false,
      credits_required_cents: price,
      credit_balance_cents: 50,
      credit_shortfall_cents: price - 50,
    });
    expect(res.body.billing_url).toMatch(/#credits$/);
    expect(await mailCount(app, s.memberId)).toBe(0);
  });

  it('charges test keys nothing and reports the live estimate', async () => {
    const s = await newSender(app, { creditsCents: 0, environment: 'test' });
    const expected = await expectedPrice(app, 'certified', 2);
    const res = await sendLetter(app, s, letterForm(await letterPdf(2), { mail_class: 'certified' }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'submitted',
      test_mode: true,
      cost_cents: 0,
      credits_required_cents: 0,
      estimated_live_cost_cents: expected.total_cents,
    });
    expect(res.headers.get('x-test-mode')).toBe('true');
    expect(await ledger(app, res.body.id)).toEqual([]);
  });

  it('creates one piece and one debit for concurrent submissions with one Idempotency-Key', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const doc = await letterPdf();
    const results = await Promise.all(
      [0, 1, 2].map(() => sendLetter(app, s, letterForm(doc), { 'idempotency-key': 'order-42' })),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await mailCount(app, s.memberId)).toBe(1);
    expect(await ledger(app, results[0].body.id)).toHaveLength(1);
    const other = await sendLetter(app, s, letterForm(await letterPdf()), { 'idempotency-key': 'order-42' });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('keeps duplicate protection and max_daily_pieces exact when sandbox letters arrive at once', async () => {
    // No debit, so no member lock: the named locks on the letter and on the key decide.
    const s = await newSender(app, { creditsCents: 0, environment: 'test', credential: { max_daily_pieces: 3 } });
    const doc = await letterPdf(1, 'Sent eight times at once');
    const same = await Promise.all(Array.from({ length: 8 }, () => sendLetter(app, s, letterForm(doc))));
    expect(same.filter((r) => r.status === 201)).toHaveLength(1);
    expect(same.filter((r) => r.status === 409)).toHaveLength(7);
    // Eight different letters: the key's limit of 3 a day admits exactly two more.
    const docs = await Promise.all(Array.from({ length: 8 }, (_, i) => letterPdf(1, `Different letter ${i}`)));
    const many = await Promise.all(docs.map((d) => sendLetter(app, s, letterForm(d))));
    expect(many.filter((r) => r.status === 201)).toHaveLength(2);
    expect(many.filter((r) => r.status === 422).map((r) => r.body.code)).toEqual(
      Array(6).fill('MAX_DAILY_PIECES_EXCEEDED'),
    );
    expect(await mailCount(app, s.memberId)).toBe(3);
  });

  it('debits exactly 5 of 20 concurrent submissions funded for 5 and never overdraws', async () => {
    const price = (await expectedPrice(app, 'first_class', 1)).total_cents;
    const s = await newSender(app, { creditsCents: price * 5 });
    const docs = await Promise.all(Array.from({ length: 20 }, () => letterPdf()));
    const results = await Promise.all(
      docs.map((d, i) => sendLetter(app, s, letterForm(d, { recipient_name: `Recipient ${i}` }))),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((x) => x === 201)).toHaveLength(5);
    expect(statuses.filter((x) => x === 402)).toHaveLength(15);
    expect(await balance(app, s.memberId)).toBe(0);
    expect(await mailCount(app, s.memberId)).toBe(5);
    const [debits] = await app.deps.db.query(
      `SELECT count(*)::int AS n FROM credits_ledger WHERE member_id = $1 AND kind = 'debit'`,
      [s.memberId],
    );
    expect(debits.n).toBe(5);
  });

  it("sends from the member key's only agent and answers 404 when the member has no mailbox", async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const res = await api(app)('POST', '/v1/mail', { key: s.memberKey, form: letterForm(await letterPdf()) });
    expect(res.status).toBe(201);
    expect(res.body.agent_id).toBe(s.agentId);
    const { newMember } = await import('../helpers/factories');
    const lonely = await newMember(app.deps, { creditsCents: 100000 });
    const none = await api(app)('POST', '/v1/mail', { key: lonely.key, form: letterForm(await letterPdf()) });
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('MAILBOX_NOT_FOUND');
  });

  it('requires the instructions version from agent keys', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const missing = await api(app)('POST', '/v1/mail', { key: s.key, form: letterForm(await letterPdf()) });
    expect(missing.status).toBe(400);
    const stale = await sendLetter(app, s, letterForm(await letterPdf()), { 'x-service-md-version': '7' });
    expect(stale.status).toBe(409);
  });
});

describe('reading outbound mail', () => {
  let app: TestApp;
  let s: Sender;
  let other: Sender;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    app = await startTestApp();
    s = await newSender(app, { creditsCents: 100000 });
    other = await newSender(app, { creditsCents: 100000 });
    const send = async (name: string, fields: Record<string, string>) => {
      const res = await sendLetter(app, s, letterForm(await letterPdf(), { recipient_name: name, ...fields }));
      expect(res.status).toBe(201);
      ids[name] = res.body.id;
    };
    await send('Alice Archer', {
      recipient_city: 'Boston',
      recipient_state: 'MA',
      recipient_zip: '02110',
      agent_notes: 'fragile corner',
    });
    await send('Bob Baker', { recipient_line2: 'Suite 9', requires_approval: 'true' });
    await send('Carol Cook', { recipient_zip: '73301-0001' });
    await app.deps.db.query(`UPDATE outbound_mail SET created_at = '2026-03-05T23:30:00Z' WHERE id = $1`, [
      ids['Alice Archer'],
    ]);
    await app.deps.db.query(`UPDATE outbound_mail SET created_at = '2026-03-06T00:30:00Z' WHERE id = $1`, [
      ids['Bob Baker'],
    ]);
  });
  afterAll(async () => {
    await app.close();
  });

  const list = (key: string, query: string) => api(app)('GET', `/v1/mail${query}`, { key });
  const names = (body: { mail: { recipient_name: string }[] }) => body.mail.map((m) => m.recipient_name);

  it('lists newest first with pagination', async () => {
    const res = await list(s.key, '?limit=2');
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['Carol Cook', 'Bob Baker']);
    expect(res.body.pagination).toEqual({ total: 3, limit: 2, offset: 0, has_more: true });
    const page2 = await list(s.key, '?limit=2&offset=2');
    expect(names(page2.body)).toEqual(['Alice Archer']);
    expect(page2.body.pagination.has_more).toBe(false);
  });

  it('searches names, address lines, city, ZIP and agent notes', async () => {
    expect(names((await list(s.key, '?q=boston')).body)).toEqual(['Alice Archer']);
    expect(names((await list(s.key, '?q=suite%209')).body)).toEqual(['Bob Baker']);
    expect(names((await list(s.key, '?q=73301')).body)).toEqual(['Carol Cook']);
    expect(names((await list(s.key, '?q=FRAGILE')).body)).toEqual(['Alice Archer']);
    expect(names((await list(s.key, '?q=alice%20austin')).body)).toEqual([]);
    expect(names((await list(s.key, '?q=50%25')).body)).toEqual([]);
  });

  it('filters by status and by created bounds, a date-only created_before including that whole UTC day', async () => {
    expect(names((await list(s.key, '?status=pending_approval')).body)).toEqual(['Bob Baker']);
    expect(names((await list(s.key, '?created_before=2026-03-05')).body)).toEqual(['Alice Archer']);
    expect(names((await list(s.key, '?created_before=2026-03-06')).body)).toEqual(['Bob Baker', 'Alice Archer']);
    expect(names((await list(s.key, '?created_after=2026-03-06&created_before=2026-03-06')).body)).toEqual([
      'Bob Baker',
    ]);
    expect(names((await list(s.key, '?created_before=2026-03-05T23:00:00Z')).body)).toEqual([]);
    const bad = await list(s.key, '?created_after=last-week');
    expect(bad.status).toBe(400);
    expect(bad.body.fields[0].path).toBe('query.created_after');
  });

  it('keeps test pieces apart: keys default to their environment, member keys may choose', async () => {
    expect((await list(s.memberKey, '?test_mode=true')).body.mail).toEqual([]);
    expect((await list(s.memberKey, '')).body.pagination.total).toBe(3);
    expect((await list(s.memberKey, `?agent_id=${s.agentId}`)).body.pagination.total).toBe(3);
  });

  it("gives the canonical record with a fresh signed pdf_url and hides other agents' pieces", async () => {
    const id = ids['Carol Cook'];
    const res = await api(app)('GET', `/v1/mail/${id}`, { key: s.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, status: 'submitted', fulfillment_photos: [], test_mode: false });
    const pdf = await fetch(res.body.pdf_url);
    expect(pdf.status).toBe(200);
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 4)
        .toString(),
    ).toBe('%PDF');
    const preview = await fetch(res.body.document_preview_url, {
      headers: { authorization: `Bearer ${s.key}` },
      redirect: 'manual',
    });
    expect(preview.status).toBe(302);
    expect((await api(app)('GET', `/v1/mail/${id}`, { key: other.key })).status).toBe(404);
    expect((await api(app)('GET', `/v1/mail/${id}`, { key: other.memberKey })).status).toBe(404);
    expect((await api(app)('DELETE', `/v1/mail/${id}`, { key: other.key, headers: other.headers })).status).toBe(404);
    expect((await list(other.key, '')).body.mail).toEqual([]);
  });

  it('reports usage for the current month', async () => {
    const res = await api(app)('GET', '/v1/usage', { key: s.key });
    expect(res.status).toBe(200);
    const spent = (await ledger(app, ids['Carol Cook']))[0].amount_cents * -1;
    expect(res.body.summary.pieces.by_status).toMatchObject({ submitted: 1 });
    expect(res.body.summary.spend_cents).toBeGreaterThanOrEqual(spent);
    expect(res.body.credits).toMatchObject({ currency: 'usd', balance_cents: await balance(app, s.memberId) });
    expect(res.body.events.every((e: { kind: string }) => e.kind === 'debit')).toBe(true);
    const wide = await api(app)('GET', '/v1/usage?period_start=2026-03-01T00:00:00Z&period_end=2026-03-31T00:00:00Z', {
      key: s.memberKey,
    });
    expect(wide.body.summary.pieces.total).toBe(2);
  });
});
