// Recipients CSV of a batch: decoding, delimiter and header detection, per-row checks,
// normalisation and duplicate removal. Pure (no I/O): takes the uploaded bytes, returns
// the billable recipients and the skipped rows with their reasons. File-level problems
// (too big, too many rows, unreadable, missing columns) are a 400 naming the field.
//
// Row numbers (`row`) are spreadsheet row numbers: the header is row 1, the first data
// row is row 2, blank lines count as rows, and a quoted field with line breaks keeps its
// record on one row, exactly as a spreadsheet program shows the file.
import { isUtf8 } from 'node:buffer';
import { parse } from 'csv-parse/sync';
import iconv from 'iconv-lite';
import { errors, FieldError } from '../shared/errors';
import { toStateCode } from '../workflow-safe/us-states';
import { hiddenCharacterProblem } from '../workflow-safe/visible-text';

export const RECIPIENTS_CSV_MAX_BYTES = 5 * 1024 * 1024;
export const RECIPIENTS_CSV_MAX_ROWS = 10000;

export const RECIPIENT_FIELDS = ['name', 'line1', 'line2', 'city', 'state', 'zip'] as const;
export type RecipientField = (typeof RECIPIENT_FIELDS)[number];
export type ColumnMap = Partial<Record<RecipientField, string>>;

/** The spec's column names, used in messages and skipped_rows[].field. */
export const CSV_COLUMN_NAMES: Record<RecipientField, string> = {
  name: 'name',
  line1: 'address',
  line2: 'address2',
  city: 'city',
  state: 'state',
  zip: 'zip',
};

/** Accepted header spellings, compared after normaliseHeader (case, spaces, _ - . # / ignored). */
export const HEADER_ALIASES: Record<RecipientField, string[]> = {
  name: ['name', 'fullname', 'recipient', 'recipientname', 'contactname', 'addressee', 'mailingname'],
  line1: [
    'address',
    'address1',
    'addressline1',
    'line1',
    'street',
    'street1',
    'streetaddress',
    'streetaddress1',
    'addr1',
    'mailingaddress',
    'deliveryaddress',
  ],
  line2: [
    'address2',
    'addressline2',
    'line2',
    'street2',
    'streetaddress2',
    'addr2',
    'apt',
    'apartment',
    'suite',
    'unit',
    'aptsuite',
    'aptunit',
  ],
  city: ['city', 'town', 'locality', 'citytown'],
  state: ['state', 'st', 'province', 'region', 'stateprovince', 'statecode'],
  zip: ['zip', 'zipcode', 'zip5', 'postalcode', 'postcode', 'postal', 'zippostalcode', 'zip4', 'zipplus4'],
};
const FIRST_NAME_ALIASES = ['firstname', 'first', 'givenname', 'fname'];
const LAST_NAME_ALIASES = ['lastname', 'last', 'surname', 'familyname', 'lname'];

const REQUIRED: RecipientField[] = ['name', 'line1', 'city', 'state', 'zip'];

export interface Recipient {
  /** Spreadsheet row number of the source record (header = row 1). */
  row: number;
  name: string;
  line1: string;
  line2: string | null;
  city: string;
  /** Two-letter USPS code. */
  state: string;
  /** 12345 or 12345-6789. */
  zip: string;
  /** Merged batches: every column's value by its header as written (trimmed). */
  variables?: Record<string, string>;
}

export interface SkippedRow {
  row: number;
  field: string;
  value: string;
  error: string;
}

export interface RecipientsParseResult {
  /** Data rows in the file (blank lines and the header not counted). */
  total_rows: number;
  valid: number;
  skipped: number;
  skipped_rows: SkippedRow[];
  recipients: Recipient[];
  encoding: 'utf-8' | 'utf-8-bom' | 'utf-16' | 'windows-1252';
  delimiter: ',' | ';' | '\t';
}

