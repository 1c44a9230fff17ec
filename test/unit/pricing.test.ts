// Outbound pricing: every expected number is written out, with the arithmetic in the
// comment, so a change to a constant or to the formula shows up here.
import fc from 'fast-check';
import { ApiError } from '../../domain/shared/errors';
import {
  CostBreakdown,
  MAIL_CLASSES,
  MailClass,
  MAX_OUTBOUND_PAGES,
  priceOutboundMail,
  PricingInput,
  TRACKED_CLASSES,
  zoneFor,
} from '../../domain/outbound-mail/pricing';
import { DEFAULT_ORIGIN_ZIP } from '../../services/operations/facilities';

// Origin 78701 (prefix 787) to 60601 (prefix 606): |787 - 606| = 181 -> zone 2 + 1 = 3.
const ORIGIN = '78701';
const CHICAGO = '60601';
const NEW_YORK = '10001'; // |787 - 100| = 687 -> zone 8

function price(
  mailClass: MailClass,
  pageCount: number,
  color: boolean,
  extra: Partial<PricingInput> = {},
  overrides?: Parameters<typeof priceOutboundMail>[1],
) {
  return priceOutboundMail(
    {
      pageCount,
      color,
      duplex: false,
      mailClass,
      destinationZip: CHICAGO,
      destinationCountry: 'US',
      originZip: ORIGIN,
      ...extra,
    },
    overrides,
  );
}

function partsSum(b: CostBreakdown): number {
  return (
    b.handling_cents +
    b.printing_cents +
    b.postage_cents +
    b.first_class_baseline_adjustment_cents +
    b.service_adjustment_cents +
    b.floor_adjustment_cents
  );
}

function caught(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError');
}

