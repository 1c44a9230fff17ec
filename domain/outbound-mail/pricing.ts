// Outbound mail pricing: the spec's constants, the zone and weight model, and the one
// function that turns a piece (pages, color, duplex, class, destination, origin) into
// an itemised cost_breakdown whose parts add up to total_cents. Pure: no I/O, safe to
// import from workflows.
//
// How a price is built (all integer cents; nothing is rounded except weight, which goes
// UP to the next whole ounce before a rate step is chosen):
//   handling + printing + postage
//   + first_class_baseline_adjustment (first_class only)
//   + service_adjustment (per class; carrierx_2day -800, carrierx_overnight +1800)
//   + floor_adjustment (classes with a one-page floor)
// The baseline and floor adjustments are computed once, on the one-page black-and-white
// piece of the same class, zone and account, and then carried unchanged to every page
// count and to color. So the one-page B/W first_class price is exactly the baseline,
// a one-page B/W floored class costs at least its floor, and "extra pages add printing
// and any weight-based postage increase" holds to the cent.
import { ApiError, errors, FieldError } from '../shared/errors';
import { formatCents } from '../shared/money';
import { ZIP_PATTERN } from '../workflow-safe/us-states';
import { SERVICE_RATES_2026_07 } from './rate-tables/service-rates-2026-07';
import type { MailClass } from './mail-class';
import type { ClassRates, RateTable } from './rate-tables/types';

export type { MailClass } from './mail-class';

export const MAIL_CLASSES: readonly MailClass[] = [
  'first_class',
  'priority',
  'certified',
  'certified_return_receipt',
  'carrierx_ground',
  'carrierx_express',
  'carrierx_2day',
  'carrierx_overnight',
  'carriery_ground',
  'carriery_2day',
  'carriery_next_day',
];

/** Classes that must carry a tracking number once mailed (every class but first_class). */
export const TRACKED_CLASSES: readonly MailClass[] = MAIL_CLASSES.filter((c) => c !== 'first_class');

export function isMailClass(value: string): value is MailClass {
  return (MAIL_CLASSES as readonly string[]).includes(value);
}

/**
 * The most pages one outbound piece may have, whatever the document type: the batch
 * template limit, and 200 simplex sheets (32.2 oz) stay inside every rate table.
 */
export const MAX_OUTBOUND_PAGES = 200;

/** The rate table in force; its name is cost_breakdown.rate_source. */
export const RATE_TABLE: RateTable = SERVICE_RATES_2026_07;

/** The spec's outbound constants. Account overrides win over each of them. */
export const PRICING_DEFAULTS = {
  handling_cents: 250,
  bw_per_page_cents: 40,
  /** Additive color upgrade: a color page costs bw_per_page_cents + this (40 + 30 = 70). */
  color_surcharge_per_page_cents: 30,
  /** The one-page black-and-white first_class price. */
  first_class_baseline_cents: 200,
  /** One-page black-and-white minimum totals. */
  floors: { priority: 1500, certified: 2000, certified_return_receipt: 2400 } as Partial<Record<MailClass, number>>,
  /** Only carrierx classes have adjustments in the spec; carriery classes are 0. */
  service_adjustments: { carrierx_2day: -800, carrierx_overnight: 1800 } as Partial<Record<MailClass, number>>,
} as const;

/**
 * Destinations served at domestic rates by ZIP: the states and DC (US), US territories
 * and the freely associated states that use US ZIP codes. APO/FPO/DPO addresses are
 * country US. Everything else is refused: the address model (2-letter US state, 5-digit
 * ZIP) cannot express a foreign address.
 */
export const DOMESTIC_COUNTRIES: readonly string[] = ['US', 'PR', 'VI', 'GU', 'AS', 'MP', 'FM', 'MH', 'PW'];

export interface PricingInput {
  pageCount: number;
  color: boolean;
  duplex: boolean;
  mailClass: MailClass;
  /** 5 digits or ZIP+4. */
  destinationZip: string;
  /** ISO 3166-1 alpha-2. */
  destinationCountry: string;
  /** The fulfilling facility's ZIP (services/operations/facilities.ts). */
  originZip: string;
}

export interface PricingOverrides {
  handling_cents?: number;
  bw_per_page_cents?: number;
  color_surcharge_per_page_cents?: number;
  first_class_baseline_cents?: number;
  /** Merged per class over the default floors; 0 removes a floor. */
  floors?: Partial<Record<MailClass, number>>;
  /** Merged per class over the default service adjustments. */
  service_adjustments?: Partial<Record<MailClass, number>>;
}

