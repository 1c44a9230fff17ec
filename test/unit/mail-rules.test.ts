import {
  dailyPiecesRefusal,
  dailyPiecesWarning,
  moveAllowed,
  nextTestStep,
  parseCreatedBound,
  sandboxTrackingNumber,
  spendRefusal,
  carrierForClass,
} from '../../domain/workflow-safe/mail-rules';
import {
  formatAddressLines,
  isServedCountry,
  normaliseCountry,
  normaliseStateCode,
  normaliseZip,
  recipientFingerprint,
} from '../../domain/outbound-mail/address';

describe('outbound mail moves', () => {
  it('cancels only pending or submitted pieces and prints only submitted ones', () => {
    expect(moveAllowed('cancel', 'submitted')).toBe(true);
    expect(moveAllowed('cancel', 'pending_approval')).toBe(true);
    expect(moveAllowed('cancel', 'ready')).toBe(false);
    expect(moveAllowed('printed', 'submitted')).toBe(true);
    expect(moveAllowed('printed', 'pending_approval')).toBe(false);
    expect(moveAllowed('carrierDeliveryFailed', 'mailed')).toBe(true);
    expect(moveAllowed('carrierDeliveryFailed', 'delivered')).toBe(false);
    expect(moveAllowed('failed', 'mailed')).toBe(false);
  });

  it('steps the sandbox submitted -> ready -> mailed -> delivered and no further', () => {
    expect(['submitted', 'ready', 'mailed', 'delivered', 'pending_approval'].map(nextTestStep)).toEqual([
      'printed',
      'dispatched',
      'delivered',
      null,
      null,
    ]);
  });

  it('names carriers and gives stable sandbox tracking numbers', () => {
    expect(carrierForClass('carrierx_2day')).toBe('carrierx');
    expect(carrierForClass('carriery_ground')).toBe('carriery');
    expect(carrierForClass('certified')).toBe('usps');
    const id = '3f2b1c0e-8a7d-4e6f-9b1a-2c3d4e5f6a7b';
    expect(sandboxTrackingNumber(id, 'priority')).toBe(sandboxTrackingNumber(id, 'priority'));
    expect(sandboxTrackingNumber(id, 'carrierx_ground')).toMatch(/^TESTCX\d{18}$/);
  });
});

describe('spending safeguards', () => {
  const base = {
    costCents: 500,
    maxCostCents: null,
    perTransactionLimitCents: null,
    dailySpendLimitCents: null,
    spentLast24hCents: 0,
    live: true,
  };

  it('refuses above the caller cap first, for live and test pieces alike', () => {
    expect(spendRefusal({ ...base, maxCostCents: 499 })?.code).toBe('MAX_COST_EXCEEDED');
    expect(spendRefusal({ ...base, maxCostCents: 499, live: false })?.code).toBe('MAX_COST_EXCEEDED');
    expect(spendRefusal({ ...base, maxCostCents: 500 })).toBeNull();
  });

  it('applies the account limits to live pieces only', () => {
    expect(spendRefusal({ ...base, perTransactionLimitCents: 400 })?.code).toBe('PER_TRANSACTION_LIMIT_EXCEEDED');
    expect(spendRefusal({ ...base, perTransactionLimitCents: 400, live: false })).toBeNull();
    const daily = spendRefusal({ ...base, dailySpendLimitCents: 1000, spentLast24hCents: 600 });
    expect(daily?.code).toBe('DAILY_SPEND_LIMIT_EXCEEDED');
    expect(daily?.details).toMatchObject({ remaining_today_cents: 400 });
    expect(spendRefusal({ ...base, dailySpendLimitCents: 1000, spentLast24hCents: 500 })).toBeNull();
  });

  it('counts pieces per key and warns when few remain', () => {
    expect(dailyPiecesRefusal({ limit: null, used: 1000 })).toBeNull();
    expect(dailyPiecesRefusal({ limit: 3, used: 2 })).toBeNull();
    expect(dailyPiecesRefusal({ limit: 3, used: 3 })?.code).toBe('MAX_DAILY_PIECES_EXCEEDED');
    expect(dailyPiecesWarning({ limit: null, used: 5 })).toBeNull();
    expect(dailyPiecesWarning({ limit: 10, used: 2 })).toBeNull();
    expect(dailyPiecesWarning({ limit: 10, used: 8 })).toMatchObject({ code: 'max_daily_pieces', remaining_pieces: 2 });
    expect(dailyPiecesWarning({ limit: 1, used: 1 })).toMatchObject({ remaining_pieces: 0 });
  });
});

describe('created_after / created_before', () => {
  it('makes a date-only created_before include that whole UTC day', () => {
    expect(parseCreatedBound('2026-03-05', 'before')).toEqual({
      at: new Date('2026-03-06T00:00:00Z'),
      inclusive: false,
    });
    expect(parseCreatedBound('2026-03-05', 'after')).toEqual({ at: new Date('2026-03-05T00:00:00Z'), inclusive: true });
    expect(parseCreatedBound('2026-03-05T10:00:00+02:00', 'before')).toEqual({
      at: new Date('2026-03-05T08:00:00Z'),
      inclusive: true,
    });
  });

  it('rejects anything else', () => {
    for (const bad of ['2026-02-30', '05/03/2026', '2026-03-05T10:00', 'yesterday', ''])
      expect(parseCreatedBound(bad, 'before')).toBeNull();
  });
});

describe('addresses', () => {
  it('normalises ZIP, state and country', () => {
    expect(normaliseZip('78701')).toBe('78701');
    expect(normaliseZip('787011234')).toBe('78701-1234');
    expect(normaliseZip('7870')).toBeNull();
    expect(normaliseStateCode('tx')).toBe('TX');
    expect(normaliseStateCode('Texas')).toBeNull();
    expect(normaliseStateCode('XX')).toBeNull();
    expect(normaliseCountry('us')).toBe('US');
    expect(isServedCountry('PR')).toBe(true);
    expect(isServedCountry('CA')).toBe(false);
  });

  it('prints the company between name and street', () => {
    expect(
      formatAddressLines({
        name: 'Ada',
        company: 'ACME',
        line1: '1 Main St',
        city: 'Austin',
        state: 'TX',
        zip: '78701',
      }),
    ).toEqual(['Ada', 'ACME', '1 Main St', 'Austin, TX 78701']);
  });

  it('treats spelling variants of one address as the same recipient', () => {
    const a = recipientFingerprint({
      name: 'Jane  Doe',
      line1: '123 Main Street',
      line2: 'Suite 4',
      city: 'Austin',
      state: 'TX',
      zip: '78701-1234',
    });
    const b = recipientFingerprint({
      name: 'JANE DOE',
      line1: '123 main st.',
      line2: 'STE 4',
      city: 'austin',
      state: 'tx',
      zip: '78701',
    });
    expect(a).toBe(b);
    expect(
      recipientFingerprint({ name: 'Jane Doe', line1: '125 Main St', city: 'Austin', state: 'TX', zip: '78701' }),
    ).not.toBe(b);
  });
});
