// Street lines of a US address written the USPS way (Publication 28): PO boxes, rural and
// highway contract routes, street suffixes and directionals on a line that starts with a
// house number, unit designators, punctuation and accents; each change is listed with why.
// The rest of the offline address check (ZIP, city, state) is address-check.ts.
import {
  DIRECTIONALS,
  STREET_SUFFIXES,
  UNIT_DESIGNATORS_ALONE,
  UNIT_DESIGNATORS_WITH_NUMBER,
} from './usps-publication-28';

export type AddressField = 'line1' | 'line2' | 'city' | 'state' | 'zip';

export interface AddressChange {
  field: AddressField;
  /** The words as written (a whole field for city, state and ZIP). */
  from: string;
  /** What they became; '' when dropped. */
  to: string;
  reason: string;
}

/** Why the check changed a field, as its changes[] say. */
export const REASON = {
  suffix: 'street suffix abbreviated (Publication 28 C1)',
  directional: 'directional abbreviated (Publication 28)',
  unit: 'unit designator abbreviated (Publication 28 C2)',
  poundSpace: 'space after # before the unit number',
  poundAfterDesignator: 'no # after a unit designator',
  poBox: 'PO Box written the USPS way',
  poBoxPound: 'no # before a PO Box number',
  route: 'rural or highway contract route written the USPS way',
  urbanization: 'urbanization written as URB',
  punctuation: 'punctuation removed',
  accents: 'accents removed',
  stateInCity: 'state removed from the city',
  stateCode: 'state written as its USPS code',
  zipPlus4: 'ZIP+4 written as 12345-6789',
  zipLeadingZero: 'leading zero restored (spreadsheets drop it)',
} as const;

/** One stretch of the line as written and what it became, with why when the tables changed it. */
interface Piece {
  from: string;
  to: string;
  reason?: string;
}

export function normaliseLine(field: 'line1' | 'line2', value: string, changes: AddressChange[]): string {
  const words = value.trim().split(/\s+/).filter(Boolean);
  const dropped = words.filter((w) => !wordKey(w));
  const kept = words.filter((w) => wordKey(w));
  const pieces: Piece[] = [...linePieces(kept, kept.map(wordKey)), ...dropped.map((w) => ({ from: w, to: '' }))];
  for (const p of pieces) {
    if (p.to === p.from.toUpperCase()) continue;
    changes.push({
      field,
      from: p.from,
      to: p.to,
      reason: p.reason ?? (withoutAccents(p.from) !== p.from ? REASON.accents : REASON.punctuation),
    });
  }
  return pieces
    .map((p) => p.to)
    .filter(Boolean)
    .join(' ');
}

function linePieces(words: string[], keys: string[]): Piece[] {
  if (!words.length) return [];
  return (
    poBoxPieces(words, keys) ?? routePieces(words, keys) ?? streetPieces(words, keys) ?? otherLinePieces(words, keys)
  );
}

/** Spellings of "PO BOX" at the start of a line, as keys. */
const PO_BOX_SPELLINGS: ReadonlyArray<readonly string[]> = [
  ['POST', 'OFFICE', 'BOX'],
  ['P', 'O', 'BOX'],
  ['PO', 'BOX'],
  ['POBOX'],
  ['POB'],
  ['BOX', 'PO'],
];

function poBoxPieces(words: string[], keys: string[]): Piece[] | undefined {
  const spelling = PO_BOX_SPELLINGS.find((s) => s.every((k, i) => keys[i] === k));
  if (!spelling || keys.length <= spelling.length) return undefined;
  const n = spelling.length;
  const pieces: Piece[] = [{ from: words.slice(0, n).join(' '), to: 'PO BOX', reason: REASON.poBox }];
  let i = n;
  if (keys[i] === '#') pieces.push({ from: words[i++], to: '', reason: REASON.poBoxPound });
  else if (keys[i].startsWith('#')) pieces.push({ from: words[i], to: keys[i++].slice(1), reason: REASON.poBoxPound });
  for (; i < words.length; i++) pieces.push({ from: words[i], to: keys[i] });
  return pieces;
}

