import fc from 'fast-check';
import {
  basePerPieceCents,
  BATCH_MAIL_TYPES,
  BatchMailType,
  letterSheets,
  pageAllowance,
  pagesFit,
  priceBatch,
  roundHalfUpPercent,
  unmailedRefundCents,
  volumeDiscountPct,
} from '../../domain/batches/pricing';

const price = (over: Partial<Parameters<typeof priceBatch>[0]> = {}) =>
  priceBatch({
    mailType: 'postcard_4x6',
    mailingClass: 'first_class',
    pieces: 1,
    pageCount: 1,
    color: false,
    duplex: false,
    ...over,
  });

describe('batch per-piece prices', () => {
  it.each([
    ['postcard_4x6', 1, false, 28],
    ['postcard_6x9', 1, false, 28],
    ['postcard_6x9', 2, true, 28],
    ['letter', 1, false, 39],
    ['letter', 2, false, 54],
    ['letter', 3, false, 54],
    ['letter', 2, true, 39],
    ['letter', 3, true, 54],
    ['letter', 6, true, 54],
    ['flyer', 1, false, 39],
    ['flyer', 2, true, 39],
    ['pamphlet_light', 4, false, 68],
    ['pamphlet_light', 8, false, 68],
    ['pamphlet_heavy', 9, false, 83],
    ['pamphlet_heavy', 16, true, 83],
  ] as Array<[BatchMailType, number, boolean, number]>)(
    'first_class %s, %i pages, duplex %s: %i cents',
    (type, pages, duplex, cents) => {
      expect(basePerPieceCents(type, 'first_class', pages, duplex)).toBe(cents);
    },
  );

  it.each([
    ['postcard_4x6', 1, 28],
    ['postcard_6x9', 1, 28],
    ['letter', 1, 35],
    ['letter', 3, 35],
    ['flyer', 1, 55],
    ['pamphlet_light', 4, 68],
    ['pamphlet_heavy', 12, 68],
  ] as Array<[BatchMailType, number, number]>)('marketing_mail %s, %i pages: %i cents', (type, pages, cents) => {
    expect(basePerPieceCents(type, 'marketing_mail', pages, false)).toBe(cents);
  });

  it('adds 15 cents per piece for color, on top of the base price', () => {
    const p = price({ mailType: 'letter', pageCount: 2, color: true, pieces: 10 });
    expect(p).toMatchObject({
      per_piece_cents: 54,
      color_surcharge_cents: 15,
      effective_per_piece_cents: 69,
      subtotal_cents: 690,
    });
  });

  it('counts letter sheets: duplex prints two pages per sheet', () => {
    expect([1, 2, 3, 4, 5, 6].map((p) => letterSheets(p, true))).toEqual([1, 1, 2, 2, 3, 3]);
    expect(letterSheets(3, false)).toBe(3);
  });
});

