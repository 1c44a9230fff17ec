// Outbound document inspection: recognises what an uploaded file IS from its bytes
// (never from its name; the name only tells text dialects apart: CSV, HTML, Markdown),
// checks that it can be read, counts the pages that will be printed and fingerprints it.
// Pure apart from CPU work on the given bytes: no I/O.
//
// Two kinds of upload: a document printed as it is (PDF, JPG, PNG, TXT, CSV), inspected
// by inspectDocument; and a source that is laid out into a PDF first (HTML and Markdown by
// headless Chromium, DOCX by LibreOffice: services/outbound-mail/documents.ts), which
// inspectUpload recognises and checks and the service renders; the PDF is then inspected
// like any other and is the document from then on.
//
// Every refusal is a 400 validation error on `document` (or `page_count` for the
// page_count field). Hostile files are bounded: 10 MB in; PDF object and cross-reference
// streams may expand to 20 MB in total and parsing gets 5 seconds; a DOCX may hold
// 1,000 ZIP entries that expand to 50 MB in all; HTML and Markdown are at most 2 MB; images
// pass the shared image check (domain/shared/images.ts: whole decode, 50 megapixels at
// most); page trees are walked once, node by node, and stop past MAX_OUTBOUND_PAGES.
import { createHash } from 'node:crypto';
import JSZip from 'jszip';
import {
  decodePDFRawStream,
  ParseSpeeds,
  PDFArray,
  PDFContext,
  PDFDict,
  PDFName,
  PDFObject,
  PDFPageLeaf,
  PDFPageTree,
  PDFParser,
  PDFRawStream,
} from 'pdf-lib';
import { ApiError, errors } from '../shared/errors';
import { checkImage, sniffImage } from '../shared/images';
import { MAX_OUTBOUND_PAGES } from './pricing';

/** What is printed: the stored document of a piece. */
export type DocumentType = 'pdf' | 'jpg' | 'png' | 'txt' | 'csv';
/** What is laid out into a PDF before anything else. Pieces stored before DOCX was laid out kept 'docx' as their document type. */
export type SourceType = 'html' | 'markdown' | 'docx';

export interface InspectedDocument {
  type: DocumentType;
  contentType: string;
  extension: string;
  pageCount: number;
  pageCountSource: 'pdf' | 'image' | 'text_layout' | 'override';
  sha256: string;
  sizeBytes: number;
}

/** An upload to lay out first: its format, fingerprint and, for HTML and Markdown, its text. */
export interface SourceDocument {
  type: SourceType;
  contentType: string;
  extension: string;
  sha256: string;
  sizeBytes: number;
  /** HTML and Markdown: the decoded text (a leading byte-order mark removed); DOCX: null. */
  text: string | null;
}

export type Upload = { kind: 'document'; document: InspectedDocument } | { kind: 'source'; source: SourceDocument };

export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;
export { MAX_OUTBOUND_PAGES };

export const MAX_PDF_DECODED_BYTES = 20 * 1024 * 1024;
export const PDF_PARSE_TIME_LIMIT_MS = 5000;
export const MAX_DOCX_ENTRIES = 1000;
export const MAX_DOCX_PART_BYTES = 50 * 1024 * 1024;
/** HTML (and Markdown, and the HTML it becomes) the renderer takes: 2 MB. */
export const MAX_HTML_BYTES = 2 * 1024 * 1024;
/**
 * Pages an HTML or Markdown letter may lay out to: a long letter (a PDF may have up to
 * MAX_OUTBOUND_PAGES). It bounds what one render costs the browser (time and memory).
 */
export const MAX_RENDERED_PAGES = 60;

/** Plain-text layout: 80 columns, 66 lines per page, tab stops every 8 columns. */
export const TEXT_COLUMNS = 80;
export const TEXT_LINES_PER_PAGE = 66;

