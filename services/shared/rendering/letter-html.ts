// The HTML a letter is printed from: Markdown turned into HTML by markdown-it (CommonMark,
// raw HTML off, so Markdown is never a way to smuggle HTML in), and any letter HTML given
// the renderer's head: a Content-Security-Policy that lets the page load nothing but
// data: URIs (the first of the renderer's three walls, docs/decisions/0140-html-letters-rendered-by-chromium.md)
// and the print stylesheet (print.css), placed before the sender's own markup so the
// sender's CSS wins. CPU only, no I/O after the stylesheet is read at load.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import MarkdownIt from 'markdown-it';

/** The print stylesheet, documented in docs/agents.md. */
export const PRINT_STYLESHEET = readFileSync(path.join(__dirname, 'print.css'), 'utf8');

/**
 * Everything may come from data: URIs, nothing from anywhere else; scripts not at all (the
 * browser context has JavaScript off as well). Inline styles and style attributes are the
 * sender's layout, so they stay.
 */
export const LETTER_CSP =
  "default-src 'none'; img-src data:; font-src data:; media-src data:; style-src 'unsafe-inline' data:; " +
  "script-src 'none'; object-src 'none'; frame-src 'none'; child-src 'none'; form-action 'none'; base-uri 'none'";

const HEAD = `<meta http-equiv="Content-Security-Policy" content="${LETTER_CSP}"><style>\n${PRINT_STYLESHEET}\n</style>`;

/** A leading byte-order mark, comments and the doctype: the head goes after them, so the doctype still decides the mode. */
const PROLOGUE = /^\uFEFF?(?:\s|<!--[\s\S]*?-->)*(?:<!doctype[^>]*>)?/i;

/**
 * The letter's HTML with the renderer's head in front of the sender's markup. Before
 * `<html>` the parser puts it into the document's head whatever follows, and a CSP there
 * governs everything after it (a later policy can only add restrictions).
 */
export function printableHtml(html: string): string {
  const prologue = PROLOGUE.exec(html)?.[0] ?? '';
  return `${prologue}${HEAD}${html.slice(prologue.length)}`;
}

const markdown = new MarkdownIt('default', { html: false, linkify: false, typographer: true });

const PAGE_BREAK = /^\\(?:pagebreak|newpage)$/;

// A paragraph holding only \pagebreak (or \newpage) becomes a page break.
markdown.core.ruler.push('page_breaks', (state) => {
  const tokens = state.tokens;
  for (let i = 0; i + 2 < tokens.length; i++) {
    const [open, inline, close] = [tokens[i], tokens[i + 1], tokens[i + 2]];
    if (open.type !== 'paragraph_open' || close.type !== 'paragraph_close' || !PAGE_BREAK.test(inline.content.trim()))
      continue;
    const pageBreak = new state.Token('html_block', '', 0);
    pageBreak.content = '<div class="page-break"></div>\n';
    tokens.splice(i, 3, pageBreak);
  }
  return false;
});

/** A Markdown letter as a whole HTML document, laid out by the print stylesheet's .markdown-letter rules. */
export function markdownLetterHtml(source: string): string {
  const body = markdown.render(source.replace(/^\uFEFF/, ''));
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Letter</title></head><body><main class="markdown-letter">\n${body}</main></body></html>`;
}
