import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApiError } from '../../domain/shared/errors';
import { decodeCsv, detectDelimiter, normaliseZip, parseRecipientsCsv } from '../../domain/batches/recipients-csv';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', 'csv', name));
const parse = (name: string, columnMap?: Record<string, string>) => parseRecipientsCsv(fixture(name), { columnMap });

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

function bigCsv(rows: number): Buffer {
  const lines = ['name,address,address2,city,state,zip'];
  for (let i = 1; i <= rows; i++)
    lines.push(`Person ${i},${i} Main St,,Austin,TX,${String(70000 + (i % 9999)).padStart(5, '0')}`);
  return Buffer.from(lines.join('\n') + '\n');
}

describe('recipients CSV: encodings and delimiters', () => {
  it('reads a Windows-1252 Excel export with semicolons and accented names', () => {
    const r = parse('excel-semicolon-windows1252.csv');
    expect(r).toMatchObject({ encoding: 'windows-1252', delimiter: ';', total_rows: 4, valid: 4, skipped: 0 });
    expect(r.recipients.map((x) => x.name)).toEqual([
      'José Müller',
      'François Dupont',
      'Zoë Brontë',
      'Søren Kierkegaard',
    ]);
    expect(r.recipients[0]).toMatchObject({
      row: 2,
      line1: '12 Rue Street',
      line2: 'Apt 3',
      city: 'Austin',
      state: 'TX',
      zip: '78701',
    });
    // the ";;;;;" padding row is blank, yet still counts as spreadsheet row 5
    expect(r.recipients[3].row).toBe(6);
  });

  it('strips a UTF-8 byte-order mark and maps header aliases', () => {
    const r = parse('bom-aliases.csv');
    expect(r.encoding).toBe('utf-8-bom');
    expect(r.recipients[0]).toEqual({
      row: 2,
      name: 'Ana Souza',
      line1: '1 First St',
      line2: '2B',
      city: 'Newark',
      state: 'NJ',
      zip: '07102',
    });
  });

  it('reads tab-separated files with snake_case aliases (recipient_name, address_line1, town, province, postal_code)', () => {
    const r = parse('tabs-aliases.tsv');
    expect(r).toMatchObject({ delimiter: '\t', valid: 3, skipped: 0 });
    expect(r.recipients[1]).toMatchObject({
      name: 'Dana Lee',
      line1: '11 Oak Ln',
      line2: 'Unit 7',
      city: 'Provo',
      state: 'UT',
      zip: '84601',
    });
  });

  it('decodes valid UTF-8 as UTF-8 and other bytes as Windows-1252', () => {
    expect(decodeCsv(Buffer.from('José', 'utf8'))).toEqual({ text: 'José', encoding: 'utf-8' });
    expect(decodeCsv(Buffer.from([0x4a, 0x6f, 0x73, 0xe9, 0x80]))).toEqual({ text: 'José€', encoding: 'windows-1252' });
  });

  it('detects the delimiter from the header line only, ignoring quoted text', () => {
    expect(detectDelimiter('"a;b;c",d,e\n1;2;3;4;5;6\n')).toBe(',');
    expect(detectDelimiter('\n\nname;address;city\n')).toBe(';');
    expect(detectDelimiter('name\taddress\tcity, st\n')).toBe('\t');
    expect(detectDelimiter('name\n')).toBe(',');
  });
});

describe('recipients CSV: quoting and multi-line cells', () => {
  it('keeps commas and quotes inside quoted fields and splits a multi-line address into two lines', () => {
    const r = parse('quoted-multiline.csv');
    expect(r.valid).toBe(4);
    expect(r.recipients[0]).toMatchObject({
      row: 2,
      name: 'Robert "Bob" Smith',
      line1: '123 Main St, Rear',
      line2: null,
    });
    expect(r.recipients[1]).toMatchObject({
      row: 3,
      name: 'Acme, Inc. Attn: Ana',
      line1: '500 Market St',
      line2: 'Floor 2',
      city: 'San Francisco',
    });
    // address2 already given: the address cell's lines are joined
    expect(r.recipients[2]).toMatchObject({ row: 4, line1: '9 Elm St, Unit 4', line2: 'Building B' });
    // a multi-line record is one spreadsheet row
    expect(r.recipients[3].row).toBe(5);
  });

  it('refuses a file whose quote is never closed', () => {
    const err = refusal(() =>
      parseRecipientsCsv(Buffer.from('name,address,city,state,zip\n"Al,1 A St,Austin,TX,78701\n')),
    );
    expect(err.status).toBe(400);
    expect(err.options.fields?.[0].path).toBe('recipients');
  });
});

