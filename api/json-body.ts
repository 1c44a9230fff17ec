// JSON request bodies, read as bytes and refused (400) unless they are valid UTF-8 holding
// a JSON object or array. A decoder that replaced invalid bytes with U+FFFD would store
// mangled text for a client whose encoding is broken; refusing tells it at once.
import type { Context } from 'koa';
import getRawBody from 'raw-body';

/** The media types parsed as JSON (the ones koa-body parsed before). */
const JSON_TYPES = ['application/json', 'application/json-patch+json', 'application/vnd.api+json', 'application/csp-report', 'application/scim+json'];

export class JsonBodyError extends Error {
  constructor(message: string, readonly tooLarge = false) {
    super(message);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The parsed body, or `{}` when the request is not JSON (its fields then fail validation). */
export async function readJsonBody(ctx: Context, limit: string): Promise<unknown> {
  if (!ctx.is(JSON_TYPES)) return {};
  const encoding = (ctx.get('content-encoding') || 'identity').toLowerCase();
  if (encoding !== 'identity') throw new JsonBodyError(`Content-Encoding "${encoding}" is not accepted; send the JSON uncompressed`);
  let raw: Buffer;
  try {
    raw = await getRawBody(ctx.req, { length: ctx.get('content-length') || undefined, limit });
  } catch (err) {
    const e = err as { type?: string; message?: string };
    if (e.type === 'entity.too.large') throw new JsonBodyError(`The JSON body may be at most ${limit}`, true);
    throw new JsonBodyError(e.message ?? 'the body could not be read');
  }
  let text: string;
  try {
    text = utf8.decode(raw); // also drops a leading byte-order mark
  } catch {
    throw new JsonBodyError('the body is not valid UTF-8');
  }
  if (!/^[\x20\x09\x0a\x0d]*[{[]/.test(text)) throw new JsonBodyError('expected a JSON object');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new JsonBodyError((err as Error).message);
  }
}
