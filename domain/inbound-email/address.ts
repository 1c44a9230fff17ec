// US postal addresses in letter text: finds "City, ST 12345" lines, walks up to the
// street line, an optional second line and the name above it, and notes labels such as
// "Remit payment to:" that say whose address it is. Each address gets a confidence and a
// verification status:
//   verified_format  name-independent format checks pass: street with a house number or
//                    PO Box, a known state, a ZIP whose leading digit belongs to that state
//   parsed           every part found, but a format check fails
//   unverified       city, state and ZIP found without a street line
import { toStateCode, ZIP_PATTERN } from '../workflow-safe/us-states';

export type AddressRole = 'reply' | 'recipient' | 'sender' | null;
export type VerificationStatus = 'unverified' | 'parsed' | 'verified_format';

export interface ParsedAddress {
  name: string | null;
  line1: string | null;
  line2: string | null;
  city: string;
  state: string;
  postal_code: string;
  country: 'US';
  /** What a label before the address says it is. */
  role: AddressRole;
  /** Line number of the city/state/ZIP line. */
  line_index: number;
  confidence: number;
  verification_status: VerificationStatus;
}

/** Leading ZIP digits used by each state (coarse national areas). */
const ZIP_AREAS: Record<string, string> = {
  CT: '0',
  MA: '0',
  ME: '0',
  NH: '0',
  NJ: '0',
  RI: '0',
  VT: '0',
  PR: '0',
  VI: '0',
  AE: '0',
  NY: '01',
  PA: '1',
  DE: '1',
  DC: '2',
  MD: '2',
  NC: '2',
  SC: '2',
  VA: '2',
  WV: '2',
  AL: '3',
  FL: '3',
  GA: '3',
  MS: '3',
  TN: '3',
  AA: '3',
  IN: '4',
  KY: '4',
  MI: '4',
  OH: '4',
  IA: '5',
  MN: '5',
  MT: '5',
  ND: '5',
  SD: '5',
  WI: '5',
  IL: '6',
  KS: '6',
  MO: '6',
  NE: '6',
  AR: '7',
  LA: '7',
  OK: '7',
  TX: '78',
  AZ: '8',
  CO: '8',
  ID: '8',
  NM: '8',
  NV: '8',
  UT: '8',
  WY: '8',
  AK: '9',
  CA: '9',
  HI: '9',
  OR: '9',
  WA: '9',
  AP: '9',
  GU: '9',
  AS: '9',
  MP: '9',
  FM: '9',
  MH: '9',
  PW: '9',
};

export function zipMatchesState(zip: string, state: string): boolean {
  const areas = ZIP_AREAS[state];
  return Boolean(areas && areas.includes(zip[0]));
}

