// The offline check of a US recipient address before a letter goes out: writes the
// address the USPS way (upper case, Publication 28 abbreviations, no punctuation), says
// what it changed, and compares the ZIP with the city and state in the ZIP directory.
// It never calls out: "likely" means consistent on paper, not confirmed deliverable.
//
// Choices worth knowing:
// - A street suffix is abbreviated only where a suffix stands: the last word of the street,
//   or the word before a post-directional or a unit ("1211 AVENUE OF THE AMERICAS" keeps
//   its AVENUE; "1 AVENUE N" in Brooklyn keeps both words).
// - Lines are never merged or moved: a unit in line1 stays there (USPS prints it on the
//   delivery line), and a street in line2 is normalised where it is. Only a line that
//   starts with a house number gets suffixes and directionals abbreviated.
// - Upper-casing and spacing alone are not listed as changes; everything else is.
// - The directory names one city per ZIP, so a USPS "acceptable" alternate name (e.g.
//   BLOOMINGTON for 55425, whose city is MINNEAPOLIS) reads as a mismatch; the warning says
//   when the written city is a neighbour and may be such a name.
// - A warning that something is wrong makes the address "doubtful", even when a field is
//   also missing; with nothing wrong, a missing field makes it "unknown".
import { toStateCode } from '../workflow-safe/us-states';
import type { MailAddress } from './address';
import { collapse, normaliseLine, REASON, withoutAccents } from './street-lines';
import type { AddressChange, AddressField } from './street-lines';
import { DIRECTIONALS, STREET_SUFFIXES } from './usps-publication-28';
import { lookupZip, statesOfZipPrefix, zipsOfCity, type ZipPlace } from './zip-directory';

export type { AddressChange, AddressField } from './street-lines';

export type Deliverability = 'likely' | 'doubtful' | 'unknown';

export type AddressWarningCode =
  | 'not_checked'
  | 'missing_field'
  | 'state_unknown'
  | 'zip_invalid'
  | 'zip_unknown'
  | 'zip_state_mismatch'
  | 'zip_city_mismatch'
  | 'military_city'
  | 'military_zip_mismatch'
  | 'military_city_state'
  | 'country_state_mismatch';

/** The address lines the check reads: an outbound address without its name and company. */
export type AddressCheckInput = Omit<MailAddress, 'name' | 'company'>;

export interface NormalizedUsAddress {
  line1: string;
  line2: string | null;
  city: string;
  state: string;
  zip: string;
}

export interface AddressWarning {
  code: AddressWarningCode;
  field: AddressField | 'country';
  /** One sentence naming the values, e.g. "ZIP 10001 belongs to NEW YORK, NY, not BOSTON". */
  message: string;
}

export interface AddressCheck {
  deliverability: Deliverability;
  normalized: NormalizedUsAddress;
  changes: AddressChange[];
  warnings: AddressWarning[];
}

/** Codes that say the address is probably wrong (the rest say it could not be judged). */
const DOUBTFUL_CODES: ReadonlySet<AddressWarningCode> = new Set<AddressWarningCode>([
  'state_unknown',
  'zip_invalid',
  'zip_unknown',
  'zip_state_mismatch',
  'zip_city_mismatch',
  'military_city',
  'military_zip_mismatch',
  'military_city_state',
  'country_state_mismatch',
]);

const FIELD_ORDER: readonly AddressField[] = ['line1', 'line2', 'city', 'state', 'zip'];

/** recipient_country values that mean the United States itself. */
const US_COUNTRY_NAMES: ReadonlySet<string> = new Set([
  'US',
  'USA',
  'U S',
  'U S A',
  'UNITED STATES',
  'UNITED STATES OF AMERICA',
]);

/** Territories and freely associated states with US ZIPs: their own country code is the same check. */
const ZIP_TERRITORIES: ReadonlySet<string> = new Set(['PR', 'VI', 'GU', 'AS', 'MP', 'FM', 'MH', 'PW']);

const MILITARY_STATES: ReadonlySet<string> = new Set(['AA', 'AE', 'AP']);
const MILITARY_CITIES: ReadonlySet<string> = new Set(['APO', 'FPO', 'DPO']);