describe('priceOutboundMail: every class, 1 and 3 pages, black-and-white and color (zone 3)', () => {
  // Handling 250, B/W page 40, color page 70 (40 + 30). 1 and 3 simplex sheets weigh
  // 0.20 + 0.16 = 0.36 oz and 0.20 + 0.48 = 0.68 oz: both rate as 1 oz, so 3 pages add
  // only printing (2 x 40 B/W, 3 x 70 - 70 = 140 color).
  const cases: [
    MailClass,
    number,
    boolean,
    number,
    { postage: number; baseline?: number; service?: number; floor?: number },
  ][] = [
    // first_class: 1 oz letter 78. 250 + 40 + 78 = 368; baseline 200 -> adjustment -168.
    ['first_class', 1, false, 200, { postage: 78, baseline: -168 }], // 250 + 40 + 78 - 168
    ['first_class', 1, true, 230, { postage: 78, baseline: -168 }], // 250 + 70 + 78 - 168
    ['first_class', 3, false, 280, { postage: 78, baseline: -168 }], // 250 + 120 + 78 - 168
    ['first_class', 3, true, 370, { postage: 78, baseline: -168 }], // 250 + 210 + 78 - 168
    // priority: zone 3, up to 16 oz: 1025. 250 + 40 + 1025 = 1315; floor 1500 -> +185.
    ['priority', 1, false, 1500, { postage: 1025, floor: 185 }],
    ['priority', 1, true, 1530, { postage: 1025, floor: 185 }], // 250 + 70 + 1025 + 185
    ['priority', 3, false, 1580, { postage: 1025, floor: 185 }], // 250 + 120 + 1025 + 185
    ['priority', 3, true, 1670, { postage: 1025, floor: 185 }], // 250 + 210 + 1025 + 185
    // certified: 78 + 530 fee = 608. 250 + 40 + 608 = 898; floor 2000 -> +1102.
    ['certified', 1, false, 2000, { postage: 608, floor: 1102 }],
    ['certified', 1, true, 2030, { postage: 608, floor: 1102 }],
    ['certified', 3, false, 2080, { postage: 608, floor: 1102 }],
    ['certified', 3, true, 2170, { postage: 608, floor: 1102 }],
    // certified_return_receipt: 78 + 530 + 262 = 870. 250 + 40 + 870 = 1160; floor 2400 -> +1240.
    ['certified_return_receipt', 1, false, 2400, { postage: 870, floor: 1240 }],
    ['certified_return_receipt', 1, true, 2430, { postage: 870, floor: 1240 }],
    ['certified_return_receipt', 3, false, 2480, { postage: 870, floor: 1240 }],
    ['certified_return_receipt', 3, true, 2570, { postage: 870, floor: 1240 }],
    // carrierx_ground: 1120. 250 + 40 + 1120 = 1410.
    ['carrierx_ground', 1, false, 1410, { postage: 1120 }],
    ['carrierx_ground', 1, true, 1440, { postage: 1120 }],
    ['carrierx_ground', 3, false, 1490, { postage: 1120 }],
    ['carrierx_ground', 3, true, 1580, { postage: 1120 }],
    // carrierx_express: 2380. 250 + 40 + 2380 = 2670.
    ['carrierx_express', 1, false, 2670, { postage: 2380 }],
    ['carrierx_express', 1, true, 2700, { postage: 2380 }],
    ['carrierx_express', 3, false, 2750, { postage: 2380 }],
    ['carrierx_express', 3, true, 2840, { postage: 2380 }],
    // carrierx_2day: 3150, service adjustment -800. 250 + 40 + 3150 - 800 = 2640.
    ['carrierx_2day', 1, false, 2640, { postage: 3150, service: -800 }],
    ['carrierx_2day', 1, true, 2670, { postage: 3150, service: -800 }],
    ['carrierx_2day', 3, false, 2720, { postage: 3150, service: -800 }],
    ['carrierx_2day', 3, true, 2810, { postage: 3150, service: -800 }],
    // carrierx_overnight: 6000, service adjustment +1800. 250 + 40 + 6000 + 1800 = 8090.
    ['carrierx_overnight', 1, false, 8090, { postage: 6000, service: 1800 }],
    ['carrierx_overnight', 1, true, 8120, { postage: 6000, service: 1800 }],
    ['carrierx_overnight', 3, false, 8170, { postage: 6000, service: 1800 }],
    ['carrierx_overnight', 3, true, 8260, { postage: 6000, service: 1800 }],
    // carriery_ground: 1100. 250 + 40 + 1100 = 1390.
    ['carriery_ground', 1, false, 1390, { postage: 1100 }],
    ['carriery_ground', 1, true, 1420, { postage: 1100 }],
    ['carriery_ground', 3, false, 1470, { postage: 1100 }],
    ['carriery_ground', 3, true, 1560, { postage: 1100 }],
    // carriery_2day: 2790. 250 + 40 + 2790 = 3080.
    ['carriery_2day', 1, false, 3080, { postage: 2790 }],
    ['carriery_2day', 1, true, 3110, { postage: 2790 }],
    ['carriery_2day', 3, false, 3160, { postage: 2790 }],
    ['carriery_2day', 3, true, 3250, { postage: 2790 }],
    // carriery_next_day: 7600. 250 + 40 + 7600 = 7890.
    ['carriery_next_day', 1, false, 7890, { postage: 7600 }],
    ['carriery_next_day', 1, true, 7920, { postage: 7600 }],
    ['carriery_next_day', 3, false, 7970, { postage: 7600 }],
    ['carriery_next_day', 3, true, 8060, { postage: 7600 }],
  ];

  it('covers every mail class', () => {
    expect(new Set(cases.map((c) => c[0]))).toEqual(new Set(MAIL_CLASSES));
  });

  it.each(cases)('%s, %i page(s), color %s = %i cents', (mailClass, pages, color, total, parts) => {
    const b = price(mailClass, pages, color);
    expect(b.total_cents).toBe(total);
    expect(b.postage_cents).toBe(parts.postage);
    expect(b.first_class_baseline_adjustment_cents).toBe(parts.baseline ?? 0);
    expect(b.service_adjustment_cents).toBe(parts.service ?? 0);
    expect(b.floor_adjustment_cents).toBe(parts.floor ?? 0);
    expect(b.handling_cents).toBe(250);
    expect(b.printing_cents).toBe(pages * (color ? 70 : 40));
    expect(b.printing_per_page_cents).toBe(40);
    expect(b.color_printing_per_page_cents).toBe(color ? 70 : 0);
    expect(b.color_surcharge_per_page_cents).toBe(color ? 30 : 0);
    expect(b.zone).toBe(3);
    expect(b.rate_source).toBe('service-rates-2026-07');
    expect(partsSum(b)).toBe(b.total_cents);
  });
});

