// Reading Tesseract's TSV output (one row per layout element; words at level 5 with their
// block, paragraph and line, box and a 0-100 confidence) into a page: its text in
// reading order (the engine's blocks and lines, as a reader reads them), the same words
// laid out like `pdftotext -layout` (one visual row per line, each word at its
// horizontal position, so label/value columns survive), a page confidence, the uncertain
// spans a reader should check, and the page status. Also the rules that say when a PDF
// page needs OCR and when an OCR result is unreadable. Pure.
//
// Thresholds (the spec leaves them to us):
//   a word is uncertain below UNCERTAIN_WORD_CONFIDENCE (0.6); consecutive uncertain
//   words of one row form one uncertain span {text, reason: "low_confidence"}, at most
//   MAX_UNCERTAIN_SPANS (100) spans of at most MAX_UNCERTAIN_SPAN_CHARS (500) characters;
//   the page confidence is the mean word confidence (0-1);
//   a page with words is needs_review below NEEDS_REVIEW_CONFIDENCE (0.85), else ready
//   (a page without words is ready and blank).

export interface UncertainSpan {
  text: string;
  reason: 'low_confidence';
}

export interface OcrPage {
  /** Reading order: the engine's blocks, paragraphs (a blank line apart) and lines. */
  text: string;
  /** Visual rows with horizontal positions kept (see layoutText). */
  layout: string;
  /** Mean word confidence, 0-1 (0 without words). */
  confidence: number;
  words: number;
  uncertainSpans: UncertainSpan[];
}

export interface OcrWord {
  text: string;
  /** block:paragraph:line in the engine's reading order. */
  line: string;
  /** 0-1 */
  confidence: number;
  left: number;
  top: number;
  width: number;
  height: number;
}

export const UNCERTAIN_WORD_CONFIDENCE = 0.6;
export const NEEDS_REVIEW_CONFIDENCE = 0.85;
export const MAX_UNCERTAIN_SPANS = 100;
export const MAX_UNCERTAIN_SPAN_CHARS = 500;

/** The recognised words of a TSV, in the engine's reading order. */
export function tesseractWords(tsv: string): OcrWord[] {
  const rows = tsv.split(/\r?\n/);
  const header = rows.shift()?.split('\t') ?? [];
  const col = (name: string) => header.indexOf(name);
  const idx = ['level', 'block_num', 'par_num', 'line_num', 'left', 'top', 'width', 'height', 'conf', 'text'].map(col);
  if (idx.some((i) => i < 0)) return [];
  const [iLevel, iBlock, iPar, iLine, iLeft, iTop, iWidth, iHeight, iConf, iText] = idx;
  const words: OcrWord[] = [];
  for (const row of rows) {
    const cells = row.split('\t');
    if (cells[iLevel] !== '5') continue;
    const text = (cells[iText] ?? '').trim();
    const conf = Number(cells[iConf]);
    if (!text || !(conf >= 0)) continue;
    words.push({
      text,
      line: `${cells[iBlock]}:${cells[iPar]}:${cells[iLine]}`,
      confidence: Math.min(1, conf / 100),
      left: Number(cells[iLeft]) || 0,
      top: Number(cells[iTop]) || 0,
      width: Number(cells[iWidth]) || 0,
      height: Number(cells[iHeight]) || 0,
    });
  }
  return words;
}

