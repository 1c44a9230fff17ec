// Batch mail prices and template page rules: the one pure function that prices a batch,
// used by the estimate, by the draft (its stored price) and by the confirm debit, so the
// three always agree to the cent. No I/O; importable from workflows.

export const BATCH_MAIL_TYPES = [
  'postcard_4x6',
  'postcard_6x9',
  'letter',
  'flyer',
  'pamphlet_light',
  'pamphlet_heavy',
] as const;
export type BatchMailType = (typeof BATCH_MAIL_TYPES)[number];

export const BATCH_MAILING_CLASSES = ['first_class', 'marketing_mail'] as const;
export type BatchMailingClass = (typeof BATCH_MAILING_CLASSES)[number];

export const BATCH_MAX_PIECES = 10000;
export const MARKETING_MAIL_MINIMUM = 200;
export const COLOR_SURCHARGE_CENTS = 15;

/** Volume discount tiers, highest first: pieces at or above `minPieces` get `pct` off. */
export const VOLUME_DISCOUNTS: ReadonlyArray<{ minPieces: number; pct: number }> = [
  { minPieces: 5000, pct: 15 },
  { minPieces: 1000, pct: 10 },
  { minPieces: 500, pct: 5 },
];

export interface PageAllowance {
  min: number;
  max: number;
}

/**
 * Template pages a mail type accepts. Duplex doubles the allowance of single-sheet
 * pieces (postcards, flyers: 1 page, 2 with duplex) and of letters (1-3 pages, up to 6
 * with duplex). Pamphlets are folded booklets whose page count is already both sides,
 * so duplex changes nothing for them.
 */
export function pageAllowance(mailType: BatchMailType, duplex: boolean): PageAllowance {
  switch (mailType) {
    case 'postcard_4x6':
    case 'postcard_6x9':
    case 'flyer':
      return { min: 1, max: duplex ? 2 : 1 };
    case 'letter':
      return { min: 1, max: duplex ? 6 : 3 };
    case 'pamphlet_light':
      return { min: 4, max: 8 };
    case 'pamphlet_heavy':
      return { min: 9, max: 16 };
  }
}

export function pagesFit(mailType: BatchMailType, duplex: boolean, pageCount: number): boolean {
  const a = pageAllowance(mailType, duplex);
  return Number.isInteger(pageCount) && pageCount >= a.min && pageCount <= a.max;
}

export function describeAllowance(mailType: BatchMailType, duplex: boolean): string {
  const a = pageAllowance(mailType, duplex);
  const range = a.min === a.max ? `${a.min} page${a.min === 1 ? '' : 's'}` : `${a.min}-${a.max} pages`;
  return `${mailType}${duplex ? ' (duplex)' : ''} takes ${range}`;
}

/** Physical sheets of a letter: duplex prints two pages per sheet. */
export function letterSheets(pageCount: number, duplex: boolean): number {
  return duplex ? Math.ceil(pageCount / 2) : pageCount;
}

/** The per-piece price before color and discounts (spec: Pricing constants, batch). */
export function basePerPieceCents(
  mailType: BatchMailType,
  mailingClass: BatchMailingClass,
  pageCount: number,
  duplex: boolean,
): number {
  const postcard = mailType === 'postcard_4x6' || mailType === 'postcard_6x9';
  if (mailingClass === 'marketing_mail') {
    if (postcard) return 28;
    if (mailType === 'letter') return 35;
    if (mailType === 'flyer') return 55;
    return 68;
  }
  if (postcard) return 28;
  if (mailType === 'letter') return letterSheets(pageCount, duplex) <= 1 ? 39 : 54;
  if (mailType === 'flyer') return 39;
  return mailType === 'pamphlet_light' ? 68 : 83;
}

export function volumeDiscountPct(pieces: number): number {
  return VOLUME_DISCOUNTS.find((t) => pieces >= t.minPieces)?.pct ?? 0;
}

/** Round half up of numerator / 100 for non-negative integers, in integer arithmetic. */
export function roundHalfUpPercent(amountTimesPct: number): number {
  return Math.floor((amountTimesPct + 50) / 100);
}

export interface BatchPriceInput {
  mailType: BatchMailType;
  mailingClass: BatchMailingClass;
  /** Billed pieces: the estimate's quantity, or the draft's valid recipients. */
  pieces: number;
  pageCount: number;
  color: boolean;
  duplex: boolean;
}

export interface BatchPrice {
  per_piece_cents: number;
  color_surcharge_cents: number;
  effective_per_piece_cents: number;
  volume_discount_pct: number;
  subtotal_cents: number;
  discount_cents: number;
  total_cents: number;
}

/**
 * The price of a batch. Rounding rule: the discount is taken once on the whole order,
 * discount_cents = round-half-up(subtotal_cents x volume_discount_pct / 100), and
 * total_cents = subtotal_cents - discount_cents. Per-piece amounts are whole cents.
 */
export function priceBatch(input: BatchPriceInput): BatchPrice {
  const per = basePerPieceCents(input.mailType, input.mailingClass, input.pageCount, input.duplex);
  const color = input.color ? COLOR_SURCHARGE_CENTS : 0;
  const effective = per + color;
  const pct = volumeDiscountPct(input.pieces);
  const subtotal = effective * input.pieces;
  const discount = roundHalfUpPercent(subtotal * pct);
  return {
    per_piece_cents: per,
    color_surcharge_cents: color,
    effective_per_piece_cents: effective,
    volume_discount_pct: pct,
    subtotal_cents: subtotal,
    discount_cents: discount,
    total_cents: subtotal - discount,
  };
}

/**
 * The share of a charge refunded for pieces that were not mailed:
 * floor(charged x unmailed / pieces). Rounding down means partial refunds of one batch
 * can never add up to more than was charged.
 */
export function unmailedRefundCents(chargedCents: number, pieces: number, unmailed: number): number {
  if (pieces <= 0 || unmailed <= 0 || chargedCents <= 0) return 0;
  return Math.floor((chargedCents * Math.min(unmailed, pieces)) / pieces);
}
