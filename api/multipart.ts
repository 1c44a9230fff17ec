// Multipart uploads (koa-body over formidable) with their limits, and refusals that say
// what is wrong. The request as a whole may be at most the sum of its files' limits plus
// MAX_FORM_FIELDS_BYTES of text and some room for part headers; a larger Content-Length is
// a 413 before anything is read. Inside, each refusal names its field: a file over its own
// limit, a file field sent twice or a file where none belongs, too many fields, too much
// field text (all 400). After a refusal the rest of the body is read and thrown away, so
// the client gets the answer rather than a reset connection.
// Where file parts go: a body whose Content-Length is at most IN_MEMORY_BODY_BYTES keeps its
// files in memory (a letter of a few KB never touches the disk); any other body streams
// each file to a temporary file, which every path removes: the router after the handler,
// parseMultipart itself when parsing fails or the client aborts.
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Writable } from 'node:stream';
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

/**
 * Bodies up to this many bytes (by their Content-Length) keep their files in memory. The
 * HTTP parser ends a body at its Content-Length, so memory stays bounded by it; a body
 * without a length (chunked) always goes to temporary files.
 */
export const IN_MEMORY_BODY_BYTES = 1024 * 1024;

/** The bytes of in-memory file parts, by formidable's file object (a Buffer once the part has ended). */
const inMemoryParts = new WeakMap<object, Buffer[] | Buffer>();

/** A file part kept in memory. */
function memorySink(file: object): Writable {
  const chunks: Buffer[] = [];
  inMemoryParts.set(file, chunks);
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
    final(done) {
      inMemoryParts.set(file, Buffer.concat(chunks));
      done();
    },
  });
}

/** A file part streamed to its temporary file; `opened` lets a failed parse remove it. */
function diskSink(filepath: string, opened: WriteStream[]): WriteStream {
  const stream = createWriteStream(filepath);
  opened.push(stream);
  return stream;
}

/** Removes the temporary files of a parse that failed, once each stream has closed (an unlink before the open would leave the file behind). */
async function removeTempFiles(opened: WriteStream[]): Promise<void> {
  await Promise.all(
    opened.map(async (stream) => {
      if (!stream.closed) {
        const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()));
        stream.destroy();
        await closed;
      }
      await rm(String(stream.path), { force: true }).catch(() => undefined);
    }),
  );
}

/** Whether this request's files are kept in memory: a declared length within IN_MEMORY_BODY_BYTES, not chunked. */
function keepsFilesInMemory(ctx: Context): boolean {
  const length = ctx.get('content-length');
  return /^\d+$/.test(length) && Number(length) <= IN_MEMORY_BODY_BYTES && !ctx.get('transfer-encoding');
}

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
  const message =
    limit === undefined ? 'is not a file field of this request' : `the file may be at most ${formatBytes(limit)}`;
  return errors.validation(
    [{ path: field, message }],
    limit === undefined ? 'Unexpected file' : `Upload too large: ${field} may be at most ${formatBytes(limit)}`,
  );
}