export interface CostBreakdown {
  total_cents: number;
  handling_cents: number;
  /** page_count x (printing_per_page_cents + color_surcharge_per_page_cents). */
  printing_cents: number;
  /** The black-and-white page price. */
  printing_per_page_cents: number;
  /** The total color page price (base + surcharge); 0 for black-and-white pieces. */
  color_printing_per_page_cents: number;
  /** The additive color upgrade per page; 0 for black-and-white pieces. */
  color_surcharge_per_page_cents: number;
  postage_cents: number;
  postage_description: string;
  page_count: number;
  /** Paper sheets: pages, or ceil(pages / 2) when duplex. */
  sheet_count: number;
  weight_oz: number;
  zone: number;
  rate_source: string;
  first_class_baseline_adjustment_cents: number;
  service_adjustment_cents: number;
  floor_adjustment_cents: number;
  fulfillment_origin_zip: string;
  destination_zip: string;
  destination_country: string;
  mail_class: MailClass;
  color: boolean;
  duplex: boolean;
  tracked: boolean;
  /** Private-carrier classes: the carrier's rate-table quote (= postage_cents) before service_adjustment_cents; null otherwise. */
  carrier_base_estimate_cents: number | null;
  /** Private-carrier classes: the ZIP the carrier picks the piece up from; null otherwise. */
  carrier_origin: string | null;
}

// Three-digit ZIP prefixes outside the contiguous states: PR/VI (006-009), military
// AE (090-098) and AA (340), AP (962-966), HI/AS/GU/Pacific (967-969), AK (995-999).
const OFFSHORE_PREFIXES: readonly [number, number][] = [
  [6, 9],
  [90, 98],
  [340, 340],
  [962, 969],
  [995, 999],
];
const MILITARY_PREFIXES: readonly [number, number][] = [
  [90, 98],
  [340, 340],
  [962, 966],
];

const zipPrefix = (zip: string): number => Number(zip.trim().slice(0, 3));
const inRanges = (prefix: number, ranges: readonly [number, number][]): boolean =>
  ranges.some(([lo, hi]) => prefix >= lo && prefix <= hi);

/**
 * Zone 1-8 from the first three digits of the origin and destination ZIPs: 1 for the
 * same prefix; 8 when either end is outside the contiguous states (AK, HI, territories,
 * military); otherwise 2 plus one zone per 100 of prefix difference, at most 8. ZIP
 * prefixes grow roughly east to west, so the difference stands in for distance.
 */
export function zoneFor(originZip: string, destinationZip: string): number {
  const o = zipPrefix(originZip);
  const d = zipPrefix(destinationZip);
  if (o === d) return 1;
  if (inRanges(o, OFFSHORE_PREFIXES) || inRanges(d, OFFSHORE_PREFIXES)) return 8;
  return Math.min(8, 2 + Math.floor(Math.abs(o - d) / 100));
}

/** Sheets of paper: duplex prints two pages per sheet. */
export function sheetCount(pageCount: number, duplex: boolean): number {
  return duplex ? Math.ceil(pageCount / 2) : pageCount;
}

/** Weight in hundredths of an ounce: the envelope plus each sheet. */
function weightHundredths(table: RateTable, sheets: number): number {
  return table.envelope_weight_hundredths_oz + sheets * table.sheet_weight_hundredths_oz;
}

function postageFor(rates: ClassRates, hundredthsOz: number, zone: number): { cents: number; description: string } {
  const oz = Math.ceil(hundredthsOz / 100);
  const z = zone - 1;
  let cents: number;
  let label: string | undefined;
  const step = rates.steps.find((s) => oz <= s.max_oz);
  if (step) {
    cents = step.cents[z];
    label = step.label;
  } else {
    const last = rates.steps[rates.steps.length - 1];
    const extra = rates.additional_oz;
    if (!extra || oz > extra.max_oz) {
      throw errors.validation([
        { path: 'page_count', message: `a ${oz} oz piece is heavier than any ${rates.service} rate` },
      ]);
    }
    cents = last.cents[z] + (oz - last.max_oz) * extra.cents[z];
    label = extra.label ?? last.label;
  }
  let description = `${rates.service}${label ? ` ${label}` : ''} up to ${oz} oz${rates.zoned ? `, zone ${zone}` : ''}`;
  for (const fee of rates.fees ?? []) {
    cents += fee.cents;
    description += ` + ${fee.name} ${formatCents(fee.cents)}`;
  }
  return { cents, description };
}

function checkInput(input: PricingInput): void {
  const fields: FieldError[] = [];
  if (!Number.isInteger(input.pageCount) || input.pageCount < 1 || input.pageCount > MAX_OUTBOUND_PAGES) {
    fields.push({ path: 'page_count', message: `page_count must be an integer from 1 to ${MAX_OUTBOUND_PAGES}` });
  }
  if (!isMailClass(input.mailClass)) {
    fields.push({ path: 'mail_class', message: `mail_class must be one of ${MAIL_CLASSES.join(', ')}` });
  }
  if (!DOMESTIC_COUNTRIES.includes(input.destinationCountry.trim().toUpperCase())) {
    fields.push({
      path: 'recipient_country',
      message:
        'only US destinations are accepted (US states, DC, US territories, FM, MH, PW and APO/FPO/DPO addresses)',
    });
  }
  if (!ZIP_PATTERN.test(input.destinationZip.trim())) {
    fields.push({ path: 'recipient_zip', message: 'recipient_zip must be 5 digits or ZIP+4' });
  } else if (
    isMailClass(input.mailClass) &&
    RATE_TABLE.classes[input.mailClass].carrier &&
    inRanges(zipPrefix(input.destinationZip), MILITARY_PREFIXES)
  ) {
    fields.push({
      path: 'mail_class',
      message: 'private carriers do not deliver to APO/FPO/DPO addresses; use a postal class',
    });
  }
  if (fields.length) throw errors.validation(fields);
  if (!ZIP_PATTERN.test(input.originZip.trim())) {
    throw new ApiError(500, `fulfillment origin ZIP "${input.originZip}" is not a US ZIP`);
  }
}

