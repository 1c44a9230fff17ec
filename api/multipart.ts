// Multipart uploads (koa-body over formidable) with their limits, and refusals that say
// what is wrong. The request as a whole may be at most the sum of its files' limits plus
// MAX_FORM_FIELDS_BYTES of text and some room for part headers; a larger Content-Length is
// a 413 before anything is read. Inside, each refusal names its field: a file over its own
// limit, a file field sent twice or a file where none belongs, too many fields, too much
// field text (all 400). After a refusal the rest of the body is read and thrown away, so
// the client gets the answer rather than a reset connection.
import type { Context } from 'koa';
import { koaBody } from 'koa-body';
import { ApiError, errors } from '../domain/shared/errors';
import { BodyTooLargeError, discardBody, formatBytes } from './json-body';
import type { MultipartSpec, UploadedFile } from './route';

/** Text fields per form; the largest form (a letter) has about 30. */
export const MAX_FORM_FIELDS = 100;
/** Text of all fields together: a letter's fields with its 16 KiB metadata need about 40 KiB. */
export const MAX_FORM_FIELDS_BYTES = 64 * 1024;
/** Boundaries and part headers on top of the fields and files. */
const PART_HEADERS_BYTES = 64 * 1024;

/** The largest body a multipart route accepts. */
export function multipartBodyLimit(spec: MultipartSpec): number {
  return Object.values(spec.maxFileBytes).reduce((a, b) => a + b, 0) + MAX_FORM_FIELDS_BYTES + PART_HEADERS_BYTES;
}

/** formidable's error codes (formidable/src/FormidableError.js). */
const FORMIDABLE = {
  aborted: 1002,
  maxFieldsSizeExceeded: 1006,
  maxFieldsExceeded: 1007,
  biggerThanTotalMaxFileSize: 1009,
  maxFilesExceeded: 1015,
  biggerThanMaxFileSize: 1016,
  cannotCreateDir: 1018,
} as const;

function fileTooLarge(field: string, spec: MultipartSpec): ApiError {
  const limit = spec.maxFileBytes[field];
  const message = limit === undefined ? 'is not a file field of this request' : `the file may be at most ${formatBytes(limit)}`;
  return errors.validation([{ path: field, message }], limit === undefined ? 'Unexpected file' : `Upload too large: ${field} may be at most ${formatBytes(limit)}`);
}

function fileFieldProblem(names: string[], spec: MultipartSpec): ApiError | null {
  const expected = Object.keys(spec.maxFileBytes);
  const unexpected = names.find((n) => !expected.includes(n));
  if (unexpected !== undefined) {
    return errors.validation([{ path: unexpected, message: `is not a file field of this request (files go in ${expected.join(', ')})` }], 'Unexpected file');
  }
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated !== undefined) return errors.validation([{ path: repeated, message: 'send one file in this field, not several' }], `More than one ${repeated} file`);
  return null;
}

/**
 * The parts read so far with their bytes. formidable reports a limit asynchronously, after
 * it may have begun the next part, so the part at fault is found from these counts.
 */
interface PartRead {
  field: string;
  file: boolean;
  bytes: number;
}

/** The first part whose bytes, added to those of the earlier parts of its kind, pass `limit`. */
function partPassing(parts: PartRead[], file: boolean, limit: (part: PartRead, total: number) => boolean): string | undefined {
  let total = 0;
  for (const p of parts.filter((x) => x.file === file)) {
    total += p.bytes;
    if (limit(p, total)) return p.field;
  }
  return undefined;
}

