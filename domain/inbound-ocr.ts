// Reading Tesseract's TSV output (one row per layout element, words at level 5 with a
// 0-100 confidence) back into text lines and a page confidence, and the rules that say
// when a PDF needs OCR and when an OCR result is unreadable.

export interface OcrPage {
  text: string;
  /** Mean word confidence, 0-1. */
  confidence: number;
  words: number;
}

export function parseTesseractTsv(tsv: string): OcrPage {
  const rows = tsv.split(/\r?\n/);
  const header = rows.shift()?.split('\t') ?? [];
  const col = (name: string) => header.indexOf(name);
  const [iLevel, iBlock, iPar, iLine, iConf, iText] = ['level', 'block_num', 'par_num', 'line_num', 'conf', 'text'].map(col);
  if ([iLevel, iBlock, iPar, iLine, iConf, iText].some((i) => i < 0)) return { text: '', confidence: 0, words: 0 };
  const lines: string[] = [];
  let current: string[] = [];
  let lineKey = '';
  let paragraph = '';
  let confSum = 0;
  let words = 0;
  for (const row of rows) {
    const cells = row.split('\t');
    if (cells[iLevel] !== '5') continue;
    const word = (cells[iText] ?? '').trim();
    const conf = Number(cells[iConf]);
    if (!word || !(conf >= 0)) continue;
    const par = `${cells[iBlock]}:${cells[iPar]}`;
    const key = `${par}:${cells[iLine]}`;
    if (key !== lineKey) {
      if (current.length) lines.push(current.join(' '));
      if (paragraph && par !== paragraph) lines.push('');
      current = [];
      lineKey = key;
      paragraph = par;
    }
    current.push(word);
    confSum += conf;
    words++;
  }
  if (current.length) lines.push(current.join(' '));
  return { text: lines.join('\n').trim(), confidence: words ? Math.round((confSum / words / 100) * 1000) / 1000 : 0, words };
}

/** Below this mean confidence, or with fewer words, an OCR page counts as unreadable. */
export const OCR_MIN_CONFIDENCE = 0.5;
export const OCR_MIN_WORDS = 3;

export function ocrUnreadable(page: OcrPage): boolean {
  return page.words < OCR_MIN_WORDS || page.confidence < OCR_MIN_CONFIDENCE;
}

/** A PDF page with fewer letters than this in its text layer is treated as a scan. */
export const TEXT_LAYER_MIN_LETTERS = 25;

export function pageNeedsOcr(pageText: string): boolean {
  return (pageText.match(/[A-Za-z]/g) ?? []).length < TEXT_LAYER_MIN_LETTERS;
}
