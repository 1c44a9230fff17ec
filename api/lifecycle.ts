// The API process's life after SIGTERM: it stops accepting connections, answers /readyz
// with 503 (draining) on connections still open, asks keep-alive clients to reconnect
// elsewhere (`Connection: close`), lets in-flight requests finish within the grace
// period, then closes whatever is left.
import type { Server } from 'node:http';
import type { Middleware } from 'koa';

export class Lifecycle {
  draining = false;
}

/** While draining, every answer closes its connection so the client's next request goes elsewhere. */
export function closeConnectionsWhileDraining(lifecycle: Lifecycle): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      if (lifecycle.draining) ctx.set('Connection', 'close');
    }
  };
}

/**
 * Stops `server` gracefully. Resolves with the number of connections that were still open
 * when the grace period ended (and were then closed), 0 when everything finished in time.
 */
export function drainServer(server: Server, lifecycle: Lifecycle, graceMs: number): Promise<number> {
  lifecycle.draining = true;
  return new Promise((resolve) => {
    let cut = 0;
    const timer = setTimeout(() => {
      server.getConnections((_err, open) => {
        cut = open;
        server.closeAllConnections();
      });
    }, graceMs);
    server.close(() => {
      clearTimeout(timer);
      resolve(cut);
    });
    // Keep-alive connections waiting for a next request would hold close() open.
    server.closeIdleConnections();
  });
}
