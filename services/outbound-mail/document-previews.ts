// Page images of an outbound piece's document, for the owner's review before approval.
// PDFs are rendered by poppler's pdftoppm in a child process (never on the event loop);
// TXT and CSV are laid out in the very lines that were counted and charged
// (domain/outbound-mail/documents.ts textPages), typeset in Courier with pdf-lib and rendered the same
// way; an image document is its own single page. HTML, Markdown and DOCX letters are stored
// as the PDF they were laid out to at submission, so they are PDFs here. Rendered pages are cached on disk by
// the document's SHA-256 and page number, so a page is rendered once per process host.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { TEXT_COLUMNS, TEXT_LINES_PER_PAGE, textPages } from '../../domain/outbound-mail/documents';
import { errors } from '../../domain/shared/errors';
import type { AuthContext } from '../accounts/auth';
import type { Deps } from '../shared/deps';
import { visibleMailRow } from './read';

const run = promisify(execFile);
/**
 * preview, 60 dpi: a US Letter page is 510 x 660 pixels, enough to read a letter on a phone;
 * full, 150 dpi (1275 x 1650): the page opened at the full width of a screen, small print legible.
 */
export const PAGE_IMAGE_DPI = { preview: 60, full: 150 } as const;
export type PageImageSize = keyof typeof PAGE_IMAGE_DPI;
const RENDER_TIMEOUT_MS = 20_000;

export interface PagePreview {
  contentType: string;
  body: Buffer;
}

/** Which documents have page images: every stored type but the Word files of pieces from before DOCX letters were laid out at submission. */
export function hasPageImages(documentType: string): boolean {
  return ['pdf', 'txt', 'csv', 'jpg', 'png'].includes(documentType);
}

/** A plain-text document as a PDF of exactly its counted pages (80 columns of Courier, 66 lines a page). */
async function textAsPdf(text: string): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Courier);
  const [width, height] = [612, 792];
  const size = Math.min(10, (width - 72) / (TEXT_COLUMNS * 0.6));
  const leading = (height - 72) / TEXT_LINES_PER_PAGE;
  for (const lines of textPages(text)) {
    const page = doc.addPage([width, height]);
    lines.forEach((line, i) => {
      // Courier covers WinAnsi; anything else shows as '?' rather than failing the preview.
      const printable = [...line].map((ch) => (/[\x20-\x7e\xa0-\xff]/.test(ch) ? ch : '?')).join('');
      if (printable.trim()) page.drawText(printable, { x: 36, y: height - 36 - leading * (i + 1), size, font });
    });
  }
  return Buffer.from(await doc.save());
}

async function renderPdfPage(pdf: Buffer, page: number, dpi: number, out: string): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'preview-'));
  try {
    const input = path.join(work, 'in.pdf');
    await writeFile(input, pdf);
    await run(
      'pdftoppm',
      [
        '-png',
        '-r',
        String(dpi),
        '-f',
        String(page),
        '-l',
        String(page),
        '-singlefile',
        input,
        path.join(work, 'page'),
      ],
      { timeout: RENDER_TIMEOUT_MS },
    );
    // rename within the cache directory's file system is atomic: readers see a whole file or none.
    const tmpOut = `${out}.${process.pid}.${Date.now()}`;
    await writeFile(tmpOut, await readFile(path.join(work, 'page.png')));
    await rename(tmpOut, out);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Page `page` (1-based) of a piece the caller may see (404 otherwise, as GET /v1/mail/{id}), at `size`. */
export async function mailDocumentPage(
  deps: Deps,
  auth: AuthContext,
  mailId: string,
  page: number,
  size: PageImageSize = 'preview',
): Promise<PagePreview> {
  const dpi = PAGE_IMAGE_DPI[size];
  const row = await visibleMailRow(deps, auth, mailId);
  if (!Number.isInteger(page) || page < 1 || page > row.page_count) throw errors.notFound('Page');
  const type = row.document_type as string;
  if (!hasPageImages(type)) throw errors.notFound('Page image');
  if (type === 'jpg' || type === 'png') {
    return { contentType: type === 'jpg' ? 'image/jpeg' : 'image/png', body: await deps.storage.get(row.document_key) };
  }
  await mkdir(deps.config.previewCacheDir, { recursive: true });
  const cached = path.join(deps.config.previewCacheDir, `${row.document_sha256}-${dpi}-${page}.png`);
  const hit = await readFile(cached).catch(() => null);
  if (hit) return { contentType: 'image/png', body: hit };
  const data = await deps.storage.get(row.document_key);
  const pdf = type === 'pdf' ? data : await textAsPdf(data.toString('utf8'));
  try {
    await renderPdfPage(pdf, page, dpi, cached);
  } catch (err) {
    deps.log.warn({ err, outbound_mail_id: row.id, page }, 'rendering a page preview failed');
    throw errors.unavailable('PREVIEW_UNAVAILABLE', 'The page image could not be rendered.', {
      suggestedAction: 'Open the document itself instead.',
    });
  }
  return { contentType: 'image/png', body: await readFile(cached) };
}