const FORMATS: Record<DocumentType | SourceType, { contentType: string; extension: string }> = {
  pdf: { contentType: 'application/pdf', extension: 'pdf' },
  docx: { contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', extension: 'docx' },
  jpg: { contentType: 'image/jpeg', extension: 'jpg' },
  png: { contentType: 'image/png', extension: 'png' },
  txt: { contentType: 'text/plain', extension: 'txt' },
  csv: { contentType: 'text/csv', extension: 'csv' },
  html: { contentType: 'text/html', extension: 'html' },
  markdown: { contentType: 'text/markdown', extension: 'md' },
};

/** The formats a letter may be sent in, as the API's descriptions name them. */
export const ACCEPTED_FORMATS = 'PDF, DOCX, JPG, PNG, TXT, CSV, HTML or Markdown';

const refuse = (message: string): ApiError => errors.validation([{ path: 'document', message }]);
const refusePageCount = (message: string): ApiError => errors.validation([{ path: 'page_count', message }]);
const tooManyPages = (what: string, pages: number | string): ApiError =>
  refuse(`${what} has ${pages} pages; the most an outbound piece may have is ${MAX_OUTBOUND_PAGES}`);

const OLE_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

export interface InspectOptions {
  pageCountOverride?: number;
  /** The Content-Type the upload was declared with (a multipart part's), if any: text/html or text/markdown name a text dialect as an extension does. */
  contentType?: string | null;
}

/**
 * What an upload is: a document to print as it is (inspected: pages, fingerprint), or a
 * source to lay out first (HTML, Markdown, DOCX: checked, fingerprinted, not yet counted).
 */
export async function inspectUpload(data: Buffer, filename: string | null, opts: InspectOptions = {}): Promise<Upload> {
  if (data.length > MAX_DOCUMENT_BYTES)
    throw refuse(`the document is ${data.length} bytes; the maximum is 10 MB (${MAX_DOCUMENT_BYTES} bytes)`);
  if (data.length === 0) throw refuse('the document is empty');
  const override = opts.pageCountOverride ?? undefined;
  if (override !== undefined && (!Number.isInteger(override) || override < 1 || override > MAX_OUTBOUND_PAGES)) {
    throw refusePageCount(`page_count must be an integer from 1 to ${MAX_OUTBOUND_PAGES}`);
  }
  const fingerprint = { sha256: createHash('sha256').update(data).digest('hex'), sizeBytes: data.length };
  const source = await sourceOf(data, filename, opts.contentType ?? null, override);
  if (source) return { kind: 'source', source: { ...FORMATS[source.type], ...source, ...fingerprint } };
  const counted = await countPages(data, filename, override);
  return {
    kind: 'document',
    document: {
      type: counted.type,
      ...FORMATS[counted.type],
      pageCount: counted.pageCount,
      pageCountSource: counted.source,
      ...fingerprint,
    },
  };
}

/** A document printed as it is (a PDF rendered from a source included); a source to lay out first is refused. */
export async function inspectDocument(
  data: Buffer,
  filename: string | null,
  opts: InspectOptions = {},
): Promise<InspectedDocument> {
  const upload = await inspectUpload(data, filename, opts);
  if (upload.kind === 'source') throw refuse(`a ${upload.source.type.toUpperCase()} document must be laid out first`);
  return upload.document;
}

type Counted = { type: DocumentType; pageCount: number; source: InspectedDocument['pageCountSource'] };

const HTML_NAME = /\.html?$/i;
const MARKDOWN_NAME = /\.(?:md|markdown)$/i;

/** The text dialect a name or declared type gives: HTML, Markdown, or neither. */
function textDialect(filename: string | null, contentType: string | null): 'html' | 'markdown' | null {
  const name = filename?.trim() ?? '';
  const declared = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (HTML_NAME.test(name) || declared === 'text/html') return 'html';
  if (MARKDOWN_NAME.test(name) || declared === 'text/markdown' || declared === 'text/x-markdown') return 'markdown';
  return null;
}

/** HTML, Markdown and DOCX uploads, checked; null for a document printed as it is. */
async function sourceOf(
  data: Buffer,
  filename: string | null,
  contentType: string | null,
  override: number | undefined,
): Promise<{ type: SourceType; text: string | null } | null> {
  if (data.subarray(0, 1024).includes('%PDF-') || sniffImage(data)) return null;
  if (data.subarray(0, 4).equals(Buffer.from('PK\x03\x04', 'latin1'))) {
    await checkDocx(data);
    return { type: 'docx', text: null };
  }
  if (data.subarray(0, 8).equals(OLE_SIGNATURE)) return null;
  const dialect = textDialect(filename, contentType);
  if (!dialect) return null;
  const what = dialect === 'html' ? 'HTML' : 'Markdown';
  const text = decodeText(data);
  if (text === null) throw refuse(`the ${what} document is not UTF-8 text (or holds control characters)`);
  if (data.length > MAX_HTML_BYTES)
    throw refuse(
      `the ${what} document is ${data.length} bytes; the renderer takes at most ${MAX_HTML_BYTES} bytes (2 MB)`,
    );
  if (override !== undefined)
    throw refusePageCount(
      `page_count applies only to DOCX, TXT and CSV documents; ${dialect === 'html' ? 'an HTML' : 'a Markdown'} letter's pages are counted from its layout`,
    );
  return { type: dialect, text: text.replace(/^\uFEFF/, '') };
}

async function countPages(data: Buffer, filename: string | null, override: number | undefined): Promise<Counted> {
  if (data.subarray(0, 1024).includes('%PDF-')) {
    if (override !== undefined)
      throw refusePageCount(
        "page_count applies only to DOCX, TXT and CSV documents; a PDF's pages are counted from the file",
      );
    const pageCount = await countPdfPages(data);
    if (pageCount > MAX_OUTBOUND_PAGES) throw tooManyPages('the PDF', `more than ${MAX_OUTBOUND_PAGES}`);
    return { type: 'pdf', pageCount, source: 'pdf' };
  }
  if (sniffImage(data)) {
    if (override !== undefined)
      throw refusePageCount('page_count applies only to DOCX, TXT and CSV documents; an image is always 1 page');
    const image = await checkImage(data, 'document');
    return { type: image.type, pageCount: 1, source: 'image' };
  }
  if (data.subarray(0, 8).equals(OLE_SIGNATURE)) {
    throw refuse('Word 97-2003 (.doc) files and password-protected Office files are not accepted; send DOCX or PDF');
  }
  const text = decodeText(data);
  if (text === null) throw refuse(`unsupported document type: send a ${ACCEPTED_FORMATS} file (text must be UTF-8)`);
  const type = looksLikeCsv(text, filename) ? 'csv' : 'txt';
  if (override !== undefined) return { type, pageCount: override, source: 'override' };
  const pageCount = textPageCount(text);
  if (pageCount > MAX_OUTBOUND_PAGES) throw tooManyPages(`the ${type.toUpperCase()} document`, pageCount);
  return { type, pageCount, source: 'text_layout' };
}

// ---------------------------------------------------------------------------- PDF

/**
 * pdf-lib's own parser with two guards: a deadline checked on every object, and a
 * budget for the object and cross-reference streams that pdf-lib inflates while
 * loading (a few KB of deflate can expand to gigabytes). Each such stream is first
 * decoded here, in 64 KB steps, with pdf-lib's own decoders, so the check sees exactly
 * what the parser would.
 */
class GuardedPdfParser extends PDFParser {
  /** Set when a guard refused; pdf-lib wraps errors thrown inside its object loop. */
  refusal: ApiError | null = null;
  private decodedBudget = MAX_PDF_DECODED_BYTES;
  private readonly deadline = Date.now() + PDF_PARSE_TIME_LIMIT_MS;

  constructor(bytes: Uint8Array) {
    super(bytes, ParseSpeeds.Fast, true, false);
  }

  override parseObject(): PDFObject {
    if (Date.now() > this.deadline) this.fail(refuse('the PDF is too complex to read'));
    const object = super.parseObject();
    if (object instanceof PDFRawStream) {
      const type = object.dict.lookup(PDFName.of('Type'));
      if (type === PDFName.of('ObjStm') || type === PDFName.of('XRef')) this.chargeDecodedBytes(object);
    }
    return object;
  }

  private chargeDecodedBytes(stream: PDFRawStream): void {
    const decoded = decodePDFRawStream(stream);
    const step = 64 * 1024;
    let total = 0;
    for (;;) {
      const chunk = decoded.getBytes(step);
      total += chunk.length;
      if (total > this.decodedBudget) this.fail(refuse('the PDF expands to too much data when decompressed'));
      if (chunk.length < step) break;
    }
    this.decodedBudget -= total;
  }

  private fail(error: ApiError): never {
    this.refusal = error;
    throw error;
  }
}

/**
 * Pages of a PDF read with the guards above. Counting stops past `limit` (the answer is
 * then limit + 1), so a caller with its own page limit (batch templates) can refuse.
 */
export async function countPdfPages(data: Buffer, limit = MAX_OUTBOUND_PAGES): Promise<number> {
  // The standard puts %%EOF in the last 1,024 bytes; a cut-off upload loses it.
  if (!data.subarray(Math.max(0, data.length - 1024)).includes('%%EOF')) {
    throw refuse('the PDF is truncated or corrupt (no %%EOF end marker)');
  }
  const parser = new GuardedPdfParser(data);
  let context: PDFContext;
  try {
    context = await parser.parseDocument();
  } catch {
    if (parser.refusal) throw parser.refusal;
    // Encrypted object streams cannot be parsed, so the trailer is never reached.
    if (data.includes('/Encrypt')) throw refuse('encrypted PDFs are not accepted');
    throw refuse('the PDF could not be read: the file is corrupt or truncated');
  }
  if (context.lookup(context.trailerInfo.Encrypt)) throw refuse('encrypted PDFs are not accepted');
  const pages = walkPageTree(context, limit);
  if (pages === 0) throw refuse('the PDF has no pages');
  return pages;
}

/** Counts page leaves; a node reached twice (a loop or a shared subtree) is malformed. */
function walkPageTree(context: PDFContext, limit: number): number {
  const malformed = () => refuse('the PDF page tree is malformed');
  const catalog = context.lookup(context.trailerInfo.Root);
  if (!(catalog instanceof PDFDict)) throw refuse('the PDF has no document catalog');
  const seen = new Set<PDFObject>();
  const pending: (PDFObject | undefined)[] = [catalog.get(PDFName.of('Pages'))];
  let pages = 0;
  while (pending.length > 0) {
    const node = context.lookup(pending.pop());
    if (node === undefined || seen.has(node)) throw malformed();
    seen.add(node);
    if (node instanceof PDFPageLeaf) {
      pages += 1;
      if (pages > limit) return pages;
      continue;
    }
    if (!(node instanceof PDFPageTree)) throw malformed();
    const kids = node.lookup(PDFName.of('Kids'));
    if (!(kids instanceof PDFArray)) throw malformed();
    for (let i = kids.size() - 1; i >= 0; i--) pending.push(kids.get(i));
  }
  return pages;
}

// ---------------------------------------------------------------------------- DOCX

/**
 * A DOCX the word processor may open: a readable ZIP of at most 1,000 entries with a Word
 * main part, whose entries expand to at most 50 MB in all (each is inflated here as a
 * stream, with the budget checked as it goes, before LibreOffice sees the file). Pages
 * are not counted here: LibreOffice lays the document out (services/outbound-mail/documents.ts).
 */
export async function checkDocx(data: Buffer): Promise<void> {
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(data);
  } catch {
    throw refuse('the document looks like a ZIP archive but cannot be read');
  }
  const entries = Object.values(zip.files).filter((f) => !f.dir);
  if (entries.length > MAX_DOCX_ENTRIES) throw refuse(`the DOCX has more than ${MAX_DOCX_ENTRIES} parts`);
  if (!zip.file('[Content_Types].xml') || !zip.file('word/document.xml'))
    throw refuse('ZIP archives are accepted only as DOCX (Word) documents');
  const budget = { left: MAX_DOCX_PART_BYTES };
  for (const entry of entries) await readDocxPart(entry, budget);
}