describe('weight, sheets and postage steps', () => {
  it('6 simplex pages weigh 1.16 oz and rate as 2 oz; duplex halves the sheets', () => {
    // 0.20 + 6 x 0.16 = 1.16 oz -> 2 oz letter 107. 250 + 240 + 107 - 168 = 429.
    const simplex = price('first_class', 6, false);
    expect(simplex).toMatchObject({ sheet_count: 6, weight_oz: 1.16, postage_cents: 107, total_cents: 429 });
    expect(simplex.postage_description).toBe('First-Class Mail letter up to 2 oz');
    // Duplex: 3 sheets, 0.68 oz -> 1 oz 78; printing still per page: 250 + 240 + 78 - 168 = 400.
    const duplex = price('first_class', 6, false, { duplex: true });
    expect(duplex).toMatchObject({
      sheet_count: 3,
      weight_oz: 0.68,
      postage_cents: 78,
      printing_cents: 240,
      total_cents: 400,
    });
  });

  it('over 3 oz a first_class piece goes as a large envelope', () => {
    // 0.20 + 18 x 0.16 = 3.08 oz -> 4 oz large envelope 244. 250 + 720 + 244 - 168 = 1046.
    const b = price('first_class', 18, false);
    expect(b).toMatchObject({ weight_oz: 3.08, postage_cents: 244, total_cents: 1046 });
    expect(b.postage_description).toBe('First-Class Mail large envelope up to 4 oz');
  });

  it('prices the heaviest piece (200 simplex pages) in every class', () => {
    // 0.20 + 200 x 0.16 = 32.2 oz -> 33 oz. first_class: 244 + (33 - 4) x 27 = 1027;
    // 250 + 8000 + 1027 - 168 = 9109.
    const first = price('first_class', MAX_OUTBOUND_PAGES, false);
    expect(first).toMatchObject({ weight_oz: 32.2, postage_cents: 1027, total_cents: 9109 });
    // priority zone 3 up to 48 oz: 1365; the one-page floor adjustment (185) carries: 250 + 8000 + 1365 + 185 = 9800.
    const priority = price('priority', MAX_OUTBOUND_PAGES, false);
    expect(priority).toMatchObject({ postage_cents: 1365, floor_adjustment_cents: 185, total_cents: 9800 });
    for (const mailClass of MAIL_CLASSES)
      expect(price(mailClass, MAX_OUTBOUND_PAGES, true).total_cents).toBeGreaterThan(0);
  });

  it('describes postage with the zone for zoned classes and the fees for certified', () => {
    expect(price('priority', 1, false).postage_description).toBe('Priority Mail up to 1 oz, zone 3');
    expect(price('certified_return_receipt', 1, false).postage_description).toBe(
      'First-Class Mail letter up to 1 oz + Certified Mail fee $5.30 + electronic Return Receipt fee $2.62',
    );
    expect(price('carrierx_2day', 1, false).postage_description).toBe('carrierx 2Day up to 1 oz, zone 3');
  });

  it('a far zone lifts priority over its floor', () => {
    // Zone 8 up to 16 oz: 1540. 250 + 40 + 1540 = 1830 > 1500: no floor adjustment.
    const b = price('priority', 1, false, { destinationZip: NEW_YORK });
    expect(b).toMatchObject({ zone: 8, postage_cents: 1540, floor_adjustment_cents: 0, total_cents: 1830 });
  });

  it('keeps the one-page black-and-white first_class price at 200 for any destination', () => {
    for (const zip of [CHICAGO, NEW_YORK, '78702', '99501', '00901', '96813', '09001']) {
      expect(price('first_class', 1, false, { destinationZip: zip }).total_cents).toBe(200);
    }
  });
});

