// How the console shows text it did not write (agents' names, addresses, notes, proposals,
// OCR text, receivers' answers, applications' names): escaped, isolated from the text around
// it (<bdi>), and with every character the API refuses as hidden (bidi controls, other
// format characters, control characters, and line breaks in one-line text) shown as a mark
// that names it. The API refuses such characters now (decision 0110); text stored before,
// or read from outside, may still hold them, and must not read as something else here.
import {
  describeCharacter,
  splitAtHiddenCharacters,
  type HiddenCharacter,
  type TextLayout,
} from '../../domain/workflow-safe/visible-text';
import { formatAddressLines, type MailAddress } from '../../domain/outbound-mail/address';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

const hex = (c: HiddenCharacter) => describeCharacter(c.codePoint).split(' ')[0];

function mark(c: HiddenCharacter): string {
  const name = describeCharacter(c.codePoint);
  return `<span class="hidden-char" title="${escapeHtml(name)}"><span class="sr-only">hidden character </span>${escapeHtml(hex(c))}</span>`;
}

/** HTML for `value`: output it unescaped (`<%~`), it is escaped here. Empty for null. */
export function shownText(value: unknown, layout: TextLayout): string {
  if (value === null || value === undefined || value === '') return '';
  const html = splitAtHiddenCharacters(String(value), layout)
    .map((p) => (typeof p === 'string' ? escapeHtml(p) : mark(p)))
    .join('');
  return `<bdi>${html}</bdi>`;
}

/** Plain text for attributes and titles (escaped by the template as usual): hidden characters become [U+XXXX]. */
export function labelText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return splitAtHiddenCharacters(String(value), 'single_line')
    .map((p) => (typeof p === 'string' ? p : `[${hex(p)}]`))
    .join('');
}

/** An address block (name, company, lines, city line, country) as HTML lines, each shown as one line. */
export function shownAddress(a: MailAddress | null | undefined): string {
  if (!a) return '';
  return formatAddressLines(a)
    .map((l) => shownText(l, 'single_line'))
    .join('<br>');
}