/** A part's bytes, inflated as a stream that is paused and dropped once the budget is spent. */
function readDocxPart(file: JSZip.JSZipObject, budget: { left: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    let stream: NodeJS.ReadableStream;
    try {
      stream = file.nodeStream('nodebuffer');
    } catch {
      reject(refuse('the DOCX is corrupt: a part cannot be decompressed'));
      return;
    }
    stream.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > budget.left) {
        done = true;
        stream.pause();
        reject(refuse(`the DOCX expands to more than ${MAX_DOCX_PART_BYTES / (1024 * 1024)} MB when decompressed`));
        return;
      }
      chunks.push(chunk);
    });
    stream.on('error', () => {
      if (!done) reject(refuse('the DOCX is corrupt: a part cannot be decompressed'));
      done = true;
    });
    stream.on('end', () => {
      if (done) return;
      done = true;
      budget.left -= size;
      resolve(Buffer.concat(chunks));
    });
  });
}

// ---------------------------------------------------------------------------- text

/** UTF-8 text without NUL or other control characters (tab, line feed, form feed and carriage return are fine); null otherwise. */
function decodeText(data: Buffer): string | null {
  if (data.includes(0)) return null;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return null;
  }
  return /[\x01-\x08\x0b\x0e-\x1f\x7f]/.test(text) ? null : text;
}