function effectiveRates(overrides: PricingOverrides | null | undefined) {
  const o = overrides ?? {};
  const cents = (value: number | undefined, fallback: number) => Math.round(value ?? fallback);
  return {
    handling: cents(o.handling_cents, PRICING_DEFAULTS.handling_cents),
    bwPerPage: cents(o.bw_per_page_cents, PRICING_DEFAULTS.bw_per_page_cents),
    colorSurchargePerPage: cents(o.color_surcharge_per_page_cents, PRICING_DEFAULTS.color_surcharge_per_page_cents),
    firstClassBaseline: cents(o.first_class_baseline_cents, PRICING_DEFAULTS.first_class_baseline_cents),
    floors: { ...PRICING_DEFAULTS.floors, ...o.floors },
    serviceAdjustments: { ...PRICING_DEFAULTS.service_adjustments, ...o.service_adjustments },
  };
}

/**
 * The price of one outbound piece, itemised. Throws a 400 (fields[]) for a page count,
 * class, country or ZIP the service cannot price.
 */
export function priceOutboundMail(input: PricingInput, overrides?: PricingOverrides | null): CostBreakdown {
  checkInput(input);
  const rates = RATE_TABLE.classes[input.mailClass];
  const r = effectiveRates(overrides);
  const destinationZip = input.destinationZip.trim().slice(0, 5);
  const originZip = input.originZip.trim().slice(0, 5);
  const zone = zoneFor(originZip, destinationZip);

  const sheets = sheetCount(input.pageCount, input.duplex);
  const weight = weightHundredths(RATE_TABLE, sheets);
  const postage = postageFor(rates, weight, zone);
  const colorSurcharge = input.color ? r.colorSurchargePerPage : 0;
  const printing = input.pageCount * (r.bwPerPage + colorSurcharge);
  const serviceAdjustment = Math.round(r.serviceAdjustments[input.mailClass] ?? 0);

  // The one-page black-and-white piece of this class and zone fixes the baseline and
  // floor adjustments. first_class: the adjustment is whatever makes that piece cost
  // exactly the baseline, negative with the default constants (250 + 40 + 78 > 200),
  // positive when an account's formula is lower than its baseline.
  const onePagePostage = postageFor(rates, weightHundredths(RATE_TABLE, 1), zone).cents;
  const onePageFormula = r.handling + r.bwPerPage + onePagePostage;
  const baselineAdjustment = input.mailClass === 'first_class' ? r.firstClassBaseline - onePageFormula : 0;
  const floor = r.floors[input.mailClass];
  const floorAdjustment =
    floor === undefined
      ? 0
      : Math.max(0, Math.round(floor) - (onePageFormula + baselineAdjustment + serviceAdjustment));

  const total = r.handling + printing + postage.cents + baselineAdjustment + serviceAdjustment + floorAdjustment;
  if (total < 0) throw new ApiError(500, `account pricing overrides give ${input.mailClass} a negative price`);
  const carrier = rates.carrier !== null;

  return {
    total_cents: total,
    handling_cents: r.handling,
    printing_cents: printing,
    printing_per_page_cents: r.bwPerPage,
    color_printing_per_page_cents: input.color ? r.bwPerPage + colorSurcharge : 0,
    color_surcharge_per_page_cents: colorSurcharge,
    postage_cents: postage.cents,
    postage_description: postage.description,
    page_count: input.pageCount,
    sheet_count: sheets,
    weight_oz: weight / 100,
    zone,
    rate_source: RATE_TABLE.name,
    first_class_baseline_adjustment_cents: baselineAdjustment,
    service_adjustment_cents: serviceAdjustment,
    floor_adjustment_cents: floorAdjustment,
    fulfillment_origin_zip: originZip,
    destination_zip: destinationZip,
    destination_country: input.destinationCountry.trim().toUpperCase(),
    mail_class: input.mailClass,
    color: input.color,
    duplex: input.duplex,
    tracked: TRACKED_CLASSES.includes(input.mailClass),
    carrier_base_estimate_cents: carrier ? postage.cents : null,
    carrier_origin: carrier ? originZip : null,
  };
}
