import {
  layoutText,
  MAX_UNCERTAIN_SPAN_CHARS,
  MAX_UNCERTAIN_SPANS,
  ocrPageStatus,
  ocrUnreadable,
  OcrWord,
  pageNeedsOcr,
  parseTesseractTsv,
  uncertainSpans,
} from '../../domain/inbound-email/ocr';

const HEADER = 'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext';
const row = (
  block: number,
  par: number,
  line: number,
  word: number,
  conf: number,
  text: string,
  left = word * 60,
  top = (block * 10 + line) * 30,
) => `5\t1\t${block}\t${par}\t${line}\t${word}\t${left}\t${top}\t${text.length * 10}\t20\t${conf}\t${text}`;

const word = (text: string, left: number, top: number, confidence = 0.95): OcrWord => ({
  text,
  line: `1:1:${top}`,
  confidence,
  left,
  top,
  width: text.length * 10,
  height: 20,
});

describe('Tesseract TSV', () => {
  it('rebuilds lines and paragraphs in reading order and averages word confidence', () => {
    const tsv = [
      HEADER,
      '1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t',
      row(1, 1, 1, 1, 90, 'FINAL'),
      row(1, 1, 1, 2, 80, 'NOTICE'),
      row(1, 1, 2, 1, 70, 'Amount'),
      row(2, 1, 1, 1, 100, 'Springfield'),
    ].join('\n');
    expect(parseTesseractTsv(tsv)).toMatchObject({
      text: 'FINAL NOTICE\nAmount\n\nSpringfield',
      confidence: 0.85,
      words: 4,
      uncertainSpans: [],
    });
  });

  it('lays words out by position: a phrase keeps single spaces, a far column keeps its distance, rows far apart get a blank line', () => {
    const words = [
      word('Invoice', 0, 0),
      word('No.', 80, 0),
      word('58812-A', 600, 0),
      word('Due', 0, 30),
      word('Date', 40, 30),
      word('02/27/2026', 570, 30),
      word('Thank', 0, 120),
      word('you', 60, 120),
    ];
    expect(layoutText(words).split('\n')).toEqual([
      'Invoice No.' + ' '.repeat(49) + '58812-A',
      'Due Date' + ' '.repeat(49) + '02/27/2026',
      '',
      'Thank you',
    ]);
  });

  it("collects runs of low-confidence words of one row as uncertain spans, within the spec's limits", () => {
    const words = [
      word('Amount', 0, 0),
      word('$1,8?4.00', 80, 0, 0.41),
      word('due', 180, 0),
      word('2024-0?-30', 0, 30, 0.3),
      word('by', 110, 30, 0.5),
    ];
    expect(uncertainSpans(words)).toEqual([
      { text: '$1,8?4.00', reason: 'low_confidence' },
      { text: '2024-0?-30 by', reason: 'low_confidence' },
    ]);
    const many = Array.from({ length: 150 }, (_, i) => word(`w${i}`, 0, i * 30, 0.2));
    expect(uncertainSpans(many)).toHaveLength(MAX_UNCERTAIN_SPANS);
    const long = Array.from({ length: 200 }, (_, i) => word('xxxx', i * 50, 0, 0.2));
    expect(uncertainSpans(long)[0].text).toHaveLength(MAX_UNCERTAIN_SPAN_CHARS);
  });

  it('needs review below 0.85 mean confidence; calls empty or very low-confidence pages unreadable', () => {
    expect(ocrPageStatus({ confidence: 0.84, words: 40 })).toBe('needs_review');
    expect(ocrPageStatus({ confidence: 0.9, words: 40 })).toBe('ready');
    expect(ocrPageStatus({ confidence: 0, words: 0 })).toBe('ready');
    expect(ocrUnreadable(parseTesseractTsv(HEADER))).toBe(true);
    expect(ocrUnreadable({ confidence: 0.3, words: 4 })).toBe(true);
    expect(ocrUnreadable({ confidence: 0.9, words: 4 })).toBe(false);
  });

  it('treats PDF pages without a real text layer as scans', () => {
    expect(pageNeedsOcr('  \n 1 ')).toBe(true);
    expect(pageNeedsOcr('Springfield Power & Light account statement')).toBe(false);
  });
});
