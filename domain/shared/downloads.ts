// How a stored file is offered under the name its sender gave it: an RFC 6266
// Content-Disposition value with the name as `filename*` (UTF-8, RFC 8187) and an ASCII
// `filename` fallback for clients that only read that one. A header value cannot carry
// characters beyond Latin-1 (Node refuses to send it), so a name such as 中文.txt must
// never go into `filename="..."` as it is. Used for direct downloads and for the
// response-content-disposition of signed object-store URLs. Pure: no I/O.
import { create } from 'content-disposition';
import { hasVisibleCharacter } from '../workflow-safe/visible-text';

export type DispositionType = 'attachment' | 'inline';

/** The name offered: the last path segment, without control or format characters, else `fallback`. */
export function downloadName(filename: string | null | undefined, fallback: string): string {
  const base = (filename ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[\p{Cc}\p{Cf}]/gu, '').trim();
  return hasVisibleCharacter(clean) ? clean : fallback;
}

/** ASCII stand-in: accents dropped (résumé -> resume), any other non-ASCII character becomes `_`. */
function asciiFallback(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x20-\x7e]/g, '_');
}

/** `attachment; filename="__.txt"; filename*=UTF-8''%E4%B8%AD%E6%96%87.txt` for 中文.txt. */
export function contentDisposition(
  filename: string | null | undefined,
  opts: { type?: DispositionType; fallbackName: string },
): string {
  const name = downloadName(filename, opts.fallbackName);
  return create(name, { type: opts.type ?? 'attachment', fallback: asciiFallback(name) });
}
