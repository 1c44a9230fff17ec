// A fetch that retries 429 and 503 answers, waiting what Retry-After says (delta seconds or an
// HTTP date; capped), and that puts an Idempotency-Key on each POST that accepts one, so that
// every attempt of a call carries the same key and the server does the work once.
import { randomUUID } from 'node:crypto';
import { IDEMPOTENT_POST_PATHS } from './generated/idempotent-paths.gen';

export interface RetryOptions {
  /** Attempts after the first; default 3. */
  maxRetries?: number;
  /** The longest wait between attempts, whatever Retry-After says; default 30 000 ms. */
  maxDelayMs?: number;
  /** The wait when the answer has no usable Retry-After: baseDelayMs × 2^attempt; default 500 ms. */
  baseDelayMs?: number;
  /** Called before each wait (logging, tests). */
  onRetry?: (info: { attempt: number; status: number; delayMs: number; request: Request }) => void;
}

export const RETRY_STATUSES = new Set([429, 503]);

/** The wait Retry-After asks for, in ms: delta seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** The delay before retry `attempt` (0-based): Retry-After if given, else exponential; never above maxDelayMs. */
export function retryDelayMs(retryAfter: string | null, attempt: number, opts: RetryOptions = {}): number {
  const max = opts.maxDelayMs ?? 30_000;
  const asked = retryAfterMs(retryAfter);
  const delay = asked ?? (opts.baseDelayMs ?? 500) * 2 ** attempt;
  return Math.min(max, delay);
}

const templates = IDEMPOTENT_POST_PATHS.map(
  (p) => new RegExp('^' + p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+') + '$'),
);

/** Whether POST `pathname` (relative to the base URL's path) documents an Idempotency-Key. */
export function acceptsIdempotencyKey(method: string, pathname: string): boolean {
  return method.toUpperCase() === 'POST' && templates.some((t) => t.test(pathname));
}

export function retryingFetch(
  baseUrl: string,
  opts: RetryOptions & { fetch?: typeof fetch; sleep?: (ms: number) => Promise<void> } = {},
): (input: Request) => Promise<Response> {
  const inner = opts.fetch ?? globalThis.fetch;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const basePath = new URL(baseUrl).pathname.replace(/\/$/, '');
  const maxRetries = opts.maxRetries ?? 3;
  return async (input: Request) => {
    let request = input;
    const path = new URL(request.url).pathname;
    const relative = path.startsWith(basePath) ? path.slice(basePath.length) : path;
    if (!request.headers.has('idempotency-key') && acceptsIdempotencyKey(request.method, relative)) {
      const headers = new Headers(request.headers);
      headers.set('Idempotency-Key', randomUUID());
      // duplex: a request whose body is a stream (an upload) is re-wrapped as it is.
      request = new Request(request, { headers, duplex: 'half' } as RequestInit);
    }
    for (let attempt = 0; ; attempt++) {
      // The body of a Request can be read once: each attempt sends a copy.
      const response = await inner(attempt < maxRetries ? request.clone() : request);
      if (!RETRY_STATUSES.has(response.status) || attempt >= maxRetries) return response;
      const delayMs = retryDelayMs(response.headers.get('retry-after'), attempt, opts);
      opts.onRetry?.({ attempt: attempt + 1, status: response.status, delayMs, request });
      await response.body?.cancel().catch(() => undefined);
      await sleep(delayMs);
    }
  };
}