export function normaliseHeader(header: string): string {
  return header
    .normalize('NFKC')
    .replace(/^\uFEFF/, '')
    .toLowerCase()
    .replace(/[\s_\-.#/]+/g, '');
}

/**
 * Bytes to text: a UTF-8 BOM or valid UTF-8 is read as UTF-8; a UTF-16 BOM (spreadsheet
 * "Unicode text" exports) as UTF-16; anything else as Windows-1252, the encoding of
 * spreadsheets exported on Western-European Windows systems.
 */
export function decodeCsv(data: Buffer): { text: string; encoding: RecipientsParseResult['encoding'] } {
  if (data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) {
    return { text: data.subarray(3).toString('utf8'), encoding: 'utf-8-bom' };
  }
  if (data.length >= 2 && data[0] === 0xff && data[1] === 0xfe)
    return { text: iconv.decode(data, 'utf16le'), encoding: 'utf-16' };
  if (data.length >= 2 && data[0] === 0xfe && data[1] === 0xff)
    return { text: iconv.decode(data, 'utf16be'), encoding: 'utf-16' };
  if (isUtf8(data)) return { text: data.toString('utf8'), encoding: 'utf-8' };
  return { text: iconv.decode(data, 'win1252'), encoding: 'windows-1252' };
}

/** The delimiter that occurs most often (outside quotes) in the header line; comma on a tie or none. */
export function detectDelimiter(text: string): ',' | ';' | '\t' {
  const counts = { ',': 0, ';': 0, '\t': 0 };
  let inQuotes = false;
  let seenContent = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') inQuotes = !inQuotes;
    else if (!inQuotes && (c === '\n' || c === '\r')) {
      if (seenContent) break; // end of the header line; leading blank lines are skipped
    } else if (!inQuotes && (c === ',' || c === ';' || c === '\t')) {
      counts[c]++;
      seenContent = true;
    } else if (c.trim() !== '') seenContent = true;
  }
  if (counts[';'] > counts[','] && counts[';'] >= counts['\t']) return ';';
  if (counts['\t'] > counts[','] && counts['\t'] > counts[';']) return '\t';
  return ',';
}

/** Trim, drop a spreadsheet's ="..." text guard, and collapse inner whitespace. */
function cleanValue(raw: string | undefined): string {
  if (raw === undefined) return '';
  let v = raw.trim();
  const guarded = /^="(.*)"$/s.exec(v);
  if (guarded) v = guarded[1];
  return v.replace(/[ \t\u00a0]+/g, ' ').trim();
}

function singleLine(v: string): string {
  return v
    .split(/\r\n|\r|\n/)
    .map((s) => s.trim())
    .filter(Boolean)
    .join(' ');
}

export type ZipCheck = { ok: true; zip: string } | { ok: false; error: string };

/** 12345 and 12345-6789 (spaces ignored, 9 digits become 5-4); 4-digit ZIPs are refused as a dropped leading zero. */
export function normaliseZip(raw: string): ZipCheck {
  const s = raw.replace(/\s+/g, '');
  if (/^\d{5}$/.test(s) || /^\d{5}-\d{4}$/.test(s)) return { ok: true, zip: s };
  if (/^\d{9}$/.test(s)) return { ok: true, zip: `${s.slice(0, 5)}-${s.slice(5)}` };
  const dropped = /^(\d{4})(?:-?(\d{4}))?$/.exec(s);
  if (dropped) {
    const fixed = `0${dropped[1]}${dropped[2] ? `-${dropped[2]}` : ''}`;
    return { ok: false, error: `4-digit ZIP: leading zero probably dropped by a spreadsheet (did you mean ${fixed}?)` };
  }
  return { ok: false, error: 'ZIP must be 5 digits or ZIP+4 (12345 or 12345-6789)' };
}

/** Duplicate key part: case, whitespace and punctuation do not matter. */
function dedupePart(v: string): string {
  return v
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

interface ColumnIndexes {
  fields: Partial<Record<RecipientField, number>>;
  firstName?: number;
  lastName?: number;
}

function resolveColumns(header: string[], columnMap: ColumnMap | undefined): ColumnIndexes {
  const normalised = header.map((h) => normaliseHeader(cleanValue(h)));
  const fields: Partial<Record<RecipientField, number>> = {};
  const mapErrors: FieldError[] = [];
  for (const field of RECIPIENT_FIELDS) {
    const wanted = columnMap?.[field];
    if (wanted === undefined) continue;
    let index = header.findIndex((h) => cleanValue(h) === wanted.trim());
    if (index < 0) index = normalised.indexOf(normaliseHeader(wanted));
    if (index < 0) {
      mapErrors.push({
        path: `column_map.${field}`,
        message: `no column "${wanted}" in the CSV header (columns: ${header.map((h) => cleanValue(h)).join(', ')})`,
      });
    } else fields[field] = index;
  }
  if (mapErrors.length) throw errors.validation(mapErrors, 'column_map names columns that are not in the CSV header');

  const taken = new Set(Object.values(fields));
  for (const field of RECIPIENT_FIELDS) {
    if (fields[field] !== undefined) continue;
    const index = normalised.findIndex((h, i) => !taken.has(i) && HEADER_ALIASES[field].includes(h));
    if (index >= 0) {
      fields[field] = index;
      taken.add(index);
    }
  }
  const out: ColumnIndexes = { fields };
  if (fields.name === undefined) {
    const first = normalised.findIndex((h, i) => !taken.has(i) && FIRST_NAME_ALIASES.includes(h));
    const last = normalised.findIndex((h, i) => !taken.has(i) && LAST_NAME_ALIASES.includes(h));
    if (first >= 0 && last >= 0) {
      out.firstName = first;
      out.lastName = last;
    }
  }
  const missing = REQUIRED.filter((f) => fields[f] === undefined && !(f === 'name' && out.firstName !== undefined));
  if (missing.length) {
    throw errors.validation(
      missing.map((f) => ({
        path: 'recipients',
        message: `missing required column "${CSV_COLUMN_NAMES[f]}" (accepted headers: ${HEADER_ALIASES[f].join(', ')}; or map it with column_map.${f})`,
      })),
      'The recipients CSV lacks required columns',
    );
  }
  return out;
}

function tooBig(message: string) {
  return errors.validation([{ path: 'recipients', message }], message);
}

export function parseRecipientsCsv(
  data: Buffer,
  opts: { columnMap?: ColumnMap; mergeColumns?: boolean } = {},
): RecipientsParseResult {
  if (data.length > RECIPIENTS_CSV_MAX_BYTES)
    throw tooBig(`The recipients CSV may be at most 5 MB (got ${(data.length / 1048576).toFixed(1)} MB)`);
  const { text, encoding } = decodeCsv(data);
  // Postgres text cannot hold NUL; a CSV with NUL characters is binary, or UTF-16 without a byte-order mark.
  if (text.includes('\u0000')) {
    throw errors.validation(
      [
        {
          path: 'recipients',
          message: 'The CSV contains NUL characters: save it as UTF-8 text (or UTF-16 with a byte-order mark)',
        },
      ],
      'The recipients CSV could not be read',
    );
  }
  const delimiter = detectDelimiter(text);
  let records: string[][];
  try {
    records = parse(text, {
      delimiter,
      record_delimiter: ['\r\n', '\n', '\r'],
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: false,
    }) as string[][];
  } catch (err) {
    throw errors.validation(
      [{ path: 'recipients', message: `The CSV could not be read: ${(err as Error).message}` }],
      'The recipients CSV could not be read',
    );
  }

  const isBlank = (r: string[]) => r.every((v) => v.trim() === '');
  const headerIndex = records.findIndex((r) => !isBlank(r));
  if (headerIndex < 0)
    throw errors.validation([
      { path: 'recipients', message: 'The CSV is empty: it needs a header row and at least one recipient' },
    ]);
  const header = records[headerIndex];
  const columns = resolveColumns(header, opts.columnMap);
  const width = header.length;

  let totalRows = 0;
  for (let i = headerIndex + 1; i < records.length; i++) if (!isBlank(records[i])) totalRows++;
  if (totalRows > RECIPIENTS_CSV_MAX_ROWS) {
    throw tooBig(
      `The recipients CSV may have at most ${RECIPIENTS_CSV_MAX_ROWS.toLocaleString('en-US')} rows (got ${totalRows.toLocaleString('en-US')})`,
    );
  }

  const recipients: Recipient[] = [];
  const skipped: SkippedRow[] = [];
  const seen = new Map<string, number>();
  const f = columns.fields;

  for (let i = headerIndex + 1; i < records.length; i++) {
    const rec = records[i];
    if (isBlank(rec)) continue;
    const row = i + 1;
    const skip = (field: string, value: string, error: string) => skipped.push({ row, field, value, error });

    // Extra trailing cells that are all empty come from spreadsheets padding rows; keep those.
    if (rec.length < width || rec.slice(width).some((v) => v.trim() !== '')) {
      skip(
        'row',
        rec.map((v) => v.trim()).join(delimiter === '\t' ? ' | ' : `${delimiter} `),
        `ragged row: expected ${width} fields like the header, found ${rec.length}`,
      );
      continue;
    }
    const get = (idx: number | undefined) => (idx === undefined ? '' : cleanValue(rec[idx]));

    const name = singleLine(f.name !== undefined ? get(f.name) : `${get(columns.firstName)} ${get(columns.lastName)}`);
    // A line break inside the address cell separates street and apartment lines.
    const addressLines = get(f.line1)
      .split(/\r\n|\r|\n/)
      .map((s) => s.trim())
      .filter(Boolean);
    let line1 = addressLines[0] ?? '';
    let line2 = singleLine(get(f.line2));
    if (addressLines.length > 1) {
      const rest = addressLines.slice(1).join(', ');
      if (line2) line1 = addressLines.join(', ');
      else line2 = rest;
    }
    const city = singleLine(get(f.city));
    const stateRaw = singleLine(get(f.state));
    const zipRaw = singleLine(get(f.zip));

    // Each value prints on one line of the address block: a control or invisible formatting
    // character (a bidi override, a zero-width space) would print as something other than it reads.
    const hidden = (
      [
        ['name', name],
        ['address', line1],
        ['address2', line2],
        ['city', city],
        ['state', stateRaw],
        ['zip', zipRaw],
      ] as const
    ).find(([, v]) => hiddenCharacterProblem(v, 'single_line'));
    if (hidden) {
      skip(hidden[0], hidden[1], hiddenCharacterProblem(hidden[1], 'single_line')!);
      continue;
    }
    if (!name) {
      skip('name', name, 'name is required');
      continue;
    }
    if (!line1) {
      skip('address', line1, 'address is required');
      continue;
    }
    if (!city) {
      skip('city', city, 'city is required');
      continue;
    }
    if (!stateRaw) {
      skip('state', stateRaw, 'state is required');
      continue;
    }
    const state = toStateCode(stateRaw);
    if (!state) {
      skip('state', stateRaw, 'unknown US state: use a 2-letter code or the full name');
      continue;
    }
    if (!zipRaw) {
      skip('zip', zipRaw, 'zip is required');
      continue;
    }
    const zip = normaliseZip(zipRaw);
    if (!zip.ok) {
      skip('zip', zipRaw, zip.error);
      continue;
    }

    const key = [name, line1, line2, city, state, zip.zip.slice(0, 5)].map(dedupePart).join('|');
    const first = seen.get(key);
    if (first !== undefined) {
      skip('address', line1, `duplicate of row ${first}: same name and address`);
      continue;
    }
    seen.set(key, row);
    const variables = opts.mergeColumns
      ? Object.fromEntries(
          header.map((h, idx) => [cleanValue(h), cleanValue(rec[idx] ?? '')] as const).filter(([h]) => h !== ''),
        )
      : undefined;
    recipients.push({
      row,
      name,
      line1,
      line2: line2 || null,
      city,
      state,
      zip: zip.zip,
      ...(variables ? { variables } : {}),
    });
  }

  return {
    total_rows: totalRows,
    valid: recipients.length,
    skipped: skipped.length,
    skipped_rows: skipped,
    recipients,
    encoding,
    delimiter,
  };
}
