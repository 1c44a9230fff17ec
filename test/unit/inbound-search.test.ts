import fc from 'fast-check';
import {
  KIND_ALIASES,
  matchesAllTerms,
  normalizeSearchText,
  parseLiteralQuery,
  receiptDate,
  SEARCH_MAX_TERMS,
  searchFields,
  SearchDocument,
} from '../../domain/physical-inbound/search';

const doc = (over: Partial<SearchDocument> = {}): SearchDocument => ({
  itemId: '3f0c8e1a-5b7d-4c2e-9a10-6d2f4b8c1e77',
  referenceCode: 'LTR-20240115-A1B2C3',
  kind: 'letter',
  receivedAt: new Date('2024-01-15T23:30:00-05:00'),
  requestIds: ['11111111-2222-4333-8444-555555555555'],
  bundleIds: ['66666666-7777-4888-9999-aaaaaaaaaaaa'],
  pageIds: ['bbbbbbbb-cccc-4ddd-8eee-ffffffffffff'],
  recipientName: 'Ada Lovelace',
  recipientEmail: 'Ada@Example.test',
  ocrTexts: ['Riverside Water Utility\nAmount due: $42.10  (50% off_peak)', 'Account "A-77"'],
  ...over,
});

const search = (q: string, d = doc()) => {
  const parsed = parseLiteralQuery(q);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value ? matchesAllTerms(parsed.value.terms, searchFields(d)) : true;
};

describe('literal query parsing', () => {
  it('normalises with NFKC, lower case and collapsed whitespace', () => {
    expect(normalizeSearchText('  ＡＢＣ\t Ｄｅｆ\n')).toBe('abc def');
    expect(normalizeSearchText('ﬁle')).toBe('file');
    const parsed = parseLiteralQuery('Water   UTILITY');
    expect(parsed).toEqual({
      ok: true,
      value: { query: 'Water   UTILITY', normalized: 'water utility', terms: ['water', 'utility'] },
    });
  });

  it('treats an absent or blank query as no search', () => {
    expect(parseLiteralQuery(undefined)).toEqual({ ok: true, value: null });
    expect(parseLiteralQuery('   ')).toEqual({ ok: true, value: null });
  });

  it('accepts exactly 200 characters and 12 terms, refuses more', () => {
    expect(parseLiteralQuery('a'.repeat(200)).ok).toBe(true);
    expect(parseLiteralQuery('a'.repeat(201))).toMatchObject({ ok: false, error: { path: 'query.q' } });
    const twelve = Array.from({ length: SEARCH_MAX_TERMS }, (_, i) => `t${i}`).join(' ');
    expect(parseLiteralQuery(twelve)).toMatchObject({ ok: true });
    expect(parseLiteralQuery(`${twelve} extra`)).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('12 terms') },
    });
  });

  it('counts the normalised length too (NFKC can expand a query)', () => {
    // U+FDFA expands to 18 characters under NFKC.
    const q = '\uFDFA'.repeat(12);
    expect([...q].length).toBeLessThanOrEqual(200);
    expect(parseLiteralQuery(q)).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('normalisation') },
    });
  });
});

describe('literal AND matching over one item', () => {
  it('needs every term to match somewhere in the same item', () => {
    expect(search('riverside ada')).toBe(true);
    expect(search('riverside grace')).toBe(false);
  });

  it('matches item id, reference, request/bundle/page ids, recipient name and email', () => {
    expect(search('3f0c8e1a-5b7d')).toBe(true);
    expect(search('ltr-20240115-a1b2c3')).toBe(true);
    expect(search('11111111-2222-4333-8444-555555555555')).toBe(true);
    expect(search('66666666-7777')).toBe(true);
    expect(search('bbbbbbbb-cccc')).toBe(true);
    expect(search('lovelace')).toBe(true);
    expect(search('ada@example.test')).toBe(true);
  });

  it('matches kind aliases', () => {
    for (const alias of KIND_ALIASES.letter) expect(search(alias)).toBe(true);
    expect(search('package')).toBe(false);
    expect(search('package', doc({ kind: 'parcel' }))).toBe(true);
    expect(search('mail', doc({ kind: 'parcel' }))).toBe(true);
  });

  it('matches the UTC receipt date, not the local one', () => {
    expect(receiptDate(new Date('2024-01-15T23:30:00-05:00'))).toBe('2024-01-16');
    expect(search('2024-01-16')).toBe(true);
    expect(search('2024-01-15')).toBe(false);
  });

  it('treats punctuation, quotes, % and _ literally', () => {
    expect(search('$42.10')).toBe(true);
    expect(search('50%')).toBe(true);
    expect(search('off_peak')).toBe(true);
    expect(search('"a-77"')).toBe(true);
    expect(search('%')).toBe(true);
    // Wildcards would match these; literal search does not.
    expect(search('off%peak')).toBe(false);
    expect(search('5_%')).toBe(false);
    expect(search('a_77')).toBe(false);
  });

  it('never matches a term across two fields', () => {
    expect(search('utility\namount')).toBe(true); // whitespace splits into two terms
    const fields = searchFields(doc());
    expect(matchesAllTerms(['lovelaceada@example.test'], fields)).toBe(false);
  });

  it('is case- and width-insensitive for any text (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]{1,12}$/), (word) => {
        const d = doc({ ocrTexts: [`prefix ${word.toUpperCase()} suffix`] });
        return search(word, d) && search(word.toUpperCase(), d);
      }),
    );
  });
});
