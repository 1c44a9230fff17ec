// Automatic reload against the real stack (Postgres, Temporal, stripe-mock as the Stripe
// API): a card saved through a Checkout Session in setup mode and recorded from the signed
// completion; one off-session PaymentIntent per crossing of the threshold whatever the
// concurrent debits, with the credit added only by the signed payment_intent.succeeded
// (delivered twice at once: one top-up); a second crossing after the balance recovered; a
// declined charge (by event, or refused by the create call) turns reload off with the
// reason; sandbox pieces never reload; a reload's charge can be refunded and has a receipt;
// and the payments reconciler applies a recorded event whose workflow start failed and
// charges a reload whose start was lost. The app's local stand-in sends no reload events
// here (STRIPE_LOCAL_RELOAD_OUTCOME=none): the tests sign Stripe's events themselves.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { useTestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { balanceCents, debit, topUp } from '../../services/billing/credits';
import { paymentFaults, stripeClient } from '../../services/billing/payments';
import {
  autoReloadFaults,
  autoReloadIdempotencyKey,
  NoCardSaved,
  saveAutoReloadSettings,
} from '../../services/billing/auto-reload';
import { ensurePaymentsReconcilerSchedule } from '../../services/billing/reconciler';
import { autoReloadWorkflowId, stripeEventWorkflowId } from '../../workflows/billing/contracts';
import { api, letterForm, letterPdf, newSender, sendLetter, waitFor } from './mail-helpers';
import {
  chargeRefundedEvent,
  chargedReload,
  deliver,
  evtId,
  ledgerOf,
  newCardSetup,
  newPurchase,
  processed,
  purchaseRow,
  reloadEvent,
  reloadsOf,
  saveCard,
  sessionEvent,
} from './payments-helpers';

jest.setTimeout(240_000);

