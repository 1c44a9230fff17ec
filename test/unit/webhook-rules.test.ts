import {
  evaluateRule,
  normalizeRuleText,
  RulePage,
  RULE_LIMITS,
  termProblem,
  WebhookRule,
} from '../../domain/webhooks/rules';

const page = (text: string | null, over: Partial<RulePage> = {}): RulePage => ({
  pageId: 'p',
  sourceKind: 'physical',
  ocrStatus: 'ready',
  text,
  ...over,
});
const rule = (over: Partial<WebhookRule> = {}): WebhookRule => ({
  id: 'r',
  name: 'r',
  source: 'any',
  match: 'any',
  terms: ['notice'],
  exclude_terms: [],
  ...over,
});

describe('normalizeRuleText', () => {
  it.each([
    ['ＦＵＬＬ ＷＩＤＴＨ', 'full width'],
    ['ﬁnal notice', 'final notice'], // ﬁ ligature
    ['Ⅸ', 'ix'], // roman numeral compatibility form
    ['IRS\u00a0\u00a0NOTICE', 'irs notice'], // no-break spaces
    ['  tab\tand\nnew\r\nline  ', 'tab and new line'],
    ['CAFÉ', 'café'],
    ['cafe\u0301', 'café'], // combining accent composes
  ])('%j -> %j', (input, expected) => {
    expect(normalizeRuleText(input)).toBe(expected);
  });
});

describe('evaluateRule', () => {
  it.each<[string, Partial<WebhookRule>, RulePage[], string]>([
    ['any: one term is enough', { terms: ['tax', 'refund'] }, [page('Your REFUND is ready')], 'matched'],
    ['any: none found', { terms: ['tax', 'refund'] }, [page('hello')], 'terms_missing'],
    [
      'all: every term across pages',
      { match: 'all', terms: ['final notice', 'amount due'] },
      [page('FINAL  notice'), page('Amount\ndue: $5')],
      'matched',
    ],
    [
      'all: one missing',
      { match: 'all', terms: ['final notice', 'amount due'] },
      [page('final notice')],
      'terms_missing',
    ],
    ['full-width text matches ascii term', { terms: ['irs'] }, [page('ＩＲＳ letter')], 'matched'],
    ['ligature in term matches plain text', { terms: ['ﬁnal'] }, [page('final notice')], 'matched'],
    ['case-insensitive', { terms: ['JURY DUTY'] }, [page('jury duty summons')], 'matched'],
    ['whitespace collapsed in term', { terms: ['jury   duty'] }, [page('jury\tduty')], 'matched'],
    ['exclude vetoes', { terms: ['notice'], exclude_terms: ['SAMPLE'] }, [page('notice (sample)')], 'excluded'],
    [
      'exclude on another page vetoes',
      { terms: ['notice'], exclude_terms: ['void'] },
      [page('notice'), page('VOID')],
      'excluded',
    ],
    ['pending OCR prevents a match', {}, [page('notice'), page(null, { ocrStatus: 'pending' })], 'ocr_not_ready'],
    ['failed OCR prevents a match', {}, [page('notice'), page('x', { ocrStatus: 'failed' })], 'ocr_not_ready'],
    ['missing OCR prevents a match', {}, [page(null, { ocrStatus: 'missing' })], 'ocr_not_ready'],
    ['ready without text prevents a match', {}, [page(null)], 'ocr_not_ready'],
    ['envelope rule ignores physical pages', { source: 'envelope' }, [page('notice')], 'no_pages'],
    [
      'envelope rule sees envelope pages only',
      { source: 'envelope' },
      [page('notice', { sourceKind: 'letter' }), page('hello', { sourceKind: 'envelope' })],
      'terms_missing',
    ],
    ['letter rule matches letter pages', { source: 'letter' }, [page('notice', { sourceKind: 'letter' })], 'matched'],
    [
      'letter rule ignores pending envelope page',
      { source: 'letter' },
      [page('notice', { sourceKind: 'letter' }), page(null, { sourceKind: 'envelope', ocrStatus: 'pending' })],
      'matched',
    ],
    ['any sees physical pages', { source: 'any' }, [page('notice', { sourceKind: 'physical' })], 'matched'],
    ['no pages at all', {}, [], 'no_pages'],
  ])('%s', (_name, over, pages, expected) => {
    expect(evaluateRule(rule(over), pages)).toBe(expected);
  });

  it('does not partially match oversized sources', () => {
    const long = 'notice ' + 'x'.repeat(RULE_LIMITS.charsPerPage);
    expect(evaluateRule(rule(), [page(long)])).toBe('oversized');
    const many = Array.from({ length: RULE_LIMITS.pages + 1 }, () => page('notice'));
    expect(evaluateRule(rule(), many)).toBe('oversized');
    expect(evaluateRule(rule(), many.slice(0, RULE_LIMITS.pages))).toBe('matched');
    // 40 pages of 30,000 three-byte characters: under the per-page limit, over 1 MiB in total.
    const wide = Array.from({ length: 40 }, () => page('notice ' + '€'.repeat(30_000)));
    expect(evaluateRule(rule(), wide)).toBe('oversized');
    expect(evaluateRule(rule(), wide.slice(0, 10))).toBe('matched');
  });

  it('counts the 32,000-character page limit in characters, not UTF-16 units', () => {
    const astral = 'notice ' + '😀'.repeat(RULE_LIMITS.charsPerPage - 7);
    expect(evaluateRule(rule(), [page(astral)])).toBe('matched');
  });
});

describe('termProblem', () => {
  it('refuses blank, control and over-long terms', () => {
    expect(termProblem('   ')).toMatch(/visible/);
    expect(termProblem('a\u0000b')).toMatch(/control/);
    expect(termProblem('x'.repeat(201))).toMatch(/200/);
    expect(termProblem('final notice')).toBeNull();
  });
});
