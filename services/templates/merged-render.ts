// Rendering many merged letters of one template (a merged batch) with the letter renderer
// (services/shared/rendering/html.ts), fast: rows are laid out together, a group of rows
// per Chromium document with a page break before each row, and the group's PDF is split
// into one PDF per row with pdf-lib. Where each row starts is read from the PDF itself: each
// row opens with an invisible link to https://merge-row.invalid/<nonce>/<index>, which
// Chromium prints as a link annotation on the row's first page; the nonce is new for every
// group, so no value in a row can pose as another row's marker. One Chromium print of a
// group costs about what one letter costs, which is where the speed comes from
// (docs/decisions/0143-merged-batches-render-per-row.md).
//
// Isolation: every value is HTML-escaped by the merge (the template itself was checked to
// have no unescaped tags), so a row can add text but no markup, and it cannot reach the
// other rows. A template whose layout depends on the whole document (fixed positioning that
// repeats on every page, counters, @page :first, tags outside <body>) is rendered one row
// per document instead, as is any group whose markers do not come out one per row in order
// and any group the renderer refuses (then each row is rendered alone, so only the row at
// fault fails).
import { randomBytes } from 'node:crypto';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFString } from 'pdf-lib';
import { MAX_HTML_BYTES } from '../../domain/outbound-mail/documents';
import { mergeTemplate, MergeVariables, missingVariables, requiredVariables } from '../../domain/templates/merge';
import { renderRefusalReason } from '../shared/rendering';
import type { HtmlRenderer } from '../shared/rendering/html';

/** Rows laid out in one Chromium document (fewer when their HTML would pass the renderer's 2 MB). */
export const ROWS_PER_GROUP = 25;

export interface MergeRow {
  values: MergeVariables;
}

export type RowOutcome =
  { ok: true; pdf: Buffer; pageCount: number } | { ok: false; reason: string; missing?: string[] };

export interface MergedRenderOptions {
  /** Pages one row may have (the mail type's allowance); a longer row fails with its page count. */
  maxPagesPerRow: number;
  /** Describes the allowance in a failure ("postcard_4x6 takes 1 page"). */
  allowance: string;
  /** A CSV cell left empty counts as a missing variable. */
  emptyIsMissing?: boolean;
  rowsPerGroup?: number;
}

const MARKER_HOST = 'https://merge-row.invalid/';
const LAYOUT_WIDE =
  /position\s*:\s*(?:fixed|running)|@page\s*:\s*(?:first|left|right|blank)|counter-(?:reset|increment|set)/i;
const BODY = /<body\b[^>]*>/i;
const BODY_END = /<\/body\s*>/i;

/** A template cut around its body: the part every row repeats, and what comes before and after once. */
export interface SplitTemplate {
  before: string;
  body: string;
  after: string;
  /** Rows can share a document (see the module comment). */
  groupable: boolean;
}

