import { ocrUnreadable, pageNeedsOcr, parseTesseractTsv } from '../../domain/inbound-ocr';

const HEADER = 'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext';
const row = (block: number, par: number, line: number, word: number, conf: number, text: string) =>
  `5\t1\t${block}\t${par}\t${line}\t${word}\t0\t0\t10\t10\t${conf}\t${text}`;

describe('Tesseract TSV', () => {
  it('rebuilds lines and paragraphs and averages word confidence', () => {
    const tsv = [HEADER, '1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t', row(1, 1, 1, 1, 90, 'FINAL'), row(1, 1, 1, 2, 80, 'NOTICE'),
      row(1, 1, 2, 1, 70, 'Amount'), row(2, 1, 1, 1, 100, 'Springfield')].join('\n');
    expect(parseTesseractTsv(tsv)).toEqual({ text: 'FINAL NOTICE\nAmount\n\nSpringfield', confidence: 0.85, words: 4 });
  });

  it('calls empty or low-confidence pages unreadable', () => {
    expect(ocrUnreadable(parseTesseractTsv(HEADER))).toBe(true);
    expect(ocrUnreadable({ text: 'a b c d', confidence: 0.3, words: 4 })).toBe(true);
    expect(ocrUnreadable({ text: 'a b c d', confidence: 0.9, words: 4 })).toBe(false);
  });

  it('treats PDF pages without a real text layer as scans', () => {
    expect(pageNeedsOcr('  \n 1 ')).toBe(true);
    expect(pageNeedsOcr('Springfield Power & Light account statement')).toBe(false);
  });
});
