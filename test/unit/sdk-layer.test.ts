// The TypeScript SDK's hand-written layer without a server: Retry-After as seconds or an HTTP date
// (capped), the same Idempotency-Key and body on every attempt (none on operations without one),
// and errors read from both error shapes.
import {
  acceptsIdempotencyKey,
  apiError,
  ConflictError,
  isApiError,
  RateLimitError,
  retryAfterMs,
  retryDelayMs,
  ServerError,
} from '../../sdk/typescript/src';
import { retryingFetch } from '../../sdk/typescript/src/retry';

describe('Retry-After', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  it('reads delta seconds and HTTP dates, and ignores what it cannot read', () => {
    expect(retryAfterMs('7', now)).toBe(7000);
    expect(retryAfterMs(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
    expect(retryAfterMs(new Date(now - 5000).toUTCString(), now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
  it('caps the wait and backs off without a Retry-After', () => {
    expect(retryDelayMs('3600', 0, { maxDelayMs: 2000 })).toBe(2000);
    expect(retryDelayMs(null, 2, { baseDelayMs: 10 })).toBe(40);
  });
});

describe('retryingFetch', () => {
  it('resends a 503 and a 429 with the same Idempotency-Key and body, waiting what they ask', async () => {
    const seen: Array<{ key: string | null; body: string }> = [];
    const answers = [
      new Response('', { status: 503, headers: { 'retry-after': new Date(Date.now() + 1500).toUTCString() } }),
      new Response('{"code":"RATE_LIMITED"}', { status: 429, headers: { 'retry-after': '1' } }),
      new Response('{}', { status: 201 }),
    ];
    const waits: number[] = [];
    const send = retryingFetch('https://api.example/api', {
      fetch: (async (request: Request) => {
        seen.push({ key: request.headers.get('idempotency-key'), body: await request.text() });
        return answers[seen.length - 1];
      }) as typeof fetch,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const response = await send(
      new Request('https://api.example/api/v1/mail', { method: 'POST', body: 'letter-bytes' }),
    );
    expect(response.status).toBe(201);
    expect(seen).toHaveLength(3);
    expect(seen[0].key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.map((s) => s.key)).toEqual([seen[0].key, seen[0].key, seen[0].key]);
    expect(seen.map((s) => s.body)).toEqual(['letter-bytes', 'letter-bytes', 'letter-bytes']);
    expect(waits[0]).toBeGreaterThan(0);
    expect(waits[0]).toBeLessThanOrEqual(1500);
    expect(waits[1]).toBe(1000);
  });

  it('keeps a key the caller chose, adds none where the operation takes none, and gives up after maxRetries', async () => {
    const keys: Array<string | null> = [];
    const send = retryingFetch('https://api.example/api', {
      maxRetries: 1,
      sleep: async () => undefined,
      fetch: (async (request: Request) => {
        keys.push(request.headers.get('idempotency-key'));
        return new Response('', { status: 503 });
      }) as typeof fetch,
    });
    const mine = await send(
      new Request('https://api.example/api/v1/mail', { method: 'POST', headers: { 'Idempotency-Key': 'mine' } }),
    );
    expect(mine.status).toBe(503);
    expect(keys).toEqual(['mine', 'mine']);
    keys.length = 0;
    await send(new Request('https://api.example/api/v1/agents', { method: 'POST', body: '{}' }));
    expect(keys).toEqual([null, null]);
    expect(acceptsIdempotencyKey('POST', '/v1/mail/5f0c/approve')).toBe(true);
    expect(acceptsIdempotencyKey('GET', '/v1/mail')).toBe(false);
  });
});

describe('errors', () => {
  it('reads the flat shape, the nested shape of agent_name_taken, and a body that is not JSON', () => {
    const headers = new Headers({ 'x-request-id': 'req-9' });
    const limited = apiError(
      429,
      {
        error: 'Rate limit exceeded',
        code: 'RATE_LIMITED',
        retryable: true,
        suggested_action: 'Wait 2 seconds, then retry.',
      },
      headers,
    );
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryable: true, requestId: 'req-9' });
    expect(limited.message).toBe('429 RATE_LIMITED: Rate limit exceeded');
    expect(isApiError(limited, 'RATE_LIMITED')).toBe(true);
    expect(isApiError(limited, 'INSUFFICIENT_CREDITS')).toBe(false);

    const nested = apiError(409, {
      error: { type: 'invalid_request', message: 'Name taken', code: 'agent_name_taken' },
      retryable: false,
    });
    expect(nested).toBeInstanceOf(ConflictError);
    expect(nested).toMatchObject({ code: 'agent_name_taken', retryable: false, fields: [] });
    expect(nested.message).toBe('409 agent_name_taken: Name taken');

    const text = apiError(502, 'Bad Gateway');
    expect(text).toBeInstanceOf(ServerError);
    expect(text).toMatchObject({ code: undefined, retryable: true });
    expect(isApiError(new Error('x'))).toBe(false);
  });
});
