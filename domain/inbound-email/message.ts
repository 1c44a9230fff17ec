// Rules for a raw inbound email before anything is stored: is it an RFC 5322 message at
// all, which alias address does it go to, what are its attachments really (magic bytes,
// not names), and which attachments are refused outright. Pure: no I/O.

/** Why a raw message is not accepted as an email; null when its shape is acceptable. */
export function messageShapeProblem(raw: Buffer): string | null {
  if (raw.length === 0) return 'the message is empty';
  const text = raw.subarray(0, Math.min(raw.length, 256 * 1024)).toString('latin1');
  const end = headerEnd(text);
  const block = end === -1 ? text : text.slice(0, end);
  if (block.includes('\u0000')) return 'the header section contains NUL bytes';
  const lines = block.split(/\r?\n/);
  // An mbox separator line ("From sender date") may precede the headers.
  if (lines.length && /^From /.test(lines[0])) lines.shift();
  if (!lines.length || lines[0] === '') return 'the message has no header section';
  let sawFrom = false;
  for (const [i, line] of lines.entries()) {
    if (/^[ \t]/.test(line)) {
      if (i === 0) return 'the first header line is a continuation line';
      continue;
    }
    // Real header names are letters, digits and dashes (RFC 5322 allows more, mail never uses it).
    const field = /^([A-Za-z0-9][A-Za-z0-9_-]*)[ \t]*:/.exec(line);
    if (!field) return `header line ${i + 1} is not "Name: value"`;
    if (/^(from|sender)$/i.test(field[1])) sawFrom = true;
  }
  if (!sawFrom) return 'the message has no From header';
  return null;
}

function headerEnd(text: string): number {
  const crlf = text.indexOf('\r\n\r\n');
  const lf = text.indexOf('\n\n');
  if (crlf === -1) return lf;
  if (lf === -1) return crlf;
  return Math.min(crlf, lf);
}

/** `Local@Domain` split and lower-cased; a `+tag` sub-address is dropped. Null when not an address. */
export function parseAliasAddress(address: string): { localPart: string; domain: string } | null {
  const trimmed = address.trim().replace(/^<|>$/g, '').toLowerCase();
  const at = trimmed.lastIndexOf('@');
  if (at <= 0 || at === trimmed.length - 1) return null;
  const local = trimmed.slice(0, at).split('+')[0];
  const domain = trimmed.slice(at + 1);
  if (!local || !/^[a-z0-9.-]+$/.test(domain)) return null;
  return { localPart: local, domain };
}

/** A name that is safe as the last segment of a storage key: no paths, no control characters. */
export function safeFilename(name: string | null | undefined, fallback = 'attachment'): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^[._]+/, '')
    .slice(-100);
  return cleaned || fallback;
}

export type ContentFamily = 'pdf' | 'image' | 'docx' | 'zip' | 'text' | 'executable' | 'unknown';

export interface Sniffed {
  family: ContentFamily;
  contentType: string;
}

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const BY_EXTENSION: Record<string, Sniffed> = {
  pdf: { family: 'pdf', contentType: 'application/pdf' },
  png: { family: 'image', contentType: 'image/png' },
  jpg: { family: 'image', contentType: 'image/jpeg' },
  jpeg: { family: 'image', contentType: 'image/jpeg' },
  gif: { family: 'image', contentType: 'image/gif' },
  tif: { family: 'image', contentType: 'image/tiff' },
  tiff: { family: 'image', contentType: 'image/tiff' },
  webp: { family: 'image', contentType: 'image/webp' },
  docx: { family: 'docx', contentType: DOCX },
  zip: { family: 'zip', contentType: 'application/zip' },
  txt: { family: 'text', contentType: 'text/plain' },
  text: { family: 'text', contentType: 'text/plain' },
  md: { family: 'text', contentType: 'text/plain' },
  csv: { family: 'text', contentType: 'text/csv' },
};

/** Extensions of programs and scripts: never accepted, whatever the bytes are. */
const EXECUTABLE_EXTENSIONS = new Set([
  'exe',
  'dll',
  'com',
  'scr',
  'msi',
  'bat',
  'cmd',
  'js',
  'jse',
  'vbs',
  'vbe',
  'wsf',
  'ps1',
  'sh',
  'jar',
  'app',
  'apk',
  'lnk',
  'hta',
  'cpl',
  'pif',
]);

const BY_CONTENT_TYPE: Record<string, Sniffed> = Object.fromEntries(
  Object.values(BY_EXTENSION).map((s) => [s.contentType, s]),
);

export function extensionOf(filename: string): string {
  const m = /\.([A-Za-z0-9]{1,8})$/.exec(filename);
  return m ? m[1].toLowerCase() : '';
}

function startsWith(buf: Buffer, bytes: number[], at = 0): boolean {
  if (buf.length < at + bytes.length) return false;
  return bytes.every((b, i) => buf[at + i] === b);
}