/**
 * ZIP ranges of the military "states" and the territories, inclusive; the first match
 * wins. Other ZIPs are placed by the directory's own 3-digit prefixes.
 */
const ZIP_RANGES: ReadonlyArray<{ state: string; from: number; to: number; written: string }> = [
  { state: 'AA', from: 34000, to: 34099, written: '340xx' },
  { state: 'AE', from: 9000, to: 9899, written: '090xx-098xx' },
  { state: 'AP', from: 96200, to: 96699, written: '962xx-966xx' },
  { state: 'VI', from: 800, to: 899, written: '008xx' },
  { state: 'PR', from: 600, to: 799, written: '006xx-007xx' },
  { state: 'PR', from: 900, to: 999, written: '009xx' },
  { state: 'AS', from: 96799, to: 96799, written: '96799' },
  { state: 'PW', from: 96940, to: 96940, written: '96940' },
  { state: 'FM', from: 96941, to: 96944, written: '96941-96944' },
  { state: 'MP', from: 96950, to: 96952, written: '9695x' },
  { state: 'MH', from: 96960, to: 96970, written: '96960-96970' },
  { state: 'GU', from: 96910, to: 96932, written: '96910-96932' },
];

/**
 * Names USPS accepts for a ZIP that the directory lists under another city, by state:
 * city key -> the directory's city key. Only names too common to flag.
 */
const ACCEPTED_CITY_NAMES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  NY: { NEWYORKCITY: 'NEWYORK', NYC: 'NEWYORK' },
  GU: { AGANA: 'HAGATNA' },
  VI: { CHARLOTTEAMALIE: 'STTHOMAS' },
  PW: { KOROR: 'PALAU' },
};

/**
 * Words a city may be written either way, compared in their short form: SAINT/ST and the
 * like, plus the C1 and directional abbreviations USPS uses in long city names
 * (REHOBOTH BCH, COLORADO SPGS, N HOLLYWOOD).
 */
const CITY_WORD_FORMS: Readonly<Record<string, string>> = { SAINT: 'ST', SAINTE: 'STE', TOWNSHIP: 'TWP' };

/** Checks and normalises a US (or US territory, APO/FPO/DPO) address; see the file comment. */
export function checkUsAddress(input: AddressCheckInput): AddressCheck {
  const country = countryOf(input.country);
  if (!country.checked) {
    return {
      deliverability: 'unknown',
      normalized: {
        line1: input.line1,
        line2: input.line2 ?? null,
        city: input.city,
        state: input.state,
        zip: input.zip,
      },
      changes: [],
      warnings: [
        {
          code: 'not_checked',
          field: 'country',
          message: `country ${country.code} is not checked: the offline address check covers US addresses only`,
        },
      ],
    };
  }

  const changes: AddressChange[] = [];
  const warnings: AddressWarning[] = [];
  const warn = (code: AddressWarningCode, field: AddressWarning['field'], message: string) =>
    warnings.push({ code, field, message });

  const line1 = normaliseLine('line1', input.line1 ?? '', changes);
  const line2 = input.line2?.trim() ? normaliseLine('line2', input.line2, changes) : null;
  const state = normaliseState(input.state ?? '', changes);
  const city = normaliseCity(input.city ?? '', state.code, changes);
  const zip = normaliseZipField(input.zip ?? '', state.code, changes);
  changes.sort((a, b) => FIELD_ORDER.indexOf(a.field) - FIELD_ORDER.indexOf(b.field));

  const missing = (
    [
      ['line1', line1],
      ['city', city],
      ['state', state.text],
      ['zip', zip.text],
    ] as const
  ).filter(([, v]) => !v);
  for (const [field] of missing)
    warn(
      'missing_field',
      field,
      `${field === 'line1' ? 'the street line' : field === 'zip' ? 'the ZIP' : `the ${field}`} is missing`,
    );
  if (state.text && !state.code)
    warn('state_unknown', 'state', `${state.text} is not a US state, territory or military state code`);
  if (zip.text && !zip.zip5) warn('zip_invalid', 'zip', `ZIP ${zip.text} is not a 5-digit ZIP or ZIP+4`);
  if (country.territory && state.code && state.code !== country.territory) {
    warn('country_state_mismatch', 'state', `the country is ${country.territory} but the state is ${state.code}`);
  }
  if (state.code && zip.zip5) checkZipAgainstCityAndState(zip.zip5, state.code, city, warn);

  const deliverability: Deliverability = warnings.some((w) => DOUBTFUL_CODES.has(w.code))
    ? 'doubtful'
    : missing.length
      ? 'unknown'
      : 'likely';
  return {
    deliverability,
    normalized: { line1, line2, city, state: state.code ?? state.text, zip: zip.text },
    changes,
    warnings,
  };
}

