// The document tools behind inbound extraction: poppler's pdftotext (PDF text layer) and
// pdftoppm (rasterising scanned pages), Tesseract OCR (Debian packages tesseract-ocr,
// tesseract-ocr-eng, poppler-utils; scripts/stack.ts installs them), pdf-lib for PDF
// metadata and jszip for DOCX text. Everything runs locally; nothing is downloaded.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import JSZip from 'jszip';
import { PDFDocument } from 'pdf-lib';
import { OcrPage, parseTesseractTsv } from '../domain/inbound-ocr';

const TOOL_TIMEOUT_MS = 120_000;
export const OCR_DPI = 300;

function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: TOOL_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8', env: opts.env ?? process.env }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} failed: ${stderr?.toString().trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'inbound-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The text layer of each page (pdftotext separates pages with form feeds). */
export async function pdfPageTexts(pdf: Buffer): Promise<string[]> {
  return withTempDir(async (dir) => {
    const file = path.join(dir, 'in.pdf');
    await writeFile(file, pdf);
    const out = await run('pdftotext', ['-enc', 'UTF-8', file, '-']);
    const pages = out.split('\f');
    if (pages.length > 1 && pages[pages.length - 1].trim() === '') pages.pop();
    return pages.map((p) => p.replace(/[ \t]+\n/g, '\n').trim());
  });
}

export interface PdfMetadata {
  page_count: number;
  title: string | null;
  author: string | null;
  subject: string | null;
  creator: string | null;
  producer: string | null;
  creation_date: string | null;
}

export async function pdfMetadata(pdf: Buffer): Promise<PdfMetadata> {
  const doc = await PDFDocument.load(pdf, { ignoreEncryption: true, updateMetadata: false });
  const clean = (v: string | undefined) => (v && v.trim() ? v.trim() : null);
  return {
    page_count: doc.getPageCount(),
    title: clean(doc.getTitle()),
    author: clean(doc.getAuthor()),
    subject: clean(doc.getSubject()),
    creator: clean(doc.getCreator()),
    producer: clean(doc.getProducer()),
    creation_date: doc.getCreationDate()?.toISOString() ?? null,
  };
}

/** OCR of one image file (PNG, JPEG, TIFF, GIF, WebP) with Tesseract's English model. */
export async function ocrImageFile(file: string): Promise<OcrPage> {
  // One OCR thread per process: the machine's cores are shared with the API and worker.
  const tsv = await run('tesseract', [file, 'stdout', '-l', 'eng', '--psm', '3', 'tsv'], { env: { ...process.env, OMP_THREAD_LIMIT: '1' } });
  return parseTesseractTsv(tsv);
}

export async function ocrImage(image: Buffer, extension: string): Promise<OcrPage> {
  return withTempDir(async (dir) => {
    const file = path.join(dir, `in.${extension || 'img'}`);
    await writeFile(file, image);
    return ocrImageFile(file);
  });
}

/** Rasterises the given pages (1-based) of a PDF at OCR resolution and OCRs each; `onPage` runs after each page. */
export async function ocrPdf(pdf: Buffer, pages: number[], onPage: (page: number) => void = () => undefined): Promise<OcrPage[]> {
  return withTempDir(async (dir) => {
    const file = path.join(dir, 'in.pdf');
    await writeFile(file, pdf);
    const out: OcrPage[] = [];
    for (const page of pages) {
      const base = path.join(dir, `page-${page}`);
      await run('pdftoppm', ['-r', String(OCR_DPI), '-gray', '-png', '-singlefile', '-f', String(page), '-l', String(page), file, base]);
      out.push(await ocrImageFile(`${base}.png`));
      onPage(page);
    }
    return out;
  });
}

function decodeXmlEntities(s: string): string {
  return s.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-f]+);/gi, (_, e: string) => {
    const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
    if (named[e.toLowerCase()]) return named[e.toLowerCase()];
    return String.fromCodePoint(e[1].toLowerCase() === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
  });
}

/** Paragraph text of a DOCX (word/document.xml), tabs and line breaks kept. */
export async function docxText(docx: Buffer): Promise<string> {
  const zip = await JSZip.loadAsync(docx);
  const entry = zip.file('word/document.xml');
  if (!entry) throw new Error('word/document.xml is missing');
  const xml = await entry.async('string');
  const paragraphs = xml.split(/<\/w:p>/).map((p) => {
    let out = '';
    for (const m of p.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>|<w:(tab|br|cr)\/>/g)) {
      out += m[2] === 'tab' ? '\t' : m[2] ? '\n' : decodeXmlEntities(m[1]);
    }
    return out;
  });
  return paragraphs.join('\n').replace(/\n{3,}/g, '\n\n').trim();
}
