// Request id, access log, security headers, X-Test-Mode and `test_mode` on every JSON body.
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '../../services/shared/logger';

export function securityHeaders() {
  return async (ctx: Context, next: Next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    await next();
  };
}

export function requestContext(log: Logger) {
  return async (ctx: Context, next: Next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = /^[A-Za-z0-9._-]{8,100}$/.test(incoming) ? incoming : `req_${randomUUID()}`;
    ctx.state.requestId = requestId;
    ctx.state.testMode = false;
    ctx.set('X-Request-Id', requestId);
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      log.info(
        { request_id: requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 },
        'request',
      );
    }
  };
}

/** Adds `test_mode` to JSON object bodies and the X-Test-Mode header to every response. */
export function testModeMarker() {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } finally {
      const testMode = Boolean(ctx.state.testMode);
      ctx.set('X-Test-Mode', String(testMode));
      const body = ctx.body as unknown;
      if (
        body &&
        typeof body === 'object' &&
        !Array.isArray(body) &&
        !Buffer.isBuffer(body) &&
        typeof (body as { pipe?: unknown }).pipe !== 'function'
      ) {
        if (!('test_mode' in (body as Record<string, unknown>))) {
          ctx.body = { ...(body as Record<string, unknown>), test_mode: testMode };
        }
      }
    }
  };
}
