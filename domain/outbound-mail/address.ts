// Outbound mail addresses: the ZIP, state and country rules a piece must meet, the
// printed form of an address, and the normalised form that duplicate protection
// compares (so "123 Main Street" and "123 MAIN ST." are the same recipient).
import { isStateCode } from '../workflow-safe/us-states';
import { DOMESTIC_COUNTRIES } from './pricing';

export interface MailAddress {
  name?: string | null;
  company?: string | null;
  line1: string;
  line2?: string | null;
  city: string;
  state: string;
  zip: string;
  country?: string | null;
}

/** 12345, 12345-6789 or 123456789 -> 12345 / 12345-6789; anything else -> null. */
export function normaliseZip(value: string): string | null {
  const m = /^(\d{5})(?:-?(\d{4}))?$/.exec(value.trim());
  if (!m) return null;
  return m[2] ? `${m[1]}-${m[2]}` : m[1];
}

/** A 2-letter USPS state code in any case -> upper case; anything else -> null. */
export function normaliseStateCode(value: string): string | null {
  const code = value.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(code) && isStateCode(code) ? code : null;
}

/** ISO 3166-1 alpha-2 country code in any case -> upper case; null when not a 2-letter code. */
export function normaliseCountry(value: string): string | null {
  const code = value.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(code) ? code : null;
}

/**
 * Destinations the service mails to: recipient_state and recipient_zip are US formats,
 * so the US and the territories and freely associated states that use US ZIP codes.
 */
export function isServedCountry(code: string): boolean {
  return DOMESTIC_COUNTRIES.includes(code);
}

/** The lines as printed: name, then company (between name and street), street, city line. */
export function formatAddressLines(a: MailAddress): string[] {
  const lines = [a.name, a.company, a.line1, a.line2].filter((l): l is string => Boolean(l && l.trim()));
  lines.push(`${a.city}, ${a.state} ${a.zip}`);
  if (a.country && a.country !== 'US') lines.push(a.country);
  return lines;
}

const WORD_ABBREVIATIONS: Record<string, string> = {
  street: 'st',
  avenue: 'ave',
  av: 'ave',
  road: 'rd',
  boulevard: 'blvd',
  drive: 'dr',
  lane: 'ln',
  court: 'ct',
  place: 'pl',
  square: 'sq',
  terrace: 'ter',
  parkway: 'pkwy',
  highway: 'hwy',
  circle: 'cir',
  trail: 'trl',
  suite: 'ste',
  apartment: 'apt',
  building: 'bldg',
  floor: 'fl',
  room: 'rm',
  unit: 'unit',
  number: 'no',
  north: 'n',
  south: 's',
  east: 'e',
  west: 'w',
  northeast: 'ne',
  northwest: 'nw',
  southeast: 'se',
  southwest: 'sw',
  'post office box': 'po box',
  'p o box': 'po box',
};

function normaliseText(value: string | null | undefined): string {
  if (!value) return '';
  let s = value.normalize('NFKC').toLowerCase();
  s = s.replace(/#/g, ' unit ');
  s = s
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  s = s.replace(/\bp o box\b|\bpost office box\b/g, 'po box');
  return s
    .split(' ')
    .map((w) => WORD_ABBREVIATIONS[w] ?? w)
    .join(' ');
}

/**
 * The recipient as duplicate protection sees it: case, punctuation, spacing and common
 * street-word spellings do not matter; the ZIP compares on its first five digits.
 */
export function recipientFingerprint(a: MailAddress): string {
  const zip5 = (normaliseZip(a.zip) ?? a.zip.trim()).slice(0, 5);
  return [
    normaliseText(a.name),
    normaliseText(a.company),
    normaliseText(a.line1),
    normaliseText(a.line2),
    normaliseText(a.city),
    a.state.trim().toUpperCase(),
    zip5,
    (a.country ?? 'US').trim().toUpperCase(),
  ].join('|');
}