export function splitTemplate(html: string): SplitTemplate {
  const open = BODY.exec(html);
  const close = open ? BODY_END.exec(html.slice(open.index + open[0].length)) : null;
  const before = open ? html.slice(0, open.index + open[0].length) : '';
  const body = open ? html.slice(before.length, before.length + (close ? close.index : html.length)) : html;
  const after = open ? html.slice(before.length + body.length) : '';
  const tagsOutside =
    requiredVariables(before).length + requiredVariables(after).length > 0 || /\{\{/.test(before + after);
  return { before, body, after, groupable: !tagsOutside && !LAYOUT_WIDE.test(html) };
}

/** The row's first-page markers of a group's PDF, by 0-based page index. */
function rowStarts(pdf: PDFDocument, nonce: string): Map<number, number> {
  const starts = new Map<number, number>();
  const prefix = `${MARKER_HOST}${nonce}/`;
  pdf.getPages().forEach((page, pageIndex) => {
    const annots = page.node.lookupMaybe(PDFName.of('Annots'), PDFArray);
    if (!annots) return;
    const kept: number[] = [];
    for (let i = 0; i < annots.size(); i++) {
      const annot = annots.lookupMaybe(i, PDFDict);
      const uri = annot?.lookupMaybe(PDFName.of('A'), PDFDict)?.lookupMaybe(PDFName.of('URI'), PDFString)?.decodeText();
      if (uri?.startsWith(prefix)) {
        const row = Number(uri.slice(prefix.length));
        if (Number.isInteger(row) && !starts.has(row)) starts.set(row, pageIndex);
      } else kept.push(i);
    }
    // The markers are ours, not the letter's: they do not go into the pieces' PDFs.
    if (kept.length !== annots.size()) {
      const rest = kept.map((i) => annots.get(i));
      page.node.set(PDFName.of('Annots'), pdf.context.obj(rest));
    }
  });
  return starts;
}

function groupHtml(t: SplitTemplate, rows: MergeRow[], nonce: string): string {
  const sections = rows
    .map(
      (row, i) =>
        `<section class="merge-row"><a class="merge-row-marker" href="${MARKER_HOST}${nonce}/${i}"></a>${mergeTemplate(t.body, row.values)}</section>`,
    )
    .join('');
  const style =
    '<style>section.merge-row{break-before:page}a.merge-row-marker{display:block;height:1px;margin-bottom:-1px}</style>';
  return `${t.before}${style}${sections}${t.after}`;
}

export class MergedRenderer {
  constructor(private readonly renderer: HtmlRenderer) {}

  /** Renders every row; the outcomes are in the rows' order. */
  async render(templateHtml: string, rows: MergeRow[], opts: MergedRenderOptions): Promise<RowOutcome[]> {
    const required = requiredVariables(templateHtml);
    const outcomes: (RowOutcome | null)[] = rows.map((row) => {
      const missing = missingVariables(required, row.values, { emptyIsMissing: opts.emptyIsMissing });
      return missing.length > 0
        ? {
            ok: false,
            reason: `missing merge variable${missing.length === 1 ? '' : 's'}: ${missing.join(', ')}`,
            missing,
          }
        : null;
    });
    const todo = rows.map((row, i) => ({ row, i })).filter((_, i) => outcomes[i] === null);
    const split = splitTemplate(templateHtml);
    const groups: (typeof todo)[] = [];
    const size = split.groupable ? (opts.rowsPerGroup ?? ROWS_PER_GROUP) : 1;
    for (let at = 0; at < todo.length; at += size) groups.push(todo.slice(at, at + size));
    // As many groups at once as the renderer has slots: more would only wait in its queue.
    let next = 0;
    const worker = async () => {
      for (let g = next++; g < groups.length; g = next++) {
        const group = groups[g];
        const results =
          group.length === 1
            ? [await this.one(templateHtml, group[0].row, opts)]
            : await this.group(
                split,
                templateHtml,
                group.map((x) => x.row),
                opts,
              );
        group.forEach((x, k) => (outcomes[x.i] = results[k]));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.renderer.slotCount) }, worker));
    return outcomes as RowOutcome[];
  }

  /** One row alone in its own document. */
  private async one(templateHtml: string, row: MergeRow, opts: MergedRenderOptions): Promise<RowOutcome> {
    try {
      const r = await this.renderer.render(mergeTemplate(templateHtml, row.values), {
        field: 'template',
        limits: { maxPages: opts.maxPagesPerRow },
      });
      return { ok: true, pdf: r.pdf, pageCount: r.pageCount };
    } catch (err) {
      const refusal = renderRefusalReason(err);
      if (!refusal) throw err;
      if (refusal === 'too_many_pages')
        return { ok: false, reason: `the merged letter has more pages than allowed (${opts.allowance})` };
      return { ok: false, reason: `the merged letter could not be rendered (${refusal}): ${(err as Error).message}` };
    }
  }

  /** Rows laid out together and split by their markers; any doubt renders them one by one. */
  private async group(t: SplitTemplate, templateHtml: string, rows: MergeRow[], opts: MergedRenderOptions) {
    const nonce = randomBytes(8).toString('hex');
    const html = groupHtml(t, rows, nonce);
    const alone = () => Promise.all(rows.map((row) => this.one(templateHtml, row, opts)));
    if (Buffer.byteLength(html, 'utf8') > MAX_HTML_BYTES) return alone();
    let pdf: Buffer;
    try {
      // Room for every row at its allowance and one page more: a row past it is found below.
      pdf = (
        await this.renderer.render(html, {
          field: 'template',
          limits: { maxPages: rows.length * (opts.maxPagesPerRow + 1) },
        })
      ).pdf;
    } catch (err) {
      if (!renderRefusalReason(err)) throw err;
      return alone();
    }
    const doc = await PDFDocument.load(pdf, { updateMetadata: false });
    const starts = rowStarts(doc, nonce);
    const firstPages = rows.map((_, i) => starts.get(i));
    const ordered = firstPages.every((p, i) => p !== undefined && (i === 0 ? p === 0 : p > firstPages[i - 1]!));
    if (!ordered) return alone();
    const total = doc.getPageCount();
    const outcomes: RowOutcome[] = [];
    for (let i = 0; i < rows.length; i++) {
      const from = firstPages[i]!;
      const to = i + 1 < rows.length ? firstPages[i + 1]! : total;
      const pageCount = to - from;
      if (pageCount > opts.maxPagesPerRow) {
        outcomes.push({
          ok: false,
          reason: `the merged letter lays out to ${pageCount} pages; ${opts.allowance}`,
        });
        continue;
      }
      const piece = await PDFDocument.create({ updateMetadata: false });
      const pages = await piece.copyPages(
        doc,
        Array.from({ length: pageCount }, (_, k) => from + k),
      );
      for (const page of pages) piece.addPage(page);
      outcomes.push({ ok: true, pdf: Buffer.from(await piece.save({ useObjectStreams: true })), pageCount });
    }
    return outcomes;
  }
}