/** Rural routes (RR) and highway contract routes (HC) at the start of a line, followed by a number. */
const ROUTE_SPELLINGS: ReadonlyArray<{ keys: readonly string[]; to: string }> = [
  { keys: ['RURAL', 'ROUTE'], to: 'RR' },
  { keys: ['RURAL', 'RTE'], to: 'RR' },
  { keys: ['RFD'], to: 'RR' },
  { keys: ['RR'], to: 'RR' },
  { keys: ['HIGHWAY', 'CONTRACT'], to: 'HC' },
  { keys: ['HWY', 'CONTRACT'], to: 'HC' },
  { keys: ['STAR', 'ROUTE'], to: 'HC' },
  { keys: ['HC'], to: 'HC' },
];

function routePieces(words: string[], keys: string[]): Piece[] | undefined {
  const route = ROUTE_SPELLINGS.find(
    (r) => r.keys.every((k, i) => keys[i] === k) && /^\d/.test(keys[r.keys.length] ?? ''),
  );
  if (!route) return undefined;
  const n = route.keys.length;
  return [
    { from: words.slice(0, n).join(' '), to: route.to, reason: REASON.route },
    ...words.slice(n).map((w, i) => ({ from: w, to: keys[n + i] })),
  ];
}

/** A house number: 1600, 123-45 (Queens), 12B, or a Wisconsin grid number such as N6W23001. */
function isHouseNumber(key: string): boolean {
  return /^\d[0-9A-Z/-]*$/.test(key) || /^[NSEW]\d+[NSEW]\d+$/.test(key);
}

/** A secondary number after a designator: 4B, 12-A, 200, or a single letter. */
function isUnitNumber(key: string): boolean {
  return /^[A-Z0-9]+(?:[-/][A-Z0-9]+)*$/.test(key) && (/\d/.test(key) || key.length === 1);
}

/**
 * A line that starts with a house number: [number [fraction]] [pre-directional] name...
 * [suffix] [post-directional] [unit designator number]...
 */
function streetPieces(words: string[], keys: string[]): Piece[] | undefined {
  if (words.length < 2 || !isHouseNumber(keys[0])) return undefined;
  const pieces: Piece[] = [{ from: words[0], to: keys[0] }];
  let start = 1;
  if (/^\d+\/\d+$/.test(keys[1])) pieces.push({ from: words[1], to: keys[start++] });

  // The unit starts at the first designator after at least one street word.
  let unitAt = words.length;
  for (let j = start + 1; j < words.length; j++) {
    if (startsUnit(keys, j)) {
      unitAt = j;
      break;
    }
  }

  let end = unitAt;
  let post: Piece | undefined;
  // A last directional after the street (PENNSYLVANIA AVE NW). In AVENUE N it is the
  // street's name; it reads the same either way, as the lone AVENUE is then no suffix.
  if (end - start >= 2 && DIRECTIONALS.has(keys[end - 1])) {
    end--;
    post = directionalPiece(words[end], keys[end]);
  }
  let pre: Piece | undefined;
  // A first directional before a name (N MAIN ST), unless it is the name itself (NORTH AVE)
  // or the first of two directional words (EAST WEST HWY).
  if (
    end - start >= 2 &&
    DIRECTIONALS.has(keys[start]) &&
    !DIRECTIONALS.has(keys[start + 1]) &&
    !(end - start === 2 && STREET_SUFFIXES.has(keys[start + 1]))
  ) {
    pre = directionalPiece(words[start], keys[start]);
    start++;
  }
  let suffix: Piece | undefined;
  if (end - start >= 2 && STREET_SUFFIXES.has(keys[end - 1])) {
    end--;
    const to = STREET_SUFFIXES.get(keys[end])!;
    suffix = { from: words[end], to, reason: to !== keys[end] ? REASON.suffix : undefined };
  }

  if (pre) pieces.push(pre);
  for (let j = start; j < end; j++) pieces.push({ from: words[j], to: keys[j] });
  if (suffix) pieces.push(suffix);
  if (post) pieces.push(post);
  pieces.push(...unitPieces(words.slice(unitAt), keys.slice(unitAt)));
  return pieces;
}