/** The check's warnings as dry-run warning lines; "not checked" (a foreign address) is no warning there. */
export function addressCheckWarnings(check: AddressCheck): string[] {
  return check.warnings.filter((w) => w.code !== 'not_checked').map((w) => `Recipient address: ${w.message}`);
}

// ---- consistency of ZIP, city and state ----

function checkZipAgainstCityAndState(
  zip5: string,
  state: string,
  city: string,
  warn: (code: AddressWarningCode, field: AddressWarning['field'], message: string) => void,
): void {
  const militaryCity = MILITARY_CITIES.has(cityKey(city));
  const place = lookupZip(zip5);

  if (MILITARY_STATES.has(state)) {
    if (city && !militaryCity)
      warn('military_city', 'city', `military addresses in ${state} take APO, FPO or DPO as the city, not ${city}`);
    const range = zipRange(zip5);
    if (range?.state !== state) {
      const own = ZIP_RANGES.find((r) => r.state === state);
      warn(
        'military_zip_mismatch',
        'zip',
        `ZIP ${zip5} is not an ${state} ZIP (${state} uses ${own?.written ?? 'other ZIPs'})`,
      );
      return;
    }
    if (!place) warn('zip_unknown', 'zip', `ZIP ${zip5} is not in the ZIP directory`);
    else if (militaryCity && !sameCity(city, state, place))
      warn('zip_city_mismatch', 'city', `ZIP ${zip5} is an ${place.city} ZIP, not ${city}`);
    return;
  }

  if (militaryCity) warn('military_city_state', 'state', `${city} addresses take state AA, AE or AP, not ${state}`);

  if (!place) {
    warn('zip_unknown', 'zip', `ZIP ${zip5} is not in the ZIP directory`);
    const range = zipRange(zip5);
    const owners = range ? [range.state] : statesOfZipPrefix(zip5.slice(0, 3));
    if (owners.length && !owners.includes(state)) {
      warn(
        'zip_state_mismatch',
        'zip',
        `ZIPs starting ${zip5.slice(0, 3)} belong to ${owners.join(' or ')}, not ${state}`,
      );
    }
    return;
  }

  if (place.state !== state) {
    if (!city || sameCity(city, place.state, place)) {
      warn('zip_state_mismatch', 'state', `ZIP ${zip5} is in ${place.state}, not ${state}`);
    } else {
      const own = militaryCity ? [] : zipsOfCity(state, city, cityKey);
      warn(
        'zip_state_mismatch',
        'zip',
        `ZIP ${zip5} belongs to ${place.city}, ${place.state}, not ${city}, ${state}${own.length ? ` (${city}, ${state} ZIPs include ${own[0]})` : ''}`,
      );
    }
    return;
  }

  if (city && !militaryCity && !sameCity(city, state, place)) {
    let message = `ZIP ${zip5} belongs to ${place.city}, ${place.state}, not ${city}`;
    const own = zipsOfCity(state, city, cityKey);
    const nearby = own.find((z) => z.slice(0, 3) === zip5.slice(0, 3));
    if (nearby)
      message += ` (${city} is nearby, ZIP ${nearby}: it may be a name USPS accepts for ${zip5}, or the ZIP is wrong)`;
    else if (own.length) message += ` (${city}, ${state} ZIPs include ${own[0]})`;
    warn('zip_city_mismatch', 'city', message);
  }
}