describe('automatic reload', () => {
  const { app } = useTestApp({ env: { STRIPE_LOCAL_RELOAD_OUTCOME: 'none' } });

  /** The idempotency keys of every PaymentIntent creation the app's Stripe client sends while `fn` runs. */
  async function paymentIntentCreations<T>(fn: () => Promise<T>): Promise<{ result: T; keys: string[] }> {
    const keys: string[] = [];
    const listener = (e: { method?: string; path?: string; idempotency_key?: string }) => {
      if (e.method === 'POST' && e.path === '/v1/payment_intents') keys.push(e.idempotency_key ?? '(none)');
    };
    const client = stripeClient(app.deps);
    client.on('request', listener);
    try {
      return { result: await fn(), keys };
    } finally {
      client.off('request', listener);
    }
  }

  /** A live debit of `cents` through the ledger's debit(), as every live charge is made. */
  const spend = (memberId: string, cents: number, key = evtId()) =>
    app.deps.db.transaction((tx) =>
      debit(app.deps, tx, { memberId, amountCents: cents, entryKey: `debit:test:${key}` }),
    );
  const grant = (memberId: string, cents: number) =>
    topUp(app.deps.db, { memberId, amountCents: cents, entryKey: `grant:test:${evtId()}` });
  const settings = async (memberId: string) =>
    (await app.deps.db.query(`SELECT * FROM auto_reload_settings WHERE member_id = $1`, [memberId]))[0];

  it('saves a card through a Checkout Session in setup mode, from the signed completion only', async () => {
    const m = await newMember(app.deps);
    // Reload cannot be turned on without a card.
    await expect(
      saveAutoReloadSettings(app.deps, m.member_id, { enabled: true, thresholdCents: 1000, amountCents: 2500 }),
    ).rejects.toBeInstanceOf(NoCardSaved);

    const { setup, redirectUrl, completed } = await newCardSetup(app, m.member_id);
    expect(setup).toMatchObject({ status: 'pending', payment_method_id: null });
    expect(setup.stripe_session_id).toMatch(/^cs_/);
    expect(setup.customer_id).toMatch(/^cus_/);
    // Outside production with stripe-mock, the browser goes to the local stand-in page.
    expect(redirectUrl).toBe(`${app.siteUrl}/console/billing/card-setup/${setup.id}`);
    expect(await settings(m.member_id)).toBeUndefined();

    // A completion naming another customer is someone else's: recorded and ignored.
    const foreign = completed({ customer: 'cus_someone_else' });
    expect(await deliver(app, foreign)).toBe(200);
    expect(await processed(app, foreign.id)).toBe('ignored: setup session of an unknown member or customer');
    expect(await settings(m.member_id)).toBeUndefined();

    // Stripe's completion, delivered twice at once: the card is the SetupIntent's payment method.
    const e = completed();
    expect(await Promise.all([deliver(app, e), deliver(app, e)])).toEqual([200, 200]);
    expect(await processed(app, e.id)).toBe('card saved (visa 4242)');
    const saved = await settings(m.member_id);
    expect(saved).toMatchObject({ enabled: false, card_brand: 'visa', card_last4: '4242' });
    expect(saved.payment_method_id).toMatch(/^pm_/);
    const [row] = await app.deps.db.query(`SELECT * FROM stripe_card_setups WHERE id = $1`, [setup.id]);
    expect(row).toMatchObject({ status: 'saved', payment_method_id: saved.payment_method_id });
    // The same session's completion under another event id changes nothing.
    const again = completed();
    await deliver(app, again);
    expect(await processed(app, again.id)).toBe('card already saved');

    await saveAutoReloadSettings(app.deps, m.member_id, { enabled: true, thresholdCents: 1000, amountCents: 2500 });
    expect(await settings(m.member_id)).toMatchObject({ enabled: true, threshold_cents: 1000, amount_cents: 2500 });
  });

  it('ten concurrent live letters crossing the threshold make one PaymentIntent; its success twice at once is one top-up; a second crossing after recovery reloads again', async () => {
    const s = await newSender(app);
    const quote = await sendLetter(app, s, letterForm(await letterPdf(1), { dry_run: 'true' }));
    expect(quote.status).toBe(200);
    const price: number = quote.body.cost_cents;
    expect(price).toBeGreaterThan(0);
    // 12 letters' worth; the threshold is crossed by the 5th letter; a reload lifts the balance above it.
    await grant(s.memberId, 12 * price);
    const threshold = Math.round(7.5 * price);
    const amount = Math.max(app.deps.config.stripe.purchaseMinCents, 10 * price);
    expect(await saveCard(app, s.memberId)).toBe('card saved (visa 4242)');
    await saveAutoReloadSettings(app.deps, s.memberId, {
      enabled: true,
      thresholdCents: threshold,
      amountCents: amount,
    });

    const letter = async () => sendLetter(app, s, letterForm(await letterPdf(1)));
    const { result: reload, keys } = await paymentIntentCreations(async () => {
      const answers = await Promise.all(Array.from({ length: 10 }, letter));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
      const charged = await chargedReload(app, s.memberId, 1);
      // While the reload is unsettled, cancelled letters lift the balance above the threshold
      // and a letter takes it below again: no second charge.
      for (const a of answers.slice(0, 6))
        expect((await api(app)('DELETE', `/v1/mail/${a.body.id}`, { key: s.key, headers: s.headers })).status).toBe(
          200,
        );
      expect(await balanceCents(app.deps.db, s.memberId)).toBe(8 * price);
      expect((await letter()).status).toBe(201);
      await app.deps.temporal.workflow.getHandle(autoReloadWorkflowId(charged.id)).result();
      return charged;
    });
    expect(await balanceCents(app.deps.db, s.memberId)).toBe(7 * price);
    expect(await reloadsOf(app, s.memberId)).toHaveLength(1);
    expect(reload).toMatchObject({
      status: 'pending',
      requested_cents: amount,
      threshold_cents: threshold,
      paid_cents: null,
    });
    expect(reload.payment_method_id).toBe((await settings(s.memberId)).payment_method_id);
    expect(keys.length).toBeGreaterThanOrEqual(1);
    expect(new Set(keys)).toEqual(new Set([autoReloadIdempotencyKey(reload.id)]));
    // The charge's answer adds nothing: only Stripe's event will.
    expect((await ledgerOf(app, s.memberId)).filter((l) => l.kind === 'top_up')).toHaveLength(1);

    const ok = reloadEvent(reload, 'succeeded');
    const okAgain = reloadEvent(reload, 'succeeded'); // the same PaymentIntent under another event id
    expect(await Promise.all([deliver(app, ok), deliver(app, ok), deliver(app, okAgain)])).toEqual([200, 200, 200]);
    expect([await processed(app, ok.id), await processed(app, okAgain.id)].sort()).toEqual([
      'already credited',
      `reloaded ${amount}`,
    ]);
    const reloadsCredited = (await ledgerOf(app, s.memberId)).filter((l) => l.entry_key.startsWith('stripe:payment'));
    expect(reloadsCredited).toEqual([
      expect.objectContaining({
        amount_cents: amount,
        kind: 'top_up',
        entry_key: `stripe:payment_intent:${reload.payment_intent_id}`,
      }),
    ]);
    expect(await purchaseRow(app, reload.id)).toMatchObject({ status: 'paid', paid_cents: amount });
    expect(await balanceCents(app.deps.db, s.memberId)).toBe(7 * price + amount);

    // The balance recovered above the threshold; letters take it below again: a second reload.
    const second = await paymentIntentCreations(async () => {
      while ((await balanceCents(app.deps.db, s.memberId)) >= threshold) expect((await letter()).status).toBe(201);
      return chargedReload(app, s.memberId, 2);
    });
    expect(second.result.id).not.toBe(reload.id);
    expect(second.result.payment_intent_id).not.toBe(reload.payment_intent_id);
    expect(new Set(second.keys)).toEqual(new Set([autoReloadIdempotencyKey(second.result.id)]));
    const before = await balanceCents(app.deps.db, s.memberId);
    const ok2 = reloadEvent(second.result, 'succeeded');
    await deliver(app, ok2);
    expect(await processed(app, ok2.id)).toBe(`reloaded ${amount}`);
    expect(await balanceCents(app.deps.db, s.memberId)).toBe(before + amount);
    const ledger = await ledgerOf(app, s.memberId);
    expect(ledger.reduce((sum, l) => sum + l.amount_cents, 0)).toBe(await balanceCents(app.deps.db, s.memberId));
  });

  it('a declined charge turns reload off with the reason; turned on again, the next debit reloads', async () => {
    const m = await newMember(app.deps);
    await saveCard(app, m.member_id);
    await saveAutoReloadSettings(app.deps, m.member_id, { enabled: true, thresholdCents: 1000, amountCents: 2500 });
    await grant(m.member_id, 1500);
    await spend(m.member_id, 600);
    const reload = await chargedReload(app, m.member_id, 1);

    const declined = reloadEvent(reload, 'failed');
    await deliver(app, declined);
    expect(await processed(app, declined.id)).toBe(
      'reload failed (Your card was declined. (generic_decline)): automatic reload turned off',
    );
    expect(await purchaseRow(app, reload.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'Your card was declined. (generic_decline)',
    });
    const off = await settings(m.member_id);
    expect(off.enabled).toBe(false);
    expect(off.disabled_reason).toBe(
      'The automatic reload of $25.00 could not be charged: Your card was declined. (generic_decline). Automatic reload was turned off; check the card (or save another) and turn it on again.',
    );
    expect(await ledgerOf(app, m.member_id)).toHaveLength(2); // the grant and the debit
    // Off: another debit below the threshold charges nothing.
    await spend(m.member_id, 100);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await reloadsOf(app, m.member_id)).toHaveLength(1);

    // On again (the owner saves the settings): the next debit reloads, the balance being below the threshold.
    await saveAutoReloadSettings(app.deps, m.member_id, { enabled: true, thresholdCents: 1000, amountCents: 2500 });
    expect(await settings(m.member_id)).toMatchObject({ enabled: true, disabled_reason: null });
    await spend(m.member_id, 100);
    const again = await chargedReload(app, m.member_id, 2);
    const ok = reloadEvent(again, 'succeeded');
    await deliver(app, ok);
    expect(await processed(app, ok.id)).toBe('reloaded 2500');
    expect(await balanceCents(app.deps.db, m.member_id)).toBe(1500 - 800 + 2500);

    // A failure that arrives after the reload was paid changes nothing: reload stays on.
    const late = reloadEvent(again, 'failed');
    await deliver(app, late);
    expect(await processed(app, late.id)).toBe('payment failed: reload left paid');
    expect(await purchaseRow(app, again.id)).toMatchObject({ status: 'paid', failure_reason: null });
    expect(await settings(m.member_id)).toMatchObject({ enabled: true, disabled_reason: null });
  });

  it('a charge refused by Stripe when it is created (card_declined) turns reload off with the reason', async () => {
    // stripe-mock cannot decline: a stand-in Stripe answers the PaymentIntent creation as Stripe does for a declined card.
    const declining = http.createServer((req, res) => {
      req.resume();
      res.writeHead(req.method === 'POST' && req.url === '/v1/payment_intents' ? 402 : 404, {
        'content-type': 'application/json',
        'request-id': 'req_test_declined',
      });
      res.end(
        JSON.stringify({
          error: {
            type: 'card_error',
            code: 'card_declined',
            decline_code: 'insufficient_funds',
            message: 'Your card has insufficient funds.',
            payment_intent: {
              id: 'pi_test_declined_on_create',
              object: 'payment_intent',
              status: 'requires_payment_method',
            },
          },
        }),
      );
    });
    await new Promise<void>((r) => declining.listen(0, '127.0.0.1', r));
    const m = await newMember(app.deps);
    await saveCard(app, m.member_id);
    await saveAutoReloadSettings(app.deps, m.member_id, { enabled: true, thresholdCents: 2000, amountCents: 5000 });
    await grant(m.member_id, 2500);
    const stripe = app.deps.config.stripe;
    app.deps.config.stripe = { ...stripe, apiBase: `http://127.0.0.1:${(declining.address() as AddressInfo).port}` };
    try {
      await spend(m.member_id, 1000);
      const failed = await waitFor(
        async () => (await reloadsOf(app, m.member_id)).find((r) => r.status === 'failed'),
        'the reload to fail',
        60_000,
      );
      expect(failed).toMatchObject({
        failure_reason: 'Your card has insufficient funds. (insufficient_funds)',
        payment_intent_id: 'pi_test_declined_on_create',
      });
    } finally {
      app.deps.config.stripe = stripe;
      declining.close();
    }
    expect(await settings(m.member_id)).toMatchObject({ enabled: false });
    expect((await settings(m.member_id)).disabled_reason).toContain('Your card has insufficient funds.');
    expect(await balanceCents(app.deps.db, m.member_id)).toBe(1500);
  });

  it('sandbox pieces debit nothing and never reload', async () => {
    const s = await newSender(app, { environment: 'test' });
    await saveCard(app, s.memberId);
    // Armed with the balance (0) below the threshold: any live debit would reload.
    await saveAutoReloadSettings(app.deps, s.memberId, { enabled: true, thresholdCents: 5000, amountCents: 5000 });
    const res = await sendLetter(app, s, letterForm(await letterPdf(1)));
    expect(res.status).toBe(201);
    expect(res.body.test_mode).toBe(true);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await reloadsOf(app, s.memberId)).toEqual([]);
    expect(await ledgerOf(app, s.memberId)).toEqual([]);
  });

  it("a reload's charge gives a receipt link and can be refunded like a purchase", async () => {
    const m = await newMember(app.deps);
    await saveCard(app, m.member_id);
    await saveAutoReloadSettings(app.deps, m.member_id, { enabled: true, thresholdCents: 1000, amountCents: 3000 });
    await grant(m.member_id, 1000);
    await spend(m.member_id, 500);
    const reload = await chargedReload(app, m.member_id, 1);
    // Stripe's event names the charge; its receipt link is read from Stripe (stripe-mock answers a fixture one).
    const ok = reloadEvent(reload, 'succeeded', { latestCharge: 'ch_test_reload_receipt' });
    await deliver(app, ok);
    expect(await processed(app, ok.id)).toBe('reloaded 3000');
    await app.deps.temporal.workflow.getHandle(stripeEventWorkflowId(ok.id)).result();
    expect((await purchaseRow(app, reload.id)).receipt_url).toMatch(/^https:\/\//);

    const refund = chargeRefundedEvent(
      { ...reload, stripe_session_id: '', paymentIntent: reload.payment_intent_id, requested_cents: 3000 },
      3000,
      'ch_test_reload_receipt',
    );
    await deliver(app, refund);
    expect(await processed(app, refund.id)).toBe('refunded 3000');
    expect(await purchaseRow(app, reload.id)).toMatchObject({ status: 'refunded', refunded_cents: 3000 });
    expect(await balanceCents(app.deps.db, m.member_id)).toBe(500);
  });

  it('the payments reconciler applies a recorded event whose workflow start failed, and charges a reload whose start was lost', async () => {
    // A Stripe event recorded, its workflow start refused: the webhook answers 500.
    const buyer = await newMember(app.deps);
    const purchase = await newPurchase(app, buyer.member_id, 5000);
    const paid = sessionEvent('checkout.session.completed', purchase);
    paymentFaults.beforeEventWorkflowStart = () => {
      throw new Error('simulated: Temporal refused the start');
    };
    try {
      expect(await deliver(app, paid)).toBe(500);
    } finally {
      delete paymentFaults.beforeEventWorkflowStart;
    }
    const [recorded] = await app.deps.db.query(`SELECT processed_at FROM stripe_events WHERE id = $1`, [paid.id]);
    expect(recorded).toEqual({ processed_at: null });
    await expect(app.deps.temporal.workflow.getHandle(stripeEventWorkflowId(paid.id)).describe()).rejects.toThrow();

    // A debit crossing the threshold, its reload's workflow start lost after the commit.
    const m = await newMember(app.deps);
    await saveCard(app, m.member_id);
    await saveAutoReloadSettings(app.deps, m.member_id, { enabled: true, thresholdCents: 1000, amountCents: 2500 });
    await grant(m.member_id, 1200);
    autoReloadFaults.beforeStart = () => {
      throw new Error('simulated: the process stopped after the commit');
    };
    try {
      await spend(m.member_id, 500);
    } finally {
      delete autoReloadFaults.beforeStart;
    }
    const [lost] = await reloadsOf(app, m.member_id);
    expect(lost).toMatchObject({ status: 'pending', payment_intent_id: null });
    await expect(app.deps.temporal.workflow.getHandle(autoReloadWorkflowId(lost.id)).describe()).rejects.toThrow();

    const { keys } = await paymentIntentCreations(async () => {
      const scheduleId = await ensurePaymentsReconcilerSchedule(app.deps, { everySeconds: 1, graceSeconds: 1 });
      try {
        expect(await processed(app, paid.id, 60_000)).toBe('credited 5000');
        return await chargedReload(app, m.member_id, 1);
      } finally {
        await app.deps.temporal.schedule.getHandle(scheduleId).delete();
      }
    });
    expect(await balanceCents(app.deps.db, buyer.member_id)).toBe(5000);
    expect(new Set(keys)).toEqual(new Set([autoReloadIdempotencyKey(lost.id)]));
    expect(await reloadsOf(app, m.member_id)).toHaveLength(1);
  });
});