/** What the bytes are, from magic numbers (never from the name). */
export function sniffContent(buf: Buffer): Sniffed {
  if (buf.subarray(0, 1024).includes('%PDF-')) return { family: 'pdf', contentType: 'application/pdf' };
  if (startsWith(buf, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    return { family: 'image', contentType: 'image/png' };
  if (startsWith(buf, [0xff, 0xd8, 0xff])) return { family: 'image', contentType: 'image/jpeg' };
  if (buf.subarray(0, 6).toString('latin1') === 'GIF87a' || buf.subarray(0, 6).toString('latin1') === 'GIF89a')
    return { family: 'image', contentType: 'image/gif' };
  if (startsWith(buf, [0x49, 0x49, 0x2a, 0x00]) || startsWith(buf, [0x4d, 0x4d, 0x00, 0x2a]))
    return { family: 'image', contentType: 'image/tiff' };
  if (buf.subarray(0, 4).toString('latin1') === 'RIFF' && buf.subarray(8, 12).toString('latin1') === 'WEBP')
    return { family: 'image', contentType: 'image/webp' };
  if (startsWith(buf, [0x50, 0x4b, 0x03, 0x04])) {
    // Entry names in a zip's local headers are stored uncompressed.
    return buf.includes('word/document.xml')
      ? { family: 'docx', contentType: DOCX }
      : { family: 'zip', contentType: 'application/zip' };
  }
  if (
    startsWith(buf, [0x4d, 0x5a]) ||
    startsWith(buf, [0x7f, 0x45, 0x4c, 0x46]) ||
    startsWith(buf, [0xfe, 0xed, 0xfa, 0xce]) ||
    startsWith(buf, [0xfe, 0xed, 0xfa, 0xcf]) ||
    startsWith(buf, [0xce, 0xfa, 0xed, 0xfe]) ||
    startsWith(buf, [0xcf, 0xfa, 0xed, 0xfe]) ||
    startsWith(buf, [0xca, 0xfe, 0xba, 0xbe]) ||
    startsWith(buf, [0x23, 0x21])
  ) {
    return { family: 'executable', contentType: 'application/octet-stream' };
  }
  if (looksLikeText(buf)) return { family: 'text', contentType: 'text/plain' };
  return { family: 'unknown', contentType: 'application/octet-stream' };
}

function looksLikeText(buf: Buffer): boolean {
  const sample = buf.subarray(0, 8192);
  if (!sample.length) return true;
  let control = 0;
  for (const b of sample) {
    if (b === 0) return false;
    if (b < 0x09 || (b > 0x0d && b < 0x20)) control++;
  }
  return control / sample.length < 0.02;
}

export type AttachmentVerdict =
  | { action: 'accept'; contentType: string; family: ContentFamily; mismatch: boolean; expected: string | null }
  | { action: 'refuse'; reason: string };

/**
 * Decides what to do with one attachment. Programs and scripts are refused (by name or by
 * bytes). Any other attachment is accepted under the content type its bytes show; when its
 * extension or declared type says something else it is flagged as a mismatch.
 */
export function attachmentVerdict(
  filename: string,
  declaredContentType: string | null,
  bytes: Buffer,
): AttachmentVerdict {
  const ext = extensionOf(filename);
  const sniffed = sniffContent(bytes);
  if (EXECUTABLE_EXTENSIONS.has(ext))
    return {
      action: 'refuse',
      reason: `attachment "${filename}" is a program or script (.${ext}); such files are not accepted`,
    };
  if (sniffed.family === 'executable') {
    return {
      action: 'refuse',
      reason: `attachment "${filename}" contains an executable program${ext ? ` although its name ends in .${ext}` : ''}; such files are not accepted`,
    };
  }
  const declared = declaredContentType
    ? BY_CONTENT_TYPE[declaredContentType.toLowerCase().split(';')[0].trim()]
    : undefined;
  const claims = [BY_EXTENSION[ext], declared].filter((c): c is Sniffed => Boolean(c));
  const mismatch = claims.some(
    (c) => c.family !== sniffed.family || (c.family === 'image' && c.contentType !== sniffed.contentType),
  );
  const expected = claims[0]?.contentType ?? null;
  // Text variants (txt, csv, md) keep their declared flavour; everything else is what the bytes show.
  const contentType =
    sniffed.family === 'text' && claims[0]?.family === 'text' ? claims[0].contentType : sniffed.contentType;
  return { action: 'accept', contentType, family: sniffed.family, mismatch, expected };
}

/** The family a stored file is extracted as, from its recorded (sniffed) content type. */
export function familyOfContentType(contentType: string): ContentFamily {
  if (contentType === 'application/pdf') return 'pdf';
  if (contentType.startsWith('image/')) return 'image';
  if (contentType === DOCX) return 'docx';
  if (contentType === 'application/zip') return 'zip';
  if (contentType.startsWith('text/')) return 'text';
  return 'unknown';
}

/** The original sender named in a forwarded message's quoted header block, if any. */
export function forwardedFrom(body: string): { name: string | null; address: string } | null {
  const marker =
    /^[ \t>]*-{2,}\s*(forwarded message|original message)\s*-{2,}/im.exec(body) ??
    /^[ \t>]*Begin forwarded message:/im.exec(body);
  if (!marker) return null;
  const after = body.slice(marker.index, marker.index + 2000);
  const from = /^[ \t>]*From:\s*(?:"?([^"<\n]*?)"?\s*)?<?([^\s<>@]+@[^\s<>]+?)>?\s*$/im.exec(after);
  if (!from) return null;
  return { name: from[1]?.trim() || null, address: from[2].toLowerCase() };
}