describe('zones', () => {
  it.each([
    ['78701', '78705', 1], // same prefix
    ['78701', '73301', 2], // |787 - 733| = 54
    ['78701', '60601', 3], // 181
    ['78701', '90210', 3], // |787 - 902| = 115
    ['78701', '30301', 6], // |787 - 303| = 484 -> 2 + 4
    ['78701', '10001', 8], // 687 -> 2 + 6
    ['78701', '02108', 8], // 766 -> 2 + 7 = 9, capped at 8
    ['78701', '99501', 8], // Alaska
    ['78701', '96813', 8], // Hawaii
    ['78701', '00901', 8], // Puerto Rico
    ['78701', '09001', 8], // APO AE
    ['99501', '99503', 1], // same offshore prefix
  ])('%s -> %s is zone %i', (origin, destination, zone) => {
    expect(zoneFor(origin, destination)).toBe(zone);
  });

  it('uses the facility default origin', () => {
    expect(price('first_class', 1, false, { originZip: DEFAULT_ORIGIN_ZIP }).fulfillment_origin_zip).toBe(
      DEFAULT_ORIGIN_ZIP,
    );
  });
});

describe('account overrides win over the defaults', () => {
  it('a lower account formula is raised to the first_class baseline', () => {
    // handling 0, B/W 10: 0 + 10 + 78 = 88 -> baseline adjustment +112 -> 200.
    const one = price('first_class', 1, false, {}, { handling_cents: 0, bw_per_page_cents: 10 });
    expect(one).toMatchObject({ handling_cents: 0, first_class_baseline_adjustment_cents: 112, total_cents: 200 });
    // Extra pages still add their (account) printing: 0 + 30 + 78 + 112 = 220.
    expect(price('first_class', 3, false, {}, { handling_cents: 0, bw_per_page_cents: 10 }).total_cents).toBe(220);
  });

  it('an account baseline replaces 200', () => {
    // 250 + 40 + 78 = 368; baseline 150 -> -218.
    expect(price('first_class', 1, false, {}, { first_class_baseline_cents: 150 })).toMatchObject({
      first_class_baseline_adjustment_cents: -218,
      total_cents: 150,
    });
  });

  it('an account color surcharge replaces 30', () => {
    // 250 + (40 + 20) + 78 - 168 = 200 + 20.
    expect(price('first_class', 1, true, {}, { color_surcharge_per_page_cents: 20 })).toMatchObject({
      color_printing_per_page_cents: 60,
      total_cents: 220,
    });
  });

  it('account floors merge over the default floors', () => {
    // priority floor 1000 < 1315: no adjustment. certified keeps its default floor 2000.
    expect(price('priority', 1, false, {}, { floors: { priority: 1000 } })).toMatchObject({
      floor_adjustment_cents: 0,
      total_cents: 1315,
    });
    expect(price('certified', 1, false, {}, { floors: { priority: 1000 } }).total_cents).toBe(2000);
    // A floor on a class without one by default: carriery_ground 1390 -> 1600 (+210).
    expect(price('carriery_ground', 1, false, {}, { floors: { carriery_ground: 1600 } })).toMatchObject({
      floor_adjustment_cents: 210,
      total_cents: 1600,
    });
  });

  it('account service adjustments merge over the defaults', () => {
    // carrierx_2day: 250 + 40 + 3150 - 500 = 2940; carriery_2day: 250 + 40 + 2790 + 100 = 3180.
    const overrides = { service_adjustments: { carrierx_2day: -500, carriery_2day: 100 } };
    expect(price('carrierx_2day', 1, false, {}, overrides).total_cents).toBe(2940);
    expect(price('carriery_2day', 1, false, {}, overrides).total_cents).toBe(3180);
    expect(price('carrierx_overnight', 1, false, {}, overrides).service_adjustment_cents).toBe(1800);
  });

  it('null overrides are the defaults', () => {
    expect(price('first_class', 1, false, {}, null).total_cents).toBe(200);
  });

  it('refuses overrides that would make a price negative', () => {
    const e = caught(() => price('carrierx_2day', 1, false, {}, { service_adjustments: { carrierx_2day: -100000 } }));
    expect(e.status).toBe(500);
  });
});

