// The Stripe settings' guards (production refuses the published development ones and a
// missing key or secret, and has no local checkout) and the pure rules of buying credits:
// the amount typed on the billing page and what a refund event takes.
import { DEV_STRIPE_SECRET_KEY, DEV_STRIPE_WEBHOOK_SECRET, loadConfig } from '../../config';
import { readDollarAmount, refundDelta } from '../../domain/billing/purchases';

const production = { NODE_ENV: 'production', APP_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
const real = {
  STRIPE_SECRET_KEY: 'sk_live_TestOnlyNotARealKey',
  STRIPE_WEBHOOK_SECRET: 'whsec_TestOnlyNotARealSecret',
  SMTP_URL: 'smtps://relay.example.com:465',
  MAIL_FROM: 'Postal Mail <notifications@example.com>',
};

describe('Stripe settings', () => {
  it('outside production: the development key and secret, stripe-mock, and the local checkout', () => {
    const s = loadConfig({}).stripe;
    expect(s).toMatchObject({
      secretKey: DEV_STRIPE_SECRET_KEY,
      webhookSecret: DEV_STRIPE_WEBHOOK_SECRET,
      apiBase: 'http://127.0.0.1:12111',
      localCheckout: true,
      purchaseMinCents: 500,
      purchaseMaxCents: 500_000,
    });
  });

  it('production refuses to start without the real key and webhook secret, and has no local checkout', () => {
    expect(() => loadConfig(production)).toThrow(/STRIPE_SECRET_KEY/);
    expect(() => loadConfig({ ...production, STRIPE_SECRET_KEY: DEV_STRIPE_SECRET_KEY })).toThrow(/STRIPE_SECRET_KEY/);
    expect(() => loadConfig({ ...production, STRIPE_SECRET_KEY: real.STRIPE_SECRET_KEY })).toThrow(
      /STRIPE_WEBHOOK_SECRET/,
    );
    expect(() => loadConfig({ ...production, ...real, STRIPE_WEBHOOK_SECRET: DEV_STRIPE_WEBHOOK_SECRET })).toThrow(
      /STRIPE_WEBHOOK_SECRET/,
    );
    const s = loadConfig({ ...production, ...real }).stripe;
    expect(s).toMatchObject({ apiBase: null, localCheckout: false });
    // Even pointed at a mock, production never serves the local checkout.
    expect(loadConfig({ ...production, ...real, STRIPE_API_BASE: 'http://127.0.0.1:12111' }).stripe.localCheckout).toBe(
      false,
    );
  });

  it('refuses bounds that contradict each other and an API base with a path', () => {
    expect(() => loadConfig({ CREDIT_PURCHASE_MIN_CENTS: '1000', CREDIT_PURCHASE_MAX_CENTS: '500' })).toThrow(
      /CREDIT_PURCHASE_MAX_CENTS/,
    );
    expect(() => loadConfig({ STRIPE_API_BASE: 'http://127.0.0.1:12111/v1' })).toThrow(/STRIPE_API_BASE/);
  });
});

describe('buying credits: rules', () => {
  it('reads dollars within the bounds', () => {
    expect(readDollarAmount('50', 500, 500_000)).toEqual({ ok: true, cents: 5000 });
    expect(readDollarAmount(' $1,250.5 ', 500, 500_000)).toEqual({ ok: true, cents: 125_050 });
    expect(readDollarAmount('4.99', 500, 500_000)).toMatchObject({
      ok: false,
      message: /between \$5\.00 and \$5,000\.00/,
    });
    expect(readDollarAmount('5000.01', 500, 500_000)).toMatchObject({ ok: false });
    for (const bad of ['', 'ten', '-5', '5.001', '1e3', null])
      expect(readDollarAmount(bad, 500, 500_000).ok).toBe(false);
  });

  it('a refund takes what is above the part taken, never more than was paid, never back', () => {
    expect(refundDelta(2000, 0, 5000)).toBe(2000);
    expect(refundDelta(5000, 2000, 5000)).toBe(3000);
    expect(refundDelta(1000, 5000, 5000)).toBe(0);
    expect(refundDelta(9000, 0, 5000)).toBe(5000);
  });
});