const STREET = /^(\d+[A-Za-z]?(?:-\d+)?\s+\S.*|P\.?\s*O\.?\s*Box\s+\d+.*|One\s+[A-Z]\S*.*)$/i;
const SECOND_LINE =
  /^(suite|ste\.?|apt\.?|apartment|unit|#|floor|fl\.?|room|rm\.?|bldg\.?|building|dept\.?|department)\b.*$/i;
const REPLY_LABEL =
  /(remit(?:tance)?(?: payments?)?(?: to)?|send (?:your )?payments? to|mail (?:your )?payments? to|payment address|make checks payable to|reply to|respond to|send correspondence to|correspondence address|return to)\s*:?/i;
const RECIPIENT_LABEL = /^(to|bill to|sold to|ship to|service address|addressee|mailing address)\s*:?/i;
const SENDER_LABEL = /^(from|sender|return address)\s*:?/i;

interface CityLine {
  city: string;
  state: string;
  zip: string;
  /** Text before the city on the same line ("123 Main St, Springfield, IL 62701"). */
  street: string | null;
}

/** "Springfield, IL 62701", "Springfield IL 62701-1234", "New York, New York 10001". */
export function parseCityStateZip(line: string): CityLine | null {
  const m = /^(.*?)[\s,]+(\d{5}(?:-\d{4})?)$/.exec(line.trim());
  if (!m || !ZIP_PATTERN.test(m[2])) return null;
  const head = m[1].trim().replace(/,$/, '');
  let city: string | null = null;
  let state: string | null = null;
  let street: string | null = null;
  const parts = head
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length >= 2 && toStateCode(parts[parts.length - 1])) {
    state = toStateCode(parts[parts.length - 1]);
    city = parts[parts.length - 2];
    street = parts.length > 2 ? parts.slice(0, -2).join(', ') : null;
  } else {
    const words = head.replace(/,/g, ' ').split(/\s+/).filter(Boolean);
    for (let n = Math.min(3, words.length - 1); n >= 1; n--) {
      const candidate = words.slice(-n).join(' ');
      // A two-letter code must be written in capitals ("in", "or", "me" are words).
      const code = candidate.length === 2 && candidate !== candidate.toUpperCase() ? null : toStateCode(candidate);
      if (code) {
        state = code;
        const rest = parts.length >= 2 ? parts[parts.length - 1] : words.slice(0, -n).join(' ');
        city = parts.length >= 2 ? rest.split(/\s+/).slice(0, -n).join(' ') : rest;
        if (parts.length >= 2) street = parts.slice(0, -1).join(', ');
        break;
      }
    }
  }
  if (!city || !state || !/^[A-Za-z][A-Za-z .'-]{1,40}$/.test(city)) return null;
  if (street && !STREET.test(street)) street = null;
  return { city: titleCase(city), state, zip: m[2], street };
}

function titleCase(s: string): string {
  if (s !== s.toUpperCase()) return s;
  return s.toLowerCase().replace(/\b[a-z]/g, (c) => c.toUpperCase());
}

function labelRole(line: string): AddressRole {
  if (REPLY_LABEL.test(line)) return 'reply';
  if (RECIPIENT_LABEL.test(line)) return 'recipient';
  if (SENDER_LABEL.test(line)) return 'sender';
  return null;
}

function stripLabel(line: string): string {
  return line.replace(REPLY_LABEL, '').replace(RECIPIENT_LABEL, '').replace(SENDER_LABEL, '').trim();
}

function plausibleName(line: string): boolean {
  const t = line.trim();
  if (!t || t.length > 60) return false;
  if (STREET.test(t) || SECOND_LINE.test(t) || parseCityStateZip(t)) return false;
  const letters = (t.match(/[A-Za-z]/g) ?? []).length;
  const digits = (t.match(/\d/g) ?? []).length;
  if (letters < 3 || digits > letters / 3) return false;
  // A sentence ("Please send it to the office below.") is not a name.
  if ((t.match(/(^|\s)[a-z]/g) ?? []).length >= 3) return false;
  return !/[:@]/.test(t) && !/^(dear|re|subject|date|page|phone|tel|fax|email|www\.)\b/i.test(t);
}

/** Every US address in the text, in reading order. */
export function findAddresses(text: string): ParsedAddress[] {
  const lines = text.split(/\r?\n/).map((l) => l.replace(/\s+/g, ' ').trim());
  const out: ParsedAddress[] = [];
  for (let i = 0; i < lines.length; i++) {
    const city = parseCityStateZip(lines[i]);
    if (!city) continue;
    let cursor = i - 1;
    let line1: string | null = city.street;
    let line2: string | null = null;
    let role: AddressRole = null;
    if (!line1) {
      if (
        cursor >= 0 &&
        SECOND_LINE.test(lines[cursor]) &&
        cursor - 1 >= 0 &&
        STREET.test(stripLabel(lines[cursor - 1]))
      ) {
        line2 = lines[cursor];
        cursor--;
      }
      if (cursor >= 0 && STREET.test(stripLabel(lines[cursor]))) {
        const street = lines[cursor];
        role = labelRole(street);
        line1 = stripLabel(street);
        // "123 Main St Suite 200" keeps the suite on line 2.
        const suite = /^(.*?\S)\s*,?\s+((?:suite|ste\.?|apt\.?|unit|#)\s*\S+)$/i.exec(line1);
        if (suite && !line2) {
          line1 = suite[1];
          line2 = suite[2];
        }
        cursor--;
      }
    }
    let name: string | null = null;
    // OCR often sets the name apart from the street by one blank line.
    if (line1 && cursor >= 1 && lines[cursor] === '' && lines[cursor - 1] !== '') cursor--;
    if (line1 && cursor >= 0) {
      const candidate = lines[cursor];
      const stripped = stripLabel(candidate);
      if (!role) role = labelRole(candidate);
      if (plausibleName(stripped)) {
        name = stripped;
        cursor--;
      }
    }
    // A label alone on the line above the block ("Remit payment to:").
    for (let k = cursor; !role && k >= Math.max(0, cursor - 1); k--) {
      if (lines[k] && labelRole(lines[k]) && stripLabel(lines[k]) === '') role = labelRole(lines[k]);
    }

    const hasNumber = Boolean(line1 && /^(\d|P\.?\s*O\.?\s*Box|One\s)/i.test(line1));
    const zipOk = zipMatchesState(city.zip, city.state);
    let confidence = 0.45;
    if (line1) confidence += 0.25;
    if (name) confidence += 0.1;
    if (zipOk) confidence += 0.1;
    if (role) confidence += 0.05;
    const verification: VerificationStatus = !line1 ? 'unverified' : hasNumber && zipOk ? 'verified_format' : 'parsed';
    out.push({
      name,
      line1,
      line2,
      city: city.city,
      state: city.state,
      postal_code: city.zip,
      country: 'US',
      role,
      line_index: i,
      confidence: Math.round(Math.min(0.95, confidence) * 1000) / 1000,
      verification_status: verification,
    });
  }
  return out;
}

export function formatAddress(
  a: Pick<ParsedAddress, 'name' | 'line1' | 'line2' | 'city' | 'state' | 'postal_code'>,
): string {
  return [a.name, a.line1, a.line2, `${a.city}, ${a.state} ${a.postal_code}`].filter(Boolean).join('\n');
}