describe('carrier fields and tracking', () => {
  it('private-carrier classes report their base estimate and origin', () => {
    const b = price('carrierx_2day', 1, false);
    expect(b).toMatchObject({ carrier_base_estimate_cents: 3150, carrier_origin: ORIGIN, tracked: true });
    const p = price('certified', 1, false);
    expect(p).toMatchObject({ carrier_base_estimate_cents: null, carrier_origin: null, tracked: true });
  });

  it('tracks every class except first_class', () => {
    expect([...TRACKED_CLASSES].sort()).toEqual(MAIL_CLASSES.filter((c) => c !== 'first_class').sort());
    expect(price('first_class', 1, false).tracked).toBe(false);
  });

  it('normalises ZIP+4 and the country code', () => {
    const b = price('first_class', 1, false, { destinationZip: '60601-1234', destinationCountry: 'us' });
    expect(b).toMatchObject({ destination_zip: '60601', destination_country: 'US', zone: 3 });
  });
});

describe('refusals', () => {
  it.each([
    [{ pageCount: 0 }, 'page_count'],
    [{ pageCount: MAX_OUTBOUND_PAGES + 1 }, 'page_count'],
    [{ pageCount: 2.5 }, 'page_count'],
    [{ destinationCountry: 'CA' }, 'recipient_country'],
    [{ destinationZip: '6060' }, 'recipient_zip'],
    [{ mailClass: 'carrierx_ground' as MailClass, destinationZip: '09001' }, 'mail_class'],
    [{ mailClass: 'express' as MailClass }, 'mail_class'],
  ])('%j -> 400 on %s', (input, path) => {
    const e = caught(() =>
      priceOutboundMail({
        pageCount: 1,
        color: false,
        duplex: false,
        mailClass: 'first_class',
        destinationZip: CHICAGO,
        destinationCountry: 'US',
        originZip: ORIGIN,
        ...input,
      }),
    );
    expect(e.status).toBe(400);
    expect(e.options.fields?.map((f) => f.path)).toEqual([path]);
  });

  it('accepts US territories and postal classes to APO/FPO', () => {
    expect(price('first_class', 1, false, { destinationCountry: 'PR', destinationZip: '00901' }).total_cents).toBe(200);
    expect(price('certified', 1, false, { destinationZip: '09001' }).total_cents).toBe(2000);
  });
});

describe('invariants over every class, page count, color, duplex and destination', () => {
  const arb = fc.record({
    mailClass: fc.constantFrom(...MAIL_CLASSES),
    pageCount: fc.integer({ min: 1, max: MAX_OUTBOUND_PAGES - 1 }),
    color: fc.boolean(),
    duplex: fc.boolean(),
    destinationZip: fc.integer({ min: 0, max: 99999 }).map((n) => String(n).padStart(5, '0')),
  });

  it('total is the sum of the parts, printing is per page, one more page adds its printing and any postage step', () => {
    fc.assert(
      fc.property(arb, ({ mailClass, pageCount, color, duplex, destinationZip }) => {
        const military = [
          '090',
          '091',
          '092',
          '093',
          '094',
          '095',
          '096',
          '097',
          '098',
          '340',
          '962',
          '963',
          '964',
          '965',
          '966',
        ].includes(destinationZip.slice(0, 3));
        fc.pre(!(military && mailClass.startsWith('carrier')));
        const input = {
          mailClass,
          pageCount,
          color,
          duplex,
          destinationZip,
          destinationCountry: 'US',
          originZip: ORIGIN,
        };
        const b = priceOutboundMail(input);
        const next = priceOutboundMail({ ...input, pageCount: pageCount + 1 });
        expect(partsSum(b)).toBe(b.total_cents);
        expect(b.printing_cents).toBe(pageCount * (color ? 70 : 40));
        expect(next.total_cents - b.total_cents).toBe((color ? 70 : 40) + next.postage_cents - b.postage_cents);
        expect(next.postage_cents).toBeGreaterThanOrEqual(b.postage_cents);
        const onePage = priceOutboundMail({ ...input, pageCount: 1, color: false });
        if (mailClass === 'first_class') expect(onePage.total_cents).toBe(200);
        const floor = { priority: 1500, certified: 2000, certified_return_receipt: 2400 }[mailClass as string];
        if (floor !== undefined) expect(onePage.total_cents).toBeGreaterThanOrEqual(floor);
      }),
      { numRuns: 500 },
    );
  });
});