const CSV_DELIMITERS = [',', ';', '\t', '|'];

/** A .csv name, or at least 3 non-empty lines that all have the same number (>= 1) of one delimiter outside quotes. */
function looksLikeCsv(text: string, filename: string | null): boolean {
  if (filename && /\.csv$/i.test(filename.trim())) return true;
  const lines = text
    .split(/\r\n|\n|\r/)
    .filter((l) => l.trim() !== '')
    .slice(0, 50);
  if (lines.length < 3) return false;
  return CSV_DELIMITERS.some((delimiter) => {
    const counts = lines.map((line) => {
      let count = 0;
      let quoted = false;
      for (const ch of line) {
        if (ch === '"') quoted = !quoted;
        else if (ch === delimiter && !quoted) count += 1;
      }
      return count;
    });
    return counts[0] >= 1 && counts.every((c) => c === counts[0]);
  });
}

/**
 * Printed pages of plain text: lines wrap at 80 columns (tabs stop every 8), 66 lines
 * fill a page, and a form feed starts a new page. At least 1.
 */
export function textPageCount(text: string): number {
  const sheets = text.replace(/\r\n?/g, '\n').split('\f');
  if (sheets.length > 1 && sheets[sheets.length - 1].replace(/\n/g, '') === '') sheets.pop();
  let pages = 0;
  for (const sheet of sheets) {
    const lines = sheet.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    let rows = 0;
    for (const line of lines) {
      let columns = 0;
      for (const ch of line) columns += ch === '\t' ? 8 - (columns % 8) : 1;
      rows += Math.max(1, Math.ceil(columns / TEXT_COLUMNS));
    }
    pages += Math.max(1, Math.ceil(rows / TEXT_LINES_PER_PAGE));
  }
  return pages;
}

