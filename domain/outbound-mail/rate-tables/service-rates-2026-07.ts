// Postage rate table "service-rates-2026-07": what this service charges as postage per
// mail class, whole-ounce weight step and zone (1-8). These are the service's own
// prices for July 2026, not any carrier's published list. Every step table reaches
// 48 oz, above the heaviest piece the service accepts (200 sheets: 32.2 oz).
import type { ClassRates, RateStep, RateTable, ZoneCents } from './types';

const sameInEveryZone = (cents: number): ZoneCents => [cents, cents, cents, cents, cents, cents, cents, cents];

// First-Class Mail does not depend on the zone. Up to 3 oz a piece goes as a letter;
// heavier pieces go as a large envelope (flat) at 244 for 4 oz plus 27 per further ounce.
const FIRST_CLASS_STEPS: readonly RateStep[] = [
  { max_oz: 1, cents: sameInEveryZone(78), label: 'letter' },
  { max_oz: 2, cents: sameInEveryZone(107), label: 'letter' },
  { max_oz: 3, cents: sameInEveryZone(136), label: 'letter' },
  { max_oz: 4, cents: sameInEveryZone(244), label: 'large envelope' },
];
const FIRST_CLASS_ADDITIONAL_OZ = { cents: sameInEveryZone(27), max_oz: 48, label: 'large envelope' };

const CERTIFIED_FEE = { name: 'Certified Mail fee', cents: 530 };
const RETURN_RECEIPT_FEE = { name: 'electronic Return Receipt fee', cents: 262 };

function byPound(
  service: string,
  carrier: ClassRates['carrier'],
  lb1: ZoneCents,
  lb2: ZoneCents,
  lb3: ZoneCents,
): ClassRates {
  return {
    service,
    zoned: true,
    carrier,
    steps: [
      { max_oz: 16, cents: lb1 },
      { max_oz: 32, cents: lb2 },
      { max_oz: 48, cents: lb3 },
    ],
  };
}

export const SERVICE_RATES_2026_07: RateTable = {
  name: 'service-rates-2026-07',
  // A #10 envelope weighs about 0.20 oz and a sheet of 20 lb letter paper about 0.16 oz.
  envelope_weight_hundredths_oz: 20,
  sheet_weight_hundredths_oz: 16,
  classes: {
    first_class: {
      service: 'First-Class Mail',
      zoned: false,
      carrier: null,
      steps: FIRST_CLASS_STEPS,
      additional_oz: FIRST_CLASS_ADDITIONAL_OZ,
    },
    priority: byPound(
      'Priority Mail',
      null,
      [985, 985, 1025, 1090, 1175, 1285, 1360, 1540],
      [1110, 1110, 1190, 1290, 1490, 1660, 1800, 2090],
      [1270, 1270, 1365, 1500, 1760, 1980, 2160, 2520],
    ),
    certified: {
      service: 'First-Class Mail',
      zoned: false,
      carrier: null,
      steps: FIRST_CLASS_STEPS,
      additional_oz: FIRST_CLASS_ADDITIONAL_OZ,
      fees: [CERTIFIED_FEE],
    },
    certified_return_receipt: {
      service: 'First-Class Mail',
      zoned: false,
      carrier: null,
      steps: FIRST_CLASS_STEPS,
      additional_oz: FIRST_CLASS_ADDITIONAL_OZ,
      fees: [CERTIFIED_FEE, RETURN_RECEIPT_FEE],
    },
    carrierx_ground: byPound(
      'carrierx Ground',
      'carrierx',
      [1050, 1080, 1120, 1170, 1240, 1310, 1390, 1480],
      [1150, 1190, 1240, 1310, 1400, 1500, 1600, 1720],
      [1240, 1290, 1350, 1440, 1560, 1690, 1820, 1970],
    ),
    carrierx_express: byPound(
      'carrierx Express',
      'carrierx',
      [2150, 2250, 2380, 2520, 2700, 2870, 3050, 3250],
      [2350, 2460, 2610, 2780, 2990, 3190, 3400, 3630],
      [2540, 2660, 2830, 3020, 3260, 3490, 3730, 3990],
    ),
    carrierx_2day: byPound(
      'carrierx 2Day',
      'carrierx',
      [2850, 3000, 3150, 3350, 3600, 3850, 4100, 4400],
      [3100, 3270, 3440, 3670, 3950, 4230, 4510, 4840],
      [3330, 3520, 3710, 3960, 4270, 4580, 4890, 5250],
    ),
    carrierx_overnight: byPound(
      'carrierx Overnight',
      'carrierx',
      [5400, 5700, 6000, 6400, 6900, 7400, 7900, 8400],
      [5900, 6230, 6570, 7010, 7560, 8110, 8660, 9210],
      [6350, 6710, 7080, 7560, 8160, 8760, 9360, 9960],
    ),
    carriery_ground: byPound(
      'carriery Ground',
      'carriery',
      [1020, 1060, 1100, 1160, 1230, 1300, 1380, 1470],
      [1130, 1170, 1220, 1290, 1380, 1480, 1580, 1700],
      [1220, 1270, 1330, 1420, 1540, 1670, 1800, 1950],
    ),
    carriery_2day: byPound(
      'carriery 2nd Day',
      'carriery',
      [2500, 2640, 2790, 2980, 3210, 3440, 3670, 3940],
      [2740, 2900, 3060, 3270, 3530, 3790, 4050, 4350],
      [2960, 3130, 3310, 3540, 3820, 4100, 4380, 4710],
    ),
    carriery_next_day: byPound(
      'carriery Next Day',
      'carriery',
      [6900, 7250, 7600, 8050, 8600, 9150, 9700, 10300],
      [7500, 7880, 8270, 8760, 9360, 9960, 10560, 11210],
      [8050, 8460, 8880, 9410, 10060, 10710, 11360, 12050],
    ),
  },
};
