// Request bodies, read as bytes. A body larger than its limit is refused before it is
// buffered (a declared Content-Length at once), and whatever is left of it is read and
// thrown away while the refusal is sent: closing a connection with unread data makes TCP
// reset it, and the client would see the reset instead of the answer.
// JSON bodies are refused (400) unless they are valid UTF-8 holding a JSON object or
// array within the limits of domain/shared/json-limits.ts, which are checked on the raw bytes
// before JSON.parse or any schema walks them. A decoder that replaced invalid bytes with
// U+FFFD would store mangled text for a client whose encoding is broken; refusing tells
// it at once.
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import {
  dotPath,
  freeFormPaths,
  JSON_BODY_LIMITS,
  JsonInspection,
  JsonProblem,
  JsonScanLimits,
  oversizedFreeForm,
  scanJson,
} from '../domain/shared/json-limits';

/** The media types parsed as JSON (the ones koa-body parsed before). */
const JSON_TYPES = [
  'application/json',
  'application/json-patch+json',
  'application/vnd.api+json',
  'application/csp-report',
  'application/scim+json',
];

/** A JSON body that is unreadable or over a JSON limit: a 400 at `path`. */
export class JsonBodyError extends Error {
  constructor(
    message: string,
    readonly path = 'body',
  ) {
    super(message);
  }
}

/** A body over the size limit of its route (413). */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`The body may be at most ${formatBytes(limit)}`);
  }
}

export function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0
    ? `${bytes / (1024 * 1024)} MB`
    : bytes % 1024 === 0
      ? `${bytes / 1024} KiB`
      : `${bytes} bytes`;
}

/** Reads the rest of a refused body and throws it away, so the refusal reaches the client. */
export function discardBody(req: IncomingMessage): void {
  req.unpipe();
  req.removeAllListeners('data');
  req.resume();
}

/**
 * The body's bytes, at most `limit` of them; a larger body is discarded and
 * BodyTooLargeError thrown. A body that cannot be read (the client aborted it) is an
 * error with status 400.
 */
export async function readBodyBytes(ctx: Context, limit: number): Promise<Buffer> {
  try {
    return await getRawBody(ctx.req, { length: ctx.get('content-length') || undefined, limit });
  } catch (err) {
    if ((err as { type?: string }).type !== 'entity.too.large') throw err;
    discardBody(ctx.req);
    throw new BodyTooLargeError(limit);
  }
}

/** readBodyBytes for JSON: an unreadable body is a JsonBodyError. */
export async function readJsonBytes(ctx: Context, limit: number): Promise<Buffer> {
  try {
    return await readBodyBytes(ctx, limit);
  } catch (err) {
    if (err instanceof BodyTooLargeError || (err as { status?: number }).status !== 400) throw err;
    throw new JsonBodyError(`Malformed JSON body: ${(err as Error).message}`);
  }
}

/** JsonBodyError unless the body starts (after a byte-order mark and whitespace) with an object or array. */
export function assertJsonContainer(raw: Buffer): void {
  let i = raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? 3 : 0;
  while (raw[i] === 0x20 || raw[i] === 0x09 || raw[i] === 0x0a || raw[i] === 0x0d) i++;
  if (raw[i] !== 0x7b && raw[i] !== 0x5b) throw new JsonBodyError('Malformed JSON body: expected a JSON object');
}

/** The text of a JSON body without a leading byte-order mark, or JsonBodyError when it is not valid UTF-8. */
export function jsonText(raw: Buffer): string {
  if (!isUtf8(raw)) throw new JsonBodyError('Malformed JSON body: the body is not valid UTF-8');
  return raw.toString('utf8', raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? 3 : 0);
}

/** A turn of the event loop for other requests. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * domain/shared/json-limits.ts's scan with a turn of the event loop after every slice of it
 * (about a millisecond), so that a 14 MB body never holds up other requests.
 */
export async function inspectJsonInTurns(
  raw: Buffer,
  limits: JsonScanLimits,
  wanted: string[][] = [],
  kept: string[][] = [],
): Promise<JsonInspection> {
  const scan = scanJson(raw, limits, wanted, kept);
  for (;;) {
    const step = scan.next();
    if (step.done) return step.value;
    await nextTurn();
  }
}

/**
 * The field a JSON problem is reported on: NUL at its full path (as before), anything
 * else at the top-level field that holds it, so a 5,000-level bomb names `metadata`
 * (and a body that is itself a deep array, `body`).
 */
export function problemField(problem: JsonProblem, root: number = 0): string {
  const path = problem.path.slice(root);
  if (problem.kind === 'nul') return dotPath(path);
  return typeof path[0] === 'string' ? path[0] : 'body';
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new JsonBodyError(`Malformed JSON body: ${(err as Error).message}`);
  }
}

/** The parsed body, or `{}` when the request is not JSON (its fields then fail validation). */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  if (!ctx.is(JSON_TYPES)) return {};
  const encoding = (ctx.get('content-encoding') || 'identity').toLowerCase();
  if (encoding !== 'identity') {
    discardBody(ctx.req);
    throw new JsonBodyError(`Content-Encoding "${encoding}" is not accepted; send the JSON uncompressed`);
  }
  const raw = await readJsonBytes(ctx, limit);
  assertJsonContainer(raw);
  // The limits first: a refused body is never decoded nor parsed.
  const inspection = await inspectJsonInTurns(raw, JSON_BODY_LIMITS, freeFormPaths());
  const problem = inspection.problem ?? oversizedFreeForm(inspection);
  if (problem) throw new JsonBodyError(problem.message, problemField(problem));
  return parseJson(jsonText(raw));
}