const median = (values: number[]) => {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

/** Words grouped into visual rows (top to bottom), each row left to right. */
export function rowsOf(words: OcrWord[]): OcrWord[][] {
  const lineHeight = median(words.map((w) => w.height)) || 1;
  const rows: Array<{ center: number; words: OcrWord[] }> = [];
  for (const w of [...words].sort((a, b) => a.top + a.height / 2 - (b.top + b.height / 2))) {
    const center = w.top + w.height / 2;
    const row = rows.find((r) => Math.abs(r.center - center) < lineHeight * 0.5);
    if (row) {
      row.words.push(w);
      row.center = row.words.reduce((s, x) => s + x.top + x.height / 2, 0) / row.words.length;
    } else {
      rows.push({ center, words: [w] });
    }
  }
  return rows.sort((a, b) => a.center - b.center).map((r) => r.words.sort((a, b) => a.left - b.left));
}

/**
 * The page as text: one line per row; words of one phrase (a gap under two of their own
 * character widths) one space apart, and every other word at the column its left edge
 * implies (at least two spaces on, so cells stay apart); a blank line where rows are far apart.
 */
export function layoutText(words: OcrWord[]): string {
  const rows = rowsOf(words);
  const charWidth = median(words.filter((w) => w.text.length >= 2).map((w) => w.width / w.text.length)) || 1;
  const lineHeight = median(words.map((w) => w.height)) || 1;
  const minLeft = Math.min(...words.map((w) => w.left));
  const ownCharWidth = (w: OcrWord) => (w.text.length ? w.width / w.text.length : charWidth);
  const lines: string[] = [];
  let lastBottom: number | null = null;
  for (const row of rows) {
    const top = Math.min(...row.map((w) => w.top));
    if (lastBottom !== null && top - lastBottom > lineHeight * 1.2) lines.push('');
    let line = '';
    let previous: OcrWord | null = null;
    for (const w of row) {
      const gap = previous ? w.left - (previous.left + previous.width) : 0;
      if (previous && gap < 2 * Math.max(ownCharWidth(w), ownCharWidth(previous))) {
        line += ` ${w.text}`;
      } else {
        const column = Math.round((w.left - minLeft) / charWidth);
        line += ' '.repeat(Math.max(line ? 2 : 0, column - line.length)) + w.text;
      }
      previous = w;
    }
    lines.push(line);
    lastBottom = Math.max(...row.map((w) => w.top + w.height));
  }
  return lines.join('\n');
}

/** Reading order: words of one engine line joined by spaces, a blank line between paragraphs. */
export function readingText(words: OcrWord[]): string {
  const lines: string[] = [];
  let line = '';
  let current: string | null = null;
  for (const w of words) {
    if (w.line !== current) {
      if (current !== null) {
        lines.push(line);
        // A new block or paragraph (the line number is the last part of the key).
        if (w.line.split(':').slice(0, 2).join(':') !== current.split(':').slice(0, 2).join(':')) lines.push('');
      }
      current = w.line;
      line = w.text;
    } else {
      line += ` ${w.text}`;
    }
  }
  if (current !== null) lines.push(line);
  return lines.join('\n');
}

/** Runs of uncertain words within one row, bounded to the spec's limits. */
export function uncertainSpans(words: OcrWord[]): UncertainSpan[] {
  const spans: UncertainSpan[] = [];
  for (const row of rowsOf(words)) {
    let run: string[] = [];
    const flush = () => {
      if (run.length && spans.length < MAX_UNCERTAIN_SPANS)
        spans.push({ text: run.join(' ').slice(0, MAX_UNCERTAIN_SPAN_CHARS), reason: 'low_confidence' });
      run = [];
    };
    for (const w of row) {
      if (w.confidence < UNCERTAIN_WORD_CONFIDENCE) run.push(w.text);
      else flush();
    }
    flush();
  }
  return spans;
}

export function parseTesseractTsv(tsv: string): OcrPage {
  const words = tesseractWords(tsv);
  if (!words.length) return { text: '', layout: '', confidence: 0, words: 0, uncertainSpans: [] };
  const mean = words.reduce((s, w) => s + w.confidence, 0) / words.length;
  return {
    text: readingText(words),
    layout: layoutText(words),
    confidence: Math.round(mean * 1000) / 1000,
    words: words.length,
    uncertainSpans: uncertainSpans(words),
  };
}

/** ready, or needs_review when a page with words has a low confidence. */
export function ocrPageStatus(page: Pick<OcrPage, 'confidence' | 'words'>): 'ready' | 'needs_review' {
  return page.words > 0 && page.confidence < NEEDS_REVIEW_CONFIDENCE ? 'needs_review' : 'ready';
}

/** Below this mean confidence, or with fewer words, an OCR page counts as unreadable. */
export const OCR_MIN_CONFIDENCE = 0.5;
export const OCR_MIN_WORDS = 3;

export function ocrUnreadable(page: Pick<OcrPage, 'confidence' | 'words'>): boolean {
  return page.words < OCR_MIN_WORDS || page.confidence < OCR_MIN_CONFIDENCE;
}

/** A PDF page with fewer letters than this in its text layer is treated as a scan. */
export const TEXT_LAYER_MIN_LETTERS = 25;

export function pageNeedsOcr(pageText: string): boolean {
  return (pageText.match(/[A-Za-z]/g) ?? []).length < TEXT_LAYER_MIN_LETTERS;
}
