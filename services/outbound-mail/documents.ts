// A submission's document as it will print. A PDF, image or text file prints as it was
// sent; an HTML, Markdown or DOCX letter is laid out into a US Letter PDF first (HTML and
// Markdown by headless Chromium, DOCX by LibreOffice: services/shared/rendering/), and that
// PDF is the piece's document from then on: its pages are counted and priced, its proof
// rendered, its page images shown to the owner and the facility prints it. What was sent
// is kept as the piece's source. Nothing is stored here; a document that cannot be laid
// out is refused (400 on `document`) before anything is priced, stored or charged.
import type { Deps } from '../shared/deps';
import {
  countPdfPages,
  InspectedDocument,
  inspectDocument,
  inspectUpload,
  MAX_OUTBOUND_PAGES,
  SourceDocument,
  SourceType,
} from '../../domain/outbound-mail/documents';
import { errors } from '../../domain/shared/errors';
import { markdownLetterHtml } from '../shared/rendering';

/** How a laid-out letter's pages were counted. */
export type LaidOutPageCountSource = 'html_layout' | 'markdown_layout' | 'docx_layout' | 'override';

/** What prints: inspected as any document, with the page count that prices it. */
export type PrintedDocument = Omit<InspectedDocument, 'pageCountSource'> & {
  pageCountSource: InspectedDocument['pageCountSource'] | LaidOutPageCountSource;
  data: Buffer;
  filename: string | null;
};

/** What the sender sent, when it was laid out into the printed PDF. */
export type LetterSource = SourceDocument & {
  data: Buffer;
  filename: string | null;
  /** Pages of the laid-out PDF (page_count may differ when a DOCX's page_count decided the price). */
  layoutPageCount: number;
};

export interface PreparedDocument {
  printed: PrintedDocument;
  source: LetterSource | null;
  /** Dry-run warnings about the layout: resources the renderer left out, a page_count that differs from the layout. */
  warnings: Record<string, unknown>[];
}

const LAYOUT_SOURCE: Record<SourceType, LaidOutPageCountSource> = {
  html: 'html_layout',
  markdown: 'markdown_layout',
  docx: 'docx_layout',
};

/** `letter.html` prints as `letter.pdf`. */
function printedFilename(filename: string | null): string | null {
  if (!filename) return null;
  const base = filename.replace(/\.[^./\\]*$/, '');
  return `${base || 'letter'}.pdf`;
}

export async function prepareDocument(
  deps: Deps,
  data: Buffer,
  filename: string | null,
  opts: { pageCountOverride?: number; contentType?: string | null; field?: string } = {},
): Promise<PreparedDocument> {
  const upload = await inspectUpload(data, filename, opts);
  if (upload.kind === 'document')
    return { printed: { ...upload.document, data, filename }, source: null, warnings: [] };

  const source = upload.source;
  const warnings: Record<string, unknown>[] = [];
  let pdf: Buffer;
  if (source.type === 'docx') {
    pdf = (await deps.renderers.docx.convert(data)).pdf;
  } else {
    const html = source.type === 'markdown' ? markdownLetterHtml(source.text!) : source.text!;
    const rendered = await deps.renderers.html.render(html, { field: opts.field ?? 'document' });
    pdf = rendered.pdf;
    if (rendered.blockedRequests.length > 0)
      warnings.push({
        code: 'document_resources_blocked',
        message:
          `The renderer loads nothing from the network or the file system, so ${rendered.blockedRequests.length === 1 ? 'a resource' : 'resources'} ` +
          'the document refers to were left out of the letter; embed images and fonts as data: URIs.',
        urls: rendered.blockedRequests,
      });
  }
  const layoutPages = await countPdfPages(pdf);
  if (layoutPages > MAX_OUTBOUND_PAGES)
    throw errors.validation([
      {
        path: 'document',
        message: `the ${source.type.toUpperCase()} lays out to more than ${MAX_OUTBOUND_PAGES} pages; the most an outbound piece may have is ${MAX_OUTBOUND_PAGES}`,
      },
    ]);
  const printedName = printedFilename(filename);
  const inspected = await inspectDocument(pdf, printedName ?? 'letter.pdf');
  const override = source.type === 'docx' ? opts.pageCountOverride : undefined;
  if (override !== undefined && override !== layoutPages)
    warnings.push({
      code: 'page_count_differs_from_layout',
      message: `page_count ${override} decides the price, but the DOCX lays out to ${layoutPages} page${layoutPages === 1 ? '' : 's'}, and every one of them is printed.`,
      page_count: override,
      layout_page_count: layoutPages,
    });
  return {
    printed: {
      ...inspected,
      pageCount: override ?? inspected.pageCount,
      pageCountSource: override !== undefined ? 'override' : LAYOUT_SOURCE[source.type],
      data: pdf,
      filename: printedName,
    },
    source: { ...source, data, filename, layoutPageCount: layoutPages },
    warnings,
  };
}
