// The API process: serves REST under the API prefix and documents at the site root.
// The HTTP server has deadlines: a request whose headers or body trickle in (one byte every
// few seconds) is answered 408 and closed instead of holding a connection for ever. On
// SIGTERM/SIGINT it drains (api/lifecycle.ts) for at most SHUTDOWN_GRACE_SECONDS, then
// closes its connections to Postgres, Temporal and the object store and exits.
import http from 'node:http';
import type { Server } from 'node:http';
import { config } from '../config';
import { closeDeps, createDeps } from '../services/shared/create-deps';
import type { Deps } from '../services/shared/deps';
import { createApp } from './app';
import { drainServer, Lifecycle } from './lifecycle';

export async function startServer(
  deps: Deps,
  port = deps.config.port,
  host = deps.config.host,
  lifecycle = new Lifecycle(),
): Promise<Server> {
  const { httpRequestTimeoutMs, httpHeadersTimeoutMs, httpKeepAliveTimeoutMs } = deps.config;
  const server = http.createServer(
    {
      requestTimeout: httpRequestTimeoutMs,
      headersTimeout: httpHeadersTimeoutMs,
      // How often the deadlines are checked: Node's 30 s default would let a 20 s deadline run to 50 s.
      connectionsCheckingInterval: Math.min(1000, httpHeadersTimeoutMs),
    },
    createApp(deps, undefined, lifecycle).callback(),
  );
  server.keepAliveTimeout = httpKeepAliveTimeoutMs;
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
}

async function main() {
  const deps = await createDeps(config, { name: 'api' });
  const lifecycle = new Lifecycle();
  const server = await startServer(deps, config.port, config.host, lifecycle);
  deps.log.info({ url: config.baseUrl }, 'api listening');
  // Ctrl-C reaches the process group, and a supervisor may send SIGTERM as well: drain once.
  let draining = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (draining) return;
    draining = true;
    deps.log.info({ signal, graceSeconds: config.shutdownGraceSeconds }, 'api draining');
    const cut = await drainServer(server, lifecycle, config.shutdownGraceSeconds * 1000);
    if (cut) deps.log.warn({ connections: cut }, 'grace period over: closed connections with requests still in flight');
    await closeDeps(deps);
    deps.log.info('api stopped');
    process.exit(0);
  };
  process.on('SIGINT', (signal) => void stop(signal));
  process.on('SIGTERM', (signal) => void stop(signal));
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