describe('recipients CSV: states and ZIPs', () => {
  it('accepts state names in any case, DC, territories and military states', () => {
    const r = parse('state-names.csv');
    expect(r.recipients.map((x) => x.state)).toEqual(['NY', 'DC', 'PR', 'AE', 'GU', 'HI']);
    expect(r.skipped_rows).toEqual([
      { row: 7, field: 'state', value: 'Wisc', error: expect.stringMatching(/unknown US state/) },
    ]);
  });

  it('normalises ZIP+4 spellings, unwraps ="..." guards and flags ZIPs that lost their leading zero', () => {
    const r = parse('zip-formats.csv');
    expect(r.recipients.map((x) => x.zip)).toEqual(['78701-1234', '78701-1234', '78701-1234', '02134']);
    expect(r.skipped_rows).toEqual([
      {
        row: 5,
        field: 'zip',
        value: '2134',
        error: '4-digit ZIP: leading zero probably dropped by a spreadsheet (did you mean 02134?)',
      },
      {
        row: 6,
        field: 'zip',
        value: '2134-5678',
        error: '4-digit ZIP: leading zero probably dropped by a spreadsheet (did you mean 02134-5678?)',
      },
      { row: 8, field: 'zip', value: 'ABCDE', error: expect.stringMatching(/5 digits or ZIP\+4/) },
    ]);
  });

  it.each([
    ['12345', '12345'],
    ['12345-6789', '12345-6789'],
    ['123456789', '12345-6789'],
    [' 12345 - 6789 ', '12345-6789'],
  ])('ZIP %j becomes %j', (raw, zip) => {
    expect(normaliseZip(raw)).toEqual({ ok: true, zip });
  });

  it.each(['1234', '12345678', '123', '1234567', '12345-678', 'ABCDE'])('ZIP %j is refused', (raw) => {
    expect(normaliseZip(raw).ok).toBe(false);
  });
});

describe('recipients CSV: duplicates, blank and malformed rows', () => {
  it('skips duplicates that differ only in case, whitespace and punctuation, keeping the first', () => {
    const r = parse('duplicates.csv');
    expect(r).toMatchObject({ total_rows: 4, valid: 2, skipped: 2 });
    expect(r.recipients.map((x) => x.row)).toEqual([2, 5]);
    expect(r.skipped_rows.map((s) => [s.row, s.error])).toEqual([
      [3, 'duplicate of row 2: same name and address'],
      [4, 'duplicate of row 2: same name and address'],
    ]);
  });

  it('ignores blank lines, skips ragged rows and rows missing required values, and keeps empty padding cells', () => {
    const r = parse('blank-and-ragged.csv');
    expect(r).toMatchObject({ total_rows: 7, valid: 2, skipped: 5 });
    expect(r.recipients.map((x) => [x.row, x.name])).toEqual([
      [3, 'Uma Ok'],
      [6, 'Xia Pad'],
    ]);
    expect(r.skipped_rows.map((s) => [s.row, s.field])).toEqual([
      [4, 'row'],
      [5, 'row'],
      [8, 'name'],
      [9, 'city'],
      [10, 'state'],
    ]);
    expect(r.skipped_rows[0].error).toMatch(/expected 5 fields like the header, found 4/);
    expect(r.skipped + r.valid).toBe(r.total_rows);
  });
});

describe('recipients CSV: headers and column_map', () => {
  it('joins first and last name columns when there is no name column', () => {
    expect(parse('first-last-names.csv').recipients[0]).toMatchObject({
      name: 'Alma Reyes',
      line1: '1 Alamo Plaza',
      zip: '78205',
    });
  });

  it('lists every missing required column with its accepted headers', () => {
    const err = refusal(() => parse('missing-columns.csv'));
    expect(err.status).toBe(400);
    expect(err.options.fields?.map((f) => f.message)).toEqual([
      expect.stringMatching(/^missing required column "city"/),
      expect.stringMatching(/^missing required column "zip"/),
    ]);
  });

  it('maps unusual headers with column_map (exact or case-insensitive header text)', () => {
    const r = parse('custom-headers.csv', {
      name: 'Kunde',
      line1: 'Strasse',
      line2: 'zusatz',
      city: 'Ort',
      state: 'Bundesstaat',
      zip: 'PLZ',
    });
    expect(r.valid).toBe(2);
    expect(r.recipients[0]).toMatchObject({
      name: 'Jürgen Groß',
      line1: '5 Maple St',
      city: 'Fredericksburg',
      state: 'TX',
      zip: '78624',
    });
    expect(r.recipients[1]).toMatchObject({ name: 'Anneliese Bäcker', line2: 'Apt 9' });
  });

  it('refuses a column_map naming a column the file does not have, at its dot-path', () => {
    const err = refusal(() => parse('custom-headers.csv', { name: 'Customer' }));
    expect(err.options.fields?.[0].path).toBe('column_map.name');
  });
});

describe('recipients CSV: limits', () => {
  it('parses 10,000 rows', () => {
    const r = parseRecipientsCsv(bigCsv(10000));
    expect(r).toMatchObject({ total_rows: 10000, valid: 10000, skipped: 0 });
    expect(r.recipients[9999]).toMatchObject({ row: 10001, name: 'Person 10000' });
  });

  it('refuses 10,001 rows and files over 5 MB with a 400 naming recipients', () => {
    const rows = refusal(() => parseRecipientsCsv(bigCsv(10001)));
    expect(rows.status).toBe(400);
    expect(rows.options.fields).toEqual([
      { path: 'recipients', message: expect.stringMatching(/at most 10,000 rows/) },
    ]);
    const size = refusal(() => parseRecipientsCsv(Buffer.alloc(5 * 1024 * 1024 + 1, 'a')));
    expect(size.options.fields).toEqual([{ path: 'recipients', message: expect.stringMatching(/at most 5 MB/) }]);
  });

  it('refuses an empty file', () => {
    expect(refusal(() => parseRecipientsCsv(Buffer.from('\n\n'))).status).toBe(400);
  });
});
