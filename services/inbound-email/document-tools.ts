// The document tools behind inbound extraction: poppler's pdftotext (PDF text layer;
// Debian package poppler-utils, installed by scripts/stack.ts), pdf-lib for PDF metadata
// and jszip for DOCX text. OCR is services/inbound-email/ocr.ts. Everything runs locally; nothing is
// downloaded.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import JSZip from 'jszip';
import { PDFDocument } from 'pdf-lib';

const TOOL_TIMEOUT_MS = 120_000;

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { timeout: TOOL_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${cmd} failed: ${stderr?.toString().trim() || err.message}`));
        else resolve(stdout);
      },
    );
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

/**
 * The text layer of each page, twice: in reading order (pdftotext's default: columns
 * become separate blocks) and laid out (`-layout`: each line keeps its columns, so a
 * label and the value printed to its right or under it keep their positions).
 * pdftotext separates pages with form feeds.
 */
export async function pdfPageTexts(pdf: Buffer): Promise<Array<{ text: string; layout: string }>> {
  return withTempDir(async (dir) => {
    const file = path.join(dir, 'in.pdf');
    await writeFile(file, pdf);
    const pages = (out: string) => {
      const split = out.split('\f');
      if (split.length > 1 && split[split.length - 1].trim() === '') split.pop();
      return split.map((p) => p.replace(/[ \t]+\n/g, '\n'));
    };
    const reading = pages(await run('pdftotext', ['-enc', 'UTF-8', file, '-']));
    const layout = pages(await run('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-']));
    // Leading spaces of a laid-out page are its columns; only blank lines are trimmed.
    return reading.map((text, i) => ({ text: text.trim(), layout: (layout[i] ?? '').replace(/^\n+|\s+$/g, '') }));
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
  return paragraphs
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
