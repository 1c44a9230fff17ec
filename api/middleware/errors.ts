// Maps every thrown error to the spec's error shapes; unexpected errors become a 500
// with the request id and are logged, never leaked.
import type { Context, Next } from 'koa';
import { ApiError, codedError } from '../../domain/shared/errors';
import type { Logger } from '../../services/shared/logger';

export function errorMapper(log: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = codedError(404, 'ROUTE_NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`, {
          suggestedAction: 'Check the method and path against GET /openapi.json.',
        }).toBody();
      }
    } catch (err) {
      if (err instanceof ApiError) {
        ctx.status = err.status;
        ctx.body = { ...err.toBody(), request_id: ctx.state.requestId };
        for (const [k, v] of Object.entries(err.options.headers ?? {})) ctx.set(k, v);
        return;
      }
      const status = (err as { status?: number }).status;
      if (status && status >= 400 && status < 500) {
        ctx.status = status;
        ctx.body = { error: (err as Error).message, request_id: ctx.state.requestId };
        return;
      }
      log.error({ err, request_id: ctx.state.requestId, path: ctx.path }, 'unhandled error');
      ctx.status = 500;
      ctx.body = {
        ...codedError(500, 'INTERNAL', 'Internal error', {
          suggestedAction: 'Retry later; quote the request_id if it persists.',
        }).toBody(),
        request_id: ctx.state.requestId,
      };
    }
  };
}