/**
 * The lines of each printed page in the layout textPageCount counts (tabs expanded, long
 * lines wrapped at 80 columns, 66 lines a page, form feeds), for page previews. Counting
 * stays a separate pass that holds no text, since it runs on every upload before the page
 * limit; a property test holds the two to the same answer.
 */
export function textPages(text: string): string[][] {
  const sheets = text.replace(/\r\n?/g, '\n').split('\f');
  if (sheets.length > 1 && sheets[sheets.length - 1].replace(/\n/g, '') === '') sheets.pop();
  const pages: string[][] = [];
  for (const sheet of sheets) {
    const lines = sheet.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    const rows: string[] = [];
    for (const line of lines) {
      const chars: string[] = [];
      for (const ch of line) {
        if (ch === '\t') chars.push(...' '.repeat(8 - (chars.length % 8)));
        else chars.push(ch);
      }
      if (chars.length === 0) rows.push('');
      for (let i = 0; i < chars.length; i += TEXT_COLUMNS) rows.push(chars.slice(i, i + TEXT_COLUMNS).join(''));
    }
    if (rows.length === 0) rows.push('');
    for (let i = 0; i < rows.length; i += TEXT_LINES_PER_PAGE) pages.push(rows.slice(i, i + TEXT_LINES_PER_PAGE));
  }
  return pages;
}
