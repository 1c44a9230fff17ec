// Documents for multipart uploads (POST /v1/mail's document, a batch's template and recipients)
// from bytes, a stream or a file path, as the File the generated client appends to its form.
import { openAsBlob } from 'node:fs';
import { basename, extname } from 'node:path';
import { Readable } from 'node:stream';

const TYPES: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.md': 'text/markdown',
};

/** The content type for a file name, by its extension (application/octet-stream when unknown). */
export function contentTypeOf(filename: string): string {
  return TYPES[extname(filename).toLowerCase()] ?? 'application/octet-stream';
}

export type DocumentSource =
  Uint8Array | ArrayBuffer | Blob | NodeJS.ReadableStream | ReadableStream<Uint8Array> | { path: string };

export interface DocumentOptions {
  /** The file name sent (it picks the content type and, for HTML and Markdown, how it is rendered); default from the path, else `document.pdf`. */
  filename?: string;
  contentType?: string;
}

async function readAll(stream: NodeJS.ReadableStream | ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const readable =
    typeof (stream as ReadableStream<Uint8Array>).getReader === 'function'
      ? Readable.fromWeb(stream as import('node:stream/web').ReadableStream<Uint8Array>)
      : (stream as NodeJS.ReadableStream);
  const chunks: Buffer[] = [];
  for await (const chunk of readable) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/**
 * A File for an upload field: `document(fs.readFileSync('a.pdf'))`, `document(fs.createReadStream('a.pdf'),
 * { filename: 'a.pdf' })` or `document({ path: 'a.pdf' })` (read lazily from disk).
 */
export async function document(source: DocumentSource, opts: DocumentOptions = {}): Promise<File> {
  const filename =
    opts.filename ??
    ('path' in source && typeof source.path === 'string' ? basename(source.path) : undefined) ??
    (source instanceof File ? source.name : 'document.pdf');
  const type = opts.contentType ?? contentTypeOf(filename);
  let blob: Blob;
  if (source instanceof Blob) blob = source;
  else if (source instanceof Uint8Array) blob = new Blob([new Uint8Array(source)]);
  else if (source instanceof ArrayBuffer) blob = new Blob([source]);
  else if ('path' in source && typeof source.path === 'string') blob = await openAsBlob(source.path);
  else blob = new Blob([new Uint8Array(await readAll(source as NodeJS.ReadableStream))]);
  return new File([blob], filename, { type });
}
