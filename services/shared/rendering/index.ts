// The letter renderers of one process (API or worker), built with its deps and closed
// with them (closeDeps): nothing starts until the first document needs it.
//
// The interface for everything that turns letter content into a printable PDF (letters
// today; templates with merge variables and merged batches build on it):
//   deps.renderers.html.render(html, { field, limits })  -> { pdf, pageCount, blockedRequests, renderMs }
//   deps.renderers.docx.convert(docx, { field })          -> { pdf, convertMs }
//   markdownLetterHtml(markdown)                          -> the HTML of a Markdown letter
// A document the renderer refuses is a 400 ApiError naming `field`, with
// details.render_refusal (refusals.ts: renderRefusalReason reads it); a renderer that is
// busy or cannot start is a 503 the caller retries. Both run anywhere a Deps exists: the
// API (a dry run, a submission) and the worker (an activity).
import type { RenderingSettings } from '../../../config';
import type { Logger } from '../logger';
import { DocxConverter } from './docx';
import { HtmlRenderer } from './html';

export { markdownLetterHtml, PRINT_STYLESHEET } from './letter-html';
export { renderRefusal, renderRefusalReason } from './refusals';
export type { RenderRefusalReason } from './refusals';
export type { HtmlRenderLimits, RenderedPdf, RenderHtmlOptions } from './html';
export type { ConvertedPdf } from './docx';

export interface Renderers {
  html: HtmlRenderer;
  docx: DocxConverter;
  close(): Promise<void>;
}

export function createRenderers(settings: RenderingSettings, log: Logger): Renderers {
  const html = new HtmlRenderer(settings, log);
  const docx = new DocxConverter(settings, log);
  return {
    html,
    docx,
    async close() {
      await Promise.all([html.close(), docx.close()]);
    },
  };
}