/** What a formidable error means for the client, naming the part at fault. */
function refusal(err: { code?: number; message?: string }, spec: MultipartSpec, parts: PartRead[]): ApiError | null {
  const fileParts = parts.filter((p) => p.file).map((p) => p.field);
  const totalFileBytes = Object.values(spec.maxFileBytes).reduce((a, b) => a + b, 0);
  switch (err.code) {
    case FORMIDABLE.aborted:
      return errors.validation([{ path: 'body', message: 'the upload was aborted before its end' }], 'Upload aborted');
    case FORMIDABLE.maxFieldsExceeded:
      return errors.validation([{ path: 'body', message: `at most ${MAX_FORM_FIELDS} form fields` }], 'Too many form fields');
    case FORMIDABLE.maxFieldsSizeExceeded:
      return errors.validation([{
        path: partPassing(parts, false, (_p, total) => total > MAX_FORM_FIELDS_BYTES) ?? 'body',
        message: `form fields may hold at most ${formatBytes(MAX_FORM_FIELDS_BYTES)} of text in total`,
      }], 'Form fields too large');
    case FORMIDABLE.maxFilesExceeded:
      return fileFieldProblem(fileParts, spec)
        ?? errors.validation([{ path: 'body', message: `at most ${Object.keys(spec.maxFileBytes).length} files` }], 'Too many files');
    case FORMIDABLE.biggerThanMaxFileSize:
    case FORMIDABLE.biggerThanTotalMaxFileSize:
      return fileTooLarge(partPassing(parts, true, (p, total) => p.bytes > (spec.maxFileBytes[p.field] ?? 0) || total > totalFileBytes)
        ?? fileParts[fileParts.length - 1] ?? Object.keys(spec.maxFileBytes)[0], spec);
    case FORMIDABLE.cannotCreateDir:
      return null;
    default:
      return errors.validation([{ path: 'body', message: `Malformed multipart body: ${err.message ?? 'unreadable'}` }], 'Validation failed');
  }
}

/**
 * Parses a multipart (or urlencoded) body into ctx.request.body and ctx.request.files.
 * Refusals are ApiErrors; a body over multipartBodyLimit is BodyTooLargeError.
 */
export async function parseMultipart(ctx: Context, spec: MultipartSpec): Promise<void> {
  const limit = multipartBodyLimit(spec);
  if (Number(ctx.get('content-length')) > limit) {
    discardBody(ctx.req);
    throw new BodyTooLargeError(limit);
  }
  const parts: PartRead[] = [];
  const fileLimits = Object.values(spec.maxFileBytes);
  const parser = koaBody({
    multipart: true,
    json: false,
    urlencoded: true,
    formidable: {
      maxFileSize: Math.max(...fileLimits),
      maxTotalFileSize: fileLimits.reduce((a, b) => a + b, 0),
      maxFiles: fileLimits.length,
      maxFields: MAX_FORM_FIELDS,
      maxFieldsSize: MAX_FORM_FIELDS_BYTES,
      allowEmptyFiles: true,
      minFileSize: 0,
      onPart: (p, handle) => {
        // formidable stores a part with a Content-Type as a file, any other as a field.
        const read: PartRead = { field: p.name ?? 'body', file: Boolean(p.mimetype), bytes: 0 };
        parts.push(read);
        p.on('data', (chunk: Buffer) => { read.bytes += chunk.length; });
        handle(p);
      },
    },
  });
  try {
    await parser(ctx, async () => undefined);
  } catch (err) {
    // formidable stops reading at its first error (sometimes with the request paused).
    discardBody(ctx.req);
    throw refusal(err as { code?: number; message?: string }, spec, parts) ?? err;
  }
  const problem = fileFieldProblem(parts.filter((p) => p.file).map((p) => p.field), spec);
  if (problem) throw problem;
  for (const file of Object.values(uploadedFiles(ctx))) {
    if (file.size > spec.maxFileBytes[file.fieldName]) throw fileTooLarge(file.fieldName, spec);
  }
}

/** The parsed files by field (one per field: parseMultipart refuses repeats). */
export function uploadedFiles(ctx: Context): Record<string, UploadedFile> {
  const files = (ctx.request as unknown as { files?: Record<string, unknown> }).files ?? {};
  const out: Record<string, UploadedFile> = {};
  for (const [field, value] of Object.entries(files)) {
    const file = (Array.isArray(value) ? value[0] : value) as { filepath: string; originalFilename: string | null; mimetype: string | null; size: number };
    out[field] = { fieldName: field, filepath: file.filepath, originalFilename: file.originalFilename, mimetype: file.mimetype, size: file.size };
  }
  return out;
}
