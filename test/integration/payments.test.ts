// Buying credits against the real stack: Checkout Sessions created on stripe-mock (the
// member's Customer once), and Stripe's events signed as Stripe signs them, posted to
// POST /webhooks/stripe and applied by their workflows. Each event type; one top-up per
// session whatever the duplicates, concurrency and order; forged and stale signatures
// change nothing; refunds (partial, full, redelivered, out of order) and disputes (won,
// lost, closed before opened) move the ledger once each; a balance taken below zero
// refuses live mail with 402 until it is positive; the ledger sums to what was paid.
import { useTestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { balanceCents, debit } from '../../services/billing/credits';
import { startCheckout, StripeUnavailable } from '../../services/billing/payments';
import { startTestApp } from '../helpers/app';
import { letterForm, letterPdf } from './mail-helpers';
import {
  chargeRefundedEvent,
  deliver,
  disputeEvent,
  evtId,
  ledgerOf,
  newPurchase,
  processed,
  purchaseRow,
  sessionEvent,
} from './payments-helpers';
import { stripeEventBody } from '../../services/billing/local-checkout';
import { freePort } from '../../scripts/stack';

jest.setTimeout(120_000);

describe('buying credits with Stripe', () => {
  const { app, api } = useTestApp();

  it('creates one Stripe Customer per member and a pending purchase per checkout', async () => {
    const m = await newMember(app.deps);
    const a = await newPurchase(app, m.member_id, 5000);
    const b = await newPurchase(app, m.member_id, 2500);
    expect(a.customer_id).toMatch(/^cus_/);
    expect(b.customer_id).toBe(a.customer_id);
    const customers = await app.deps.db.query(`SELECT * FROM stripe_customers WHERE member_id = $1`, [m.member_id]);
    expect(customers).toHaveLength(1);
    expect(a.stripe_session_id).toMatch(/^cs_/);
    expect(a.stripe_session_id).not.toBe(b.stripe_session_id);
    expect((await purchaseRow(app, a.id)).status).toBe('pending');
    expect(await ledgerOf(app, m.member_id)).toEqual([]);
  });

  it('checkout.session.completed (paid) adds one top-up of the amount in Stripe’s session', async () => {
    const m = await newMember(app.deps);
    const p = await newPurchase(app, m.member_id, 5000);
    // The event's amount, not the amount asked for when the session was created, is credited.
    const e = sessionEvent('checkout.session.completed', p, { amount: 4200 });
    expect(await deliver(app, e)).toBe(200);
    expect(await processed(app, e.id)).toBe('credited 4200');
    const ledger = await ledgerOf(app, m.member_id);
    expect(ledger).toEqual([
      expect.objectContaining({
        amount_cents: 4200,
        kind: 'top_up',
        entry_key: `stripe:session:${p.stripe_session_id}`,
      }),
    ]);
    const row = await purchaseRow(app, p.id);
    expect(row).toMatchObject({ status: 'paid', paid_cents: 4200, payment_intent_id: p.paymentIntent });
    // A redelivery of the same event id is recognised and adds nothing.
    expect(await deliver(app, e)).toBe(200);
    expect(await ledgerOf(app, m.member_id)).toHaveLength(1);
  });

  it('the same event delivered concurrently, and both success events of a session, add one top-up', async () => {
    const m = await newMember(app.deps);
    const p = await newPurchase(app, m.member_id, 7500);
    const completed = sessionEvent('checkout.session.completed', p);
    const succeeded = sessionEvent('checkout.session.async_payment_succeeded', p);
    const statuses = await Promise.all([
      ...Array.from({ length: 6 }, () => deliver(app, completed)),
      ...Array.from({ length: 6 }, () => deliver(app, succeeded)),
    ]);
    expect(statuses).toEqual(Array(12).fill(200));
    const outcomes = [await processed(app, completed.id), await processed(app, succeeded.id)].sort();
    expect(outcomes).toEqual(['already fulfilled', 'credited 7500']);
    expect((await ledgerOf(app, m.member_id)).map((l) => l.amount_cents)).toEqual([7500]);
    const events = await app.deps.db.query(`SELECT id FROM stripe_events WHERE id = ANY($1)`, [
      [completed.id, succeeded.id],
    ]);
    expect(events).toHaveLength(2);
  });

  it('an asynchronous payment: completed unpaid adds nothing, then succeeded credits; a late completed adds nothing', async () => {
    const m = await newMember(app.deps);
    const p = await newPurchase(app, m.member_id, 3000);
    const unpaid = sessionEvent('checkout.session.completed', p, { paymentStatus: 'unpaid' });
    await deliver(app, unpaid);
    expect(await processed(app, unpaid.id)).toBe('awaiting payment (unpaid)');
    expect(await ledgerOf(app, m.member_id)).toEqual([]);
    expect((await purchaseRow(app, p.id)).status).toBe('pending');

    const ok = sessionEvent('checkout.session.async_payment_succeeded', p);
    await deliver(app, ok);
    expect(await processed(app, ok.id)).toBe('credited 3000');
    // Out of order: a completed (paid) arriving after the success adds nothing.
    const late = sessionEvent('checkout.session.completed', p);
    await deliver(app, late);
    expect(await processed(app, late.id)).toBe('already fulfilled');
    expect((await ledgerOf(app, m.member_id)).map((l) => l.amount_cents)).toEqual([3000]);
    expect((await purchaseRow(app, p.id)).status).toBe('paid');
  });

  it('checkout.session.async_payment_failed marks the purchase failed and adds nothing', async () => {
    const m = await newMember(app.deps);
    const p = await newPurchase(app, m.member_id, 3000);
    const failed = sessionEvent('checkout.session.async_payment_failed', p, { paymentStatus: 'unpaid' });
    await deliver(app, failed);
    expect(await processed(app, failed.id)).toBe('marked failed');
    expect(await purchaseRow(app, p.id)).toMatchObject({ status: 'failed', failure_reason: 'the payment failed' });
    expect(await ledgerOf(app, m.member_id)).toEqual([]);
  });

  it('refuses forged, stale and unsigned events with 400 and records nothing', async () => {
    const m = await newMember(app.deps);
    const p = await newPurchase(app, m.member_id, 5000);
    const forged = sessionEvent('checkout.session.completed', p);
    expect(await deliver(app, forged, { secret: 'whsec_not_the_secret' })).toBe(400);
    const stale = sessionEvent('checkout.session.completed', p);
    expect(await deliver(app, stale, { timestamp: Math.floor(Date.now() / 1000) - 600 })).toBe(400);
    const unsigned = await fetch(`${app.siteUrl}/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: sessionEvent('checkout.session.completed', p).body,
    });
    expect(unsigned.status).toBe(400);
    // A signed body changed after signing (the amount raised) is refused too.
    const honest = sessionEvent('checkout.session.completed', p);
    const header = (await import('../../services/billing/payments'))
      .stripeClient(app.deps)
      .webhooks.generateTestHeaderString({ payload: honest.body, secret: app.deps.config.stripe.webhookSecret });
    const tampered = await fetch(`${app.siteUrl}/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': header },
      body: honest.body.replace('"amount_total":5000', '"amount_total":500000'),
    });
    expect(tampered.status).toBe(400);
    const recorded = await app.deps.db.query(`SELECT id FROM stripe_events WHERE id = ANY($1)`, [
      [forged.id, stale.id, honest.id],
    ]);
    expect(recorded).toEqual([]);
    expect(await ledgerOf(app, m.member_id)).toEqual([]);
    expect((await purchaseRow(app, p.id)).status).toBe('pending');
  });

  it('answers 200 to an event type it does not use and records it as ignored', async () => {
    const id = evtId();
    expect(
      await deliver(app, { body: stripeEventBody('customer.updated', { id: 'cus_x', object: 'customer' }, id) }),
    ).toBe(200);
    expect(await processed(app, id)).toBe('ignored: event type not used');
  });

  it('records and ignores a session of an unknown member or customer', async () => {
    const m = await newMember(app.deps);
    const p = await newPurchase(app, m.member_id, 5000);
    const foreign = { ...p, stripe_session_id: `cs_test_foreign_${evtId()}`, customer_id: 'cus_someone_else' };
    const e = sessionEvent('checkout.session.completed', foreign);
    expect(await deliver(app, e)).toBe(200);
    expect(await processed(app, e.id)).toBe('ignored: session of an unknown member or customer');
    const stranger = {
      ...p,
      stripe_session_id: `cs_test_foreign_${evtId()}`,
      member_id: '00000000-0000-0000-0000-000000000000',
    };
    const e2 = sessionEvent('checkout.session.completed', stranger);
    await deliver(app, e2);
    expect(await processed(app, e2.id)).toBe('ignored: session of an unknown member or customer');
    expect(await ledgerOf(app, m.member_id)).toEqual([]);
    // A session of this member with their Customer whose row was lost is taken (the money was paid).
    const lost = { ...p, stripe_session_id: `cs_test_lost_${evtId()}` };
    const e3 = sessionEvent('checkout.session.completed', lost);
    await deliver(app, e3);
    expect(await processed(app, e3.id)).toBe('credited 5000');
  });

  it('refunds take the refunded part once: partial, redelivered, full, and an older one arriving late', async () => {
    const m = await newMember(app.deps);
    const p = await newPurchase(app, m.member_id, 5000);
    const paid = sessionEvent('checkout.session.completed', p);
    await deliver(app, paid);
    await processed(app, paid.id);
    const charge = `ch_test_${evtId()}`;

    const partial = chargeRefundedEvent(p, 2000, charge);
    await deliver(app, partial);
    expect(await processed(app, partial.id)).toBe('refunded 2000');
    // Stripe sends the same refund again under a new event id (a retried refund request): nothing more.
    const again = chargeRefundedEvent(p, 2000, charge);
    await deliver(app, again);
    expect(await processed(app, again.id)).toBe('refund already taken');
    expect((await purchaseRow(app, p.id)).status).toBe('paid');

    const full = chargeRefundedEvent(p, 5000, charge);
    await deliver(app, full);
    expect(await processed(app, full.id)).toBe('refunded 3000');
    const older = chargeRefundedEvent(p, 1000, charge);
    await deliver(app, older);
    expect(await processed(app, older.id)).toBe('refund already taken');

    const ledger = await ledgerOf(app, m.member_id);
    expect(ledger.map((l) => l.amount_cents)).toEqual([5000, -2000, -3000]);
    expect(ledger[1].description).toMatch(/Stripe refund/);
    expect(await purchaseRow(app, p.id)).toMatchObject({ status: 'refunded', refunded_cents: 5000 });
    expect(await balanceCents(app.deps.db, m.member_id)).toBe(0);
  });

  it('a refund arriving before its session’s completion waits for it, then applies once', async () => {
    const m = await newMember(app.deps);
    const p = await newPurchase(app, m.member_id, 4000);
    const refund = chargeRefundedEvent(p, 4000, `ch_test_${evtId()}`);
    await deliver(app, refund);
    await new Promise((r) => setTimeout(r, 1500));
    const paid = sessionEvent('checkout.session.completed', p);
    await deliver(app, paid);
    expect(await processed(app, paid.id)).toBe('credited 4000');
    expect(await processed(app, refund.id)).toBe('refunded 4000');
    expect((await ledgerOf(app, m.member_id)).map((l) => l.amount_cents)).toEqual([4000, -4000]);
  });

  it('disputes: opened takes the amount, won gives it back once, lost leaves it taken', async () => {
    const m = await newMember(app.deps);
    const won = await newPurchase(app, m.member_id, 6000);
    const lost = await newPurchase(app, m.member_id, 2000);
    for (const p of [won, lost]) {
      const e = sessionEvent('checkout.session.completed', p);
      await deliver(app, e);
      await processed(app, e.id);
    }
    const dWon = `du_test_${evtId()}`;
    const dLost = `du_test_${evtId()}`;
    // The won dispute's close arrives before its opening: it waits for the opening.
    const closedWon = disputeEvent('charge.dispute.closed', won, dWon, 6000, 'won');
    await deliver(app, closedWon);
    const openedWon = disputeEvent('charge.dispute.created', won, dWon, 6000, 'needs_response');
    await deliver(app, openedWon);
    expect(await processed(app, openedWon.id)).toBe('dispute opened: took 6000');
    expect(await processed(app, closedWon.id)).toBe('dispute won: restored 6000');
    const wonAgain = disputeEvent('charge.dispute.closed', won, dWon, 6000, 'won');
    await deliver(app, wonAgain);
    expect(await processed(app, wonAgain.id)).toBe('dispute already restored');
    expect(await purchaseRow(app, won.id)).toMatchObject({ status: 'paid', disputed_cents: 0 });

    const openedLost = disputeEvent('charge.dispute.created', lost, dLost, 2000, 'needs_response');
    await deliver(app, openedLost);
    expect(await processed(app, openedLost.id)).toBe('dispute opened: took 2000');
    const closedLost = disputeEvent('charge.dispute.closed', lost, dLost, 2000, 'lost');
    await deliver(app, closedLost);
    expect(await processed(app, closedLost.id)).toBe('dispute closed lost: nothing restored');
    expect(await purchaseRow(app, lost.id)).toMatchObject({ status: 'disputed', disputed_cents: 2000 });

    const ledger = await ledgerOf(app, m.member_id);
    expect(ledger.map((l) => l.amount_cents).sort((a, b) => a - b)).toEqual([-6000, -2000, 2000, 6000, 6000]);
    // The ledger sums to the balance, and to what was paid less what is still disputed.
    expect(await balanceCents(app.deps.db, m.member_id)).toBe(ledger.reduce((s, l) => s + l.amount_cents, 0));
    expect(await balanceCents(app.deps.db, m.member_id)).toBe(6000 + 2000 - 2000);
  });

  it('a reversal below zero refuses live mail with 402 until the balance is positive again', async () => {
    const m = await newMember(app.deps);
    const p = await newPurchase(app, m.member_id, 5000);
    const paid = sessionEvent('checkout.session.completed', p);
    await deliver(app, paid);
    await processed(app, paid.id);
    // Spend $40 of it, then the whole $50 is refunded: the balance is -$40.
    await app.deps.db.transaction((tx) =>
      debit(app.deps, tx, { memberId: m.member_id, amountCents: 4000, entryKey: `debit:test:${p.id}` }),
    );
    const refund = chargeRefundedEvent(p, 5000, `ch_test_${evtId()}`);
    await deliver(app, refund);
    expect(await processed(app, refund.id)).toBe('refunded 5000');
    expect(await balanceCents(app.deps.db, m.member_id)).toBe(-4000);

    const agent = await newAgent(app.baseUrl, m.key, {});
    const agentKey = (await newCredential(app.baseUrl, m.key, agent.id, { environment: 'live' })).key;
    const letter = async () =>
      api('POST', '/v1/mail', {
        key: agentKey,
        headers: { 'x-service-md-version': '1' },
        form: letterForm(await letterPdf(1)),
      });
    const refused = await letter();
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'INSUFFICIENT_CREDITS', credit_balance_cents: -4000 });
    const credits = await api('GET', '/v1/credits', { key: agentKey });
    expect(credits.body.balance_cents).toBe(-4000);

    const more = await newPurchase(app, m.member_id, 10_000);
    const paidMore = sessionEvent('checkout.session.completed', more);
    await deliver(app, paidMore);
    await processed(app, paidMore.id);
    expect(await balanceCents(app.deps.db, m.member_id)).toBe(6000);
    expect((await letter()).status).toBe(201);
  });

  it('Stripe unreachable at checkout: StripeUnavailable, nothing recorded', async () => {
    const down = await startTestApp({
      worker: false,
      env: { STRIPE_API_BASE: `http://127.0.0.1:${await freePort()}` },
    });
    try {
      const m = await newMember(down.deps);
      await expect(startCheckout(down.deps, m.member_id, 5000)).rejects.toBeInstanceOf(StripeUnavailable);
      expect(await down.deps.db.query(`SELECT id FROM credit_purchases WHERE member_id = $1`, [m.member_id])).toEqual(
        [],
      );
    } finally {
      await down.close();
    }
  });
});