function fileFieldProblem(names: string[], spec: MultipartSpec): ApiError | null {
  const expected = Object.keys(spec.maxFileBytes);
  const unexpected = names.find((n) => !expected.includes(n));
  if (unexpected !== undefined) {
    return errors.validation(
      [{ path: unexpected, message: `is not a file field of this request (files go in ${expected.join(', ')})` }],
      'Unexpected file',
    );
  }
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated !== undefined)
    return errors.validation(
      [{ path: repeated, message: 'send one file in this field, not several' }],
      `More than one ${repeated} file`,
    );
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
function partPassing(
  parts: PartRead[],
  file: boolean,
  limit: (part: PartRead, total: number) => boolean,
): string | undefined {
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
      return errors.validation(
        [{ path: 'body', message: `at most ${MAX_FORM_FIELDS} form fields` }],
        'Too many form fields',
      );
    case FORMIDABLE.maxFieldsSizeExceeded:
      return errors.validation(
        [
          {
            path: partPassing(parts, false, (_p, total) => total > MAX_FORM_FIELDS_BYTES) ?? 'body',
            message: `form fields may hold at most ${formatBytes(MAX_FORM_FIELDS_BYTES)} of text in total`,
          },
        ],
        'Form fields too large',
      );
    case FORMIDABLE.maxFilesExceeded:
      return (
        fileFieldProblem(fileParts, spec) ??
        errors.validation(
          [{ path: 'body', message: `at most ${Object.keys(spec.maxFileBytes).length} files` }],
          'Too many files',
        )
      );
    case FORMIDABLE.biggerThanMaxFileSize:
    case FORMIDABLE.biggerThanTotalMaxFileSize:
      return fileTooLarge(
        partPassing(parts, true, (p, total) => p.bytes > (spec.maxFileBytes[p.field] ?? 0) || total > totalFileBytes) ??
          fileParts[fileParts.length - 1] ??
          Object.keys(spec.maxFileBytes)[0],
        spec,
      );
    case FORMIDABLE.cannotCreateDir:
      return null;
    default:
      return errors.validation(
        [{ path: 'body', message: `Malformed multipart body: ${err.message ?? 'unreadable'}` }],
        'Validation failed',
      );
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
  const inMemory = keepsFilesInMemory(ctx);
  const opened: WriteStream[] = [];
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
      // formidable's supported hook for where a file part's bytes go (it then hands back a
      // VolatileFile with the same size, name, type and filepath fields).
      fileWriteStreamHandler: (file) =>
        inMemory ? memorySink(file!) : diskSink((file as unknown as FormidableFile).filepath, opened),
      onPart: (p, handle) => {
        // formidable stores a part with a Content-Type as a file, any other as a field.
        const read: PartRead = { field: p.name ?? 'body', file: Boolean(p.mimetype), bytes: 0 };
        parts.push(read);
        p.on('data', (chunk: Buffer) => {
          read.bytes += chunk.length;
        });
        handle(p);
      },
    },
  });
  try {
    await parser(ctx, async () => undefined);
  } catch (err) {
    // formidable stops reading at its first error (sometimes with the request paused).
    discardBody(ctx.req);
    await removeTempFiles(opened);
    throw refusal(err as { code?: number; message?: string }, spec, parts) ?? err;
  }
  const problem = fileFieldProblem(
    parts.filter((p) => p.file).map((p) => p.field),
    spec,
  );
  if (problem) throw problem;
  for (const file of Object.values(uploadedFiles(ctx))) {
    if (file.size > spec.maxFileBytes[file.fieldName]) throw fileTooLarge(file.fieldName, spec);
  }
}

/** formidable's file objects, by field (a repeated field holds several). */
function parsedFiles(ctx: Context): Array<[string, FormidableFile]> {
  const files = (ctx.request as unknown as { files?: Record<string, unknown> }).files ?? {};
  return Object.entries(files).flatMap(([field, value]) =>
    (Array.isArray(value) ? value : [value]).map((f) => [field, f as FormidableFile] as [string, FormidableFile]),
  );
}

interface FormidableFile {
  filepath: string;
  originalFilename: string | null;
  mimetype: string | null;
  size: number;
}

/** The parsed files by field (one per field: parseMultipart refuses repeats), in memory or in their temporary files. */
export function uploadedFiles(ctx: Context): Record<string, UploadedFile> {
  const out: Record<string, UploadedFile> = {};
  for (const [field, file] of parsedFiles(ctx)) {
    if (out[field]) continue;
    const info = {
      fieldName: field,
      originalFilename: file.originalFilename,
      mimetype: file.mimetype,
      size: file.size,
    };
    const data = inMemoryParts.get(file);
    out[field] = data
      ? { ...info, data: Buffer.isBuffer(data) ? data : Buffer.concat(data) }
      : { ...info, filepath: file.filepath };
  }
  return out;
}

/** The temporary files of a parsed request (none for a body kept in memory), for removal once it is answered. */
export function temporaryUploadPaths(ctx: Context): string[] {
  return parsedFiles(ctx)
    .filter(([, file]) => !inMemoryParts.has(file))
    .map(([, file]) => file.filepath);
}
