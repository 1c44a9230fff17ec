// The pure rules of automatic reload: which debit starts a reload (one per crossing of the
// threshold), what the settings form accepts, and the words shown when a charge failed.
import {
  chargeFailureCause,
  readReloadSettings,
  reloadDue,
  reloadFailureReason,
  type ReloadTrigger,
} from '../../domain/billing/auto-reload';
import { loadConfig } from '../../config';

const on: ReloadTrigger = { enabled: true, thresholdCents: 1000, hasCard: true, armed: false, reloadOpen: false };

describe('reloadDue', () => {
  it('reloads when a debit takes the balance from at or above the threshold to below it', () => {
    expect(reloadDue(on, 1500, 900)).toBe(true);
    expect(reloadDue(on, 1000, 999)).toBe(true);
  });

  it('does not reload above the threshold, or for a debit that did not cross it', () => {
    expect(reloadDue(on, 2000, 1000)).toBe(false); // at the threshold is not below it
    expect(reloadDue(on, 900, 800)).toBe(false); // below already: the crossing was earlier
  });

  it('reloads below the threshold without a crossing only when just turned on (armed)', () => {
    expect(reloadDue({ ...on, armed: true }, 900, 800)).toBe(true);
  });

  it('never while a reload is open, when off, without a card or a threshold', () => {
    expect(reloadDue({ ...on, reloadOpen: true }, 1500, 900)).toBe(false);
    expect(reloadDue({ ...on, reloadOpen: true, armed: true }, 900, 800)).toBe(false);
    expect(reloadDue({ ...on, enabled: false }, 1500, 900)).toBe(false);
    expect(reloadDue({ ...on, hasCard: false }, 1500, 900)).toBe(false);
    expect(reloadDue({ ...on, thresholdCents: null }, 1500, 900)).toBe(false);
  });
});

describe('readReloadSettings', () => {
  const bounds = { minCents: 500, maxCents: 500_000 };

  it('reads dollars as typed', () => {
    expect(readReloadSettings('$20', '50.00', bounds)).toEqual({ ok: true, thresholdCents: 2000, amountCents: 5000 });
  });

  it('refuses an amount outside the purchase bounds and a threshold below $1.00, naming each field', () => {
    expect(readReloadSettings('0.50', '4.99', bounds)).toEqual({
      ok: false,
      fields: [
        { path: 'threshold', message: 'The threshold must be between $1.00 and $5,000.00.' },
        { path: 'amount', message: 'The amount must be between $5.00 and $5,000.00.' },
      ],
    });
    expect(readReloadSettings('10', 'ten', bounds)).toEqual({
      ok: false,
      fields: [{ path: 'amount', message: 'Enter an amount in dollars between $5.00 and $5,000.00.' }],
    });
  });
});

describe('the words of a failed charge', () => {
  it("Stripe's message with its decline code, once", () => {
    expect(chargeFailureCause({ message: 'Your card was declined.', decline_code: 'insufficient_funds' })).toBe(
      'Your card was declined. (insufficient_funds)',
    );
    expect(chargeFailureCause({ message: 'card_declined happened', code: 'card_declined' })).toBe(
      'card_declined happened',
    );
    expect(chargeFailureCause({})).toBe('the payment failed');
    expect(reloadFailureReason(2500, 'Your card was declined.')).toBe(
      'The automatic reload of $25.00 could not be charged: Your card was declined. Automatic reload was turned off; check the card (or save another) and turn it on again.',
    );
  });
});

describe('STRIPE_LOCAL_RELOAD_OUTCOME', () => {
  it('defaults to succeeded and refuses other words', () => {
    expect(loadConfig({}).stripe.localReloadOutcome).toBe('succeeded');
    expect(loadConfig({ STRIPE_LOCAL_RELOAD_OUTCOME: 'failed' }).stripe.localReloadOutcome).toBe('failed');
    expect(() => loadConfig({ STRIPE_LOCAL_RELOAD_OUTCOME: 'maybe' })).toThrow(/STRIPE_LOCAL_RELOAD_OUTCOME/);
  });
});