function zipRange(zip5: string): (typeof ZIP_RANGES)[number] | undefined {
  const n = Number(zip5);
  return ZIP_RANGES.find((r) => n >= r.from && n <= r.to);
}

function sameCity(city: string, state: string, place: ZipPlace): boolean {
  const written = cityKey(city);
  const wanted = cityKey(place.city);
  return written === wanted || ACCEPTED_CITY_NAMES[state]?.[written] === wanted;
}

/** A city name in the form compared: no case, accents, punctuation or spaces; SAINT = ST, FORT = FT and so on. */
function cityKey(name: string): string {
  return withoutAccents(name)
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .map((w) => CITY_WORD_FORMS[w] ?? STREET_SUFFIXES.get(w) ?? DIRECTIONALS.get(w) ?? w)
    .join('');
}

// ---- country, state, city and ZIP fields ----

type CountryCheck = { checked: true; territory?: string } | { checked: false; code: string };

function countryOf(value: string | null | undefined): CountryCheck {
  const name = (value ?? '').toUpperCase().replace(/\./g, ' ').replace(/\s+/g, ' ').trim();
  if (!name || US_COUNTRY_NAMES.has(name)) return { checked: true };
  const code = name.length === 2 ? name : toStateCode(name);
  if (code && ZIP_TERRITORIES.has(code)) return { checked: true, territory: code };
  return { checked: false, code: name };
}

function normaliseState(value: string, changes: AddressChange[]): { code?: string; text: string } {
  const written = collapse(value);
  if (!written) return { text: '' };
  const code = toStateCode(written.replace(/\./g, '').replace(/\s+/g, ' ').trim()) ?? undefined;
  if (!code) return { text: written.toUpperCase() };
  if (code !== written.toUpperCase()) {
    changes.push({
      field: 'state',
      from: written,
      to: code,
      reason: written.replace(/[.\s]/g, '').length > 2 ? REASON.stateCode : REASON.punctuation,
    });
  }
  return { code, text: code };
}

function normaliseCity(value: string, state: string | undefined, changes: AddressChange[]): string {
  const written = collapse(value);
  const reasons: string[] = [];
  let city = withoutAccents(written);
  if (city !== written) reasons.push(REASON.accents);
  const plain = city;
  // "O'Fallon" -> O FALLON, "Winston-Salem" -> WINSTON SALEM, as the USPS city list has them.
  city = city
    .toUpperCase()
    .replace(/\.(?!\d)/g, '')
    .replace(/[,;:'’`-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (city !== plain.toUpperCase()) reasons.push(REASON.punctuation);
  const words = city.split(' ');
  if (state && words.length > 1 && words[words.length - 1] === state) {
    city = words.slice(0, -1).join(' ');
    reasons.push(REASON.stateInCity);
  }
  if (reasons.length) changes.push({ field: 'city', from: written, to: city, reason: reasons.join('; ') });
  return city;
}

function normaliseZipField(
  value: string,
  state: string | undefined,
  changes: AddressChange[],
): { text: string; zip5?: string } {
  const written = collapse(value);
  const full = /^(\d{5})(?:[- ]?(\d{4}))?$/.exec(written);
  if (full) {
    const zip = full[2] ? `${full[1]}-${full[2]}` : full[1];
    if (zip !== written) changes.push({ field: 'zip', from: written, to: zip, reason: REASON.zipPlus4 });
    return { text: zip, zip5: full[1] };
  }
  // A spreadsheet turns 02116 into 2116: put the zeros back only when the directory then
  // places that ZIP in the address's own state.
  const short = /^(\d{3,4})(?:-(\d{4}))?$/.exec(written);
  if (short && state) {
    const zip5 = short[1].padStart(5, '0');
    if (lookupZip(zip5)?.state === state) {
      const zip = short[2] ? `${zip5}-${short[2]}` : zip5;
      changes.push({ field: 'zip', from: written, to: zip, reason: REASON.zipLeadingZero });
      return { text: zip, zip5 };
    }
  }
  return { text: written.toUpperCase() };
}