describe('volume discounts and rounding', () => {
  it.each([
    [1, 0],
    [499, 0],
    [500, 5],
    [999, 5],
    [1000, 10],
    [4999, 10],
    [5000, 15],
    [10000, 15],
  ])('%i pieces get %i%%', (pieces, pct) => {
    expect(volumeDiscountPct(pieces)).toBe(pct);
  });

  it.each([
    // pieces, subtotal, discount, total (postcards at 28 cents)
    [499, 13972, 0, 13972],
    [500, 14000, 700, 13300],
    [999, 27972, 1399, 26573], // 1398.6 rounds up
    [1000, 28000, 2800, 25200],
    [4999, 139972, 13997, 125975], // 13997.2 rounds down
    [5000, 140000, 21000, 119000],
  ])('%i postcards: subtotal %i, discount %i, total %i', (pieces, subtotal, discount, total) => {
    expect(price({ pieces })).toMatchObject({ subtotal_cents: subtotal, discount_cents: discount, total_cents: total });
  });

  it('rounds an exact half cent up, on the whole order', () => {
    // 510 letters at 39: subtotal 19890, 5% = 994.5
    expect(price({ mailType: 'letter', pieces: 510 })).toMatchObject({
      subtotal_cents: 19890,
      discount_cents: 995,
      total_cents: 18895,
    });
    expect(roundHalfUpPercent(99450)).toBe(995);
    expect(roundHalfUpPercent(99449)).toBe(994);
  });

  it('prices marketing mail at its own rates with the same discounts (199 and 200 pieces)', () => {
    expect(price({ mailingClass: 'marketing_mail', mailType: 'flyer', pieces: 199 })).toMatchObject({
      per_piece_cents: 55,
      total_cents: 10945,
    });
    expect(price({ mailingClass: 'marketing_mail', mailType: 'flyer', pieces: 200 })).toMatchObject({
      per_piece_cents: 55,
      total_cents: 11000,
    });
  });

  it('always satisfies total = subtotal - discount with 0 <= discount <= subtotal', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...BATCH_MAIL_TYPES),
        fc.constantFrom('first_class' as const, 'marketing_mail' as const),
        fc.integer({ min: 1, max: 10000 }),
        fc.boolean(),
        (mailType, mailingClass, pieces, color) => {
          const pageCount = pageAllowance(mailType, false).min;
          const p = priceBatch({ mailType, mailingClass, pieces, pageCount, color, duplex: false });
          expect(p.total_cents).toBe(p.subtotal_cents - p.discount_cents);
          expect(p.discount_cents).toBeGreaterThanOrEqual(0);
          expect(p.discount_cents).toBeLessThanOrEqual(p.subtotal_cents);
          expect(p.subtotal_cents).toBe(p.effective_per_piece_cents * pieces);
        },
      ),
    );
  });
});

describe('template pages per mail type', () => {
  it.each([
    ['postcard_4x6', false, 1, 1],
    ['postcard_4x6', true, 1, 2],
    ['postcard_6x9', true, 1, 2],
    ['flyer', false, 1, 1],
    ['flyer', true, 1, 2],
    ['letter', false, 1, 3],
    ['letter', true, 1, 6],
    ['pamphlet_light', false, 4, 8],
    ['pamphlet_light', true, 4, 8],
    ['pamphlet_heavy', false, 9, 16],
    ['pamphlet_heavy', true, 9, 16],
  ] as Array<[BatchMailType, boolean, number, number]>)('%s duplex=%s takes %i-%i pages', (type, duplex, min, max) => {
    expect(pageAllowance(type, duplex)).toEqual({ min, max });
    expect(pagesFit(type, duplex, min)).toBe(true);
    expect(pagesFit(type, duplex, max)).toBe(true);
    expect(pagesFit(type, duplex, min - 1)).toBe(false);
    expect(pagesFit(type, duplex, max + 1)).toBe(false);
  });
});

describe('refund of unmailed pieces', () => {
  it('refunds floor(charged x unmailed / pieces)', () => {
    expect(unmailedRefundCents(13300, 500, 1)).toBe(26); // 26.6
    expect(unmailedRefundCents(13300, 500, 250)).toBe(6650);
    expect(unmailedRefundCents(13300, 500, 500)).toBe(13300);
    expect(unmailedRefundCents(13300, 500, 0)).toBe(0);
    expect(unmailedRefundCents(0, 500, 10)).toBe(0);
  });

  it('never refunds more than was charged', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2_000_000 }),
        fc.integer({ min: 1, max: 10000 }),
        fc.nat(),
        (charged, pieces, n) => {
          const unmailed = n % (pieces + 1);
          const r = unmailedRefundCents(charged, pieces, unmailed);
          expect(r).toBeGreaterThanOrEqual(0);
          expect(r).toBeLessThanOrEqual(charged);
          expect(r).toBeLessThanOrEqual((charged * unmailed) / pieces);
        },
      ),
    );
  });
});