function directionalPiece(word: string, key: string): Piece {
  const to = DIRECTIONALS.get(key)!;
  return { from: word, to, reason: to !== key ? REASON.directional : undefined };
}

/** Whether a unit (APT 4B, # 5, REAR) starts at word j of a street line. */
function startsUnit(keys: string[], j: number): boolean {
  const key = keys[j];
  if (key.startsWith('#')) return key.length > 1 || j + 1 < keys.length;
  if (UNIT_DESIGNATORS_WITH_NUMBER.has(key))
    return j + 1 < keys.length && (isUnitNumber(keys[j + 1]) || keys[j + 1].startsWith('#'));
  // REAR, BSMT...: only last (or before another unit) and right after a suffix or directional.
  return (
    UNIT_DESIGNATORS_ALONE.has(key) &&
    (STREET_SUFFIXES.has(keys[j - 1]) || DIRECTIONALS.has(keys[j - 1])) &&
    (j === keys.length - 1 || startsUnit(keys, j + 1))
  );
}

/** Designators and their numbers; anything else in the stretch is only cleaned. */
function unitPieces(words: string[], keys: string[]): Piece[] {
  const pieces: Piece[] = [];
  for (let j = 0; j < words.length; j++) {
    const key = keys[j];
    if (key.startsWith('#')) {
      pieces.push(
        key.length > 1
          ? { from: words[j], to: `# ${key.slice(1)}`, reason: REASON.poundSpace }
          : { from: words[j], to: '#' },
      );
      continue;
    }
    const designator = UNIT_DESIGNATORS_WITH_NUMBER.get(key);
    const next = keys[j + 1];
    if (designator && next !== undefined && (isUnitNumber(next) || next.startsWith('#'))) {
      pieces.push({ from: words[j], to: designator, reason: designator !== key ? REASON.unit : undefined });
      if (next.startsWith('#')) {
        j++;
        pieces.push({ from: words[j], to: next.slice(1), reason: REASON.poundAfterDesignator });
      }
      continue;
    }
    const alone = UNIT_DESIGNATORS_ALONE.get(key);
    if (alone && words.length === 1) {
      pieces.push({ from: words[j], to: alone, reason: alone !== key ? REASON.unit : undefined });
      continue;
    }
    pieces.push({ from: words[j], to: key });
  }
  return pieces;
}

/**
 * A line without a house number (a building name, "APT 4B" in line2, "UNIT 2050 BOX 4190",
 * a Puerto Rico urbanization): units are written the USPS way, other words only cleaned.
 */
function otherLinePieces(words: string[], keys: string[]): Piece[] {
  if (keys[0] === 'URBANIZACION' && words.length > 1) {
    return [{ from: words[0], to: 'URB', reason: REASON.urbanization }, ...unitPieces(words.slice(1), keys.slice(1))];
  }
  return unitPieces(words, keys);
}

// ---- text ----

/** A word as compared and printed: no accents, upper case, no punctuation but # - / & and decimal points. */
function wordKey(word: string): string {
  return withoutAccents(word)
    .toUpperCase()
    .replace(/\.(?!\d)|(?<!\d)\./g, '')
    .replace(/[,;:'’`"“”]/g, '');
}

export function withoutAccents(s: string): string {
  // Plain ASCII (nearly every address) needs no decomposition: this runs for every word.
  return /^[\x00-\x7f]*$/.test(s) ? s : s.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
}

export function collapse(s: string): string {
  return s.trim().replace(/\s+/g, ' ');
}
